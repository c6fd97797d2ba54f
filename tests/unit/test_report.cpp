// The drop-in's report (interpose/report.cpp): each rank's time per call of a shape survives
// the trip to world rank 0 exactly, the spread over ranks names the slowest rank, and the text
// and JSON lines say the mean over the ranks and the slowest, not one rank's time.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report.hpp"

namespace {

using nbr::interpose::PatternSnapshot;
using nbr::interpose::ShapeSnapshot;
using nbr::interpose::ShapeTime;

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

std::vector<ShapeTime> times_of(const std::vector<PatternSnapshot>& ranks) {
    std::vector<ShapeTime> times;
    for (const auto& snapshot : ranks) {
        for (const auto& time : nbr::interpose::decode_shape_times(nbr::interpose::encode_shape_times(snapshot)))
            times.push_back(time);
    }
    return times;
}

TEST(Report, ShapeTimesRoundTripExactly) {
    const auto snapshot = snapshot_on(2, 5, 1.0 / 3.0);
    const auto times = nbr::interpose::decode_shape_times(nbr::interpose::encode_shape_times(snapshot));
    ASSERT_EQ(times.size(), 2U);
    EXPECT_EQ(std::get<0>(times[0].key), "3.1");
    EXPECT_EQ(std::get<1>(times[0].key), NBR_ALLGATHER);
    EXPECT_EQ(std::get<3>(times[0].key), 64U);
    EXPECT_EQ(times[0].rank, 2);
    EXPECT_EQ(times[0].calls, 5U);
    EXPECT_EQ(times[0].us, 1.0 / 3.0) << "the time is sent to the last bit";
    EXPECT_EQ(std::get<4>(times[1].key), SIZE_MAX) << "any size";
    EXPECT_EQ(times[1].us, 1.0);
}

TEST(Report, UntimedShapesAndDamagedLinesAreLeftOut) {
    auto snapshot = snapshot_on(1, 0, 0);  // nothing timed after the choice (still in trials)
    EXPECT_EQ(nbr::interpose::encode_shape_times(snapshot), "");
    const auto times = nbr::interpose::decode_shape_times("3.1 0 0 64\n3.1 0 0 64 64 1 2 8.5\nnot a line\n");
    ASSERT_EQ(times.size(), 1U);
    EXPECT_EQ(times[0].us, 8.5);
}

TEST(Report, SpreadIsTheMeanOverRanksAndNamesTheSlowest) {
    // Ranks 0..3 take 10, 40, 20, 40 us per call (rank 0 with 4 timed calls, the rest with 5).
    const auto spreads = nbr::interpose::spread_times(
        times_of({snapshot_on(0, 4, 40), snapshot_on(1, 5, 200), snapshot_on(2, 5, 100), snapshot_on(3, 5, 200)}));
    ASSERT_EQ(spreads.size(), 2U);
    const auto& gather = spreads.at({"3.1", NBR_ALLGATHER, NBR_MODE_BLOCKING, 64, 64});
    EXPECT_EQ(gather.ranks, 4);
    EXPECT_DOUBLE_EQ(gather.mean_us, 27.5);
    EXPECT_DOUBLE_EQ(gather.slowest_us, 40);
    EXPECT_EQ(gather.slowest_rank, 1) << "a tie goes to the lowest rank";
    const auto& alltoallv = spreads.at({"3.1", NBR_ALLTOALLV, NBR_MODE_NONBLOCKING, 0, SIZE_MAX});
    EXPECT_DOUBLE_EQ(alltoallv.mean_us, 82.5);
    const auto back = nbr::interpose::decode_spreads(nbr::interpose::encode_spreads(spreads));
    ASSERT_EQ(back.size(), 2U);
    EXPECT_EQ(back.begin()->second.mean_us, spreads.begin()->second.mean_us);
    EXPECT_EQ(back.begin()->second.slowest_rank, spreads.begin()->second.slowest_rank);
}

TEST(Report, LinesSayTheMeanOverRanksAndTheSlowestRank) {
    const auto root = snapshot_on(0, 4, 40);
    const auto spreads = nbr::interpose::spread_times(times_of({root, snapshot_on(1, 5, 200), snapshot_on(2, 5, 100)}));
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
    const auto alone = nbr::interpose::spread_times(times_of({root}));
    EXPECT_NE(nbr::interpose::describe_pattern(root, alone).text.find("10.00 us/call (1 rank)\n"), std::string::npos);
}

}  // namespace
