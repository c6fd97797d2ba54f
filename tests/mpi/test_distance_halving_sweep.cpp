// distance-halving on the topologies the issue lists, each with several placements: every
// shared matrix at 16 and 64 ranks, Moore d = 2..4 with r = 1..3 at N = 64..4096, random
// graphs with δ = 0.05..0.8 at 256 ranks, 0.05 and 0.2 at 1024, 0.05 at 2160 (the dense ones
// at 2160: bench/verify_heavy/run.sh). Each pattern is proven by verify against its topology.
#include <filesystem>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/placement.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::Placement;
using nbr::test::SharedTempDir;
using nbr::test::world_rank;

/// Block placements: the papers' node shapes and one that fits no power of two.
std::vector<std::pair<std::string, Placement>> placements(std::uint32_t n) {
    return {{"40/20", Placement::block(n, 40, 20)}, {"12/5", Placement::block(n, 12, 5)}};
}

void sweep(const nbr::Topology& topology, const std::string& label, const fs::path& dir) {
    for (const auto& [name, placement] : placements(topology.num_ranks())) {
        const auto s = nbr::test::compile_and_verify(topology, nbr::test::distance_halving_options(dir, placement),
                                                     label + ", placement " + name);
        if (world_rank() == 0 && topology.num_edges() > 0) {
            EXPECT_LE(s.sends_per_rank.mean, s.naive_sends_per_rank.mean + s.steps_max) << label;
        }
    }
}

TEST(DistanceHalvingSweep, EverySharedMatrix) {
    SharedTempDir tmp;
    const auto matrices = nbr::test::shared_matrix_topologies();
    for (const auto& [label, topology] : matrices) sweep(topology, label, tmp.path() / "m");
    EXPECT_GE(matrices.size(), nbr::test::kSharedMatrices) << "every shared matrix at 16 ranks (square ones at 64 too)";
}

TEST(DistanceHalvingSweep, MooreNeighborhoods) {
    SharedTempDir tmp;
    int cases = 0;
    for (const auto& m : nbr::test::moore_sweep_cases()) {
        if (m.ranks == 4096 && m.dims > 2) continue;  // thousands of neighbors per rank: bench/, not CI
        sweep(nbr::generate_moore(m), nbr::test::moore_label(m), tmp.path() / "m");
        ++cases;
    }
    EXPECT_GE(cases, 12);
}

TEST(DistanceHalvingSweep, RandomGraphs) {
    SharedTempDir tmp;
    int cases = 0;
    for (std::uint32_t n : {256u, 1024u, 2160u}) {
        for (double density : {0.05, 0.2, 0.8}) {
            // bench/verify_heavy/run.sh covers the dense ones at 2160 (at 1024 δ = 0.8 costs 15 s here)
            if ((n == 2160 && density > 0.05) || (n == 1024 && density > 0.2)) continue;
            sweep(nbr::generate_random({n, density, 7}),
                  "random N=" + std::to_string(n) + " density=" + std::to_string(density), tmp.path() / "r");
            ++cases;
        }
    }
    EXPECT_EQ(cases, 6);
}

}  // namespace
