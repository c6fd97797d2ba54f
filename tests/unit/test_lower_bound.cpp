// The lower bound of nbrc simulate (lower_bound.hpp): hand-computed node loads, the latency
// bound of one message, and never above a simulated call.
#include <gtest/gtest.h>

#include "machine_support.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/simulator/lower_bound.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/simulate.hpp"
#include "test_support.hpp"

namespace {

using nbr::Edge;
using nbr::Placement;
using nbr::simulator::Collective;
using nbr::simulator::DistanceClass;
using nbr::simulator::lower_bound;
using nbr::simulator::make_program;
using nbr::simulator::topology_load;

nbr::simulator::Machine round_machine() {
    return nbr::simulator::machine_from_spec(nbr::test::round_machine(), "test");
}

/// 4 ranks, 2 per node: every ordered pair, the edge 2 → 0 twice and a self-loop at 1.
std::vector<Edge> two_nodes_complete() {
    std::vector<Edge> edges;
    for (std::uint32_t u = 0; u < 4; ++u) {
        for (std::uint32_t v = 0; v < 4; ++v) {
            if (u != v) edges.push_back({u, v});
        }
    }
    edges.push_back({2, 0});
    edges.push_back({1, 1});
    return edges;
}

TEST(LowerBound, ANodesDistinctBlocksInAndOut) {
    const auto machine = round_machine();
    const auto placement = Placement::block(4, 2, 2);
    const auto p = nbr::test::naive(4, two_nodes_complete());
    // allgather: node 0 takes in sources 2 and 3 once each and sends out 0 and 1 once each.
    const auto gather = topology_load(make_program(p, Collective::allgather), placement, machine);
    EXPECT_TRUE(gather.any_edge);
    EXPECT_EQ(gather.farthest, DistanceClass::network);
    EXPECT_EQ(gather.node_blocks, 2U);
    // alltoall: every edge its own block: node 0 takes in 2→0 twice, 3→0, 2→1, 3→1 (5) and
    // sends out 4; node 1 the other way round.
    const auto all = topology_load(make_program(p, Collective::alltoall), placement, machine);
    EXPECT_EQ(all.node_blocks, 5U);
    EXPECT_EQ(all.busiest_node, 0U);
    // Through the NIC at 2 ns/B: 5 blocks of 1000 B = 10 us.
    const auto bound = lower_bound(all, machine, Collective::alltoall, 1000);
    EXPECT_DOUBLE_EQ(bound.bytes_us, 10.0);
    EXPECT_DOUBLE_EQ(bound.us(), std::max(bound.latency_us, 10.0));
}

TEST(LowerBound, AProgramsOwnBlocksThroughItsBusiestNic) {
    const auto machine = round_machine();
    const auto placement = Placement::block(4, 2, 2);
    const auto p = nbr::test::naive(4, two_nodes_complete());
    for (const auto collective : {Collective::allgather, Collective::alltoall}) {
        // Naive sends every edge on its own: node 0 sends out 0→2, 0→3, 1→2, 1→3 (4) and
        // takes in 2→0 twice, 3→0, 2→1, 3→1 (5); the self-loop and the edges within a node
        // cross no NIC. Its allgather moves more blocks than the topology's bound (2) needs.
        const auto program = make_program(p, collective);
        EXPECT_EQ(nbr::simulator::busiest_nic_blocks(program, placement), 5U);
        // No run beats 5 blocks of 1000 B at 2 ns/B through one NIC.
        EXPECT_GE(nbr::simulator::simulate(program, machine, placement, 1000).latency_us, 10.0);
    }
    // On one node nothing crosses a NIC.
    EXPECT_EQ(nbr::simulator::busiest_nic_blocks(make_program(p, Collective::alltoall), Placement::block(4, 4, 4)), 0U);
}

TEST(LowerBound, OneMessageIsItsOwnLatencyBound) {
    const auto machine = round_machine();
    for (const std::uint32_t per_node : {1U, 2U}) {  // across the network, within a socket
        const auto placement = Placement::block(2, per_node, per_node);
        const auto program = make_program(nbr::test::naive(2, {{0, 1}}), Collective::allgather);
        const auto load = topology_load(program, placement, machine);
        EXPECT_EQ(load.farthest, per_node == 1 ? DistanceClass::network : DistanceClass::socket);
        for (const std::uint64_t bytes : {1U, 1000U, 100000U}) {
            const auto simulated = nbr::simulator::simulate(program, machine, placement, bytes);
            const auto bound = lower_bound(load, machine, Collective::allgather, bytes);
            EXPECT_DOUBLE_EQ(bound.latency_us, simulated.latency_us) << per_node << " per node, " << bytes << " B";
            EXPECT_LE(bound.us(), simulated.latency_us + 1e-9);
        }
    }
}

TEST(LowerBound, SelfLoopsAndIsolatedRanksHaveNothingToBound) {
    const auto machine = round_machine();
    const auto program = make_program(nbr::test::naive(3, {{0, 0}, {2, 2}}), Collective::alltoall);
    const auto load = topology_load(program, Placement::block(3, 1, 1), machine);
    EXPECT_FALSE(load.any_edge);
    EXPECT_EQ(lower_bound(load, machine, Collective::alltoall, 4096).us(), 0.0);
    nbr::simulator::SimProgram by_hand;
    by_hand.num_ranks = 1;
    EXPECT_THROW((void)topology_load(by_hand, Placement::block(1, 1, 1), machine), std::invalid_argument);
}

TEST(LowerBound, NeverAboveASimulatedCall) {
    nbr::MooreParams moore;
    moore.ranks = 64;
    moore.radius = 2;
    nbr::RandomParams random;
    random.ranks = 64;
    random.density = 0.2;
    const std::vector<std::pair<std::uint32_t, std::vector<Edge>>> topologies = {
        {64, nbr::generate_moore(moore).edges()},
        {64, nbr::generate_random(random).edges()},
        {4, two_nodes_complete()}};
    for (const auto* name : {"niagara", "smpi-fat-tree-32c"}) {
        const auto machine = nbr::simulator::load_machine(name);
        for (const auto& [n, edges] : topologies) {
            const auto p = nbr::test::naive(n, edges);
            for (const auto c : {Collective::allgather, Collective::alltoall}) {
                const auto program = make_program(p, c);
                for (const std::uint32_t per_node : {2U, 16U}) {
                    const auto placement = Placement::block(n, per_node, per_node / 2);
                    const auto load = topology_load(program, placement, machine);
                    for (const std::uint64_t bytes : {1U, 4096U, 1U << 20}) {
                        const auto simulated = nbr::simulator::simulate(program, machine, placement, bytes);
                        EXPECT_LE(lower_bound(load, machine, c, bytes).us(), simulated.latency_us * (1 + 1e-12))
                            << name << ", " << n << " ranks, " << per_node << " per node, " << bytes << " B";
                    }
                }
            }
        }
    }
}

}  // namespace
