// common-neighbor on the topologies the issue lists: every shared matrix, Moore d = 2..4 with
// r = 1..3 at N = 64..4096 (d = 3, 4 at 4096: bench/verify_heavy/run.sh), random graphs with
// δ = 0.05..0.8, irregular graphs. Each pattern is proven by verify against its topology.
#include <filesystem>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/graphs/generators.hpp"
#include "test_support.hpp"

namespace {

using nbr::test::SharedTempDir;
using nbr::test::world_rank;

TEST(CommonNeighborSweep, EverySharedMatrix) {
    SharedTempDir tmp;
    const auto matrices = nbr::test::shared_matrix_topologies();
    for (const auto& [label, topology] : matrices) nbr::test::compile_and_verify(topology, tmp.path() / "m", label);
    EXPECT_GE(matrices.size(), nbr::test::kSharedMatrices) << "every shared matrix at 16 ranks (square ones at 64 too)";
}

TEST(CommonNeighborSweep, MooreNeighborhoods) {
    SharedTempDir tmp;
    int cases = 0;
    for (const auto& m : nbr::test::moore_sweep_cases()) {
        if (m.ranks == 4096 && m.dims > 2) continue;  // up to 9.8 M edges: bench/verify_heavy/run.sh
        nbr::test::compile_and_verify(nbr::generate_moore(m), tmp.path() / "m", nbr::test::moore_label(m));
        ++cases;
    }
    EXPECT_GE(cases, 12);
}

TEST(CommonNeighborSweep, RandomGraphs) {
    SharedTempDir tmp;
    int cases = 0;
    for (std::uint32_t n : {256u, 1024u}) {
        for (double density : {0.05, 0.1, 0.2, 0.4, 0.8}) {
            const std::string label = "random N=" + std::to_string(n) + " density=" + std::to_string(density);
            nbr::test::compile_and_verify(nbr::generate_random({n, density, 7}), tmp.path() / "r", label);
            ++cases;
        }
    }
    EXPECT_EQ(cases, 10);
}

TEST(CommonNeighborSweep, IsolatedRanksDuplicatesAndSelfLoops) {
    SharedTempDir tmp;
    // Dense enough to combine, with every irregularity: a clique-ish core with duplicates and
    // self-loops, and isolated ranks.
    std::vector<nbr::Edge> edges;
    const std::uint32_t n = 30;
    for (std::uint32_t a = 0; a < 20; ++a) {
        for (std::uint32_t b = 0; b < 20; ++b) {
            if ((a * 7 + b * 3) % 5 == 0) continue;
            edges.push_back({a, b});                        // includes self-loops a == b
            if ((a + b) % 6 == 0) edges.push_back({a, b});  // duplicate edges
        }
    }
    const auto topology = nbr::Topology::from_edges(n, edges);  // ranks 20..29 isolated
    const auto summary = nbr::test::compile_and_verify(topology, tmp.path() / "a", "awkward dense");
    if (world_rank() == 0) {
        EXPECT_GT(summary.metrics.at("combined_edge_share").mean, 0.2);
    }
    nbr::test::compile_and_verify(nbr::test::awkward_topology(64), tmp.path() / "b", "awkward sparse");
}

}  // namespace
