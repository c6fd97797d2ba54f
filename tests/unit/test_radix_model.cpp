// The hierarchical pattern's radices from a machine model: the closed form against hand
// counts, and the choice it makes where the answer is known.
#include <cmath>

#include <gtest/gtest.h>

#include "nbr/compiler/radix_model.hpp"

namespace {

using nbr::Placement;
using nbr::Topology;
using nbr::compiler::AlgorithmOptions;
using nbr::compiler::Level;
using nbr::simulator::DistanceClass;
using nbr::simulator::Machine;

constexpr double kPs = 1e6;  // per µs

/// A machine whose every distance class costs latency L and overheads o each way (µs), nothing per byte.
Machine flat_machine(double latency_us, double overhead_us) {
    Machine m;
    m.name = "flat";
    for (auto& c : m.link) {
        c.latency_ps = latency_us * kPs;
        c.send_overhead_ps = overhead_us * kPs;
        c.recv_overhead_ps = overhead_us * kPs;
    }
    return m;
}

TEST(RadixModel, BruckRoundsCountedByHand) {
    const Machine m = flat_machine(1.0, 0.5);
    // 16 members, radix 4: 2 rounds of 3 sends, L and 3 receives: 2 * (1.5 + 1 + 1.5) µs.
    EXPECT_NEAR(nbr::compiler::bruck_rounds_us(m, Level{16, 10, DistanceClass::node, 0}, 4, 8), 8.0, 1e-9);
    // 10 members, radix 4: digit 0 takes 4 values (3 messages), digit 1 takes 3 (2 messages).
    EXPECT_NEAR(nbr::compiler::bruck_rounds_us(m, Level{10, 10, DistanceClass::node, 0}, 4, 8),
                (1.5 + 1 + 1.5) + (1.0 + 1 + 1.0), 1e-9);
    // One member: no rounds.
    EXPECT_EQ(nbr::compiler::bruck_rounds_us(m, Level{1, 10, DistanceClass::node, 0}, 2, 8), 0.0);
    EXPECT_THROW((void)nbr::compiler::bruck_rounds_us(m, Level{16, 10, DistanceClass::node, 0}, 1, 8),
                 std::invalid_argument);
}

TEST(RadixModel, FewPlacesSendFewMessages) {
    const Machine m = flat_machine(1.0, 0.5);
    // 64 members, one round: blocks for 4 places send the expected distinct 63 (1 - (63/64)^4)
    // messages, not 63.
    const double messages = 63 * (1 - std::pow(63.0 / 64, 4));
    EXPECT_NEAR(nbr::compiler::bruck_rounds_us(m, Level{64, 10, DistanceClass::node, 0, 4}, 64, 8),
                messages * 0.5 + 1 + messages * 0.5, 1e-9);
    // Radix 8, two rounds: by the second a holder carries the blocks of 8 members (32 places).
    const double first = 7 * (1 - std::pow(7.0 / 8, 4));
    const double second = 7 * (1 - std::pow(7.0 / 8, 32));
    EXPECT_NEAR(nbr::compiler::bruck_rounds_us(m, Level{64, 10, DistanceClass::node, 0, 4}, 8, 8),
                (first + 1) + (second + 1), 1e-9);  // a round: m sends and receives of 0.5 µs, L = 1
    // Local traffic favours one round over the radix a random graph's blocks would pick.
    const auto one = nbr::compiler::bruck_rounds_us(m, Level{64, 10, DistanceClass::node, 0, 2}, 64, 8);
    const auto eight = nbr::compiler::bruck_rounds_us(m, Level{64, 10, DistanceClass::node, 0, 2}, 8, 8);
    EXPECT_LT(one, eight);
}

TEST(RadixModel, BytesAndTheNicAreCharged) {
    Machine m = flat_machine(0.0, 0.0);
    m.link[static_cast<std::size_t>(DistanceClass::network)].byte_ps = 1000;  // 1 ns per byte
    m.copy_byte_ps = 100;
    m.nic_gap_ps = 0.5 * kPs;
    // 4 nodes, radix 4, one round: 3 messages of 64 items / 4 values * 8 B = 128 B each.
    // Sender: 3 * 128 ns injected = 0.384 µs; the NIC: 2 senders * 3 * 0.5 µs = 3 µs dominates;
    // then 128 ns on the wire and 2 * 3 * 128 B * 0.1 ns copied.
    const Level across{4, 64, DistanceClass::network, 2};
    EXPECT_NEAR(nbr::compiler::bruck_rounds_us(m, across, 4, 8), 3.0 + 0.128 + 0.0768, 1e-9);
}

TEST(RadixModel, CopiesAtTheBlockSizesRateAndPerBlock) {
    // The round above, 48 blocks of 8 B moving (64 items, 3 of 4 digit values), copied at the
    // rate of 8 B blocks (0.2 ns per byte at 4 B, 0.1 at 16 B: 0.15 at 8 B) and
    // 10 ns per block: 2 * (3 * 128 B * 0.15 ns + 48 * 10 ns) = 0.1152 + 0.96 µs.
    Machine m = flat_machine(0.0, 0.0);
    m.link[static_cast<std::size_t>(DistanceClass::network)].byte_ps = 1000;
    m.copy_byte_ps = 100;  // replaced by the rates
    m.copy_rates = {{4, 200}, {16, 100}};
    m.copy_block_ps = 10000;
    m.nic_gap_ps = 0.5 * kPs;
    const Level across{4, 64, DistanceClass::network, 2};
    EXPECT_NEAR(nbr::compiler::bruck_rounds_us(m, across, 4, 8), 3.0 + 0.128 + 0.1152 + 0.96, 1e-9);
}

TEST(RadixModel, LatencyBoundLevelsTakeOneRoundOverheadBoundOnesRadixTwo) {
    nbr::compiler::LevelLoads loads;
    loads.largest_node = 16;
    loads.largest_socket = 8;
    loads.nodes = 9;
    loads.items_per_rank = 20;
    loads.off_node_items_per_rank = 15;
    // Latency only: every round costs L, so one round wins on both levels.
    const auto latency_bound = nbr::compiler::model_radices(flat_machine(1.0, 0.0), loads, 8);
    EXPECT_GE(latency_bound.intra_radix, 16U);
    EXPECT_EQ(latency_bound.node_radix, 0U);
    // Overheads only: a round costs 2 o (r - 1), so radix 2 sends the fewest messages in all.
    const auto overhead_bound = nbr::compiler::model_radices(flat_machine(0.0, 1.0), loads, 8);
    EXPECT_EQ(overhead_bound.intra_radix, 2U);
    EXPECT_EQ(overhead_bound.node_radix, 2U);
    EXPECT_NEAR(overhead_bound.intra_us, 4 * 2.0, 1e-9);   // 4 rounds of one message each way
    EXPECT_NEAR(overhead_bound.across_us, 4 * 2.0, 1e-9);  // ⌈log2 9⌉ = 4 rounds
}

TEST(RadixModel, LoadsCountEdgesOffNodeWithoutSelfLoops) {
    // 4 ranks on 2 nodes; a self-loop (not counted), a duplicate edge (counted twice).
    const std::vector<nbr::Edge> edges{{0, 1}, {0, 2}, {0, 2}, {1, 1}, {3, 0}};
    const auto topology = Topology::from_edges(4, edges);
    const auto loads = nbr::compiler::level_loads(topology, Placement::block(4, 2, 1));
    EXPECT_EQ(loads.largest_node, 2U);
    EXPECT_EQ(loads.largest_socket, 1U);
    EXPECT_EQ(loads.nodes, 2U);
    EXPECT_DOUBLE_EQ(loads.items_per_rank, 4.0 / 4);
    EXPECT_DOUBLE_EQ(loads.off_node_items_per_rank, 3.0 / 4);
    // Rank 0: rank 1 here and node 1 there, at most 1 stop on nodes of 2; rank 3: node 0.
    EXPECT_DOUBLE_EQ(loads.stops_in_node_per_rank, 2.0 / 4);
    EXPECT_DOUBLE_EQ(loads.nodes_per_rank, 2.0 / 4);
    EXPECT_THROW((void)nbr::compiler::level_loads(topology, Placement::block(5, 2, 1)), std::invalid_argument);
}

TEST(RadixModel, ResolveSetsTheConfigurationAndClearsTheRequest) {
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r < 64; ++r) {
        for (std::uint32_t d = 1; d <= 12; ++d) edges.push_back({r, (r + 5 * d) % 64});
    }
    const auto topology = Topology::from_edges(64, edges);
    AlgorithmOptions options;
    options.intra_radix_from_machine = true;
    options.node_radix_from_machine = true;
    EXPECT_THROW((void)nbr::compiler::resolve_model_radices(options, topology, flat_machine(0.0, 1.0)),
                 std::invalid_argument);  // no placement
    options.placement = Placement::block(64, 8, 4);
    EXPECT_THROW((void)nbr::compiler::make_algorithm(nbr::compiler::AlgorithmKind::hierarchical, options),
                 std::invalid_argument);  // still asking for the machine
    auto overheads = options;
    const auto note = nbr::compiler::resolve_model_radices(overheads, topology, flat_machine(0.0, 1.0));
    EXPECT_NE(note.find("flat"), std::string::npos) << note;
    EXPECT_EQ(overheads.intra_node, nbr::compiler::IntraNode::bruck);
    EXPECT_EQ(overheads.intra_radix, 2U);
    EXPECT_EQ(overheads.node_radix, 2U);
    EXPECT_FALSE(overheads.intra_radix_from_machine || overheads.node_radix_from_machine);
    EXPECT_NO_THROW((void)nbr::compiler::make_algorithm(nbr::compiler::AlgorithmKind::hierarchical, overheads));
    auto latency = options;
    (void)nbr::compiler::resolve_model_radices(latency, topology, flat_machine(1.0, 0.0));
    EXPECT_EQ(latency.intra_node, nbr::compiler::IntraNode::direct);
    EXPECT_EQ(latency.node_radix, 0U);
    // Aggregated by socket the levels are the sockets: 16 of 4 ranks, not 8 nodes of 8.
    auto by_socket = options;
    by_socket.aggregate_by = nbr::compiler::AggregateBy::socket;
    const auto socket_note = nbr::compiler::resolve_model_radices(by_socket, topology, flat_machine(0.0, 1.0));
    EXPECT_NE(socket_note.find("inside sockets of up to 4 ranks"), std::string::npos) << socket_note;
    EXPECT_NE(socket_note.find("across 16 sockets"), std::string::npos) << socket_note;
    EXPECT_NE(note.find("inside nodes of up to 8 ranks"), std::string::npos) << note;
    AlgorithmOptions fixed;  // nothing asked: nothing changed, no note
    EXPECT_TRUE(nbr::compiler::resolve_model_radices(fixed, topology, flat_machine(1.0, 0.0)).empty());
    EXPECT_EQ(fixed.node_radix, 2U);
}

}  // namespace
