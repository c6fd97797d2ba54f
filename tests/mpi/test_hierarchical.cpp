// hierarchical: exact behavior on hand-checked cases (direct and Bruck rounds inside the
// node), determinism for every process count, verify on irregular graphs and uneven
// placements, one message per node pair between nodes, Bruck's message bound.
#include <filesystem>
#include <tuple>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/compiler/inspect.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/readers.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::Placement;
using nbr::schema::Operation;
using nbr::test::Op;
using nbr::test::ops_of;
using nbr::test::SharedTempDir;
using nbr::test::world_rank;

/// Compiles `edges` over 4 ranks placed by `placement` (default: two nodes of 2) into `dir`,
/// checks it with verify, and returns every rank's operations (on world rank 0; empty
/// elsewhere).
std::vector<std::vector<Op>> compile_two_nodes(const std::vector<nbr::Edge>& edges, const fs::path& dir,
                                               std::optional<std::uint32_t> radix = std::nullopt,
                                               const Placement& placement = Placement::block(4, 2, 2)) {
    const auto topology = nbr::Topology::from_edges(4, edges);
    nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::hierarchical_options(dir, placement, radix));
    if (world_rank() != 0) return {};
    EXPECT_TRUE(nbr::compiler::verify_directory(dir, &topology).ok);
    std::vector<std::vector<Op>> ops;
    for (const auto& pattern : nbr::test::read_patterns(dir)) ops.push_back(ops_of(pattern));
    return ops;
}

TEST(Hierarchical, HandOffForwardAndDeliver) {
    // Nodes {0, 1} and {2, 3}; out(0) = [2, 3], out(1) = [3], out(2) = [0]. Node 0 sends 3
    // items to node 1 and receives 1: fewer items than a rank's share per pair, so one lane
    // each way. LPT: node 0's forwarder (3 items) is 0, then its receiver (1 item) the less
    // loaded 1; node 1's forwarder is 2 and its receiver 3. Step 0: 1 hands (1,0) to 0.
    // Step 1: 0 -> 3 with all three items for node 1, 2 -> 1 with (2,0). Step 2: 3 delivers
    // (0,0) to 2, 1 delivers (2,0) to 0.
    SharedTempDir tmp;
    const auto ops = compile_two_nodes({{0, 2}, {0, 3}, {1, 3}, {2, 0}}, tmp.path() / "p");
    if (world_rank() != 0) return;
    using K = Operation;
    EXPECT_EQ(ops[0], (std::vector<Op>{
                          {0, K::RECV, 1, {{1, 0}}},
                          {1, K::SEND, 3, {{0, 0}, {0, 1}, {1, 0}}},
                          {2, K::RECV, 1, {{2, 0}}},
                      }));
    EXPECT_EQ(ops[1], (std::vector<Op>{
                          {0, K::SEND, 0, {{1, 0}}},
                          {1, K::RECV, 2, {{2, 0}}},
                          {2, K::SEND, 0, {{2, 0}}},
                      }));
    EXPECT_EQ(ops[2], (std::vector<Op>{
                          {1, K::SEND, 1, {{2, 0}}},
                          {2, K::RECV, 3, {{0, 0}}},
                      }));
    EXPECT_EQ(ops[3], (std::vector<Op>{
                          {1, K::RECV, 0, {{0, 0}, {0, 1}, {1, 0}}},
                          {2, K::SEND, 2, {{0, 0}}},
                      }));
    const auto s = nbr::test::summary_of(tmp.path() / "p");
    EXPECT_EQ(s.metrics.at("lanes_forwarded").max, 1);
    EXPECT_EQ(s.metrics.at("lanes_received").max, 1);
    EXPECT_EQ(s.metrics.at("items_forwarded").max, 3);
}

TEST(Hierarchical, LanesWhenANodeHasMoreRanksThanNodePairs) {
    // Nodes {0, 1} and {2, 3}, out(0) = [2, 3, 1], out(1) = [3]: node 0 has one node pair
    // and two ranks, so two lanes (one per sender): each sender forwards its own items, to
    // receivers 2 (lane 0, 2 items) and 3 (lane 1).
    SharedTempDir tmp;
    const auto ops = compile_two_nodes({{0, 2}, {0, 3}, {0, 1}, {1, 3}}, tmp.path() / "p");
    if (world_rank() != 0) return;
    using K = Operation;
    EXPECT_EQ(ops[0], (std::vector<Op>{
                          {0, K::SEND, 1, {{0, 2}}},
                          {1, K::SEND, 2, {{0, 0}, {0, 1}}},
                      }));
    EXPECT_EQ(ops[1], (std::vector<Op>{
                          {0, K::RECV, 0, {{0, 2}}},
                          {1, K::SEND, 3, {{1, 0}}},
                      }));
    EXPECT_EQ(ops[2], (std::vector<Op>{
                          {1, K::RECV, 0, {{0, 0}, {0, 1}}},
                          {2, K::SEND, 3, {{0, 1}}},
                      }));
    EXPECT_EQ(ops[3], (std::vector<Op>{
                          {1, K::RECV, 1, {{1, 0}}},
                          {2, K::RECV, 2, {{0, 1}}},
                      }));
}

TEST(Hierarchical, BruckRoundsInsideOneNode) {
    // One node of 4 ranks; out(0) = [3], out(2) = [0, 2]. Radix 2 (two rounds): 0 -> 3 is 3 =
    // 0b11 indices on, so 0 -> 1 in round 0 and 1 -> 3 in round 1; 2 -> 0 is 2 = 0b10 on
    // (cyclically), so 2 -> 0 in round 1; the self-loop is sent at once, in step 0.
    SharedTempDir tmp;
    const std::vector<nbr::Edge> edges{{0, 3}, {2, 0}, {2, 2}};
    using K = Operation;
    {
        const auto ops = compile_two_nodes(edges, tmp.path() / "r2", 2, Placement::block(4, 4, 4));
        if (world_rank() == 0) {
            EXPECT_EQ(ops[0], (std::vector<Op>{{0, K::SEND, 1, {{0, 0}}}, {1, K::RECV, 2, {{2, 0}}}}));
            EXPECT_EQ(ops[1], (std::vector<Op>{{0, K::RECV, 0, {{0, 0}}}, {1, K::SEND, 3, {{0, 0}}}}));
            EXPECT_EQ(ops[2], (std::vector<Op>{
                                  {0, K::RECV, 2, {{2, 1}}},
                                  {0, K::SEND, 2, {{2, 1}}},
                                  {1, K::SEND, 0, {{2, 0}}},
                              }));
            EXPECT_EQ(ops[3], (std::vector<Op>{{1, K::RECV, 1, {{0, 0}}}}));
        }
    }
    {
        // Radix 3 (two rounds of up to 2 messages): 3 is "10" in base 3, so 0 -> 3 in round
        // 1; 2 is "02", so 2 -> 0 (2 + 2 mod 4) in round 0.
        const auto ops = compile_two_nodes(edges, tmp.path() / "r3", 3, Placement::block(4, 4, 4));
        if (world_rank() == 0) {
            EXPECT_EQ(ops[0], (std::vector<Op>{{0, K::RECV, 2, {{2, 0}}}, {1, K::SEND, 3, {{0, 0}}}}));
            EXPECT_TRUE(ops[1].empty());
            EXPECT_EQ(ops[2], (std::vector<Op>{
                                  {0, K::RECV, 2, {{2, 1}}},
                                  {0, K::SEND, 2, {{2, 1}}},
                                  {0, K::SEND, 0, {{2, 0}}},
                              }));
            EXPECT_EQ(ops[3], (std::vector<Op>{{1, K::RECV, 0, {{0, 0}}}}));
        }
    }
}

TEST(Hierarchical, BruckRoundsAroundTheNodePairMessage) {
    // Nodes {0, 1} and {2, 3}, out(1) = [3], out(2) = [0], radix 2: one round per node, so
    // hand-off in step 0, the node pair messages in step 1, delivery in step 2. LPT as in
    // HandOffForwardAndDeliver: node 0 forwards through 0 and receives at 1, node 1 forwards
    // through 2 and receives at 3. So 1 hands (1,0) to 0, which sends it to 3 (its
    // destination); 2 sends (2,0) to 1, which delivers it to 0.
    SharedTempDir tmp;
    const auto ops = compile_two_nodes({{1, 3}, {2, 0}}, tmp.path() / "p", 2);
    if (world_rank() != 0) return;
    using K = Operation;
    EXPECT_EQ(ops[0], (std::vector<Op>{
                          {0, K::RECV, 1, {{1, 0}}},
                          {1, K::SEND, 3, {{1, 0}}},
                          {2, K::RECV, 1, {{2, 0}}},
                      }));
    EXPECT_EQ(ops[1], (std::vector<Op>{
                          {0, K::SEND, 0, {{1, 0}}},
                          {1, K::RECV, 2, {{2, 0}}},
                          {2, K::SEND, 0, {{2, 0}}},
                      }));
    EXPECT_EQ(ops[2], (std::vector<Op>{{1, K::SEND, 1, {{2, 0}}}}));
    EXPECT_EQ(ops[3], (std::vector<Op>{{1, K::RECV, 0, {{1, 0}}}}));
}

TEST(Hierarchical, ByteIdenticalForEveryProcessCount) {
    SharedTempDir tmp;
    const std::vector<std::tuple<std::string, nbr::Topology, Placement>> cases{
        {"moore", nbr::generate_moore({256, 2, 2}), Placement::block(256, 32, 16)},
        {"random", nbr::generate_random({200, 0.3, 4}), Placement::block(200, 24, 12)},
        {"awkward", nbr::test::awkward_topology(40), Placement::block(40, 6, 3)},
        {"can_1054", nbr::read_matrix_market((nbr::test::matrices_dir() / "can_1054.mtx").string(), 64),
         nbr::test::round_robin(tmp.path() / "rr64.txt", 64, 5)},
    };
    for (const auto& [name, topology, placement] : cases) {
        SCOPED_TRACE(name);
        for (const auto radix : {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{3}}) {
            const auto s = nbr::test::compile_for_any_process_count(
                topology, nbr::test::hierarchical_options("", placement, radix), tmp.path() / name);
            if (world_rank() == 0) {
                EXPECT_GT(s.metrics.at("lanes_forwarded").max, 0.0);
            }
        }
    }
}

TEST(Hierarchical, VerifiesOnIrregularGraphsAndUnevenPlacements) {
    SharedTempDir tmp;
    const std::vector<nbr::Edge> loops{{0, 0}, {0, 0}};
    std::vector<std::pair<std::string, nbr::Topology>> graphs{
        {"awkward 13", nbr::test::awkward_topology(13)},
        {"awkward 61", nbr::test::awkward_topology(61)},
        {"moore d=2 r=1 N=64", nbr::generate_moore({64, 2, 1})},
        {"moore d=4 r=1 N=81", nbr::generate_moore({81, 4, 1})},
        {"random 0.05 N=256", nbr::generate_random({256, 0.05, 2})},
        {"random 0.8 N=96", nbr::generate_random({96, 0.8, 3})},
        {"ash292/16", nbr::read_matrix_market((nbr::test::matrices_dir() / "ash292.mtx").string(), 16)},
        {"one rank", nbr::Topology::from_edges(1, loops)},
        {"no edges", nbr::Topology::from_edges(9, std::span<const nbr::Edge>{})},
    };
    for (const auto& [name, topology] : graphs) {
        const auto n = topology.num_ranks();
        const std::vector<std::pair<std::string, Placement>> placements{
            {"1/1", Placement::block(n, 1, 1)},
            {"8/4", Placement::block(n, 8, 4)},
            {"7/7", Placement::block(n, 7, 7)},
            {"round robin", nbr::test::round_robin(tmp.path() / "rr.txt", n, 3)},
        };
        for (const auto& [pname, placement] : placements) {
            for (const auto radix :
                 {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{2}, std::optional<std::uint32_t>{3}}) {
                const auto label = name + ", placement " + pname + ", radix " + (radix ? std::to_string(*radix) : "-");
                const auto s = nbr::test::compile_and_verify(
                    topology, nbr::test::hierarchical_options(tmp.path() / "v", placement, radix), label);
                if (world_rank() == 0) {
                    EXPECT_EQ(s.ranks, n) << label;
                }
            }
        }
    }
}

TEST(Hierarchical, OneMessagePerNodePairOrLanesSpreadOverTheNode) {
    SharedTempDir tmp;
    {
        // 96 ranks on 12 nodes of 8, δ = 0.3: every ordered pair of nodes has edges and a
        // node has 22 node pairs for 8 ranks, so one lane each: 132 inter-node messages in
        // all, at most 2 forwarding roles per rank (11 over 8 ranks).
        const auto topology = nbr::generate_random({96, 0.3, 1});
        const auto s = nbr::test::compile_and_verify(
            topology, nbr::test::hierarchical_options(tmp.path() / "a", Placement::block(96, 8, 4)), "random 96");
        if (world_rank() == 0) {
            EXPECT_DOUBLE_EQ(s.metrics.at("sends_off_node").mean * 96, 132);
            EXPECT_LE(s.metrics.at("lanes_forwarded").max, 2);
            EXPECT_LT(s.sends_per_rank.mean, 0.6 * s.naive_sends_per_rank.mean);
        }
    }
    {
        // 240 ranks on 6 nodes of 40: 10 node pairs per node, so each pair gets 3 or 4 lanes
        // (its share of the node's 40 ranks), every lane its own forwarder and receiver.
        const auto topology = nbr::generate_random({240, 0.3, 1});
        const auto s = nbr::test::compile_and_verify(
            topology, nbr::test::hierarchical_options(tmp.path() / "b", Placement::block(240, 40, 20)), "random 240");
        if (world_rank() == 0) {
            EXPECT_GE(s.metrics.at("sends_off_node").mean * 240, 90);
            EXPECT_LE(s.metrics.at("sends_off_node").mean * 240, 120);
            EXPECT_EQ(s.metrics.at("sends_off_node").max, 1);
            EXPECT_EQ(s.metrics.at("lanes_forwarded").max, 1);
            EXPECT_EQ(s.metrics.at("lanes_received").max, 1);
        }
    }
}

TEST(Hierarchical, BruckRoundsBoundTheMessagesInsideANode) {
    // 240 ranks on 6 nodes of 40, δ = 0.3 (72 out-neighbors a rank, 11–12 inside its node):
    // directly, a rank sends about 40 messages inside its node (hand-offs and deliveries);
    // in Bruck rounds of radix r at most (r − 1)·⌈log_r 40⌉ in each of the two phases, and
    // one node pair message.
    SharedTempDir tmp;
    const auto topology = nbr::generate_random({240, 0.3, 1});
    const auto placement = Placement::block(240, 40, 20);
    const auto inside = [](const nbr::compiler::PatternSummary& s) {
        return s.metrics.at("sends_same_socket").mean + s.metrics.at("sends_other_socket").mean;
    };
    const auto direct =
        nbr::test::compile_and_verify(topology, nbr::test::hierarchical_options(tmp.path() / "d", placement), "direct");
    for (const auto& [radix, bound] : {std::pair{2U, 2 * 6 + 1}, std::pair{4U, 2 * 3 * 3 + 1}}) {
        const auto s = nbr::test::compile_and_verify(
            topology, nbr::test::hierarchical_options(tmp.path() / "b", placement, radix), "bruck");
        if (world_rank() != 0) continue;
        EXPECT_LE(s.sends_per_rank.max, bound) << radix;
        EXPECT_LT(inside(s), 0.5 * inside(direct)) << radix;
        EXPECT_EQ(s.metrics.at("sends_off_node").max, 1) << radix;  // the node pair messages as before
    }
}

}  // namespace
