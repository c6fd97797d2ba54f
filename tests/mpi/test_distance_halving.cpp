// distance-halving: exact behavior on a hand-checked case, determinism for every process
// count, verify on irregular graphs and uneven placements, fewer messages than naive.
#include <filesystem>
#include <numeric>
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

/// A placement file spreading ranks round-robin over `nodes` nodes of two sockets.
TEST(DistanceHalving, AgentDeliversInItsHalfAndFinalPhaseCombines) {
    // L = 1. Step 0 splits {0,1} | {2,3}: rank 0 sends to 2 and 3; the upper ranks share
    // one out-neighbor each with it there (2 -> 3, 3 -> 2), ties go to the lower rank, so 2
    // becomes 0's agent: (0,0) arrives at its destination, (0,1) is held by 2 for 3. Step 1
    // splits {2} | {3}: no candidate shares anything, so 2 keeps everything. Final step 2:
    // one message per destination, 2 -> 3 carrying 0's and 2's items.
    const std::vector<nbr::Edge> edges{{0, 2}, {0, 3}, {2, 3}, {3, 2}};
    const auto topology = nbr::Topology::from_edges(4, edges);
    SharedTempDir tmp;
    nbr::compiler::compile(MPI_COMM_WORLD, topology,
                           nbr::test::distance_halving_options(tmp.path() / "p", Placement::block(4, 1, 1)));
    if (world_rank() != 0) return;
    const auto patterns = nbr::test::read_patterns(tmp.path() / "p");
    using K = Operation;
    EXPECT_EQ(ops_of(patterns[0]), (std::vector<Op>{{0, K::SEND, 2, {{0, 0}, {0, 1}}}}));
    EXPECT_EQ(ops_of(patterns[1]), (std::vector<Op>{}));
    EXPECT_EQ(ops_of(patterns[2]), (std::vector<Op>{
                                       {0, K::RECV, 0, {{0, 0}, {0, 1}}},
                                       {2, K::RECV, 3, {{3, 0}}},
                                       {2, K::SEND, 3, {{0, 1}, {2, 0}}},
                                   }));
    EXPECT_EQ(ops_of(patterns[3]), (std::vector<Op>{
                                       {2, K::RECV, 2, {{0, 1}, {2, 0}}},
                                       {2, K::SEND, 2, {{3, 0}}},
                                   }));
    EXPECT_TRUE(nbr::compiler::verify_directory(tmp.path() / "p", &topology).ok);
    const auto s = nbr::test::summary_of(tmp.path() / "p");
    EXPECT_EQ(s.metrics.at("halving_steps").max, 2);
    EXPECT_EQ(s.metrics.at("agent_found_share").max, 0.5);
    EXPECT_EQ(s.metrics.at("origins_served").max, 1);
}

TEST(DistanceHalving, ByteIdenticalForEveryProcessCount) {
    SharedTempDir tmp;
    const std::vector<std::tuple<std::string, nbr::Topology, Placement>> cases{
        {"moore", nbr::generate_moore({256, 2, 2}), Placement::block(256, 32, 16)},
        {"random", nbr::generate_random({200, 0.3, 4}), Placement::block(200, 24, 12)},
        {"awkward", nbr::test::awkward_topology(40), Placement::block(40, 6, 3)},
        {"can_1054", nbr::read_matrix_market((nbr::test::matrices_dir() / "can_1054.mtx").string(), 64),
         nbr::test::round_robin(tmp.path() / "rr64.txt", 64, 5, 2)},
    };
    for (const auto& [name, topology, placement] : cases) {
        SCOPED_TRACE(name);
        const auto s = nbr::test::compile_for_any_process_count(
            topology, nbr::test::distance_halving_options("", placement), tmp.path() / name);
        if (world_rank() == 0) {
            EXPECT_GT(s.metrics.at("agent_found_share").mean, 0.0);
        }
    }
}

TEST(DistanceHalving, VerifiesOnIrregularGraphsAndUnevenPlacements) {
    SharedTempDir tmp;
    const auto graphs = nbr::test::irregular_graphs({
        {"moore d=2 r=1 N=64", nbr::generate_moore({64, 2, 1})},
        {"moore d=3 r=1 N=216", nbr::generate_moore({216, 3, 1})},
        {"random 0.05 N=256", nbr::generate_random({256, 0.05, 2})},
        {"random 0.8 N=96", nbr::generate_random({96, 0.8, 3})},
    });
    for (const auto& [name, topology] : graphs) {
        const auto n = topology.num_ranks();
        const std::vector<std::pair<std::string, Placement>> placements{
            {"1/1", Placement::block(n, 1, 1)},
            {"8/4", Placement::block(n, 8, 4)},
            {"7/3", Placement::block(n, 7, 3)},
            {"round robin", nbr::test::round_robin(tmp.path() / "rr.txt", n, 3, 2)},
        };
        for (const auto& [pname, placement] : placements) {
            const auto label = name + ", placement " + pname;
            const auto s = nbr::test::compile_and_verify(
                topology, nbr::test::distance_halving_options(tmp.path() / "v", placement), label);
            if (world_rank() == 0) {
                EXPECT_EQ(s.ranks, n) << label;
            }
        }
    }
}

TEST(DistanceHalving, FewerMessagesThanNaiveAndMostlyWithinTheSocket) {
    SharedTempDir tmp;
    const auto topology = nbr::generate_random({640, 0.3, 1});
    const auto s = nbr::test::compile_and_verify(
        topology, nbr::test::distance_halving_options(tmp.path() / "f", Placement::block(640, 40, 20)), "random 0.3");
    if (world_rank() == 0) {
        // Paper Sec. V: about log2(n/L) off-socket messages plus the intra-socket phase.
        EXPECT_LT(s.sends_per_rank.mean, 0.3 * s.naive_sends_per_rank.mean);
        EXPECT_LT(s.metrics.at("sends_off_socket").mean, 12);
        EXPECT_EQ(s.metrics.at("halving_steps").max, 5);  // 640 -> 320 -> ... -> 20
        EXPECT_GT(s.metrics.at("agent_found_share").mean, 0.8);
    }
}

}  // namespace
