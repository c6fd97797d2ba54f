#pragma once

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/placement.hpp"

namespace nbr::compiler::internal {

/// @brief Node-aware aggregation (nbr's own design, docs/algorithms.md): every edge between
/// two nodes travels origin → forwarder on the origin's node → receiver on the destination's
/// node → destination, one message per node pair in the middle; the forwarders and receivers
/// of a node are its ranks, assigned per node pair by load. Edges inside a node go directly.
class HierarchicalAlgorithm final : public Algorithm {
public:
    explicit HierarchicalAlgorithm(Placement placement);

    [[nodiscard]] std::string name() const override { return "hierarchical"; }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;

private:
    Placement placement_;
};

}  // namespace nbr::compiler::internal
