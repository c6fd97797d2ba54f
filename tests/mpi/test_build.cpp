// nbr_pattern_build: patterns built in the job into a cache directory. A build equals what the
// compiler writes for the same topology, placement and options, byte for byte; the pattern
// replays what MPI delivers; a second call loads it; a corrupt entry is built again; bad
// arguments, settings that differ across ranks, plain communicators and topologies not worth
// building are refused.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr.h"
#include "nbr/compiler/auto_compile.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/job_build.hpp"
#include "nbr/graphs/generators.hpp"
#include "replay_corpus.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::test::world_rank;
using nbr::test::world_size;

/// An MPI_Info of key-value pairs (freed by the caller).
MPI_Info info_of(const std::vector<std::pair<std::string, std::string>>& pairs) {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    for (const auto& [key, value] : pairs) MPI_Info_set(info, key.c_str(), value.c_str());
    return info;
}

std::string contents(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Every file under `a` and `b`, relative, with its bytes; the two trees must be equal.
void expect_same_tree(const fs::path& a, const fs::path& b) {
    std::vector<std::pair<std::string, std::string>> left, right;
    for (const auto& f : fs::recursive_directory_iterator(a)) {
        if (f.is_regular_file()) left.emplace_back(fs::relative(f.path(), a).string(), contents(f.path()));
    }
    for (const auto& f : fs::recursive_directory_iterator(b)) {
        if (f.is_regular_file()) right.emplace_back(fs::relative(f.path(), b).string(), contents(f.path()));
    }
    std::sort(left.begin(), left.end());
    std::sort(right.begin(), right.end());
    ASSERT_EQ(left.size(), right.size()) << a << " vs " << b;
    for (std::size_t i = 0; i < left.size(); ++i) {
        EXPECT_EQ(left[i].first, right[i].first);
        EXPECT_TRUE(left[i].second == right[i].second) << left[i].first << " differs";
    }
}

class BuildTest : public testing::Test {
protected:
    void SetUp() override {
        // Every rank to every rank, itself included, and once more to the next: self-loops and
        // duplicate edges, and more than two neighbors from two ranks on (worth building).
        const auto n = static_cast<std::uint32_t>(world_size());
        std::vector<nbr::Edge> edges;
        for (std::uint32_t r = 0; r < n; ++r) {
            for (std::uint32_t d = 0; d < n; ++d) edges.push_back({r, (r + d) % n});
            edges.push_back({r, (r + 1) % n});
        }
        topology_ = nbr::Topology::from_edges(n, edges);
        graph_ = nbr::test::dist_graph(topology_);
    }
    void TearDown() override {
        if (pattern_ != NBR_PATTERN_NULL) {
            EXPECT_EQ(nbr_pattern_free(&pattern_), NBR_SUCCESS);
        }
        MPI_Comm_free(&graph_);
    }
    [[nodiscard]] bool worth() const { return !nbr::compiler::not_worth_building(topology_).has_value(); }
    int build(const std::vector<std::pair<std::string, std::string>>& pairs, unsigned long flags = 0) {
        if (pattern_ != NBR_PATTERN_NULL) {
            EXPECT_EQ(nbr_pattern_free(&pattern_), NBR_SUCCESS);
        }
        MPI_Info info = info_of(pairs);
        const int code = nbr_pattern_build(graph_, cache().c_str(), info, flags, &pattern_);
        MPI_Info_free(&info);
        return code;
    }
    [[nodiscard]] std::string origin() const {
        const char* dir = nullptr;
        const char* note = nullptr;
        EXPECT_EQ(nbr_pattern_origin(pattern_, &dir, &note), NBR_SUCCESS);
        return note;
    }
    [[nodiscard]] std::string entry() const {
        const char* dir = nullptr;
        const char* note = nullptr;
        EXPECT_EQ(nbr_pattern_origin(pattern_, &dir, &note), NBR_SUCCESS);
        return dir;
    }
    /// Alltoall and allgather of 5 ints per block against MPI.
    void expect_replays_like_mpi() {
        const auto [in, out] = nbr::test::neighbors_of(graph_);
        std::vector<int> send(5 * out.size() + 1), got(5 * in.size() + 1, -1), want(5 * in.size() + 1, -1);
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = world_rank() * 1000 + static_cast<int>(i);
        ASSERT_EQ(nbr_neighbor_alltoall(send.data(), 5, MPI_INT, got.data(), 5, MPI_INT, pattern_), NBR_SUCCESS)
            << nbr_last_error();
        nbr::test::reference_alltoall(send.data(), 5, MPI_INT, want.data(), 5, MPI_INT, graph_);
        EXPECT_EQ(got, want) << "alltoall on rank " << world_rank();
        std::fill(got.begin(), got.end(), -1);
        std::fill(want.begin(), want.end(), -1);
        ASSERT_EQ(nbr_neighbor_allgather(send.data(), 5, MPI_INT, got.data(), 5, MPI_INT, pattern_), NBR_SUCCESS)
            << nbr_last_error();
        MPI_Neighbor_allgather(send.data(), 5, MPI_INT, want.data(), 5, MPI_INT, graph_);
        EXPECT_EQ(got, want) << "allgather on rank " << world_rank();
    }
    [[nodiscard]] fs::path cache() const { return tmp_.path() / "cache"; }

    nbr::test::SharedTempDir tmp_;
    nbr::Topology topology_;
    MPI_Comm graph_ = MPI_COMM_NULL;
    nbr_pattern_t pattern_ = NBR_PATTERN_NULL;
};

TEST_F(BuildTest, BuildsThenLoadsAndReplaysLikeMpi) {
    for (const char* algo : {"naive", "common-neighbor", "hierarchical", "default"}) {
        SCOPED_TRACE(algo);
        const int code = build({{"nbr_algo", algo}, {"nbr_ranks_per_node", "2"}});
        if (!worth()) {
            EXPECT_EQ(code, NBR_ERR_DECLINED);
            continue;
        }
        ASSERT_EQ(code, NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(origin().rfind("built in ", 0), 0U) << origin();
        expect_replays_like_mpi();
        ASSERT_EQ(build({{"nbr_algo", algo}, {"nbr_ranks_per_node", "2"}}), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(origin(), "loaded from the cache");
        expect_replays_like_mpi();
    }
}

TEST_F(BuildTest, EqualsTheCompilersOutput) {
    if (!worth()) GTEST_SKIP() << "one rank: nothing to build";
    // A single algorithm, and auto over the default candidates.
    ASSERT_EQ(build({{"nbr_algo", "hierarchical"}, {"nbr_ranks_per_node", "2"}}), NBR_SUCCESS) << nbr_last_error();
    const auto placement = nbr::Placement::block(topology_.num_ranks(), 2, 2);
    nbr::compiler::CompileOptions single;
    single.algorithm = nbr::compiler::AlgorithmKind::hierarchical;
    single.algorithm_options.placement = placement;
    single.output = tmp_.path() / "hierarchical";
    single.quiet = true;
    single.source = nbr::compiler::job_source();
    nbr::compiler::compile(MPI_COMM_WORLD, topology_, single);
    expect_same_tree(single.output, entry());

    ASSERT_EQ(build({{"nbr_ranks_per_node", "2"}}), NBR_SUCCESS) << nbr_last_error();
    nbr::compiler::AutoOptions automatic;
    automatic.machine = nbr::simulator::load_machine("niagara");
    automatic.placement = placement;
    automatic.sizes = nbr::compiler::default_auto_sizes();
    automatic.candidates = nbr::compiler::default_job_candidates();
    automatic.keep = 1;
    automatic.output = tmp_.path() / "default";
    automatic.quiet = true;
    automatic.source = nbr::compiler::job_source();
    nbr::compiler::compile_auto(MPI_COMM_WORLD, topology_, automatic);
    expect_same_tree(automatic.output, entry());
}

TEST_F(BuildTest, CorruptEntryIsBuiltAgain) {
    if (!worth()) GTEST_SKIP() << "one rank: nothing to build";
    ASSERT_EQ(build({{"nbr_algo", "naive"}}), NBR_SUCCESS) << nbr_last_error();
    const std::string dir = entry();
    ASSERT_EQ(nbr_pattern_free(&pattern_), NBR_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::ofstream(fs::path(dir) / "manifest.pb", std::ios::trunc) << "garbage";
    MPI_Barrier(MPI_COMM_WORLD);
    ASSERT_EQ(build({{"nbr_algo", "naive"}}), NBR_SUCCESS) << nbr_last_error();
    EXPECT_NE(origin().find("did not load"), std::string::npos) << origin();
    EXPECT_EQ(entry(), dir);
    expect_replays_like_mpi();
}

TEST_F(BuildTest, BudgetLeavesCandidatesOut) {
    if (!worth()) GTEST_SKIP() << "one rank: nothing to build";
    ASSERT_EQ(build({{"nbr_algo", "auto"}, {"nbr_budget", "0"}, {"nbr_ranks_per_node", "2"}}), NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_NE(origin().find("built in "), std::string::npos) << origin();
    EXPECT_NE(origin().find("over the budget, left out: common-neighbor"), std::string::npos) << origin();
    expect_replays_like_mpi();
}

TEST_F(BuildTest, MeasuredBuildKeepsCandidates) {
    if (!worth()) GTEST_SKIP() << "one rank: nothing to build";
    ASSERT_EQ(build({{"nbr_ranks_per_node", "1"}}, NBR_LOAD_MEASURE), NBR_SUCCESS) << nbr_last_error();
    int shapes = -1;
    EXPECT_EQ(nbr_pattern_shape_count(pattern_, &shapes), NBR_SUCCESS);
    expect_replays_like_mpi();
    EXPECT_EQ(nbr_pattern_shape_count(pattern_, &shapes), NBR_SUCCESS);
    EXPECT_EQ(shapes, 2);  // measured: one shape per collective called
}

// Load flags pass through to the load: a step-synchronized engine replays the entry built
// without them, exactly.
TEST_F(BuildTest, LoadFlagsApplyToTheEntryLoaded) {
    if (!worth()) GTEST_SKIP() << "one rank: nothing to build";
    ASSERT_EQ(build({{"nbr_algo", "common-neighbor"}}), NBR_SUCCESS) << nbr_last_error();
    ASSERT_EQ(build({{"nbr_algo", "common-neighbor"}}, NBR_LOAD_STEP_SYNC | NBR_LOAD_NO_NATIVE), NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(origin(), "loaded from the cache");
    expect_replays_like_mpi();
}

TEST_F(BuildTest, PlainCommunicatorWithItsNeighborsGiven) {
    if (!worth()) GTEST_SKIP() << "one rank: nothing to build";
    const auto lists = nbr::test::neighbors_of(graph_);
    const auto in_degree = static_cast<int>(lists.in.size()), out_degree = static_cast<int>(lists.out.size());
    ASSERT_EQ(nbr_pattern_build_adjacent(MPI_COMM_WORLD, in_degree, lists.in.data(), out_degree, lists.out.data(),
                                         cache().c_str(), MPI_INFO_NULL, 0, &pattern_),
              NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(origin().rfind("built in ", 0), 0U) << origin();
    int indegree = -1, outdegree = -1;
    ASSERT_EQ(nbr_pattern_neighbors_count(pattern_, &indegree, &outdegree), NBR_SUCCESS);
    EXPECT_EQ(indegree, in_degree);
    EXPECT_EQ(outdegree, out_degree);
    expect_replays_like_mpi();  // the pattern on MPI_COMM_WORLD against MPI on the graph
    // The same topology from the graph communicator: the entry built for the plain one.
    ASSERT_EQ(build({}), NBR_SUCCESS) << nbr_last_error();
    EXPECT_EQ(origin(), "loaded from the cache");
    ASSERT_EQ(nbr_pattern_free(&pattern_), NBR_SUCCESS);
    // Lists whose ends disagree: rank 0 leaves out its first out-neighbor.
    const int skip = world_rank() == 0 ? 1 : 0;
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    EXPECT_EQ(nbr_pattern_build_adjacent(MPI_COMM_WORLD, in_degree, lists.in.data(), out_degree - skip,
                                         lists.out.data() + skip, cache().c_str(), MPI_INFO_NULL, 0, &pattern),
              NBR_ERR_NEIGHBORS);
    EXPECT_EQ(pattern, NBR_PATTERN_NULL);
    EXPECT_EQ(nbr_pattern_build_adjacent(MPI_COMM_WORLD, -1, nullptr, 0, nullptr, cache().c_str(), MPI_INFO_NULL, 0,
                                         &pattern),
              NBR_ERR_ARG);
}

TEST_F(BuildTest, RefusesBadArguments) {
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    EXPECT_EQ(nbr_pattern_build(graph_, nullptr, MPI_INFO_NULL, 0, &pattern), NBR_ERR_ARG);
    EXPECT_EQ(nbr_pattern_build(graph_, "", MPI_INFO_NULL, 0, &pattern), NBR_ERR_ARG);
    EXPECT_EQ(nbr_pattern_build(graph_, cache().c_str(), MPI_INFO_NULL, 0, nullptr), NBR_ERR_ARG);
    EXPECT_EQ(nbr_pattern_build(MPI_COMM_NULL, cache().c_str(), MPI_INFO_NULL, 0, &pattern), NBR_ERR_ARG);
    EXPECT_EQ(nbr_pattern_build(graph_, cache().c_str(), MPI_INFO_NULL, 0x100, &pattern), NBR_ERR_ARG);
    EXPECT_EQ(build({{"nbr_algo", "bogus"}}), NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("bogus"), std::string::npos) << nbr_last_error();
    EXPECT_EQ(build({{"nbr_budget", "-1"}}), NBR_ERR_ARG);
    EXPECT_EQ(build({{"nbr_cache_limit", "12X"}}), NBR_ERR_ARG);
    EXPECT_EQ(build({{"nbr_ranks_per_node", "0"}}), NBR_ERR_ARG);
    EXPECT_EQ(pattern_, NBR_PATTERN_NULL);
    // A plain communicator has no topology to build for.
    EXPECT_EQ(nbr_pattern_build(MPI_COMM_WORLD, cache().c_str(), MPI_INFO_NULL, 0, &pattern), NBR_ERR_UNSUPPORTED);
    EXPECT_EQ(pattern, NBR_PATTERN_NULL);
}

TEST_F(BuildTest, SettingsThatDifferAcrossRanksAreRefusedOnEveryRank) {
    // Ranks that pass different settings would look up, build or load different entries and
    // never meet in their collectives: every rank gets NBR_ERR_ARG naming the rank and setting.
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    const int last = world_size() - 1;
    const auto expect_refused = [&](int code, const std::string& setting) {
        EXPECT_EQ(code, NBR_ERR_ARG) << nbr_last_error();
        const std::string message = nbr_last_error();
        EXPECT_NE(message.find("rank " + std::to_string(last) + " passed another " + setting), std::string::npos)
            << message;
        EXPECT_EQ(pattern_, NBR_PATTERN_NULL);
    };
    expect_refused(build(world_rank() == last ? std::vector<std::pair<std::string, std::string>>{{"nbr_algo", "naive"}}
                                              : std::vector<std::pair<std::string, std::string>>{}),
                   "info nbr_algo");
    expect_refused(build({{"nbr_keep", world_rank() == last ? "2" : "3"}}), "info nbr_keep");
    expect_refused(build({}, world_rank() == last ? NBR_LOAD_MEASURE : 0), "flags");
    const std::string elsewhere = (tmp_.path() / "elsewhere").string();
    expect_refused(nbr_pattern_build(graph_, world_rank() == last ? elsewhere.c_str() : cache().c_str(), MPI_INFO_NULL,
                                     0, &pattern_),
                   "cache directory");
    expect_refused(
        nbr_pattern_build(graph_, world_rank() == last ? nullptr : cache().c_str(), MPI_INFO_NULL, 0, &pattern_),
        "cache directory");
    // A NULL pattern pointer on one rank: refused everywhere, not a rank that leaves at once.
    nbr_pattern_t* const out = world_rank() == last ? nullptr : &pattern_;
    EXPECT_EQ(nbr_pattern_build(graph_, cache().c_str(), MPI_INFO_NULL, 0, out), NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("rank " + std::to_string(last) + " passed a NULL pattern pointer"),
              std::string::npos)
        << nbr_last_error();
    EXPECT_EQ(pattern_, NBR_PATTERN_NULL);
    // Flags that only this rank's calls feel (statistics) may differ.
    if (worth()) {
        EXPECT_EQ(build({}, world_rank() == last ? NBR_LOAD_STATS : 0), NBR_SUCCESS) << nbr_last_error();
    }
    std::error_code ec;
    EXPECT_FALSE(fs::exists(elsewhere, ec)) << "a refused build stored something";
}

TEST_F(BuildTest, RingIsNotWorthBuilding) {
    const auto n = static_cast<std::uint32_t>(world_size());
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r < n; ++r) edges.push_back({r, (r + 1) % n});
    const auto ring = nbr::Topology::from_edges(n, edges);
    MPI_Comm comm = nbr::test::dist_graph(ring);
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    EXPECT_EQ(nbr_pattern_build(comm, cache().c_str(), MPI_INFO_NULL, 0, &pattern), NBR_ERR_DECLINED);
    EXPECT_EQ(pattern, NBR_PATTERN_NULL);
    std::error_code ec;
    EXPECT_FALSE(fs::exists(cache(), ec) && !fs::is_empty(cache(), ec)) << "something was stored";
    MPI_Comm_free(&comm);
}

}  // namespace
