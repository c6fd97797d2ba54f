#pragma once

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/placement.hpp"

namespace nbr::compiler::internal {

/// @brief Node-aware aggregation (nbr's own design, docs/algorithms.md): every edge between
/// two nodes travels origin → forwarder on the origin's node → receiver on the destination's
/// node → destination, one message per node pair in the middle; the forwarders and receivers
/// of a node are its ranks, assigned per node pair by load. Inside a node, blocks move
/// directly (one message per rank pair) or in Bruck's ⌈log_r n⌉ combined rounds.
class HierarchicalAlgorithm final : public Algorithm {
public:
    HierarchicalAlgorithm(Placement placement, IntraNode intra, std::uint32_t radix);

    [[nodiscard]] std::string name() const override { return "hierarchical"; }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;

private:
    Placement placement_;
    IntraNode intra_;
    std::uint32_t radix_;
};

}  // namespace nbr::compiler::internal
