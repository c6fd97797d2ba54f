#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nbr::simulator {

/// @brief How ranks execute a pattern's steps (docs/simulate.md, "Noise, skew and execution
/// rules"). Patterns without forwarding (naive) run the same under all three.
enum class ExecutionRule : std::uint8_t {
    event,  ///< libnbr's: a send leaves as soon as the receives that feed it are in
    /// Step-synchronized (libnbc's rounds, ADAPT's "Waitall" baseline): a rank's step-t sends
    /// also wait for every receive of its earlier steps.
    step,
    /// Bulk-synchronous: a global barrier closes every step; step-t sends wait for every
    /// receive of steps < t on all ranks, plus the barrier's latency.
    bsp,
};
[[nodiscard]] const char* to_string(ExecutionRule rule);
/// @throws InputError naming the accepted names.
[[nodiscard]] ExecutionRule parse_execution_rule(std::string_view name);

/// @brief How a random duration spreads around its mean.
enum class Spread : std::uint8_t {
    fixed,        ///< always the mean
    uniform,      ///< uniform on [0, 2·mean]
    exponential,  ///< exponential with the mean (capped at the detour period)
};
[[nodiscard]] const char* to_string(Spread spread);
/// @throws InputError naming the accepted names.
[[nodiscard]] Spread parse_spread(std::string_view name);

/// @brief CPU detours (operating-system noise, LogGOPSim's model): while a detour lasts, the
/// rank's CPU does no MPI work; an operation it overlaps is delayed by it. The NIC keeps
/// moving data already handed to it.
struct Detours {
    double frequency_hz = 0;  ///< periodic detours per second on each noisy rank (0: none)
    double duration_us = 0;   ///< their mean duration
    Spread spread = Spread::fixed;
    /// Every noisy rank has its detours at the same times (co-scheduled noise); otherwise each
    /// rank's period starts at its own seeded phase.
    bool coscheduled = false;
    /// A detour trace instead of periodic detours: (start µs, duration µs), sorted by start,
    /// the same on every noisy rank (read_detour_trace).
    std::vector<std::pair<double, double>> trace;

    [[nodiscard]] bool any() const noexcept { return (frequency_hz > 0 && duration_us > 0) || !trace.empty(); }
    /// The fraction of time lost to detours: frequency × mean duration, or a trace's total
    /// duration over its span (0 without detours).
    [[nodiscard]] double fraction() const noexcept;
};

/// @brief Periodic detours from "FREQ_HZ:DURATION_US[:SPREAD]" (nbrc simulate --noise).
/// @throws InputError naming the text if a value is not a non-negative number, the spread is
/// unknown, or a detour could be longer than its period.
[[nodiscard]] Detours parse_detours(std::string_view text);
/// @brief A late rank from "RANK:DELAY_US" (--late). @throws InputError naming the text.
[[nodiscard]] std::pair<std::uint32_t, double> parse_late(std::string_view text);
/// @brief Entry skew from "MEAN_US[:SPREAD]" (--skew; default spread uniform). @throws InputError.
[[nodiscard]] std::pair<double, Spread> parse_skew(std::string_view text);

/// @brief Reads a detour trace: one `start duration` pair (µs) a line, increasing starts, `#`
/// comments. @throws InputError naming the file and line.
[[nodiscard]] std::vector<std::pair<double, double>> read_detour_trace(const std::filesystem::path& path);

/// @brief Noise, skew, the execution rule and back-to-back iterations of one simulation;
/// the default is one call from a synchronized start on a quiet machine under libnbr's rule.
/// Random parts are drawn from `seed` by counter (rank, iteration, detour number): the same
/// seed gives the same run.
struct Perturbation {
    ExecutionRule rule = ExecutionRule::event;
    Detours detours;
    std::vector<std::uint32_t> noisy_ranks;   ///< the ranks with detours; empty (and no node): all
    std::optional<std::uint32_t> noisy_node;  ///< or the ranks placed on this node
    /// One late rank: it enters every call `late_us` after the others would.
    std::optional<std::uint32_t> late_rank;
    double late_us = 0;
    /// Every rank enters every call after a delay drawn with `skew_spread` around `skew_us`.
    double skew_us = 0;
    Spread skew_spread = Spread::uniform;
    /// Back-to-back calls: call i+1 starts on a rank when its call i has completed there.
    std::uint32_t iterations = 1;
    std::uint64_t seed = 1;

    /// @brief Whether nothing delays any rank (the rule and iterations may still differ).
    [[nodiscard]] bool quiet() const noexcept { return !detours.any() && !late_rank && skew_us <= 0; }
    /// @brief One line naming what is set, e.g. "rule step, detours 10 Hz x 10000 us uniform".
    [[nodiscard]] std::string describe() const;
};

/// @brief What noise did to one simulated cell, against the same run without detours and skew.
struct NoiseEffect {
    std::uint32_t seeds = 1;
    double quiet_us = 0;        ///< time per call without detours and skew (same rule, iterations)
    double noisy_us = 0;        ///< time per call with them, mean over the seeds
    double noisy_min_us = 0;    ///< the seeds' fastest
    double noisy_max_us = 0;    ///< and slowest
    double slowdown = 0;        ///< noisy / quiet − 1
    double noise_fraction = 0;  ///< Detours::fraction()
    double amplification = 0;   ///< slowdown / noise fraction (0 without detours)
    /// With a late rank (first seed): how many ranks finish their last call later than without
    /// it by more than half its delay (the late rank included); -1 without a late rank.
    std::int64_t blast_radius = -1;
};

}  // namespace nbr::simulator
