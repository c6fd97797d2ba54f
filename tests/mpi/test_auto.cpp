// Auto (multi-variant) pattern directories: the compiler's choice rule, a hand-built directory
// whose bands are known (every call runs the variant its band names and delivers what MPI
// delivers), compile_auto end to end, and the load errors of the format.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <gtest/gtest.h>
#include <mpi.h>

#include "auto_directory.hpp"
#include "nbr.h"
#include "nbr/compiler/auto_compile.hpp"
#include "nbr/compiler/inspect.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/simulator/machine.hpp"
#include "replay_corpus.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::test::assemble_auto;
using nbr::test::BandSpec;
using nbr::test::world_rank;
using nbr::test::world_size;

// ---- the choice rule ------------------------------------------------------------------------

/// v-variants predicted as the fixed-size collectives unless given.
nbr::compiler::Prediction prediction(const std::string& name, std::vector<double> allgather,
                                     std::vector<double> alltoall, std::vector<double> allgatherv = {},
                                     std::vector<double> alltoallv = {}) {
    nbr::compiler::Prediction p;
    p.name = name;
    if (allgatherv.empty()) allgatherv = allgather;
    if (alltoallv.empty()) alltoallv = alltoall;
    p.latency_us = {std::move(allgather), std::move(alltoall), std::move(allgatherv), std::move(alltoallv)};
    return p;
}

TEST(ChooseVariants, FastestWinsOnlyByTheMarginNaiveElseAndTiesGoToTheEarlierCandidate) {
    const std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 10, 10, 10}, {10, 10, 10, 10}),
        prediction("a", {5, 9.8, 12, 9}, {9, 9, 9, 9}),
        prediction("b", {5, 9.0, 11, 20}, {9, 9, 9, 9.5}),
    };
    const auto choice = nbr::compiler::choose_variants(predictions, 0.03);
    // 1st: a and b tie (a first); 2nd: a is within 3 % of naive, b wins; 3rd: both slower; 4th: a.
    EXPECT_EQ(choice.winner[0], (std::vector<std::uint32_t>{1, 2, 0, 1}));
    EXPECT_EQ(choice.winner[1], (std::vector<std::uint32_t>{1, 1, 1, 1}));
    // v-variants: allgather has no candidate never slower than naive; alltoall: a (best mean).
    EXPECT_EQ(choice.variable[0], 0U);
    EXPECT_EQ(choice.variable[1], 1U);
    const auto strict = nbr::compiler::choose_variants(predictions, 0.2);
    EXPECT_EQ(strict.winner[0], (std::vector<std::uint32_t>{1, 0, 0, 0}));
    EXPECT_EQ(strict.winner[1], (std::vector<std::uint32_t>{0, 0, 0, 0}));
    EXPECT_EQ(strict.variable[1], 0U);
}

TEST(ChooseVariants, VVariantsAreChosenFromTheirOwnPredictions) {
    // "a" wins every fixed-size alltoall, but its size headers make its alltoallv slower than
    // naive at the last size; "b" is never slower there.
    const std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 10}, {10, 10}),
        prediction("a", {5, 5}, {5, 5}, {5, 5}, {6, 10.5}),
        prediction("b", {9, 9}, {9, 9}, {9, 9}, {9, 9}),
    };
    const auto choice = nbr::compiler::choose_variants(predictions, 0.03);
    EXPECT_EQ(choice.winner[1], (std::vector<std::uint32_t>{1, 1}));
    EXPECT_EQ(choice.variable[0], 1U);
    EXPECT_EQ(choice.variable[1], 2U);
}

TEST(ChooseVariants, AVBytesRangeJudgesTheVChoiceOnlyAtTheSizesThatBracketIt) {
    const std::vector<std::uint64_t> sizes{1, 16, 256, 4096};
    using nbr::compiler::variable_size_range;
    using Range = std::pair<std::size_t, std::size_t>;
    EXPECT_EQ(variable_size_range(sizes, std::nullopt), (Range{0, 3}));
    EXPECT_EQ(variable_size_range(sizes, std::pair<std::uint64_t, std::uint64_t>{18, 18}), (Range{1, 2}));
    EXPECT_EQ(variable_size_range(sizes, std::pair<std::uint64_t, std::uint64_t>{16, 16}), (Range{1, 1}));
    EXPECT_EQ(variable_size_range(sizes, std::pair<std::uint64_t, std::uint64_t>{0, 1}), (Range{0, 0}));
    EXPECT_EQ(variable_size_range(sizes, std::pair<std::uint64_t, std::uint64_t>{2, 300}), (Range{0, 3}));
    EXPECT_EQ(variable_size_range(sizes, std::pair<std::uint64_t, std::uint64_t>{5000, 9000}), (Range{3, 3}));
    // "a" is 3x faster than naive up to 256 B and slower at 4 KiB: over every size the v
    // choice must keep naive; for v-calls of 16-200 bytes (judged at 16 and 256 B) it is "a".
    const std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 10, 10, 10}, {10, 10, 10, 10}),
        prediction("a", {3, 3, 3, 12}, {3, 3, 3, 12}),
        prediction("b", {9, 9, 9, 9}, {9, 9, 9, 9}),
    };
    EXPECT_EQ(nbr::compiler::choose_variants(predictions, 0.01).variable[1], 2U);
    const auto ranged = nbr::compiler::choose_variants(
        predictions, 0.01, variable_size_range(sizes, std::pair<std::uint64_t, std::uint64_t>{16, 200}));
    EXPECT_EQ(ranged.variable[0], 1U);
    EXPECT_EQ(ranged.variable[1], 1U);
    EXPECT_EQ(ranged.winner[1], (std::vector<std::uint32_t>{1, 1, 1, 2}));  // the bands do not change
}

// ---- the simulations dealt out ---------------------------------------------------------------

TEST(KeepCandidates, BesideEachWinnerTheNextFastestAndNaiveAlwaysRepeatsLeftOut) {
    // sizes 0 and 1; "b2" repeats b's predictions (same schedules): never kept twice.
    const std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 10}, {10, 1}), prediction("a", {5, 12}, {9, 2}), prediction("b", {6, 11}, {8, 3}),
        prediction("b2", {6, 11}, {8, 3}),      prediction("c", {7, 9}, {20, 4}),
    };
    auto choice = nbr::compiler::choose_variants(predictions, 0.01);
    nbr::compiler::keep_candidates(choice, predictions, 3);
    // allgather: a wins at size 0 (b next, naive kept), c at size 1 (naive, the next fastest, kept).
    EXPECT_EQ(choice.winner[0], (std::vector<std::uint32_t>{1, 4}));
    EXPECT_EQ(choice.alternatives[0][0], (std::vector<std::uint32_t>{2, 0}));
    EXPECT_EQ(choice.alternatives[0][1], (std::vector<std::uint32_t>{0, 2}));
    // alltoall at size 1: naive wins; the two next fastest, a and b, are kept.
    EXPECT_EQ(choice.winner[1][1], 0U);
    EXPECT_EQ(choice.alternatives[1][1], (std::vector<std::uint32_t>{1, 2}));
    EXPECT_EQ(choice.variable_alternatives[0].size(), 2U);
    nbr::compiler::keep_candidates(choice, predictions, 2);
    EXPECT_EQ(choice.alternatives[0][0], (std::vector<std::uint32_t>{0}));  // naive takes the one place
    nbr::compiler::keep_candidates(choice, predictions, 1);
    EXPECT_TRUE(choice.alternatives[0][0].empty());
    EXPECT_TRUE(choice.variable_alternatives[1].empty());
}

TEST(KeepCandidates, ACandidateThroughRanksWithoutNeighborsServesTheVCallsOnly) {
    // "a" is fastest everywhere but gives a rank without neighbors a message, which libnbr would
    // not run for fixed-size calls: b wins and is kept there, a only for the v-calls.
    std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 10}, {10, 10}),
        prediction("a", {4, 4}, {4, 4}),
        prediction("b", {6, 6}, {6, 6}),
        prediction("c", {8, 8}, {8, 8}),
    };
    predictions[1].through_ranks_without_neighbors = true;
    auto choice = nbr::compiler::choose_variants(predictions, 0.01);
    nbr::compiler::keep_candidates(choice, predictions, 3);
    for (std::size_t c = 0; c < 2; ++c) {
        EXPECT_EQ(choice.winner[c], (std::vector<std::uint32_t>{2, 2}));
        for (const auto& kept : choice.alternatives[c]) EXPECT_EQ(kept, (std::vector<std::uint32_t>{3, 0}));
        EXPECT_EQ(choice.variable[c], 1U);
        EXPECT_EQ(choice.variable_alternatives[c], (std::vector<std::uint32_t>{2, 0}));
    }
}

TEST(KeepCandidates, ACopyPredictedLikeItsBaseAtASizeIsNotKeptThere) {
    // "a-seg" is a's segmented copy: the same at size 0 (nothing cut), faster at size 1.
    const std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 40}, {10, 40}),
        prediction("a", {5, 30}, {5, 30}),
        prediction("b", {8, 35}, {8, 35}),
        prediction("a-seg", {5, 20}, {5, 20}),
    };
    auto choice = nbr::compiler::choose_variants(predictions, 0.01);
    nbr::compiler::keep_candidates(choice, predictions, 3);
    EXPECT_EQ(choice.winner[0], (std::vector<std::uint32_t>{1, 3}));
    EXPECT_EQ(choice.alternatives[0][0], (std::vector<std::uint32_t>{2, 0}));  // b, not a-seg
    EXPECT_EQ(choice.alternatives[0][1], (std::vector<std::uint32_t>{1, 0}));
    // The copy wins where it ties its base (index order) and the base is then passed over.
    const std::vector<nbr::compiler::Prediction> swapped{predictions[0], predictions[3], predictions[2],
                                                         predictions[1]};
    auto tied = nbr::compiler::choose_variants(swapped, 0.01);
    nbr::compiler::keep_candidates(tied, swapped, 3);
    EXPECT_EQ(tied.winner[0][0], 1U);
    EXPECT_EQ(tied.alternatives[0][0], (std::vector<std::uint32_t>{2, 0}));
}

TEST(DealLongestFirst, CostliestFirstToTheLeastLoadedProcessTiesToTheLower) {
    using nbr::compiler::internal::deal_longest_first;
    // 5 -> 0; 4 -> 1; 3 -> 1 (4 < 5); 3 -> 0 (5 < 7); 3 -> 1 (7 < 8).
    EXPECT_EQ(deal_longest_first({3, 5, 3, 4, 3}, 2), (std::vector<int>{1, 0, 0, 1, 1}));
    EXPECT_EQ(deal_longest_first({1, 1, 1}, 1), (std::vector<int>{0, 0, 0}));
    EXPECT_EQ(deal_longest_first({2, 2}, 4), (std::vector<int>{0, 1}));
    EXPECT_TRUE(deal_longest_first({}, 3).empty());
    EXPECT_THROW((void)deal_longest_first({1}, 0), std::invalid_argument);
}

TEST(KthSmallestDistinct, RepeatsCountOnceAndTooFewValuesGiveInfinity) {
    using nbr::compiler::internal::kth_smallest_distinct;
    EXPECT_EQ(kth_smallest_distinct({5, 1, 3, 1, 3}, 1), 1);
    EXPECT_EQ(kth_smallest_distinct({5, 1, 3, 1, 3}, 2), 3);
    EXPECT_EQ(kth_smallest_distinct({5, 1, 3, 1, 3}, 3), 5);
    EXPECT_TRUE(std::isinf(kth_smallest_distinct({5, 1, 3, 1, 3}, 4)));
    EXPECT_TRUE(std::isinf(kth_smallest_distinct({2}, 0)));
    EXPECT_TRUE(std::isinf(kth_smallest_distinct({}, 1)));
}

TEST(DealLongestFirst, TheBusiestProcessStaysWithinFourThirdsOfTheBound) {
    // Costs spread like auto's units (a few heavy candidates, many light); the busiest process
    // must stay within 4/3 of max(mean load, costliest unit), Graham's bound for the rule.
    std::vector<double> costs;
    std::uint64_t state = 12345;
    for (int u = 0; u < 200; ++u) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double r = static_cast<double>(state >> 11) / 9007199254740992.0;
        costs.push_back(u % 17 == 0 ? 50 + 50 * r : 1 + 9 * r);
    }
    for (const int processes : {2, 3, 7, 16, 64}) {
        const auto deal = nbr::compiler::internal::deal_longest_first(costs, processes);
        std::vector<double> load(static_cast<std::size_t>(processes), 0.0);
        for (std::size_t u = 0; u < costs.size(); ++u) load.at(static_cast<std::size_t>(deal[u])) += costs[u];
        const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
        const double bound = std::max(total / processes, *std::max_element(costs.begin(), costs.end()));
        EXPECT_LE(*std::max_element(load.begin(), load.end()), 4.0 / 3.0 * bound) << processes;
        EXPECT_EQ(deal, nbr::compiler::internal::deal_longest_first(costs, processes));
    }
}

// ---- a hand-built auto directory ------------------------------------------------------------

const std::vector<BandSpec> kBands{{nbr::schema::ALLGATHER, 0, 1},  {nbr::schema::ALLGATHER, 16, 0},
                                   {nbr::schema::ALLGATHER, 64, 2}, {nbr::schema::ALLTOALL, 0, 0},
                                   {nbr::schema::ALLTOALL, 8, 1},   {nbr::schema::ALLTOALL, 128, 2}};

class AutoDirectoryTest : public testing::Test {
protected:
    void SetUp() override {
        topology_ = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.7, 5});
        assemble_auto(topology_, dir(), kBands, 1, 2);
        graph_ = nbr::test::dist_graph(topology_);
        ASSERT_EQ(nbr_load_pattern(dir().c_str(), graph_, &pattern_), NBR_SUCCESS) << nbr_last_error();
    }
    void TearDown() override {
        EXPECT_EQ(nbr_pattern_free(&pattern_), NBR_SUCCESS);
        MPI_Comm_free(&graph_);
    }
    [[nodiscard]] fs::path dir() const { return tmp_.path() / "auto"; }
    [[nodiscard]] std::string variant(nbr_collective_t collective, std::size_t bytes) const {
        const char* name = nullptr;
        EXPECT_EQ(nbr_pattern_variant(pattern_, collective, bytes, &name), NBR_SUCCESS);
        return name == nullptr ? "" : name;
    }

    nbr::test::SharedTempDir tmp_;
    nbr::Topology topology_;
    MPI_Comm graph_ = MPI_COMM_NULL;
    nbr_pattern_t pattern_ = NBR_PATTERN_NULL;
};

TEST_F(AutoDirectoryTest, EachBlockSizeRunsItsBandsVariant) {
    const char* name = nullptr;
    ASSERT_EQ(nbr_pattern_algorithm(pattern_, &name), NBR_SUCCESS);
    EXPECT_STREQ(name, "auto");
    // The variants' names in the manifest (the report's and nbr_pattern_shape_candidate's), not
    // their algorithms' ("test-relay", "common-neighbor").
    EXPECT_EQ(variant(NBR_ALLGATHER, 0), "relay");
    EXPECT_EQ(variant(NBR_ALLGATHER, 15), "relay");
    EXPECT_EQ(variant(NBR_ALLGATHER, 16), "naive");
    EXPECT_EQ(variant(NBR_ALLGATHER, 63), "naive");
    EXPECT_EQ(variant(NBR_ALLGATHER, 64), "cn2");
    EXPECT_EQ(variant(NBR_ALLGATHER, std::size_t{1} << 40), "cn2");
    EXPECT_EQ(variant(NBR_ALLTOALL, 7), "naive");
    EXPECT_EQ(variant(NBR_ALLTOALL, 8), "relay");
    EXPECT_EQ(variant(NBR_ALLTOALL, 128), "cn2");
    EXPECT_EQ(variant(NBR_ALLGATHERV, 0), "relay");
    EXPECT_EQ(variant(NBR_ALLTOALLV, 1), "cn2");
    EXPECT_EQ(nbr_pattern_variant(pattern_, static_cast<nbr_collective_t>(4), 1, &name), NBR_ERR_ARG);
}

/// Blocking, nonblocking and persistent calls at `count` bytes per block against the reference.
void expect_fixed_matches(MPI_Comm graph, nbr_pattern_t pattern, bool alltoall, int count) {
    const auto lists = nbr::test::neighbors_of(graph);
    const std::size_t blocks = alltoall ? lists.out.size() : 1;
    std::vector<unsigned char> send(blocks * static_cast<std::size_t>(count) + 1);
    nbr::test::fill(send, count);
    const std::size_t received = lists.in.size() * static_cast<std::size_t>(count) + 1;
    std::vector<unsigned char> expected(received, 0), got(received, 0);
    if (alltoall) {
        nbr::test::reference_alltoall(send.data(), count, MPI_BYTE, expected.data(), count, MPI_BYTE, graph);
        ASSERT_EQ(nbr_neighbor_alltoall(send.data(), count, MPI_BYTE, got.data(), count, MPI_BYTE, pattern), 0);
    } else {
        MPI_Neighbor_allgather(send.data(), count, MPI_BYTE, expected.data(), count, MPI_BYTE, graph);
        ASSERT_EQ(nbr_neighbor_allgather(send.data(), count, MPI_BYTE, got.data(), count, MPI_BYTE, pattern), 0);
    }
    EXPECT_EQ(got, expected) << (alltoall ? "alltoall " : "allgather ") << count << " B, blocking";
    std::fill(got.begin(), got.end(), 0);
    nbr_request_t request = NBR_REQUEST_NULL;
    const int started =
        alltoall
            ? nbr_ineighbor_alltoall(send.data(), count, MPI_BYTE, got.data(), count, MPI_BYTE, pattern, &request)
            : nbr_ineighbor_allgather(send.data(), count, MPI_BYTE, got.data(), count, MPI_BYTE, pattern, &request);
    ASSERT_EQ(started, 0);
    ASSERT_EQ(nbr_wait(&request), 0);
    EXPECT_EQ(got, expected) << count << " B, nonblocking";
    std::fill(got.begin(), got.end(), 0);
    const int inited = alltoall ? nbr_neighbor_alltoall_init(send.data(), count, MPI_BYTE, got.data(), count, MPI_BYTE,
                                                             pattern, 0, &request)
                                : nbr_neighbor_allgather_init(send.data(), count, MPI_BYTE, got.data(), count, MPI_BYTE,
                                                              pattern, 0, &request);
    ASSERT_EQ(inited, 0);
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(nbr_start(&request), 0);
        ASSERT_EQ(nbr_wait(&request), 0);
        EXPECT_EQ(got, expected) << count << " B, persistent round " << round;
    }
    ASSERT_EQ(nbr_request_free(&request), 0);
}

TEST_F(AutoDirectoryTest, FixedSizeCallsInEveryBandDeliverWhatMpiDelivers) {
    int cases = 0;
    for (const bool alltoall : {false, true}) {
        for (const int count : {1, 7, 8, 15, 16, 63, 64, 127, 128, 300}) {
            expect_fixed_matches(graph_, pattern_, alltoall, count);
            ++cases;
        }
    }
    EXPECT_EQ(cases, 20);
}

/// Per-edge counts that differ by rank and edge, so the persistent mean lands where `scale` says.
std::vector<int> edge_counts(std::size_t edges, int scale) {
    std::vector<int> counts(edges + 1, 0);
    for (std::size_t e = 0; e < edges; ++e) counts[e] = scale + static_cast<int>((e * 5 + world_rank()) % 7);
    return counts;
}

std::vector<int> displacements(const std::vector<int>& counts) {
    std::vector<int> displs(counts.size(), 0);
    for (std::size_t e = 1; e < counts.size(); ++e) displs[e] = displs[e - 1] + counts[e - 1];
    return displs;
}

TEST_F(AutoDirectoryTest, VVariantsBlockingNonblockingAndPersistentDeliverWhatMpiDelivers) {
    const auto lists = nbr::test::neighbors_of(graph_);
    for (const int scale : {0, 10, 200}) {  // persistent means in every alltoall band
        const auto send_counts = edge_counts(lists.out.size(), scale);
        const auto send_displs = displacements(send_counts);
        std::vector<unsigned char> send(static_cast<std::size_t>(send_displs.back() + send_counts.back()) + 1);
        nbr::test::fill(send, scale);
        // Receive counts: what each in-neighbor sends on that edge (learned by the reference).
        std::vector<int> recv_counts(lists.in.size() + 1, 0), ones(lists.out.size() + 1, 1), zeros(ones.size(), 0);
        std::vector<int> in_index(lists.in.size() + 1);
        for (std::size_t i = 0; i < lists.in.size(); ++i) in_index[i] = static_cast<int>(i);
        nbr::test::reference_alltoallv(send_counts.data(), ones.data(), displacements(ones).data(), MPI_INT,
                                       recv_counts.data(), std::vector<int>(recv_counts.size(), 1).data(),
                                       in_index.data(), MPI_INT, graph_);
        const auto recv_displs = displacements(recv_counts);
        const std::size_t total = static_cast<std::size_t>(recv_displs.back() + recv_counts.back()) + 1;
        std::vector<unsigned char> expected(total, 0), got(total, 0);
        nbr::test::reference_alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, expected.data(),
                                       recv_counts.data(), recv_displs.data(), MPI_BYTE, graph_);
        ASSERT_EQ(nbr_neighbor_alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, got.data(),
                                         recv_counts.data(), recv_displs.data(), MPI_BYTE, pattern_),
                  0);
        EXPECT_EQ(got, expected) << "alltoallv blocking, scale " << scale;
        std::fill(got.begin(), got.end(), 0);
        nbr_request_t request = NBR_REQUEST_NULL;
        ASSERT_EQ(nbr_ineighbor_alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, got.data(),
                                          recv_counts.data(), recv_displs.data(), MPI_BYTE, pattern_, &request),
                  0);
        ASSERT_EQ(nbr_wait(&request), 0);
        EXPECT_EQ(got, expected) << "alltoallv nonblocking, scale " << scale;
        std::fill(got.begin(), got.end(), 0);
        ASSERT_EQ(nbr_neighbor_alltoallv_init(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, got.data(),
                                              recv_counts.data(), recv_displs.data(), MPI_BYTE, pattern_, 0, &request),
                  0);
        ASSERT_EQ(nbr_start(&request), 0);
        ASSERT_EQ(nbr_wait(&request), 0);
        EXPECT_EQ(got, expected) << "alltoallv persistent, scale " << scale;
        ASSERT_EQ(nbr_request_free(&request), 0);
        // allgatherv: every rank sends scale + rank bytes.
        const int mine = scale + world_rank() % 3;
        std::vector<int> gather_counts(lists.in.size() + 1, 0);
        for (std::size_t i = 0; i < lists.in.size(); ++i) gather_counts[i] = scale + lists.in[i] % 3;
        const auto gather_displs = displacements(gather_counts);
        const std::size_t gathered = static_cast<std::size_t>(gather_displs.back() + gather_counts.back()) + 1;
        std::vector<unsigned char> expected_g(gathered, 0), got_g(gathered, 0);
        MPI_Neighbor_allgatherv(send.data(), mine, MPI_BYTE, expected_g.data(), gather_counts.data(),
                                gather_displs.data(), MPI_BYTE, graph_);
        ASSERT_EQ(nbr_neighbor_allgatherv(send.data(), mine, MPI_BYTE, got_g.data(), gather_counts.data(),
                                          gather_displs.data(), MPI_BYTE, pattern_),
                  0);
        EXPECT_EQ(got_g, expected_g) << "allgatherv blocking, scale " << scale;
        std::fill(got_g.begin(), got_g.end(), 0);
        ASSERT_EQ(nbr_neighbor_allgatherv_init(send.data(), mine, MPI_BYTE, got_g.data(), gather_counts.data(),
                                               gather_displs.data(), MPI_BYTE, pattern_, 0, &request),
                  0);
        ASSERT_EQ(nbr_start(&request), 0);
        ASSERT_EQ(nbr_wait(&request), 0);
        EXPECT_EQ(got_g, expected_g) << "allgatherv persistent, scale " << scale;
        ASSERT_EQ(nbr_request_free(&request), 0);
    }
}

/// Adds variant `name` to the hand-built directory: cn2's files forwarded in segments of
/// `segment_bytes` (the manifest's segment_bytes); every band of `collective` and the alltoallv choice run it.
void add_shared_variant(const fs::path& dir, const std::string& name, std::uint64_t segment_bytes) {
    if (world_rank() == 0) {
        auto manifest = nbr::read_manifest(dir);
        auto* variant = manifest.add_variants();
        variant->set_name(name);
        variant->set_files("cn2");
        variant->set_segment_bytes(segment_bytes);
        variant->set_compile_id(nbr::read_manifest(dir / "cn2").compile_id());
        for (auto& band : *manifest.mutable_bands()) {
            if (band.collective() == nbr::schema::ALLTOALL) band.set_variant(3);
        }
        manifest.set_alltoallv_variant(3);
        manifest.set_format_version(nbr::kSharedFilesFormatVersion);
        nbr::write_file(dir / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST(SharedFiles, AVariantForwardingAnothersFilesInSegmentsDeliversWhatMpiDelivers) {
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.7, 5});
    const auto dir = tmp.path() / "auto";
    assemble_auto(topology, dir, kBands, 1, 2);
    add_shared_variant(dir, "cn2-seg8", 8);  // 8 B: two 4-byte blocks to a segment, one of 8 or more
    const auto manifest = nbr::read_manifest(dir);
    EXPECT_FALSE(fs::exists(dir / "cn2-seg8")) << "a variant sharing files has no directory of its own";
    EXPECT_EQ(nbr::variant_directory(dir, manifest, 3), dir / "cn2");
    EXPECT_EQ(nbr::read_variant_manifest(dir, manifest, 3).segment_bytes(), 8U) << "its own segment size";
    EXPECT_EQ(nbr::read_variant_manifest(dir, manifest, 2).segment_bytes(), 0U) << "cn2 itself whole";
    if (world_rank() == 0) {
        const auto verified = nbr::compiler::verify_directory(dir, &topology);
        EXPECT_TRUE(verified.ok) << verified.violation;
        EXPECT_EQ(verified.variants, (std::vector<std::string>{"naive", "relay", "cn2", "cn2-seg8"}));
        const auto text = nbr::compiler::format_auto(manifest);
        EXPECT_NE(text.find("cn2-seg8 (DIR/cn2 in segments of 8 B)"), std::string::npos) << text;
    }
    MPI_Comm graph = nbr::test::dist_graph(topology);
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
    const char* name = nullptr;
    ASSERT_EQ(nbr_pattern_variant(pattern, NBR_ALLTOALL, 4, &name), NBR_SUCCESS);
    EXPECT_STREQ(name, "cn2-seg8");
    for (const bool alltoall : {false, true}) {
        for (const int count : {1, 2, 3, 8, 100}) expect_fixed_matches(graph, pattern, alltoall, count);
    }
    EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    // AUTO/NAME is the variant alone, though it has no directory: its base's files in its segments.
    const auto alone = dir / "cn2-seg8";
    EXPECT_EQ(nbr::pattern_files(alone), dir / "cn2");
    EXPECT_EQ(nbr::pattern_files(dir / "cn2"), dir / "cn2");
    EXPECT_EQ(nbr::read_manifest(alone).segment_bytes(), 8U);
    if (world_rank() == 0) {
        const auto verified = nbr::compiler::verify_directory(alone, &topology);
        EXPECT_TRUE(verified.ok) << verified.violation;
    }
    ASSERT_EQ(nbr_load_pattern(alone.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
    ASSERT_EQ(nbr_pattern_variant(pattern, NBR_ALLGATHER, 4, &name), NBR_SUCCESS);
    EXPECT_STREQ(name, "common-neighbor");  // a single-algorithm pattern names its algorithm
    for (const int count : {1, 3, 100}) expect_fixed_matches(graph, pattern, true, count);
    EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    EXPECT_EQ(nbr_load_pattern((dir / "cn3-seg8").c_str(), graph, &pattern), NBR_ERR_IO) << "no such variant";
    EXPECT_NE(std::string(nbr_last_error()).find("cn3-seg8"), std::string::npos) << nbr_last_error();
    MPI_Comm_free(&graph);
}

// ---- load errors ----------------------------------------------------------------------------

class AutoLoadErrorTest : public testing::Test {
protected:
    void SetUp() override {
        topology_ = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.6, 6});
        assemble_auto(topology_, dir(), kBands, 0, 0);
    }
    [[nodiscard]] fs::path dir() const { return tmp_.path() / "auto"; }
    /// Loads on every rank; returns the code (the same on every rank: all fail alike here).
    int load() {
        MPI_Comm graph = nbr::test::dist_graph(topology_);
        nbr_pattern_t pattern = NBR_PATTERN_NULL;
        const int code = nbr_load_pattern(dir().c_str(), graph, &pattern);
        if (code == NBR_SUCCESS) nbr_pattern_free(&pattern);
        EXPECT_EQ(pattern, NBR_PATTERN_NULL);
        MPI_Comm_free(&graph);
        message_ = nbr_last_error();
        return code;
    }
    void edit_manifest(const std::function<void(nbr::schema::Manifest&)>& edit) {
        if (world_rank() == 0) {
            nbr::schema::Manifest manifest;  // parsed unchecked: earlier edits may have broken it
            EXPECT_TRUE(manifest.ParseFromString(nbr::read_file(dir() / nbr::manifest_file_name())));
            edit(manifest);
            nbr::write_file(dir() / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    nbr::test::SharedTempDir tmp_;
    nbr::Topology topology_;
    std::string message_;
};

TEST_F(AutoLoadErrorTest, MissingVariantDirectoryIsAnIoErrorNamingIt) {
    if (world_rank() == 0) fs::remove_all(dir() / "cn2");
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(load(), NBR_ERR_IO);
    EXPECT_NE(message_.find("cn2"), std::string::npos) << message_;
}

TEST_F(AutoLoadErrorTest, VariantOfAnotherCompileIsMixed) {
    edit_manifest([](auto& m) { m.mutable_variants(1)->set_compile_id(m.variants(1).compile_id() + 1); });
    EXPECT_EQ(load(), NBR_ERR_MIXED);
    EXPECT_NE(message_.find("relay"), std::string::npos) << message_;
}

TEST_F(AutoLoadErrorTest, BandsThatDoNotStartAtZeroOrNameNoVariantAreCorrupt) {
    edit_manifest([](auto& m) { m.mutable_bands(0)->set_from_bytes(4); });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
    EXPECT_NE(message_.find("allgather bands"), std::string::npos) << message_;
    edit_manifest([](auto& m) {
        m.mutable_bands(0)->set_from_bytes(0);
        m.mutable_bands(4)->set_variant(3);
    });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
    edit_manifest([](auto& m) {
        m.mutable_bands(4)->set_variant(1);
        m.mutable_variants(2)->set_name("../cn2");
    });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
}

TEST_F(AutoLoadErrorTest, SharedFilesNeedFormatFiveAnotherDirectoryThatExistsAndASegmentSize) {
    add_shared_variant(dir(), "cn2-seg8", 8);
    EXPECT_EQ(load(), NBR_SUCCESS) << message_;
    edit_manifest([](auto& m) { m.set_format_version(nbr::kCandidatesFormatVersion); });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
    EXPECT_NE(message_.find("format-4"), std::string::npos) << message_;
    edit_manifest([](auto& m) {
        m.set_format_version(nbr::kSharedFilesFormatVersion);
        m.mutable_variants(3)->set_segment_bytes(0);
    });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
    EXPECT_NE(message_.find("without a segment size"), std::string::npos) << message_;
    edit_manifest([](auto& m) {
        m.mutable_variants(3)->set_segment_bytes(8);
        m.mutable_variants(3)->set_files("../cn2");
    });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
    edit_manifest([](auto& m) { m.mutable_variants(3)->set_files("cn3"); });
    EXPECT_EQ(load(), NBR_ERR_IO);
    EXPECT_NE(message_.find("cn3"), std::string::npos) << message_;
    edit_manifest([](auto& m) { m.mutable_variants(3)->clear_files(); });  // a segment size alone
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
    EXPECT_NE(message_.find("a segment size but no files"), std::string::npos) << message_;
}

TEST_F(AutoLoadErrorTest, NewerFormatIsAVersionErrorAndAFormatOneManifestMayNotHoldVariants) {
    edit_manifest([](auto& m) { m.set_format_version(nbr::kFormatVersion + 1); });
    EXPECT_EQ(load(), NBR_ERR_VERSION);
    EXPECT_NE(message_.find("newer"), std::string::npos) << message_;
    edit_manifest([](auto& m) { m.set_format_version(nbr::kSingleFormatVersion); });
    EXPECT_EQ(load(), NBR_ERR_CORRUPT);
}

// ---- compile_auto end to end ----------------------------------------------------------------

/// A machine where a message costs 5 µs of CPU at each end and copying a byte 10 ns: combining
/// the 16 parallel edges of a rank pair into one message saves 15 × 10 µs and costs
/// 16 × b × 2 × 10 ns of packing and unpacking, so it must win below b ≈ 234 B and lose above.
constexpr const char* kTinyMachine = R"({
  "format_version": 1, "name": "tiny", "ranks_per_node": 1, "ranks_per_socket": 1, "copy_ns_per_byte": 10,
  "socket": {"latency_us": 1, "send_overhead_us": 5, "recv_overhead_us": 5, "gap_us": 0, "byte_time_ns": 0.001},
  "node": {"latency_us": 1, "send_overhead_us": 5, "recv_overhead_us": 5, "gap_us": 0, "byte_time_ns": 0.001},
  "network": {"latency_us": 1, "send_overhead_us": 5, "recv_overhead_us": 5, "gap_us": 0, "byte_time_ns": 0.001},
  "nic": {"gap_us": 0, "byte_time_ns": 0.001}
})";

/// `compile_auto` of 16 parallel edges each way between two ranks on the tiny machine (with
/// `ratio_error` stated and `margin`) at `sizes`, into `dir`/auto; its manifest.
/// `ranks` ranks, each sending 16 blocks to every other rank (parallel edges), one per node.
nbr::Topology tiny_topology(std::uint32_t ranks) {
    std::vector<nbr::Edge> edges;
    for (std::uint32_t a = 0; a < ranks; ++a) {
        for (std::uint32_t b = 0; b < ranks; ++b) {
            for (std::uint32_t e = 0; a != b && e < 16 / (ranks - 1); ++e) edges.push_back({a, b});
        }
    }
    return nbr::Topology::from_edges(ranks, edges);
}

nbr::schema::Manifest compile_tiny(const std::filesystem::path& dir, std::vector<std::uint64_t> sizes,
                                   double ratio_error = 0, double margin = 0.01,
                                   std::vector<nbr::simulator::RatioPoint> ratio_errors = {}, std::uint32_t ranks = 2) {
    nbr::compiler::AutoOptions options;
    options.machine = nbr::simulator::parse_machine(kTinyMachine, "tiny.json");
    options.machine.ratio_error = ratio_error;
    options.machine.ratio_errors = std::move(ratio_errors);
    options.margin = margin;
    options.placement = nbr::Placement::block(ranks, 1, 1);
    options.sizes = std::move(sizes);
    options.output = dir / "auto";
    options.quiet = true;
    (void)nbr::compiler::compile_auto(MPI_COMM_SELF, tiny_topology(ranks), options);
    nbr::schema::Manifest manifest;
    EXPECT_TRUE(manifest.ParseFromString(nbr::read_file(options.output / nbr::manifest_file_name())));
    return manifest;
}

TEST(CompileAuto, ATinyMachineGivesTheBandsItsCostsImply) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const auto manifest = compile_tiny(tmp.path(), {1, 16, 64, 1024, 4096});
    ASSERT_GT(manifest.candidates_size(), 0);
    for (const auto collective : {nbr::schema::ALLGATHER, nbr::schema::ALLTOALL}) {
        std::vector<std::pair<std::uint64_t, std::string>> bands;
        for (const auto& band : manifest.bands()) {
            if (band.collective() == collective) {
                bands.emplace_back(band.from_bytes(), manifest.variants(static_cast<int>(band.variant())).name());
            }
        }
        ASSERT_EQ(bands.size(), 2U) << manifest.ShortDebugString();
        EXPECT_EQ(bands[0].first, 0U);
        EXPECT_NE(bands[0].second, "naive");  // one message per rank pair wins small blocks
        EXPECT_EQ(bands[1], (std::pair<std::uint64_t, std::string>{1024, "naive"}));  // the copies lose large
    }
    // Blocking v-calls judged at every size: nothing is never slower than naive.
    EXPECT_EQ(manifest.variants(static_cast<int>(manifest.alltoallv_variant())).name(), "naive");
    // A band's reason names as the next best only another schedule: not a candidate that
    // predicts what naive does (k-group searches that found no group on two ranks).
    const auto text = nbr::compiler::format_auto(manifest);
    const auto same = [](const auto& a, const auto& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); };
    const auto& naive = manifest.candidates(0);
    int naive_twins = 0;
    for (const auto& c : manifest.candidates()) {
        if (c.name() == "naive" || !same(c.allgather_us(), naive.allgather_us()) ||
            !same(c.alltoall_us(), naive.alltoall_us())) {
            continue;
        }
        ++naive_twins;
        EXPECT_EQ(text.find("next best: " + c.name() + " "), std::string::npos) << text;
    }
    EXPECT_GT(naive_twins, 0) << text;
}

TEST(KeepCandidates, EachKeptCandidatesOtherFormIsKeptBesideItWherePredictedApartAndFinite) {
    // a-seg, b-seg, c-seg: the segmented copies of a, b and c; at size 0 nothing is cut (each
    // copy predicted as its base), at size 1 c-seg is ruled out by its NIC bound (+infinity).
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<nbr::compiler::Prediction> predictions{
        prediction("naive", {10, 40}, {10, 40}), prediction("a", {5, 30}, {5, 30}),
        prediction("b", {6, 35}, {6, 35}),       prediction("c", {7, 25}, {7, 20}),
        prediction("a-seg", {5, 20}, {5, 22}),   prediction("b-seg", {6, 22}, {6, 24}),
        prediction("c-seg", {7, inf}, {7, inf}),
    };
    predictions[4].segments_of = 1;
    predictions[5].segments_of = 2;
    predictions[6].segments_of = 3;
    auto choice = nbr::compiler::choose_variants(predictions, 0.01);
    nbr::compiler::keep_candidates(choice, predictions, 3);
    // Size 0: a wins, b and naive kept; the copies run as their bases there: none added.
    EXPECT_EQ(choice.winner[0][0], 1U);
    EXPECT_EQ(choice.alternatives[0][0], (std::vector<std::uint32_t>{2, 0}));
    // Allgather at size 1: a-seg wins, b-seg and naive are the model's picks; the whole a and b
    // join them (c, faster than both by the model, does not: it is no kept candidate's form).
    EXPECT_EQ(choice.winner[0][1], 4U);
    EXPECT_EQ(choice.alternatives[0][1], (std::vector<std::uint32_t>{5, 1, 2, 0}));
    // Alltoall at size 1: c wins, its copy is ruled out there; a-seg's whole form joins.
    EXPECT_EQ(choice.winner[1][1], 3U);
    EXPECT_EQ(choice.alternatives[1][1], (std::vector<std::uint32_t>{4, 1, 0}));
    // A copy joins only at or below the keep-th fastest whole prediction (b's 35 here), what
    // the copies' NIC bound compares with: c-seg simulated at 50 stays out as +infinity does.
    predictions[6].latency_us[1][1] = 50;
    nbr::compiler::keep_candidates(choice, predictions, 3);
    EXPECT_EQ(choice.alternatives[1][1], (std::vector<std::uint32_t>{4, 1, 0}));
    predictions[6].latency_us[1][1] = 35;  // at the limit: c's copy joins its kept base
    nbr::compiler::keep_candidates(choice, predictions, 3);
    EXPECT_EQ(choice.alternatives[1][1], (std::vector<std::uint32_t>{4, 1, 6, 0}));
    nbr::compiler::keep_candidates(choice, predictions, 1);  // the winners only: no forms either
    EXPECT_TRUE(choice.alternatives[0][1].empty());
    EXPECT_TRUE(choice.variable_alternatives[0].empty());
}

TEST(CompileAuto, ASegmentedCopyIsNotKeptOrNamedWhereItCutsNothing) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    std::filesystem::create_directories(tmp.path() / "2");
    std::filesystem::create_directories(tmp.path() / "5");
    // Two ranks: every message is one hop, never cut, so no segmented copy is kept anywhere.
    const auto pairs = compile_tiny(tmp.path() / "2", {1, 16, 131072});
    for (const auto& variant : pairs.variants()) {
        EXPECT_EQ(variant.name().find("-seg"), std::string::npos) << nbr::compiler::format_auto(pairs);
    }
    // The tiny machine's segments are 1 MiB: relayed messages of 128 KiB blocks are cut, of 1
    // or 16 B not (5 ranks: distance halving relays).
    const auto manifest = compile_tiny(tmp.path() / "5", {1, 16, 131072}, 0, 0.01, {}, 5);
    const auto text = nbr::compiler::format_auto(manifest);
    const auto& small = manifest.bands(0);
    const auto winner = manifest.variants(static_cast<int>(small.variant())).name();
    ASSERT_NE(winner, "naive") << text;
    EXPECT_EQ(text.find("next best: " + winner + "-seg"), std::string::npos) << text;
    for (const auto a : small.alternatives()) {
        EXPECT_NE(manifest.variants(static_cast<int>(a)).name().rfind(winner + "-seg", 0), 0U) << text;
    }
    // At 128 KiB the copy is a schedule of its own: predicted apart from the whole one.
    const auto candidate = [&](const std::string& name) {
        const auto& all = manifest.candidates();
        const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name() == name; });
        EXPECT_NE(it, all.end()) << name;
        return it == all.end() ? std::vector<double>{}
                               : std::vector<double>(it->alltoall_us().begin(), it->alltoall_us().end());
    };
    const auto whole = candidate(winner);
    const auto segmented = candidate(winner + "-seg1M");
    ASSERT_EQ(whole.size(), 3U);
    ASSERT_EQ(segmented.size(), 3U);
    EXPECT_EQ(whole[1], segmented[1]);
    EXPECT_NE(whole[2], segmented[2]) << text;
}

/// The variant name `manifest`'s bands give `collective` at `bytes`.
std::string band_variant(const nbr::schema::Manifest& manifest, nbr::schema::Collective collective,
                         std::uint64_t bytes) {
    std::string name;
    for (const auto& band : manifest.bands()) {
        if (band.collective() == collective && band.from_bytes() <= bytes) {
            name = manifest.variants(static_cast<int>(band.variant())).name();
        }
    }
    return name;
}

TEST(CompileAuto, AMachinesRatioErrorIsTheLeastMarginAutoActsOn) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const auto compile = [&](double ratio_error, double margin) {
        return compile_tiny(tmp.path(), {1, 16, 64, 128, 256}, ratio_error, margin);
    };
    // The best candidate's gain over naive per size (alltoall), with no error stated.
    const auto exact = compile(0, 0.01);
    EXPECT_DOUBLE_EQ(exact.margin(), 0.01);
    std::vector<double> gain;
    for (int s = 0; s < exact.sizes_size(); ++s) {
        double best = exact.candidates(0).alltoall_us(s);
        for (const auto& c : exact.candidates()) best = std::min(best, c.alltoall_us(s));
        gain.push_back(exact.candidates(0).alltoall_us(s) / best);
    }
    const double low = *std::min_element(gain.begin(), gain.end());
    const double high = *std::max_element(gain.begin(), gain.end());
    ASSERT_GT(low, 1.01);
    ASSERT_GT(high, low * 1.2);
    // An error between the smallest and the largest gain: naive where the gain is within it.
    const double error = (low + high) / 2 - 1;
    EXPECT_EQ(exact.margin_source(), "--margin");
    const auto cautious = compile(error, 0.01);
    EXPECT_DOUBLE_EQ(cautious.margin(), 0.01);  // --margin; raised at every size (no error per size)
    ASSERT_EQ(cautious.margins_size(), cautious.sizes_size());
    for (const double m : cautious.margins()) EXPECT_DOUBLE_EQ(m, error);
    EXPECT_EQ(cautious.margin_source(), "ratio_error");
    EXPECT_NE(nbr::compiler::format_auto(cautious).find("by size (the machine file's ratio errors; column margin)"),
              std::string::npos);
    EXPECT_NE(nbr::compiler::format_auto_json(cautious).find("\"margin_source\": \"ratio_error\""), std::string::npos);
    int naive = 0;
    for (int s = 0; s < cautious.sizes_size(); ++s) {
        const auto chosen = band_variant(cautious, nbr::schema::ALLTOALL, cautious.sizes(s));
        EXPECT_EQ(chosen == "naive", gain[static_cast<std::size_t>(s)] < 1 + error) << "size " << cautious.sizes(s);
        naive += chosen == "naive" ? 1 : 0;
    }
    EXPECT_GT(naive, 0);
    EXPECT_LT(naive, cautious.sizes_size());
    // --margin above the machine's error is kept.
    const auto wider = compile(error, error + 1);
    EXPECT_DOUBLE_EQ(wider.margin(), error + 1);
    for (const double m : wider.margins()) EXPECT_DOUBLE_EQ(m, error + 1);
    EXPECT_EQ(wider.margin_source(), "--margin");
}

/// The best candidate's alltoall gain over naive per size of `manifest`.
std::vector<double> alltoall_gains(const nbr::schema::Manifest& manifest) {
    std::vector<double> gain;
    for (int s = 0; s < manifest.sizes_size(); ++s) {
        double best = manifest.candidates(0).alltoall_us(s);
        for (const auto& c : manifest.candidates()) best = std::min(best, c.alltoall_us(s));
        gain.push_back(manifest.candidates(0).alltoall_us(s) / best);
    }
    return gain;
}

TEST(CompileAuto, RatioErrorsPerSizeSetTheMarginWhereTheyWereMeasured) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const std::vector<std::uint64_t> sizes{1, 16, 64, 128, 256};
    const auto gain = alltoall_gains(compile_tiny(tmp.path(), sizes));
    const double high = *std::max_element(gain.begin(), gain.end()) - 1 + 0.5;  // above every gain
    ASSERT_GT(gain[2], 1.02);
    ASSERT_GT(gain[3], 1.02);
    // Checks that found the model far off at 1 and 16 B and exact from 64 B: the winners at 1 B
    // (running 1-15 B) and 16 B (16-63 B) need the large error, those at 64, 128 and 256 B
    // (and beyond, the last check's) none.
    const auto manifest =
        compile_tiny(tmp.path(), sizes, high, 0.01, {{1, high}, {16, high}, {64, 0}, {128, 0}, {256, 0}});
    const std::vector<double> expected{high, high, 0.01, 0.01, 0.01};
    ASSERT_EQ(manifest.margins_size(), 5);
    for (int s = 0; s < 5; ++s) {
        const auto i = static_cast<std::size_t>(s);
        EXPECT_DOUBLE_EQ(manifest.margins(s), expected[i]) << "size " << sizes[i];
        const auto chosen = band_variant(manifest, nbr::schema::ALLTOALL, sizes[i]);
        EXPECT_EQ(chosen == "naive", gain[i] < 1 + expected[i]) << "size " << sizes[i] << ": " << chosen;
    }
    EXPECT_NE(band_variant(manifest, nbr::schema::ALLTOALL, 64), "naive");
    EXPECT_EQ(band_variant(manifest, nbr::schema::ALLTOALL, 1), "naive");
    // Shown per size in inspect's tables and JSON.
    EXPECT_NE(nbr::compiler::format_auto(manifest).find("   margin"), std::string::npos);
    EXPECT_NE(nbr::compiler::format_auto_json(manifest).find("\"margins\": ["), std::string::npos);
    // The first band runs from 0 bytes: simulated from 64 B, its margin covers the checks below.
    const auto from64 =
        compile_tiny(tmp.path(), {64, 128, 256}, high, 0.01, {{1, high}, {16, high}, {64, 0}, {128, 0}, {256, 0}});
    ASSERT_EQ(from64.margins_size(), 3);
    EXPECT_DOUBLE_EQ(from64.margins(0), high);
    EXPECT_DOUBLE_EQ(from64.margins(1), 0.01);
}

// ---- --candidates ------------------------------------------------------------------------

std::vector<std::string> names_of(const std::vector<nbr::compiler::Candidate>& candidates) {
    std::vector<std::string> names;
    for (const auto& c : candidates) names.push_back(c.name);
    return names;
}

TEST(SelectCandidates, NamesAndPrefixesKeepTheirOrderAndNaiveIsAlwaysTried) {
    nbr::compiler::AlgorithmOptions base;
    base.placement = nbr::Placement::block(64, 8, 4);
    const auto all = nbr::compiler::auto_candidates(base);
    const auto select = [&](const std::vector<std::string>& selectors) {
        return names_of(nbr::compiler::select_candidates(all, selectors));
    };
    EXPECT_EQ(select({}), names_of(all));
    EXPECT_EQ(select({"*"}), names_of(all));
    EXPECT_EQ(select({"naive"}), std::vector<std::string>{"naive"});
    // An exact name is that configuration only; the order is the registry's, not the selectors'.
    EXPECT_EQ(select({"hierarchical", "distance-halving"}),
              (std::vector<std::string>{"naive", "distance-halving", "hierarchical"}));
    EXPECT_EQ(select({"kgroup-k3*"}), (std::vector<std::string>{"naive", "kgroup-k3", "kgroup-k3-aware"}));
    const auto cube = select({"hierarchical-cube*", "hierarchical-cube-k0"});  // overlapping selectors
    EXPECT_EQ(cube.size(), 5U);
    EXPECT_TRUE(std::all_of(cube.begin() + 1, cube.end(),
                            [](const std::string& n) { return n.rfind("hierarchical-cube", 0) == 0; }));
    try {
        (void)select({"distance-halving", "kgroup-k9"});
        FAIL() << "a selector that matches nothing must be rejected";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'kgroup-k9' matches no candidate"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("kgroup-k4-aware"), std::string::npos) << "lists the names";
    }
}

TEST(AutoCandidates, BruckRoundsInTwoRoundsJoinWhereTheLargestNodeNeedsARadixAboveFour) {
    const auto hierarchical = [](const nbr::Placement& placement) {
        nbr::compiler::AlgorithmOptions base;
        base.placement = placement;
        std::vector<std::string> names;
        for (const auto& c : nbr::compiler::auto_candidates(base)) {
            if (c.name.rfind("hierarchical", 0) == 0) names.push_back(c.name);
        }
        return names;
    };
    const std::vector<std::string> menu{"hierarchical",
                                        "hierarchical-bruck-r2",
                                        "hierarchical-bruck-r3",
                                        "hierarchical-bruck-r4",
                                        "hierarchical-cube-k4",
                                        "hierarchical-cube-k0",
                                        "hierarchical-cube-k4-bruck-r3",
                                        "hierarchical-cube-k0-bruck-r3"};
    // Nodes of several sockets add lanes by socket in rounds of radix 3, 4 and the largest
    // socket's two-round radix where that is above 4.
    auto by_socket = [](std::vector<std::string> names, const std::vector<std::string>& radices) {
        for (const auto& r : radices) names.push_back("hierarchical-socket-bruck-r" + r);
        return names;
    };
    EXPECT_EQ(hierarchical(nbr::Placement::block(64, 16, 16)), menu);  // 4 × 4 ≥ 16: radix 4 is two rounds
    EXPECT_EQ(hierarchical(nbr::Placement::block(64, 16, 8)), by_socket(menu, {"3", "4"}));
    auto with_two_rounds = [&](const std::string& radix) {
        auto names = menu;
        names.insert(names.begin() + 4, "hierarchical-bruck-r" + radix);
        names.push_back("hierarchical-cube-k0-bruck-r" + radix);
        return names;
    };
    EXPECT_EQ(hierarchical(nbr::Placement::block(64, 17, 17)), with_two_rounds("5"));
    EXPECT_EQ(hierarchical(nbr::Placement::block(2048, 32, 16)),
              by_socket(with_two_rounds("6"), {"3", "4"}));  // 6 × 6 = 36 ≥ 32; sockets of 16: 4 × 4
    // The last node has 24 ranks, in sockets of 20 and 4: by socket, one group of 24 (5 × 5).
    EXPECT_EQ(hierarchical(nbr::Placement::block(1024, 40, 20)), by_socket(with_two_rounds("7"), {"3", "4", "5"}));
    nbr::compiler::AlgorithmOptions base;
    base.placement = nbr::Placement::block(1024, 40, 20);
    for (const auto& c : nbr::compiler::auto_candidates(base)) {
        if (c.name == "hierarchical-cube-k0-bruck-r7") {
            EXPECT_EQ(c.options.across_nodes, nbr::compiler::AcrossNodes::cube);
            EXPECT_EQ(c.options.node_radix, 0U);
            EXPECT_EQ(c.options.intra_node, nbr::compiler::IntraNode::bruck);
            EXPECT_EQ(c.options.intra_radix, 7U);
        }
    }
}

TEST(AutoCandidates, EveryNameParsesBackToItsConfiguration) {
    using nbr::compiler::AcrossNodes;
    using nbr::compiler::IntraNode;
    nbr::compiler::AlgorithmOptions base;
    base.placement = nbr::Placement::block(1024, 40, 20);
    const auto candidates = nbr::compiler::auto_candidates(base);
    ASSERT_EQ(candidates.size(), 22U);
    for (const auto& c : candidates) {
        const auto configuration = nbr::compiler::parse_configuration(c.name);
        ASSERT_TRUE(configuration) << c.name;
        EXPECT_EQ(configuration->kind, c.kind) << c.name;
        nbr::compiler::AlgorithmOptions options;
        configuration->apply(options);
        EXPECT_EQ(nbr::compiler::configuration_name(c.kind, options), c.name);
        // What nbrc inspect reads back from the pattern's manifest.
        const auto algorithm = nbr::compiler::make_algorithm(c.kind, c.options);
        EXPECT_EQ(nbr::compiler::configuration_of(algorithm->name(), algorithm->parameters()), c.name);
        if (c.kind == nbr::compiler::AlgorithmKind::kgroup) {
            EXPECT_EQ(options.group_size, c.options.group_size) << c.name;
            EXPECT_EQ(options.topology_aware, c.options.topology_aware) << c.name;
        }
        if (c.kind != nbr::compiler::AlgorithmKind::hierarchical) continue;
        EXPECT_EQ(options.aggregate_by, c.options.aggregate_by) << c.name;
        EXPECT_EQ(options.intra_node, c.options.intra_node) << c.name;
        EXPECT_EQ(options.across_nodes, c.options.across_nodes) << c.name;
        if (c.options.intra_node == IntraNode::bruck) {
            EXPECT_EQ(options.intra_radix, c.options.intra_radix) << c.name;
        }
        if (c.options.across_nodes == AcrossNodes::cube) {
            EXPECT_EQ(options.node_radix, c.options.node_radix) << c.name;
        }
    }
}

TEST(AutoCandidates, AConfigurationNameFixesOnlyWhatItSpells) {
    using nbr::compiler::parse_configuration;
    nbr::compiler::AlgorithmOptions options;
    options.intra_node = nbr::compiler::IntraNode::bruck;
    options.intra_radix = 5;
    parse_configuration("hierarchical-cube-k0")->apply(options);
    EXPECT_EQ(options.across_nodes, nbr::compiler::AcrossNodes::cube);
    EXPECT_EQ(options.node_radix, 0U);
    EXPECT_EQ(options.intra_radix, 5U) << "the Bruck radix was not spelled";
    EXPECT_EQ(parse_configuration("kgroup")->group_size, std::nullopt);
    EXPECT_EQ(parse_configuration("kgroup-k1024")->group_size, 1024U);
    for (const char* name : {"", "auto", "Naive", "naive-k2", "kgroup-k", "kgroup-aware", "kgroup-k3-agnostic",
                             "hierarchical-lanes", "hierarchical-bruck-r3-cube-k4", "hierarchical-bruck-r",
                             "hierarchical-cube-k4-socket", "hierarchical-sockets", "hierarchical-socket-",
                             "hierarchical-bruck-r123456789", "hierarchical-bruck-r+3", "distance-halving-k2"}) {
        EXPECT_FALSE(parse_configuration(name)) << "'" << name << "' follows none of the forms";
    }
    EXPECT_EQ(nbr::compiler::configuration_of("hierarchical", {{"intra_node", "bruck"}, {"radix", "x"}}),
              "hierarchical")
        << "an unreadable parameter: the algorithm's name";
    EXPECT_EQ(nbr::compiler::configuration_of("hierarchical", {{"intra_node", "direct"}, {"across_nodes", "lanes"}}),
              "hierarchical")
        << "a manifest without aggregate_by: by node";
    EXPECT_EQ(nbr::compiler::configuration_of("kgroup", {}), "kgroup");
    EXPECT_EQ(nbr::compiler::configuration_of("future-algorithm", {}), "future-algorithm");
    for (const char* name :
         {"kgroup-k1", "kgroup-k1025", "hierarchical-bruck-r0", "hierarchical-bruck-r1", "hierarchical-cube-k1",
          "hierarchical-bruck-r16777217", "naive-seg16K", "hierarchical-seg0"}) {
        EXPECT_THROW((void)parse_configuration(name), std::invalid_argument) << name;
    }
}

TEST(AutoCandidates, ASegmentSuffixNamesSegmentedForwarding) {
    using nbr::compiler::parse_configuration;
    EXPECT_EQ(parse_configuration("hierarchical")->segment_bytes, std::nullopt);
    EXPECT_EQ(parse_configuration("hierarchical-seg16K")->segment_bytes, 16384U);
    EXPECT_EQ(parse_configuration("distance-halving-seg4096")->segment_bytes, 4096U);
    EXPECT_EQ(parse_configuration("common-neighbor-seg2G")->segment_bytes, std::uint64_t{2} << 30);
    const auto c = parse_configuration("hierarchical-cube-k0-bruck-r3-seg1M");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->node_radix, 0U);
    EXPECT_EQ(c->intra_radix, 3U);
    EXPECT_EQ(c->segment_bytes, std::uint64_t{1} << 20);
    EXPECT_EQ(parse_configuration("kgroup-k3-aware-seg64K")->group_size, 3U);
    // Every candidate auto names, whole or segmented, is a name --algo takes, with its size.
    nbr::compiler::AlgorithmOptions base;
    base.placement = nbr::Placement::block(64, 8, 4);
    for (const auto& candidate : nbr::compiler::segmented_candidates(nbr::compiler::auto_candidates(base), 16384)) {
        const auto parsed = parse_configuration(candidate.name);
        ASSERT_TRUE(parsed) << candidate.name;
        EXPECT_EQ(parsed->kind, candidate.kind) << candidate.name;
        EXPECT_EQ(parsed->segment_bytes.value_or(0), candidate.segment_bytes) << candidate.name;
    }
    for (const char* name : {"hierarchical-seg", "hierarchical-segK", "hierarchical-seg16T", "hierarchical-seg-16K",
                             "hierarchical-seg16K-bruck-r3", "hierarchical-seg123456789"}) {
        EXPECT_FALSE(parse_configuration(name)) << "'" << name << "' follows none of the forms";
    }
}

TEST(CompileAuto, OnlyTheSelectedCandidatesAreTriedAndTheSelectionIsRecorded) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const auto topology = nbr::generate_random({16, 0.5, 3});
    nbr::compiler::AutoOptions options;
    options.machine = nbr::simulator::load_machine("niagara");
    options.placement = nbr::Placement::block(16, 4, 2);
    options.sizes = {8, 4096};
    options.candidates = {"distance-halving", "hierarchical-bruck*"};
    options.output = tmp.path() / "selected";
    options.quiet = true;
    (void)nbr::compiler::compile_auto(MPI_COMM_SELF, topology, options);
    nbr::schema::Manifest manifest;
    ASSERT_TRUE(manifest.ParseFromString(nbr::read_file(options.output / nbr::manifest_file_name())));
    std::vector<std::string> tried;
    for (const auto& c : manifest.candidates()) tried.push_back(c.name());
    // Each but naive also forwarding in segments of niagara's 16 KiB (segment_size_for).
    EXPECT_EQ(tried, (std::vector<std::string>{"naive", "distance-halving", "distance-halving-seg16K",
                                               "hierarchical-bruck-r2", "hierarchical-bruck-r2-seg16K",
                                               "hierarchical-bruck-r3", "hierarchical-bruck-r3-seg16K",
                                               "hierarchical-bruck-r4", "hierarchical-bruck-r4-seg16K"}));
    EXPECT_EQ(nbr::simulator::segment_size_for(options.machine), 16384U);
    bool split = false;
    for (int c = 2; c < manifest.candidates_size(); c += 2) {
        // A copy runs as its base wherever its segments cut nothing: 8 B blocks (2048 to a
        // segment) and the v-calls; at 4 KiB (4 blocks to a segment) some cut.
        const auto& copy = manifest.candidates(c);
        const auto& base = manifest.candidates(c - 1);
        ASSERT_EQ(copy.name(), base.name() + "-seg16K");
        EXPECT_EQ(copy.allgather_us(0), base.allgather_us(0)) << copy.name();
        EXPECT_EQ(copy.alltoall_us(0), base.alltoall_us(0)) << copy.name();
        for (int s = 0; s < 2; ++s) {
            EXPECT_EQ(copy.allgatherv_us(s), base.allgatherv_us(s)) << copy.name();
            EXPECT_EQ(copy.alltoallv_us(s), base.alltoallv_us(s)) << copy.name();
        }
        split = split || copy.alltoall_us(1) != base.alltoall_us(1);
    }
    EXPECT_TRUE(split) << "some copy's segments cut a message at 4 KiB";
    bool shares = false;
    for (int v = 0; v < manifest.variants_size(); ++v) {
        const auto variant = nbr::read_variant_manifest(options.output, manifest, v);
        const auto& name = manifest.variants(v).name();
        const bool segmented = name.ends_with("-seg16K");
        EXPECT_EQ(variant.segment_bytes(), segmented ? 16384U : 0U) << name;
        // A segmented copy writes no files: it forwards its base's in its segments.
        EXPECT_EQ(manifest.variants(v).files(), segmented ? name.substr(0, name.size() - 7) : "") << name;
        EXPECT_EQ(fs::exists(options.output / name), !segmented) << name;
        shares = shares || segmented;
    }
    EXPECT_TRUE(shares) << "a segmented copy among the variants";
    EXPECT_EQ(manifest.format_version(), nbr::kSharedFilesFormatVersion);
    EXPECT_EQ(std::vector<std::string>(manifest.candidate_selectors().begin(), manifest.candidate_selectors().end()),
              options.candidates);
    for (const auto& v : manifest.variants()) EXPECT_NE(std::find(tried.begin(), tried.end(), v.name()), tried.end());
    const auto text = nbr::compiler::format_auto(manifest);
    EXPECT_NE(text.find("candidates: distance-halving, hierarchical-bruck* (--candidates; naive always)"),
              std::string::npos)
        << text;
}

/// The top manifest of the auto directory `dir`.
nbr::schema::Manifest read_top_manifest(const fs::path& dir) {
    nbr::schema::Manifest manifest;
    EXPECT_TRUE(manifest.ParseFromString(nbr::read_file(dir / nbr::manifest_file_name())));
    return manifest;
}

TEST(CompileAuto, CandidatesThroughRanksWithoutNeighborsAreLeftToTheVCalls) {
    // 16 ranks on nodes of 4, every fourth without neighbors: Bruck and cube rounds pass
    // through every rank of a node, so such candidates carry the mark and no fixed-size band
    // chooses or keeps them (libnbr would not run them there); hierarchical's lanes avoid
    // such ranks.
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const auto active = nbr::generate_random({12, 0.5, 3});
    std::vector<nbr::Edge> edges;
    const auto rank_of = [](std::uint32_t a) { return a + a / 3; };  // 0, 1, 2, 4, 5, 6, 8, ...: not 4k + 3
    for (std::uint32_t u = 0; u < 12; ++u) {
        for (const auto v : active.out_neighbors(u)) edges.push_back({rank_of(u), rank_of(v)});
    }
    nbr::compiler::AutoOptions options;
    options.machine = nbr::simulator::load_machine("niagara");
    options.placement = nbr::Placement::block(16, 4, 4);
    options.sizes = {8, 1024};
    options.candidates = {"hierarchical", "hierarchical-bruck*", "hierarchical-cube*"};
    options.segmented_candidates = false;
    options.output = tmp.path() / "alone";
    options.quiet = true;
    (void)nbr::compiler::compile_auto(MPI_COMM_SELF, nbr::Topology::from_edges(16, edges), options);
    const auto manifest = read_top_manifest(options.output);
    std::vector<std::string> marked;
    for (const auto& c : manifest.candidates()) {
        if (c.through_ranks_without_neighbors()) marked.push_back(c.name());
    }
    EXPECT_FALSE(marked.empty());
    EXPECT_EQ(std::find(marked.begin(), marked.end(), "hierarchical"), marked.end());
    for (const auto& name : marked) EXPECT_TRUE(name.starts_with("hierarchical-")) << name;
    const auto is_marked = [&](std::uint32_t variant) {
        const auto& name = manifest.variants(static_cast<int>(variant)).name();
        return std::find(marked.begin(), marked.end(), name) != marked.end();
    };
    for (const auto& band : manifest.bands()) {
        EXPECT_FALSE(is_marked(band.variant())) << band.ShortDebugString();
        for (const auto a : band.alternatives()) EXPECT_FALSE(is_marked(a)) << band.ShortDebugString();
    }
    const auto text = nbr::compiler::format_auto(manifest);
    EXPECT_NE(text.find("routes blocks through ranks without neighbors: a candidate of the v-calls only"),
              std::string::npos)
        << text;
}

TEST(CompileAuto, CandidatesWithTheSameSchedulesAreSimulatedOnceAndTheOutputIsTheSame) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    // A directed ring: no two ranks share a neighbor, so no k-group search finds a group.
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r < 8; ++r) edges.push_back({r, (r + 1) % 8});
    const auto topology = nbr::Topology::from_edges(8, edges);
    nbr::compiler::AutoOptions options;
    options.machine = nbr::simulator::load_machine("niagara");
    options.placement = nbr::Placement::block(8, 2, 1);
    options.sizes = {1, 256, 4096};
    options.output = tmp.path() / "reused";
    options.quiet = true;
    const auto reused = nbr::compiler::compile_auto(MPI_COMM_SELF, topology, options);
    auto again = options;
    again.output = tmp.path() / "simulated";
    again.reuse_same_schedules = false;
    const auto simulated = nbr::compiler::compile_auto(MPI_COMM_SELF, topology, again);

    ASSERT_FALSE(reused.same_schedules.empty());
    EXPECT_TRUE(simulated.same_schedules.empty());
    for (const auto& [name, same] : reused.same_schedules) EXPECT_NE(name, same);
    // Every candidate is one unit per collective here; those reused are not simulated.
    EXPECT_EQ(reused.simulation_units + 2 * reused.same_schedules.size(), simulated.simulation_units);
    // The top manifest records which candidates share schedules; everything else is the same.
    auto recorded = read_top_manifest(options.output);
    std::size_t shared = 0;
    for (int i = 0; i < recorded.candidates_size(); ++i) {
        const auto same = recorded.candidates(i).same_schedules_as();
        if (same == 0) continue;
        ++shared;
        ASSERT_LE(same, static_cast<std::uint32_t>(i));
        const std::pair<std::string, std::string> pair{recorded.candidates(i).name(),
                                                       recorded.candidates(static_cast<int>(same) - 1).name()};
        EXPECT_NE(std::find(reused.same_schedules.begin(), reused.same_schedules.end(), pair),
                  reused.same_schedules.end());
        EXPECT_NE(nbr::compiler::format_auto(recorded).find(pair.first + " = " + pair.second), std::string::npos);
        recorded.mutable_candidates(i)->clear_same_schedules_as();
    }
    EXPECT_EQ(shared, reused.same_schedules.size());
    auto plain = read_top_manifest(again.output);
    recorded.clear_compile_id();
    plain.clear_compile_id();
    EXPECT_EQ(nbr::serialize_deterministic(recorded), nbr::serialize_deterministic(plain));
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(options.output)) {
        const bool top_manifest = entry.path() == options.output / nbr::manifest_file_name();
        if (!entry.is_regular_file() || top_manifest) continue;
        const auto other = again.output / fs::relative(entry.path(), options.output);
        EXPECT_EQ(nbr::read_file(entry.path()), nbr::read_file(other)) << other;
        ++files;
    }
    EXPECT_GT(files, 1U);
}

/// A candidate's predictions of allgather (0) or alltoall (1).
const google::protobuf::RepeatedField<double>& predictions(const nbr::schema::Candidate& candidate, int collective) {
    return collective == 0 ? candidate.allgather_us() : candidate.alltoall_us();
}
google::protobuf::RepeatedField<double>& predictions(nbr::schema::Candidate& candidate, int collective) {
    return collective == 0 ? *candidate.mutable_allgather_us() : *candidate.mutable_alltoall_us();
}

/// Where the copies' NIC bound leaves a segmented copy unsimulated (+infinity), simulating it
/// anyway gives a time above the keep-th fastest whole candidate there, and the bands and the
/// kept candidates are those of the compile that simulates every copy.
TEST(CompileAuto, ASegmentedCopyIsLeftUnsimulatedOnlyWhereItCouldNeitherWinNorBeKept) {
    if (world_rank() != 0) return;
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const auto topology = nbr::generate_random({48, 0.5, 5});
    nbr::compiler::AutoOptions options;
    options.machine = nbr::simulator::load_machine("niagara");
    options.placement = nbr::Placement::block(48, 6, 3);
    options.sizes = {64, 65536, 1 << 20};
    options.candidates = {"common-neighbor", "distance-halving", "hierarchical", "hierarchical-cube-k0"};
    options.keep = 2;
    options.output = tmp.path() / "bounded";
    options.quiet = true;
    const auto bounded = nbr::compiler::compile_auto(MPI_COMM_SELF, topology, options);
    auto all = options;
    all.output = tmp.path() / "all";
    all.bound_segmented_copies = false;
    const auto simulated = nbr::compiler::compile_auto(MPI_COMM_SELF, topology, all);
    EXPECT_GT(bounded.bounded_cells, 0U);
    EXPECT_EQ(simulated.bounded_cells, 0U);
    EXPECT_EQ(bounded.variants, simulated.variants);

    auto with_bound = read_top_manifest(options.output);
    auto without = read_top_manifest(all.output);
    ASSERT_EQ(with_bound.candidates_size(), without.candidates_size());
    std::size_t infinite = 0;
    for (int c = 0; c < 2; ++c) {
        for (std::size_t s = 0; s < options.sizes.size(); ++s) {
            std::vector<double> whole;
            for (const auto& candidate : without.candidates()) {
                if (!candidate.name().ends_with("-seg16K")) whole.push_back(predictions(candidate, c)[s]);
            }
            const double kept = nbr::compiler::internal::kth_smallest_distinct(whole, options.keep);
            for (int i = 0; i < with_bound.candidates_size(); ++i) {
                const double mine = predictions(with_bound.candidates(i), c)[s];
                auto* real = &predictions(*without.mutable_candidates(i), c);
                if (!std::isinf(mine)) {
                    EXPECT_EQ(mine, real->Get(static_cast<int>(s))) << with_bound.candidates(i).name();
                    continue;
                }
                ++infinite;
                EXPECT_TRUE(with_bound.candidates(i).name().ends_with("-seg16K"));
                EXPECT_GT(real->Get(static_cast<int>(s)), kept)
                    << with_bound.candidates(i).name() << " at " << options.sizes[s] << " B";
                real->Set(static_cast<int>(s), mine);
            }
        }
    }
    EXPECT_EQ(infinite, bounded.bounded_cells);
    // Beyond those cells the two directories are the same.
    with_bound.clear_compile_id();
    without.clear_compile_id();
    EXPECT_EQ(nbr::serialize_deterministic(with_bound), nbr::serialize_deterministic(without));
    // inspect names the cells, its JSON writes them as null.
    const auto written = read_top_manifest(options.output);
    EXPECT_NE(nbr::compiler::format_auto(written).find("not simulated"), std::string::npos);
    EXPECT_EQ(nbr::compiler::format_auto_json(written).find("inf"), std::string::npos);
}

TEST(CompileAuto, OutputIsIdenticalForOneProcessVerifiesAndReplaysAtEverySize) {
    nbr::test::SharedTempDir tmp;
    const auto n = static_cast<std::uint32_t>(world_size());
    int cases = 0;
    for (const auto& topology : {nbr::generate_random({n, 0.5, 7}), nbr::test::awkward_topology(n)}) {
        nbr::compiler::AutoOptions options;
        options.machine = nbr::simulator::load_machine("niagara");
        options.placement = nbr::Placement::block(n, 2, 1);  // several nodes even at 3 ranks
        options.sizes = {1, 16, 256, 4096};
        options.output = tmp.path() / "auto";
        options.quiet = true;
        options.units_per_process = 64;  // every size its own unit here, one unit per pair alone
        const auto report = nbr::compiler::compile_auto(MPI_COMM_WORLD, topology, options);

        EXPECT_FALSE(report.variants.empty());
        if (world_rank() == 0) {
            const auto verified = nbr::compiler::verify_directory(options.output, &topology);
            EXPECT_TRUE(verified.ok) << verified.violation;
            EXPECT_EQ(verified.variants, report.variants);
            auto single = options;
            single.output = tmp.path() / "auto-1";
            single.units_per_process = 1;
            const auto one = nbr::compiler::compile_auto(MPI_COMM_SELF, topology, single);
            // One unit per (candidate, collective) alone; with 64 per process, one per size.
            EXPECT_EQ(report.simulation_units, options.sizes.size() * one.simulation_units);
            for (const auto& entry : fs::recursive_directory_iterator(options.output)) {
                if (!entry.is_regular_file()) continue;
                const auto other = single.output / fs::relative(entry.path(), options.output);
                EXPECT_EQ(nbr::read_file(entry.path()), nbr::read_file(other)) << other;
            }
        }
        MPI_Comm graph = nbr::test::dist_graph(topology);
        nbr_pattern_t pattern = NBR_PATTERN_NULL;
        ASSERT_EQ(nbr_load_pattern(options.output.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
        for (const bool alltoall : {false, true}) {
            for (const int count : {1, 16, 256, 4096}) {
                expect_fixed_matches(graph, pattern, alltoall, count);
                ++cases;
            }
        }
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
        MPI_Comm_free(&graph);
    }
    EXPECT_EQ(cases, 16);
}

}  // namespace
