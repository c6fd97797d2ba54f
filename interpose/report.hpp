#pragma once
// libnbr-preload's report (NBR_REPORT): per communicator, collective and call shape what ran,
// what measured selection timed, what it saved against naive, and the time per call over the
// communicator's ranks (docs/environment.md).
//
// At MPI_Finalize every rank's time per call of every shape it ran (`Spread` of one rank) is
// merged up a binomial tree over MPI_COMM_WORLD, per communicator and shape, and world rank 0
// broadcasts the result; each communicator's reporting rank (its lowest with neighbors: a rank
// without keeps no fixed-size shapes under measurement) then writes its part of the report from its
// `PatternSnapshot` and the spreads, and world rank 0 prints the parts. What travels grows with
// the communicators and shapes, not with the ranks.
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
    nbr_decision_t decision = NBR_DECISION_NONE;
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
    bool reporter = false;  // the rank that counts the calls and describes the communicator
    std::string algorithm;
    std::string dir;
    std::string origin;
    unsigned long long calls = 0;  // counted on the reporting rank only
    std::vector<ShapeSnapshot> shapes;
};

/// @brief The pattern's shapes and counts now. Local.
[[nodiscard]] PatternSnapshot snapshot_pattern(nbr_pattern_t pattern, const std::string& id, int rank, int ranks,
                                               bool reporter, const std::string& dir, const std::string& origin,
                                               unsigned long long calls);

/// @brief A call shape of a communicator: its id, collective, mode and block-size class.
using ShapeKey = std::tuple<std::string, int, int, std::size_t, std::size_t>;

/// @brief A shape's time per call over a set of its communicator's ranks (those that timed calls
/// of it after the choice: `run_calls`); spreads of disjoint sets of ranks merge.
struct Spread {
    int ranks = 0;
    double total_us = 0;    // the sum of the ranks' times per call
    double slowest_us = 0;  // the largest rank's time per call
    int slowest_rank = 0;   // its rank in the communicator (the lowest on a tie)
    [[nodiscard]] double mean_us() const { return ranks > 0 ? total_us / ranks : 0.0; }
};
using Spreads = std::map<ShapeKey, Spread>;

/// @brief This rank's spreads: its time per call of every shape of `snapshots` it timed.
[[nodiscard]] Spreads spreads_of(const std::vector<PatternSnapshot>& snapshots);

/// @brief Adds the ranks of `from` to `into` (a rank in both would count twice).
void merge_spreads(Spreads& into, const Spreads& from);

/// @brief Spreads as text lines, to send to another rank; and back, the lines that parse (a
/// time reads back as the same double).
[[nodiscard]] std::string encode_spreads(const Spreads& spreads);
[[nodiscard]] Spreads decode_spreads(const std::string& text);

/// @brief A communicator's part of the report (written by its reporting rank): its snapshot, the time
/// per call of each shape over its ranks from `spreads` (this rank's alone where a shape has none).
[[nodiscard]] CommunicatorReport describe_pattern(const PatternSnapshot& snapshot, const Spreads& spreads);

/// @brief A communicator that ran natively (created by `function`), and why.
[[nodiscard]] CommunicatorReport describe_native(const std::string& function, int ranks, const std::string& why);

}  // namespace nbr::interpose
