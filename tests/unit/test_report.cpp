// The drop-in's report (interpose/report.cpp): each rank's time per call of a shape survives
// the trip up the tree to world rank 0 exactly, the spread over ranks names the slowest rank
// whatever the order of merging, and the text and JSON lines say the mean over the ranks and
// the slowest, not one rank's time.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report.hpp"

namespace {

using nbr::interpose::PatternSnapshot;
using nbr::interpose::ShapeKey;
using nbr::interpose::ShapeSnapshot;
using nbr::interpose::Spreads;

/// A communicator's snapshot on `rank` with one allgather shape of 64 B blocks and one
/// alltoallv shape of any size, each timed `run_calls` times in `run_us`.
PatternSnapshot snapshot_on(int rank, unsigned long long run_calls, double run_us) {
    PatternSnapshot snapshot;
    snapshot.id = "3.1";
    snapshot.rank = rank;
    snapshot.ranks = 4;
    snapshot.algorithm = "auto";
    snapshot.dir = "patterns/000001";
    snapshot.origin = "loaded";
    snapshot.calls = rank == 0 ? 160 : 0;
    ShapeSnapshot gather;
    gather.stats.collective = NBR_ALLGATHER;
    gather.stats.mode = NBR_MODE_BLOCKING;
    gather.stats.min_bytes = gather.stats.max_bytes = 64;
    gather.stats.state = NBR_SHAPE_MODEL;
    gather.stats.calls = 80;
    gather.stats.after_calls = 80;
    gather.stats.run_calls = run_calls;
    gather.stats.run_us = run_us;
    gather.stats.naive_us = gather.stats.saved_us = NAN;
    gather.variant = "hierarchical-cube-k0";
    ShapeSnapshot alltoallv = gather;
    alltoallv.stats.collective = NBR_ALLTOALLV;
    alltoallv.stats.mode = NBR_MODE_NONBLOCKING;
    alltoallv.stats.min_bytes = 0;
    alltoallv.stats.max_bytes = SIZE_MAX;
    alltoallv.stats.run_us = 3 * run_us;
    alltoallv.variant = "naive";
    snapshot.shapes = {gather, alltoallv};
    return snapshot;
}

/// The spreads of `ranks`' snapshots merged as the tree over the ranks does: each rank's own,
/// with what its subtree sent, encoded and decoded on the way.
Spreads merged(const std::vector<PatternSnapshot>& ranks) {
    Spreads all;
    for (auto it = ranks.rbegin(); it != ranks.rend(); ++it) {
        Spreads mine = nbr::interpose::spreads_of({*it});
        nbr::interpose::merge_spreads(mine, nbr::interpose::decode_spreads(nbr::interpose::encode_spreads(all)));
        all = mine;
    }
    return all;
}

const ShapeKey kGather{"3.1", NBR_ALLGATHER, NBR_MODE_BLOCKING, 64, 64};
const ShapeKey kAlltoallv{"3.1", NBR_ALLTOALLV, NBR_MODE_NONBLOCKING, 0, SIZE_MAX};

TEST(Report, ARanksSpreadIsItsTimePerCallAndTravelsExactly) {
    const auto spreads = nbr::interpose::spreads_of({snapshot_on(2, 3, 1.0)});
    ASSERT_EQ(spreads.size(), 2U);
    const auto& gather = spreads.at(kGather);
    EXPECT_EQ(gather.ranks, 1);
    EXPECT_EQ(gather.total_us, 1.0 / 3.0);
    EXPECT_EQ(gather.slowest_rank, 2);
    EXPECT_EQ(spreads.at(kAlltoallv).total_us, 1.0) << "any size: the key holds SIZE_MAX";
    const auto back = nbr::interpose::decode_spreads(nbr::interpose::encode_spreads(spreads));
    ASSERT_EQ(back.size(), 2U);
    EXPECT_EQ(back.at(kGather).total_us, 1.0 / 3.0) << "the time is sent to the last bit";
    EXPECT_EQ(back.at(kGather).slowest_us, 1.0 / 3.0);
    EXPECT_EQ(back.at(kGather).slowest_rank, 2);
    EXPECT_EQ(back.at(kAlltoallv).ranks, 1);
}

TEST(Report, UntimedShapesAndDamagedLinesAreLeftOut) {
    EXPECT_TRUE(nbr::interpose::spreads_of({snapshot_on(1, 0, 0)}).empty()) << "nothing timed after the choice";
    const auto spreads = nbr::interpose::decode_spreads(
        "3.1 0 0 64 64 2 8.5\n3.1 0 0 64 64 2 8.5 5 1\nnot a line\n3.1 1 0 8 8 0 0 0 0\n");
    ASSERT_EQ(spreads.size(), 1U) << "short, foreign and empty lines are skipped";
    EXPECT_EQ(spreads.begin()->second.ranks, 2);
    EXPECT_EQ(spreads.begin()->second.slowest_us, 5);
}

TEST(Report, SpreadIsTheMeanOverRanksAndNamesTheSlowest) {
    // Ranks 0..3 take 10, 40, 20, 40 us per call (rank 0 with 4 timed calls, the rest with 5).
    const auto spreads =
        merged({snapshot_on(0, 4, 40), snapshot_on(1, 5, 200), snapshot_on(2, 5, 100), snapshot_on(3, 5, 200)});
    ASSERT_EQ(spreads.size(), 2U);
    const auto& gather = spreads.at(kGather);
    EXPECT_EQ(gather.ranks, 4);
    EXPECT_DOUBLE_EQ(gather.mean_us(), 27.5);
    EXPECT_DOUBLE_EQ(gather.slowest_us, 40);
    EXPECT_EQ(gather.slowest_rank, 1) << "a tie goes to the lowest rank";
    EXPECT_DOUBLE_EQ(spreads.at(kAlltoallv).mean_us(), 82.5);
    Spreads reversed = nbr::interpose::spreads_of({snapshot_on(3, 5, 200)});
    nbr::interpose::merge_spreads(reversed, nbr::interpose::spreads_of({snapshot_on(1, 5, 200)}));
    EXPECT_EQ(reversed.at(kGather).slowest_rank, 1) << "in whatever order the ranks merge";
}

TEST(Report, LinesSayTheMeanOverRanksAndTheSlowestRank) {
    const auto root = snapshot_on(0, 4, 40);
    const auto spreads = merged({root, snapshot_on(1, 5, 200), snapshot_on(2, 5, 100)});
    const auto report = nbr::interpose::describe_pattern(root, spreads);
    EXPECT_NE(report.text.find("nbr: communicator 3.1 (4 ranks, auto pattern patterns/000001, loaded): 160 calls"),
              std::string::npos)
        << report.text;
    EXPECT_NE(report.text.find("allgather blocking 64 B: 80 calls, runs hierarchical-cube-k0 (model's choice), "
                               "23.33 us/call (mean of 3 ranks; slowest rank 1: 40.00)\n"),
              std::string::npos)
        << report.text;
    EXPECT_NE(report.json.find("\"ranks_timed\": 3, \"mean_us_per_call\": 23.3333, \"slowest_us_per_call\": 40, "
                               "\"slowest_rank\": 1"),
              std::string::npos)
        << report.json;
}

TEST(Report, AShapeNoOtherRankTimedShowsThisRanksTime) {
    const auto root = snapshot_on(0, 4, 40);
    const auto report = nbr::interpose::describe_pattern(root, {});
    EXPECT_NE(report.text.find("runs naive (model's choice), 30.00 us/call (this rank)\n"), std::string::npos)
        << report.text;
    EXPECT_NE(report.json.find("\"ranks_timed\": 0, \"mean_us_per_call\": null"), std::string::npos) << report.json;
    const auto alone = nbr::interpose::spreads_of({root});
    EXPECT_NE(nbr::interpose::describe_pattern(root, alone).text.find("10.00 us/call (1 rank)\n"), std::string::npos);
}

TEST(Report, OneOfAThingIsSaidInTheSingular) {
    auto root = snapshot_on(0, 1, 10);
    root.ranks = 1;
    root.calls = 1;
    root.shapes.resize(1);
    root.shapes[0].stats.calls = 1;
    root.shapes[0].stats.trial_calls = 1;
    const auto text = nbr::interpose::describe_pattern(root, {}).text;
    EXPECT_NE(text.find("(1 rank, auto pattern patterns/000001, loaded): 1 call replayed\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("64 B: 1 call, runs hierarchical-cube-k0 (model's choice), trials 1 call "), std::string::npos)
        << text;
    EXPECT_NE(nbr::interpose::describe_native("MPI_Cart_create", 1, "why").text.find("a communicator of 1 rank (MPI_"),
              std::string::npos);
}

}  // namespace
