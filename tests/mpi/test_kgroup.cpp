// kgroup: exact behavior on a hand-checked case, determinism for every process count, verify
// on irregular graphs for k = 2..6 in both variants, the limits, topology-aware locality.
#include <algorithm>
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
using nbr::test::kgroup_options;
using nbr::test::Op;
using nbr::test::ops_of;
using nbr::test::SharedTempDir;
using nbr::test::world_rank;

TEST(KGroup, ThreeFriendsSplitTheirCommonNeighborsByRank) {
    // Ranks 0, 1, 2 all send to 3, 4, 5, 6: one group of k = 3 with 4 > Θ = 3 common
    // neighbors. m mod k = 1, so rank 0 (lowest) takes two, {3, 4}; rank 1 takes {5}, rank 2
    // {6} (Alg. 1 lines 10-17). Each member sends the others the slots of their parts (step 0)
    // and combines every member's items for its own part (step 1), members in rank order.
    std::vector<nbr::Edge> edges;
    for (std::uint32_t src : {0u, 1u, 2u}) {
        for (std::uint32_t dst : {3u, 4u, 5u, 6u}) edges.push_back({src, dst});
    }
    const auto topology = nbr::Topology::from_edges(7, edges);
    SharedTempDir tmp;
    nbr::compiler::compile(MPI_COMM_WORLD, topology, kgroup_options(tmp.path() / "p", 3));
    if (world_rank() != 0) return;
    const auto patterns = nbr::test::read_patterns(tmp.path() / "p");
    using K = Operation;
    EXPECT_EQ(ops_of(patterns[0]), (std::vector<Op>{
                                       {0, K::RECV, 1, {{1, 0}, {1, 1}}},
                                       {0, K::RECV, 2, {{2, 0}, {2, 1}}},
                                       {0, K::SEND, 1, {{0, 2}}},
                                       {0, K::SEND, 2, {{0, 3}}},
                                       {1, K::SEND, 3, {{0, 0}, {1, 0}, {2, 0}}},
                                       {1, K::SEND, 4, {{0, 1}, {1, 1}, {2, 1}}},
                                   }));
    EXPECT_EQ(ops_of(patterns[1]), (std::vector<Op>{
                                       {0, K::RECV, 0, {{0, 2}}},
                                       {0, K::RECV, 2, {{2, 2}}},
                                       {0, K::SEND, 0, {{1, 0}, {1, 1}}},
                                       {0, K::SEND, 2, {{1, 3}}},
                                       {1, K::SEND, 5, {{0, 2}, {1, 2}, {2, 2}}},
                                   }));
    EXPECT_EQ(ops_of(patterns[6]), (std::vector<Op>{{1, K::RECV, 2, {{0, 3}, {1, 3}, {2, 3}}}}));
    EXPECT_TRUE(nbr::compiler::verify_directory(tmp.path() / "p", &topology).ok);
    const auto s = nbr::test::summary_of(tmp.path() / "p");
    EXPECT_EQ(s.metrics.at("hyperedges").max, 1);
    EXPECT_EQ(s.metrics.at("group_size").max, 3);
    EXPECT_EQ(s.metrics.at("combined_edge_share").max, 1);
}

TEST(KGroup, ThresholdIsExceededNotReached) {
    // Three common neighbors do not exceed Θ = 3: nothing combines; Θ = 2 combines.
    std::vector<nbr::Edge> edges;
    for (std::uint32_t src : {0u, 1u, 2u}) {
        for (std::uint32_t dst : {3u, 4u, 5u}) edges.push_back({src, dst});
    }
    const auto topology = nbr::Topology::from_edges(6, edges);
    SharedTempDir tmp;
    const auto at = nbr::test::compile_and_verify(topology, kgroup_options(tmp.path() / "a", 3, 3), "Θ = 3");
    const auto below = nbr::test::compile_and_verify(topology, kgroup_options(tmp.path() / "b", 3, 2), "Θ = 2");
    if (world_rank() != 0) return;
    EXPECT_EQ(at.sends_per_rank.max, 3);     // direct sends
    EXPECT_EQ(below.sends_per_rank.max, 3);  // 2 exchanges + 1 combined send: k = 3 saves nothing at m = 3
    EXPECT_EQ(at.metrics.at("groups_joined").max, 0);
    EXPECT_EQ(below.metrics.at("groups_joined").max, 1);
}

TEST(KGroup, ByteIdenticalForEveryProcessCount) {
    SharedTempDir tmp;
    const std::vector<std::tuple<std::string, nbr::Topology, nbr::compiler::CompileOptions>> cases{
        {"moore k=3", nbr::generate_moore({256, 2, 2}), kgroup_options("", 3)},
        {"moore k=4 aware", nbr::generate_moore({256, 2, 2}), kgroup_options("", 4, 2, Placement::block(256, 40, 20))},
        {"random k=2", nbr::generate_random({200, 0.3, 4}), kgroup_options("", 2)},
        {"random k=5 aware", nbr::generate_random({200, 0.4, 4}),
         kgroup_options("", 5, 5, Placement::block(200, 24, 12))},
        {"awkward k=3", nbr::test::awkward_topology(40), kgroup_options("", 3, 0)},
        {"can_1054 k=3", nbr::read_matrix_market((nbr::test::matrices_dir() / "can_1054.mtx").string(), 64),
         kgroup_options("", 3, 2)},
    };
    for (const auto& [name, topology, options] : cases) {
        SCOPED_TRACE(name);
        const auto s = nbr::test::compile_for_any_process_count(topology, options, tmp.path() / name);
        if (world_rank() == 0) {
            EXPECT_GT(s.metrics.at("groups_joined").mean, 0.0);
        }
    }
}

TEST(KGroup, VerifiesOnIrregularGraphsForEveryK) {
    SharedTempDir tmp;
    std::vector<nbr::Edge> parallel;  // every edge three times, plus self-loops
    for (std::uint32_t r = 0; r < 12; ++r) {
        for (std::uint32_t d = 1; d <= 4; ++d) {
            for (int copy = 0; copy < 3; ++copy) parallel.push_back({r, (r + d) % 12});
        }
        parallel.push_back({r, r});
    }
    const auto graphs = nbr::test::irregular_graphs({
        {"parallel edges 12", nbr::Topology::from_edges(12, parallel)},
        {"random 0.3 N=64", nbr::generate_random({64, 0.3, 2})},
    });
    for (const auto& [name, topology] : graphs) {
        const auto n = topology.num_ranks();
        for (std::uint32_t k = 2; k <= 6; ++k) {
            for (bool aware : {false, true}) {
                const auto label = name + ", k=" + std::to_string(k) + (aware ? " aware" : "");
                auto placement = aware ? std::optional(Placement::block(n, 8, 4)) : std::nullopt;
                // Θ = 0: any shared neighbor makes a group, so that small graphs exercise it.
                const auto s = nbr::test::compile_and_verify(
                    topology, kgroup_options(tmp.path() / "v", k, 0, std::move(placement)), label);
                if (world_rank() == 0) {
                    EXPECT_EQ(s.ranks, n) << label;
                }
            }
        }
    }
}

TEST(KGroup, TopologyAwareGroupsStayOnTheNode) {
    SharedTempDir tmp;
    const auto topology = nbr::generate_moore({1024, 2, 3});
    const auto placement = Placement::block(1024, 40, 20);
    const auto dir = tmp.path() / "aware";
    nbr::compiler::compile(MPI_COMM_WORLD, topology, kgroup_options(dir, 3, std::nullopt, placement));
    if (world_rank() != 0) return;
    std::size_t combined = 0;
    for (const auto& rank : nbr::test::read_patterns(dir)) {
        for (const auto& op : ops_of(rank)) {
            if (op.step != 1 || op.kind != Operation::SEND) continue;
            ++combined;
            for (const auto& [origin, slot] : op.items) {
                EXPECT_TRUE(placement.same_node(origin, rank.rank())) << origin << " in a group of " << rank.rank();
            }
        }
    }
    EXPECT_GT(combined, 1024U);
    const auto s = nbr::test::summary_of(dir);
    EXPECT_LT(s.sends_per_rank.mean, s.naive_sends_per_rank.mean);
    EXPECT_LE(s.metrics.at("friends").max, 39);
    const auto placement_parameter =
        std::find(s.parameters.begin(), s.parameters.end(),
                  std::pair<std::string, std::string>{"placement", "block 40/node 20/socket"});
    EXPECT_NE(placement_parameter, s.parameters.end());
}

TEST(KGroup, LimitsBindAndThePatternStaysExact) {
    SharedTempDir tmp;
    const auto topology = nbr::generate_moore({256, 2, 2});
    auto capped = kgroup_options(tmp.path() / "cap", 4);
    capped.algorithm_options.max_hyperedges = 3;
    auto budget = kgroup_options(tmp.path() / "budget", 4);
    budget.algorithm_options.max_combinations = 50;
    for (const auto& options : {capped, budget}) {
        const auto report = nbr::compiler::compile(MPI_COMM_WORLD, topology, options);
        ASSERT_EQ(report.notes.size(), 1U);
        EXPECT_NE(
            report.notes[0].find(options.output == capped.output ? "--max-hyperedges 3" : "--max-combinations 50"),
            std::string::npos)
            << report.notes[0];
        if (world_rank() == 0) {
            const auto verified = nbr::compiler::verify_directory(options.output, &topology);
            EXPECT_TRUE(verified.ok) << verified.violation;
            const auto s = nbr::test::summary_of(options.output);
            if (options.output == capped.output) {
                EXPECT_GT(s.metrics.at("hyperedges").min, 3);  // found more than kept
                EXPECT_EQ(s.metrics.at("hyperedge_cap_reached").min, 1);
            } else {
                EXPECT_EQ(s.metrics.at("search_truncated").min, 1);
            }
            // Members share what they kept, so groups form although each rank kept few.
            EXPECT_GT(s.metrics.at("groups_joined").mean, 0.5);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

TEST(KGroup, PairsMatchCommonNeighborWithTheSameCriterion) {
    // k = 2 with "more than 3" is common-neighbor's "at least 4": both combine pairs; they
    // differ in the matching (heaviest group first here, Alg. 2's rounds there).
    SharedTempDir tmp;
    for (double density : {0.1, 0.3}) {
        const auto topology = nbr::generate_random({256, density, 5});
        const auto cn = nbr::test::compile_and_verify(
            topology, nbr::test::common_neighbor_options(tmp.path() / "cn", 4), "common-neighbor");
        const auto kg = nbr::test::compile_and_verify(topology, kgroup_options(tmp.path() / "kg", 2, 3), "kgroup k=2");
        if (world_rank() == 0) {
            EXPECT_LT(kg.sends_per_rank.mean, 0.9 * kg.naive_sends_per_rank.mean) << density;
            EXPECT_NEAR(kg.sends_per_rank.mean, cn.sends_per_rank.mean, 0.05 * cn.sends_per_rank.mean) << density;
        }
    }
}

TEST(KGroup, RejectsBadSettings) {
    const auto topology = nbr::generate_moore({16, 2, 1});
    SharedTempDir tmp;
    auto one = kgroup_options(tmp.path() / "x", 1);
    EXPECT_THROW(nbr::compiler::compile(MPI_COMM_WORLD, topology, one), std::invalid_argument);
    auto aware = kgroup_options(tmp.path() / "x", 3);
    aware.algorithm_options.topology_aware = true;  // without a placement
    EXPECT_THROW(nbr::compiler::compile(MPI_COMM_WORLD, topology, aware), std::invalid_argument);
    EXPECT_THROW(nbr::compiler::compile(MPI_COMM_WORLD, topology,
                                        kgroup_options(tmp.path() / "x", 3, 1, Placement::block(15, 4, 2))),
                 std::runtime_error);
    EXPECT_FALSE(fs::exists(tmp.path() / "x"));
}

}  // namespace
