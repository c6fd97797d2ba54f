#pragma once
// libnbr-preload's report (NBR_REPORT): per communicator, collective and call shape what ran,
// what measured selection timed, what it saved against naive, and the time per call over the
// communicator's ranks (docs/environment.md).
//
// At MPI_Finalize every rank sends world rank 0 its time per call of every shape it ran
// (`ShapeTime`); world rank 0 reduces them per communicator and shape (`Spread`) and sends the
// spreads back; each communicator's rank 0 then writes its part of the report from its
// `PatternSnapshot` and the spreads, and world rank 0 prints the parts.
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "nbr.h"

namespace nbr::interpose {

/// @brief One communicator's part of the report, as text lines and as a JSON object.
struct CommunicatorReport {
    std::string text;
    std::string json;
};

/// @brief One candidate of a call shape (nbr_pattern_shape_candidate).
struct CandidateSnapshot {
    std::string name;
    double median_us = 0;
    double mean_us = 0;
    unsigned long long samples = 0;
};

/// @brief One call shape of a pattern (nbr_pattern_shape_stats), copied so that it outlives
/// the pattern: `stats.variant` is not used (see `variant`).
struct ShapeSnapshot {
    nbr_shape_stats_t stats{};
    std::string variant;
    std::vector<CandidateSnapshot> candidates;
};

/// @brief What a communicator's pattern did on this rank, taken when the communicator is freed
/// or at MPI_Finalize. `id` names the communicator in the report ("W.N": the N-th communicator
/// attached on world rank W, its rank 0); `rank` is this process's rank in it.
struct PatternSnapshot {
    std::string id;
    int rank = 0;
    int ranks = 0;
    std::string algorithm;
    std::string dir;
    std::string origin;
    unsigned long long calls = 0;  // counted on the communicator's rank 0 only
    std::vector<ShapeSnapshot> shapes;
};

/// @brief The pattern's shapes and counts now. Local.
[[nodiscard]] PatternSnapshot snapshot_pattern(nbr_pattern_t pattern, const std::string& id, int rank, int ranks,
                                               const std::string& dir, const std::string& origin,
                                               unsigned long long calls);

/// @brief A call shape of a communicator: its id, collective, mode and block-size class.
using ShapeKey = std::tuple<std::string, int, int, std::size_t, std::size_t>;

/// @brief One rank's timed calls of one shape (those after the choice, `run_calls`/`run_us`).
struct ShapeTime {
    ShapeKey key;
    int rank = 0;
    unsigned long long calls = 0;
    double us = 0;
};

/// @brief The shapes of `snapshot` this rank timed, one text line each; and back (lines that do
/// not parse are skipped).
[[nodiscard]] std::string encode_shape_times(const PatternSnapshot& snapshot);
[[nodiscard]] std::vector<ShapeTime> decode_shape_times(const std::string& text);

/// @brief A shape's time per call over the ranks that timed it.
struct Spread {
    int ranks = 0;
    double mean_us = 0;     // the mean of the ranks' times per call
    double slowest_us = 0;  // the largest rank's time per call
    int slowest_rank = 0;   // its rank in the communicator (the lowest on a tie)
};
using Spreads = std::map<ShapeKey, Spread>;

/// @brief Every rank's times reduced per shape.
[[nodiscard]] Spreads spread_times(const std::vector<ShapeTime>& times);

/// @brief Spreads as text lines, for the broadcast from world rank 0; and back.
[[nodiscard]] std::string encode_spreads(const Spreads& spreads);
[[nodiscard]] Spreads decode_spreads(const std::string& text);

/// @brief A communicator's part of the report (written by its rank 0): its snapshot, the time
/// per call of each shape over its ranks from `spreads` (this rank's alone where a shape has none).
[[nodiscard]] CommunicatorReport describe_pattern(const PatternSnapshot& snapshot, const Spreads& spreads);

/// @brief A communicator that ran natively (created by `function`), and why.
[[nodiscard]] CommunicatorReport describe_native(const std::string& function, int ranks, const std::string& why);

}  // namespace nbr::interpose
