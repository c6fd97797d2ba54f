#pragma once

#include "nbr/compiler/algorithm.hpp"

namespace nbr::compiler::internal {

/// @brief The naive pattern: in one step every rank sends each out-edge's data directly.
class NaiveAlgorithm final : public Algorithm {
public:
    [[nodiscard]] std::string name() const override { return "naive"; }
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;
};

}  // namespace nbr::compiler::internal
