#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nbr/graphs/placement.hpp"
#include "nbr/plan/plan.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/perturbation.hpp"
#include "nbr_pattern.pb.h"

namespace nbr::simulator {

using nbr::internal::Collective;

/// @brief One replay of a pattern as a message graph, independent of block size, machine
/// and placement: what libnbr's executor does, taken from the replayer's own plans
/// (internal::build_plan), so message layouts, zero-copy (direct) messages and the
/// receive → send dependencies are exactly the replayer's.
///
/// Messages are numbered by sender, in each sender's plan order. Memory is linear in the
/// number of messages (about 40 bytes each).
struct SimProgram {
    std::uint32_t num_ranks = 0;
    std::string algorithm;
    Collective collective = Collective::allgather;
    std::vector<std::uint64_t> first_message;  ///< per rank (+1): its sends are [first, next first)
    std::vector<std::uint32_t> src;            ///< per message
    std::vector<std::uint32_t> dst;
    std::vector<std::uint32_t> units;            ///< blocks carried
    std::vector<std::uint32_t> unpack_units;     ///< blocks the receiver copies out of the message
    std::vector<std::uint8_t> packed;            ///< 1: staged (packed by the sender), 0: zero-copy
    std::vector<std::uint32_t> dependencies;     ///< receives the send waits for
    std::vector<std::uint64_t> first_dependent;  ///< per message (+1), into `dependents`
    std::vector<std::uint32_t> dependents;       ///< sends released when the message is received
    /// The pattern step of the send at its sender and of the receive at its receiver (the step
    /// and BSP execution rules wait on them); empty: every message in step 0.
    std::vector<std::uint32_t> send_step, recv_step;
    /// Blocking and nonblocking v-variants: every staged message is preceded by a size header
    /// (one uint64 per block), and its payload receive is posted when the header arrives.
    bool size_headers = false;
    /// The topology the pattern is for: per rank (+1) where its in-edges start in
    /// `in_edge_source`, their sources in MPI order (duplicates and self-loops included); empty
    /// for programs built by hand (the lower bound needs it).
    std::vector<std::uint64_t> first_in_edge;
    std::vector<std::uint32_t> in_edge_source;

    [[nodiscard]] std::uint64_t num_messages() const noexcept { return dst.size(); }
};

/// @brief Builds the program from every rank's pattern (index = rank), its staged messages
/// in segments of `max_units` blocks (internal::segment_plan; a pattern's segment_bytes at a
/// block size gives them by internal::segment_units).
/// @throws std::runtime_error naming the ranks if sends and receives do not match.
[[nodiscard]] SimProgram make_program(std::span<const schema::RankPattern> patterns, Collective collective,
                                      std::uint32_t max_units = internal::kWholeMessages);

/// @brief Reads a pattern directory rank by rank (checked as nbr_load_pattern checks each
/// file) and builds the program without keeping the patterns in memory.
[[nodiscard]] SimProgram load_program(const std::filesystem::path& dir, Collective collective);
/// @brief As above, with the directory's manifest already read (and checked).
[[nodiscard]] SimProgram load_program(const std::filesystem::path& dir, const schema::Manifest& manifest,
                                      Collective collective, std::uint32_t max_units = internal::kWholeMessages);

/// @brief Traffic of one distance class: per-rank messages and bytes sent.
struct ClassTraffic {
    double messages_mean = 0;
    std::uint64_t messages_max = 0;
    double bytes_mean = 0;
    std::uint64_t bytes_max = 0;
};

/// @brief One operation on the critical path: the chain of operations, each waiting for the
/// one before it (its core busy, or its message or dependency not there yet), that ends in
/// the last completion.
struct PathStep {
    enum class Kind : std::uint8_t {
        call,      ///< the call start on `rank`: per-call cost and posting its receives
        send,      ///< `rank`'s CPU sends to `peer` (pack, o_s + O_s·b)
        transfer,  ///< the message from `rank` to `peer` on its way (latency, bytes, queues)
        answer,    ///< rendezvous: `rank`'s CPU answers `peer`'s request
        receive,   ///< `rank`'s CPU completes the receive from `peer` (o_r + O_r·b, unpack)
        ack,       ///< above the eager limit: `peer`'s acknowledgment of `rank`'s send on its way back
    };
    Kind kind = Kind::call;
    std::uint32_t rank = 0;
    std::uint32_t peer = 0;
    DistanceClass distance = DistanceClass::socket;
    std::uint64_t bytes = 0;
    double start_us = 0, end_us = 0;
    /// transfer: what it took beyond the same message with nothing else on its way (waiting
    /// behind other messages at the rank's injection, the NICs and uplinks, or slowed by
    /// sharing them; included in end − start)
    double queued_us = 0;
};
[[nodiscard]] const char* to_string(PathStep::Kind kind);

/// @brief A time no schedule of a topology's collective can beat on a machine model at one
/// block size (lower_bound.hpp computes it): the larger of the latency bound (one message of
/// one block at the farthest class, or any class beyond it if that is cheaper, simulated alone
/// with its call) and the byte bound (the busiest node's blocks through its NIC at the
/// machine's NIC rate; none where the machine has no NIC rate).
struct LowerBound {
    double latency_us = 0;
    double bytes_us = 0;
    [[nodiscard]] double us() const { return latency_us > bytes_us ? latency_us : bytes_us; }
};

/// @brief Outcome of one simulated replay at one block size.
struct SimResult {
    std::uint64_t bytes = 0;  ///< block size (bytes per neighbor)
    double latency_us = 0;    ///< last completion over all ranks
    /// Per-rank completion times (µs): min, mean, median, 90th and 99th percentile, max.
    double completion_min_us = 0, completion_mean_us = 0, completion_median_us = 0;
    double completion_p90_us = 0, completion_p99_us = 0, completion_max_us = 0;
    std::uint32_t last_rank = 0;               ///< the rank that finishes last
    std::uint32_t critical_path_messages = 0;  ///< dependent messages leading to its last completion
    std::array<ClassTraffic, kDistanceClasses> traffic;
    std::uint64_t messages = 0;
    std::uint64_t events = 0;
    double host_seconds = 0;  ///< wall time of the simulation on this host
    std::string variant;      ///< auto directories: the variant the bands choose at this size
    /// nbrc simulate: blocks per segment of staged messages (internal::kWholeMessages: whole)
    std::uint32_t segment_units = internal::kWholeMessages;
    std::vector<PathStep> path;     ///< with SimOptions::critical_path: earliest first
    std::uint32_t iterations = 1;   ///< calls simulated back to back
    double iteration_us = 0;        ///< latency_us / iterations: the mean time per call
    std::vector<double> finish_us;  ///< with SimOptions::rank_finish: per rank, its last completion
    /// With a perturbation (simulate_perturbed): its effect; the fields above are then the
    /// first seed's run.
    std::optional<NoiseEffect> noise;
    /// nbrc simulate: the lower bound of a call at this size (lower_bound.hpp).
    std::optional<LowerBound> bound;
};

/// @brief What a simulation records beyond the latencies.
struct SimOptions {
    /// The critical path of the rank that finishes last (SimResult::path), at about 100
    /// bytes per message more memory.
    bool critical_path = false;
    /// Per-rank completion times (SimResult::finish_us).
    bool rank_finish = false;
    /// Noise, skew, execution rule and back-to-back calls (default: none, libnbr's rule, one call).
    Perturbation perturbation;
};

/// @brief Simulates one replay of `program` with blocks of `block_bytes` bytes on `machine`
/// with ranks placed by `placement` (one discrete-event simulation, LogGOPS per message;
/// docs/simulate.md gives the exact model). Deterministic.
/// @throws std::runtime_error if the placement's rank count differs or the program
/// deadlocks (a send whose receives never complete).
[[nodiscard]] SimResult simulate(const SimProgram& program, const Machine& machine, const Placement& placement,
                                 std::uint64_t block_bytes, const SimOptions& options = {});

/// @brief Simulates `program` under `options.perturbation` with `seeds` seeds (seed, seed + 1,
/// ...) and once without its detours and skew (same rule and iterations): SimResult::noise
/// holds the slowdown, amplification and a late rank's blast radius (docs/simulate.md).
[[nodiscard]] SimResult simulate_perturbed(const SimProgram& program, const Machine& machine,
                                           const Placement& placement, std::uint64_t block_bytes,
                                           const SimOptions& options, std::uint32_t seeds = 1);

/// Back-to-back calls and seeds behind predicted_call_us on a noisy machine.
inline constexpr std::uint32_t kNoiseCalls = 10;
inline constexpr std::uint32_t kNoiseSeeds = 2;

/// @brief What `nbrc compile --algo auto` compares candidates by: one call's latency on a
/// quiet machine; on a machine that states its noise, the mean time per call of
/// kNoiseCalls back-to-back calls under it, over kNoiseSeeds seeds (the same detours for
/// every candidate).
[[nodiscard]] double predicted_call_us(const SimProgram& program, const Machine& machine, const Placement& placement,
                                       std::uint64_t block_bytes);

/// @brief Everything `nbrc simulate` reports: one pattern (and optionally a baseline
/// pattern of the same topology) simulated at several block sizes.
struct SimReport {
    std::string pattern;  ///< pattern directory
    std::string algorithm;
    Collective collective = Collective::allgather;
    bool variable = false;  ///< the v-variant of the collective (see SimRequest)
    std::uint32_t ranks = 0;
    std::uint64_t messages = 0;
    std::string machine;
    std::string placement;
    std::uint32_t nodes = 0;
    /// An auto directory whose bands were chosen for another machine or placement than this
    /// run's: "MACHINE, placement P" (what the compile simulated); empty otherwise.
    std::string bands_chosen_for;
    /// Perturbation::describe() when the run is not one quiet call under libnbr's rule; else empty.
    std::string perturbation;
    double load_seconds = 0;     ///< reading the pattern and building the program
    double peak_memory_mib = 0;  ///< peak resident memory of the simulating process
    std::vector<SimResult> results;
    std::string baseline;  ///< baseline pattern directory; empty if none
    std::string baseline_algorithm;
    std::uint64_t baseline_messages = 0;
    std::vector<SimResult> baseline_results;  ///< same sizes as results
};

/// @brief What `nbrc simulate` asks for: a pattern directory, optionally a baseline pattern of
/// the same topology, one collective, block sizes.
struct SimRequest {
    std::filesystem::path pattern;
    std::filesystem::path baseline;  ///< empty: none
    Collective collective = Collective::allgather;
    /// The collective's v-variant as a blocking call with uniform blocks: staged messages carry
    /// size headers, and an auto directory runs the compiler's v choice at every size.
    bool variable = false;
    std::vector<std::uint64_t> sizes;
    SimOptions options;       ///< for the pattern (the baseline is simulated under its perturbation only)
    std::uint32_t seeds = 1;  ///< with a perturbation that delays ranks: seeds per cell
    /// An auto directory whose bands were chosen on a placement file (a capture's, say) is
    /// placed by that file while it exists, instead of by `place`: what the compile simulated.
    bool recorded_placement = false;
};

/// @brief Loads the request's patterns and simulates them at every size on `machine`, with
/// ranks placed by `place(num_ranks)`. An auto (multi-variant) directory is simulated, per
/// size, in the variant its bands choose for that block size, as libnbr would run it. Records load time and peak memory
/// in the report.
/// @throws InputError if the baseline has another number of ranks; what load_program and
/// simulate throw.
[[nodiscard]] SimReport simulate_directory(const SimRequest& request, const Machine& machine,
                                           const std::function<Placement(std::uint32_t)>& place);

/// @brief Human-readable report: one line per size, traffic by distance class.
[[nodiscard]] std::string format_report(const SimReport& report);

/// @brief JSON report: top-level `results`, one object per size with at least `bytes` and
/// `latency_us` (and `baseline_latency_us`, `speedup` with a baseline).
[[nodiscard]] std::string format_report_json(const SimReport& report);

}  // namespace nbr::simulator
