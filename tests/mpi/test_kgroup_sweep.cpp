// kgroup on common-neighbor's verification corpus for k = 2..4 (auto's candidates),
// topology-agnostic and -aware: every shared matrix at 16 and 64 ranks, Moore d = 2..4 with
// r = 1..3 at 64 and 256 ranks and d = 2 at 1024, random graphs with δ = 0.05..0.8 at 256
// ranks and 0.05 at 1024, irregular graphs. Each pattern is proven by verify against its
// topology. k = 5 and 6 are proven on the irregular graphs of test_kgroup; Moore d = 3, 4 at
// 4096 ranks by bench/kgroup_table/run.sh (k = 2..6, 8, 16) and bench/verify_heavy/run.sh
// --algos kgroup.
#include <filesystem>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/placement.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::test::SharedTempDir;
using nbr::test::world_rank;

/// k = 2..4 in both variants (nodes of 12 ranks: the paper's node sizes do not divide the
/// small cases); never more messages than naive plus the group exchanges.
void sweep(const nbr::Topology& topology, const std::string& label, const fs::path& dir) {
    const auto n = topology.num_ranks();
    for (std::uint32_t k = 2; k <= 4; ++k) {
        for (bool aware : {false, true}) {
            auto placement = aware ? std::optional(nbr::Placement::block(n, 12, 6)) : std::nullopt;
            const auto name = label + ", k=" + std::to_string(k) + (aware ? " aware" : " agnostic");
            const auto s = nbr::test::compile_and_verify(
                topology, nbr::test::kgroup_options(dir, k, std::nullopt, std::move(placement)), name);
            if (world_rank() == 0 && topology.num_edges() > 0) {
                // Θ = k: a group forms only where each member saves messages (Eq. 2).
                EXPECT_LE(s.sends_per_rank.mean, s.naive_sends_per_rank.mean) << name;
            }
        }
    }
}

TEST(KGroupSweep, EverySharedMatrix) {
    SharedTempDir tmp;
    const auto matrices = nbr::test::shared_matrix_topologies();
    for (const auto& [label, topology] : matrices) sweep(topology, label, tmp.path() / "m");
    EXPECT_GE(matrices.size(), nbr::test::kSharedMatrices) << "every shared matrix at 16 ranks (square ones at 64 too)";
}

TEST(KGroupSweep, MooreNeighborhoods) {
    SharedTempDir tmp;
    int cases = 0;
    for (const auto& m : nbr::test::moore_sweep_cases()) {
        // d = 3, 4 at 1024 ranks take 2-5 s per compile (a minute for the six), at 4096 7-8 s:
        // bench/kgroup_table/run.sh and bench/verify_heavy/run.sh.
        if (m.ranks == 4096 || (m.ranks == 1024 && m.dims > 2)) continue;
        sweep(nbr::generate_moore(m), nbr::test::moore_label(m), tmp.path() / "m");
        ++cases;
    }
    EXPECT_GE(cases, 9);
}

TEST(KGroupSweep, RandomGraphs) {
    SharedTempDir tmp;
    int cases = 0;
    for (std::uint32_t n : {256u, 1024u}) {
        for (double density : {0.05, 0.2, 0.8}) {
            // bench/kgroup_table/run.sh covers δ = 0.4 at 1024 (δ = 0.2 there costs 30 s here)
            if (n == 1024 && density > 0.05) continue;
            sweep(nbr::generate_random({n, density, 7}),
                  "random N=" + std::to_string(n) + " density=" + std::to_string(density), tmp.path() / "r");
            ++cases;
        }
    }
    EXPECT_EQ(cases, 4);
}

TEST(KGroupSweep, IsolatedRanksDuplicatesAndSelfLoops) {
    SharedTempDir tmp;
    std::vector<nbr::Edge> edges;
    for (std::uint32_t a = 0; a < 20; ++a) {
        for (std::uint32_t b = 0; b < 20; ++b) {
            if ((a * 7 + b * 3) % 5 == 0) continue;
            edges.push_back({a, b});                        // includes self-loops a == b
            if ((a + b) % 6 == 0) edges.push_back({a, b});  // duplicate edges
        }
    }
    sweep(nbr::Topology::from_edges(30, edges), "awkward dense", tmp.path() / "a");  // ranks 20..29 isolated
    sweep(nbr::test::awkward_topology(64), "awkward sparse", tmp.path() / "b");
}

}  // namespace
