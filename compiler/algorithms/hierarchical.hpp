#pragma once

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/placement.hpp"

namespace nbr::compiler::internal {

/// @brief How the hierarchical pattern moves blocks inside nodes and between them.
struct HierarchicalShape {
    IntraNode intra = IntraNode::direct;
    std::uint32_t radix = 2;  ///< of the Bruck rounds inside a node
    AcrossNodes across = AcrossNodes::lanes;
    std::uint32_t node_radix = 2;                  ///< of the cube of nodes; 0: every node in one round
    AggregateBy aggregate_by = AggregateBy::node;  ///< socket: every socket (Placement::socket_groups) a node
};

/// @brief Node-aware aggregation (nbr's own design, docs/algorithms.md): every edge between
/// two nodes travels origin → forwarder on the origin's node → receiver on the destination's
/// node → destination, one message per node pair in the middle; the forwarders and receivers
/// of a node are its ranks, assigned per node pair by load. Or, across nodes along a virtual
/// k-ary n-cube: each rank forwards dimension by dimension to the rank of its own index on
/// another node, then the destination node delivers. Inside a node, blocks move directly
/// (one message per rank pair) or in Bruck's ⌈log_r n⌉ combined rounds. Aggregated by
/// socket, all of this runs with every socket as a node of its own.
class HierarchicalAlgorithm final : public Algorithm {
public:
    HierarchicalAlgorithm(Placement placement, HierarchicalShape shape);

    [[nodiscard]] std::string name() const override { return "hierarchical"; }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;

private:
    Placement placement_;
    HierarchicalShape shape_;
};

}  // namespace nbr::compiler::internal
