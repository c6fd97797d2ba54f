// common-neighbor: exact behavior on hand-checked cases, determinism for every process
// count, verify on the topologies the issue lists, fewer messages than naive.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>
#include <mpi.h>

#include "common_neighbor_reference.hpp"
#include "mpi_test_support.hpp"
#include "nbr/compiler/inspect.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/readers.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::compiler::AlgorithmKind;
using nbr::schema::Operation;
using nbr::test::SharedTempDir;
using nbr::test::world_rank;

using nbr::test::Op;
using nbr::test::ops_of;

TEST(CommonNeighbor, TwoFriendsSplitTheirCommonNeighbors) {
    // Ranks 0 and 1 both send to 2, 3, 4, 5 (Θ = 4 common neighbors): they pair, rank 0
    // (lower) keeps the first half {2, 3}, rank 1 the second {4, 5} (paper Alg. 1 lines 9-17).
    std::vector<nbr::Edge> edges;
    for (std::uint32_t src : {0u, 1u}) {
        for (std::uint32_t dst : {2u, 3u, 4u, 5u}) edges.push_back({src, dst});
    }
    const auto topology = nbr::Topology::from_edges(6, edges);
    SharedTempDir tmp;
    nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::common_neighbor_options(tmp.path() / "p"));
    if (world_rank() != 0) return;
    const auto patterns = nbr::test::read_patterns(tmp.path() / "p");
    using K = Operation;
    // Step 0: exchange the offloaded halves; step 1: combined sends to the onloaded half.
    EXPECT_EQ(ops_of(patterns[0]), (std::vector<Op>{
                                       {0, K::RECV, 1, {{1, 0}, {1, 1}}},
                                       {0, K::SEND, 1, {{0, 2}, {0, 3}}},
                                       {1, K::SEND, 2, {{0, 0}, {1, 0}}},
                                       {1, K::SEND, 3, {{0, 1}, {1, 1}}},
                                   }));
    EXPECT_EQ(ops_of(patterns[1]), (std::vector<Op>{
                                       {0, K::RECV, 0, {{0, 2}, {0, 3}}},
                                       {0, K::SEND, 0, {{1, 0}, {1, 1}}},
                                       {1, K::SEND, 4, {{1, 2}, {0, 2}}},
                                       {1, K::SEND, 5, {{1, 3}, {0, 3}}},
                                   }));
    EXPECT_EQ(ops_of(patterns[2]), (std::vector<Op>{{1, K::RECV, 0, {{0, 0}, {1, 0}}}}));
    EXPECT_EQ(ops_of(patterns[5]), (std::vector<Op>{{1, K::RECV, 1, {{1, 3}, {0, 3}}}}));
    EXPECT_TRUE(nbr::compiler::verify_directory(tmp.path() / "p", &topology).ok);
}

TEST(CommonNeighbor, BelowThresholdNothingCombines) {
    // Three common neighbors < Θ = 4: the pattern is the naive one.
    std::vector<nbr::Edge> edges;
    for (std::uint32_t src : {0u, 1u}) {
        for (std::uint32_t dst : {2u, 3u, 4u}) edges.push_back({src, dst});
    }
    const auto topology = nbr::Topology::from_edges(5, edges);
    SharedTempDir tmp;
    nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::common_neighbor_options(tmp.path() / "p"));
    nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::common_neighbor_options(tmp.path() / "p3", 3));
    if (world_rank() != 0) return;
    const auto s = nbr::test::summary_of(tmp.path() / "p");
    EXPECT_EQ(s.sends_per_rank.max, 3);
    EXPECT_EQ(s.metrics.at("combined_edge_share").max, 0);
    EXPECT_EQ(s.metrics.at("friends").max, 0);
    // With Θ = 3 they combine: each sends 1 exchange + 1 or 2 combined messages.
    const auto s3 = nbr::test::summary_of(tmp.path() / "p3");
    EXPECT_EQ(s3.metrics.at("combined_edge_share").max, 1);
    EXPECT_LT(s3.sends_per_rank.max, 3.5);
}

TEST(CommonNeighbor, ByteIdenticalForEveryProcessCount) {
    SharedTempDir tmp;
    const std::vector<std::pair<std::string, nbr::Topology>> cases{
        {"moore", nbr::generate_moore({256, 2, 2})},
        {"random", nbr::generate_random({200, 0.3, 4})},
        {"awkward", nbr::test::awkward_topology(40)},
        {"can_1054", nbr::read_matrix_market((nbr::test::matrices_dir() / "can_1054.mtx").string(), 64)},
    };
    for (const auto& [name, topology] : cases) {
        SCOPED_TRACE(name);
        const auto parallel = tmp.path() / (name + ".parallel");
        nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::common_neighbor_options(parallel, 2));
        if (world_rank() == 0) {
            const auto serial = tmp.path() / (name + ".serial");
            nbr::compiler::compile(MPI_COMM_SELF, topology, nbr::test::common_neighbor_options(serial, 2));
            for (const auto& entry : fs::directory_iterator(serial)) {
                EXPECT_EQ(nbr::read_file(entry.path()), nbr::read_file(parallel / entry.path().filename()))
                    << entry.path().filename();
            }
            const auto report = nbr::compiler::verify_directory(parallel, &topology);
            EXPECT_TRUE(report.ok) << report.violation;
            EXPECT_LT(nbr::test::summary_of(parallel).metrics.at("combined_edge_share").mean, 1.0);
            EXPECT_GT(nbr::test::summary_of(parallel).metrics.at("combined_edge_share").max, 0.0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

TEST(CommonNeighbor, MatchesTheRoundByRoundReference) {
    SharedTempDir tmp;
    const std::vector<std::tuple<std::string, nbr::Topology, std::uint32_t>> cases{
        {"moore 2d r2", nbr::generate_moore({100, 2, 2}), 4},
        {"moore 3d r1", nbr::generate_moore({64, 3, 1}), 4},
        {"moore 2d r1 theta 2", nbr::generate_moore({49, 2, 1}), 2},
        {"random 0.3", nbr::generate_random({90, 0.3, 3}), 4},
        {"random 0.1 theta 2", nbr::generate_random({120, 0.1, 8}), 2},
        {"awkward", nbr::test::awkward_topology(60), 2},
        {"ash292/32", nbr::read_matrix_market((nbr::test::matrices_dir() / "ash292.mtx").string(), 32), 3},
    };
    for (const auto& [name, topology, threshold] : cases) {
        SCOPED_TRACE(name);
        const auto dir = tmp.path() / "p";
        nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::common_neighbor_options(dir, threshold));
        if (world_rank() == 0) {
            const auto reference = nbr::test::reference_common_neighbor(topology, threshold);
            const auto patterns = nbr::test::read_patterns(dir);
            for (std::uint32_t v = 0; v < topology.num_ranks(); ++v) {
                std::vector<nbr::test::ReferenceSend> sends;
                for (const auto& op : ops_of(patterns[v])) {
                    if (op.kind == Operation::SEND) sends.push_back({op.step, op.peer, op.items});
                }
                ASSERT_EQ(sends, reference.sends[v]) << "rank " << v;
            }
            const auto summary = nbr::test::summary_of(dir);
            EXPECT_EQ(summary.metrics.at("matching_rounds").max, static_cast<double>(reference.rounds));
            EXPECT_EQ(summary.metrics.at("iterations").max, reference.iterations);
            EXPECT_GT(reference.iterations, 0u);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

TEST(CommonNeighbor, FewerMessagesThanNaive) {
    SharedTempDir tmp;
    for (const auto& [name, topology] : std::vector<std::pair<std::string, nbr::Topology>>{
             {"moore d=2 r=2 N=1024", nbr::generate_moore({1024, 2, 2})},
             {"random 0.2 N=1024", nbr::generate_random({1024, 0.2, 1})}}) {
        const auto s = nbr::test::compile_and_verify(topology, tmp.path() / "f", name);
        if (world_rank() == 0) {
            EXPECT_LT(s.sends_per_rank.mean, 0.8 * s.naive_sends_per_rank.mean) << name;
            EXPECT_GT(s.metrics.at("pairings").mean, 1.0) << name;
        }
    }
}

}  // namespace
