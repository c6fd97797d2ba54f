#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/simulator/machine.hpp"

namespace nbr::compiler {

/// @brief What `nbrc compile --algo auto` needs to know.
struct AutoOptions {
    simulator::Machine machine;          ///< the cluster the pattern is chosen for
    std::optional<Placement> placement;  ///< where the ranks run (required: candidates and simulation)
    std::vector<std::uint64_t> sizes;    ///< block sizes simulated (default_auto_sizes())
    /// A candidate replaces naive at a size only if naive's latency is at least (1 + margin)
    /// times the candidate's (docs/algorithms.md, "auto"); at each size at least the machine's
    /// ratio error there (effective_margins).
    double margin = 0.01;
    /// The bytes per edge the application's blocking and nonblocking v-calls use, inclusive
    /// (`--v-bytes LO:HI`); the v choice is judged at the simulated sizes that bracket it
    /// (variable_size_range). Absent: at every simulated size.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> variable_bytes;
    /// Who stated variable_bytes ("--v-bytes", or "calls.txt" of a capture); recorded.
    std::string variable_bytes_source = "--v-bytes";
    AlgorithmOptions base;  ///< limits of the candidates' searches, common-neighbor's Θ
    /// The candidates to try (`--candidates`, select_candidates): names, or prefixes ending in
    /// `*`; naive always. Empty: every candidate.
    std::vector<std::string> candidates;
    std::filesystem::path output;  ///< pattern directory to (re)place
    bool quiet = false;
    /// The simulations are dealt out in units (a candidate's program for one collective over a
    /// run of sizes); a (candidate, collective) pair is split into runs of sizes where it would
    /// otherwise give fewer than this many units per process. Output does not depend on it.
    std::size_t units_per_process = 4;
    /// Candidates whose schedules equal an earlier candidate's (schedule_checksum; e.g. a
    /// k-group search that found no group builds naive's messages) take its predictions
    /// instead of being simulated again. Output does not depend on it.
    bool reuse_same_schedules = true;
    /// Every candidate but naive also forwarding in segments of the machine's segment size
    /// (simulator::segment_size_for; `--whole-messages` turns it off): built once, written
    /// twice; the segmented copy is simulated only at the fixed-size calls' sizes where it
    /// splits a message (elsewhere, and for v-calls, it runs as its base) and where its
    /// NIC bound does not rule it out: where the blocks its busiest NIC carries take longer
    /// than the keep-th fastest whole candidate's prediction, the model could neither choose
    /// nor keep it, and its prediction there is +infinity (docs/algorithms.md, "auto").
    bool segmented_candidates = true;
    /// Whether the copies' NIC bound leaves sizes unsimulated (above). Off, every copy is
    /// simulated wherever it splits a message; the bands and kept candidates are the same,
    /// only the predictions of the sizes the bound rules out differ (their values, not +infinity).
    bool bound_segmented_copies = true;
    /// Candidates kept per band and for the v-variants, the winner and naive included
    /// (`--keep`): the model's next fastest beside its winner, for measured selection in the
    /// job (libnbr's NBR_LOAD_MEASURE) to time. 1: the winners only (a format-2 directory).
    std::size_t keep = 3;
    std::string source;                               ///< recorded in the manifest
    PatternLayout layout = PatternLayout::automatic;  ///< of every variant's directory
    bool keep_existing = false;                       ///< as CompileOptions::keep_existing (a cache entry)
    /// Seconds the candidates' builds may take (an in-job build's budget): once the slowest
    /// process has spent them, the candidates not yet built are left out (naive, the first, is
    /// always built) and the manifest's candidate selectors name those built, so that `nbrc
    /// compile --candidates` with them writes the same directory. None: no limit.
    std::optional<double> build_budget_seconds;
};

/// @brief The margin auto chooses with at each of `options.sizes`, and records: `options.margin`,
/// or the machine's ratio error over the block sizes that size's winner runs (from it, the
/// first from 0, to the next simulated size; Machine::ratio_error_over) where larger. A calibrated machine's
/// predictions are trusted only beyond the error its pattern checks found there.
[[nodiscard]] std::vector<double> effective_margins(const AutoOptions& options);

/// @brief 1 B to 4 MiB in powers of two.
[[nodiscard]] std::vector<std::uint64_t> default_auto_sizes();

/// @brief Indices [first, last] of `sizes` (increasing) the v choice is judged at: from the
/// largest size <= lo (else the first) to the smallest size >= hi (else the last), so that
/// every block size of [lo, hi] lies between two judged sizes. Without a range: all of them.
[[nodiscard]] std::pair<std::size_t, std::size_t> variable_size_range(
    const std::vector<std::uint64_t>& sizes, const std::optional<std::pair<std::uint64_t, std::uint64_t>>& bytes);

/// @brief One candidate's simulated latencies (µs) per size: allgather, alltoall, and the
/// blocking v-variants allgatherv and alltoallv (uniform blocks, with their size headers);
/// empty for a candidate that was not simulated (not usable).
struct Prediction {
    std::string name;
    std::array<std::vector<double>, 4> latency_us;
    /// The earlier candidate whose schedules this one's equal (simulated once); none: its own.
    std::optional<std::size_t> same_schedules_as;
    /// A segmented copy: the candidate (index) whose schedules it forwards in segments; none:
    /// a whole candidate. keep_candidates keeps each kept candidate's other form beside it.
    std::optional<std::size_t> segments_of;
    /// Some rank without neighbors has a message in it: libnbr would not run it for fixed-size
    /// calls (such a rank may pass any counts there), so only the v-calls may choose it.
    bool through_ranks_without_neighbors = false;
    [[nodiscard]] bool usable() const noexcept { return !latency_us[0].empty(); }
    [[nodiscard]] bool usable_fixed() const noexcept { return usable() && !through_ranks_without_neighbors; }
};

/// @brief The choice among predictions (candidate indices; candidate 0 is naive).
struct AutoChoice {
    std::array<std::vector<std::uint32_t>, 2> winner;  ///< per collective, per size
    std::array<std::uint32_t, 2> variable{0, 0};       ///< v-variants' candidate per collective
    /// Per collective and size: the candidates kept beside the winner (keep_candidates), in
    /// the model's order; empty unless keep_candidates filled them.
    std::array<std::vector<std::vector<std::uint32_t>>, 2> alternatives;
    std::array<std::vector<std::uint32_t>, 2> variable_alternatives;  ///< the v-variants'
};

/// @brief The rule of docs/algorithms.md ("auto"): per collective and size s the fastest usable
/// candidate if naive is at least (1 + margins[s]) times slower, else naive (ties: the earlier
/// candidate); for the v-variants (from the v predictions, at the sizes of indices
/// [variable_sizes.first, variable_sizes.second]) the candidate never slower than naive at any
/// of those sizes whose geometric-mean speedup over naive there is highest and at least 1 +
/// the largest margin of those sizes, else naive.
/// Requires predictions[0] to be naive and usable, and a margin per size.
[[nodiscard]] AutoChoice choose_variants(const std::vector<Prediction>& predictions, const std::vector<double>& margins,
                                         std::pair<std::size_t, std::size_t> variable_sizes = {0, SIZE_MAX});

/// @brief choose_variants with the same margin at every size.
[[nodiscard]] AutoChoice choose_variants(const std::vector<Prediction>& predictions, double margin,
                                         std::pair<std::size_t, std::size_t> variable_sizes = {0, SIZE_MAX});

/// @brief Fills `choice.alternatives` (docs/algorithms.md, "auto"): beside each winner up to
/// keep − 1 more candidates with schedules of their own, naive always among them (it takes the
/// last place when the model's next fastest would crowd it out), the others the model's next
/// fastest; for the v-variants ranked by geometric-mean speedup over naive at the sizes judged.
/// At each size (for the v-variants: by their score) a candidate predicted exactly like the
/// winner or like one kept before it is passed over: there it runs the same schedule (a
/// segmented copy whose messages are not cut at that size).
/// Then beside every candidate kept (the winner too) its other form, whole or segmented
/// (Prediction::segments_of), where that form is predicted finitely and apart from every
/// candidate kept there, a segmented copy only at or below the keep-th smallest distinct
/// prediction of the whole candidates (what the copies' NIC bound compares with): segmentation pays off only as far as
/// the machine model's per-message and pipelining costs are right, so measurement decides it (so a band may hold more
/// than `keep`, at most twice as many). Ordered fastest first by the model; ties by candidate index. keep <= 1 keeps
/// none.
void keep_candidates(AutoChoice& choice, const std::vector<Prediction>& predictions, std::size_t keep,
                     std::pair<std::size_t, std::size_t> variable_sizes = {0, SIZE_MAX});

namespace internal {

/// @brief Deals units of work to `processes` processes by Graham's longest-processing-time
/// rule: the costliest unit first, each to the process with the least cost so far (ties: the
/// lower process; equal costs: the lower unit first). The busiest process carries at most
/// 4/3 of the best possible deal's. Deterministic: the same costs and process count give
/// the same deal. @return the process of each unit
[[nodiscard]] std::vector<int> deal_longest_first(const std::vector<double>& costs, int processes);

/// @brief The k-th smallest distinct value of `values` (k from 1), or +infinity if they hold
/// fewer than k distinct values (or k is 0): the prediction a segmented copy's NIC bound must
/// exceed before auto leaves it unsimulated (k = the candidates kept per band).
[[nodiscard]] double kth_smallest_distinct(std::vector<double> values, std::size_t k);

}  // namespace internal

/// @brief Figures of a finished auto compile (identical on every process).
struct AutoReport {
    std::uint32_t ranks = 0;
    std::uint64_t edges = 0;
    std::vector<std::string> variants;  ///< kept, in manifest order
    std::vector<std::string> notes;     ///< candidates whose search limits bound (patterns exact all the same)
    double seconds = 0;
    std::size_t simulation_units = 0;  ///< (candidate, collective, run of sizes) units dealt out
    /// Sizes (per segmented copy and collective) left unsimulated by the copies' NIC bound
    std::size_t bounded_cells = 0;
    double busiest_simulation_seconds = 0;  ///< CPU time the busiest process simulated
    double total_simulation_seconds = 0;    ///< CPU time simulating, summed over the processes
    /// (candidate, earlier candidate with the same schedules): predictions reused, not simulated
    std::vector<std::pair<std::string, std::string>> same_schedules;
    std::vector<std::string> over_budget;  ///< candidates left out by build_budget_seconds
    bool kept_existing = false;            ///< keep_existing found another compile's output there
};

/// @brief Builds every candidate (auto_candidates) once, simulates each for allgather and
/// alltoall at every size on the machine, keeps per collective and size band the winner
/// (choose_variants), and writes a multi-variant pattern directory atomically (as compile()
/// does). The simulations are spread over the processes of `comm`; the output is
/// byte-identical for every process count. Collective; on failure every process throws the
/// same error and nothing is left at `options.output`.
AutoReport compile_auto(MPI_Comm comm, const Topology& topology, const AutoOptions& options);

}  // namespace nbr::compiler
