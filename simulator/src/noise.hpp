// CPU detours and entry delays of a simulation (Perturbation), drawn by counter from a seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "nbr/graphs/placement.hpp"
#include "nbr/simulator/perturbation.hpp"

namespace nbr::simulator::internal {

/// @brief A uniform number in [0, 1) that depends only on its four arguments (splitmix64's
/// finalizer over them): random draws addressed by (seed, stream, rank, index) need no state
/// and come out the same in any order.
[[nodiscard]] inline double counter_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t a,
                                            std::uint64_t b) {
    const auto mix = [](std::uint64_t x) {
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    };
    const std::uint64_t x = mix(mix(mix(mix(seed) ^ stream) ^ a) ^ b);
    return static_cast<double>(x >> 11) * 0x1.0p-53;
}

/// @brief A duration with mean `mean` and the given spread, from a uniform `u`, at most `cap`.
[[nodiscard]] inline double draw(Spread spread, double mean, double u, double cap) {
    double value = mean;
    if (spread == Spread::uniform) value = 2 * mean * u;
    if (spread == Spread::exponential) value = -mean * std::log1p(-u);
    return std::min(value, cap);
}

/// @brief Detours and entry delays in picoseconds, per rank.
class CpuNoise {
public:
    using Time = std::int64_t;

    CpuNoise(const Perturbation& p, const Placement& placement)
        : seed_(p.seed),
          spread_(p.detours.spread),
          coscheduled_(p.detours.coscheduled),
          late_rank_(p.late_rank.value_or(~0U)),
          late_(to_ps(p.late_us)),
          skew_(p.skew_us * 1e6),
          skew_spread_(p.skew_spread),
          noisy_(placement.num_ranks(), 0) {
        if (!p.detours.any()) return;
        mark_noisy(p, placement);
        any_ = true;
        if (!p.detours.trace.empty()) {
            for (const auto& [start, duration] : p.detours.trace)
                trace_.emplace_back(to_ps(start), to_ps(start + duration));
            return;
        }
        period_ = std::max<Time>(1, to_ps(1e6 / p.detours.frequency_hz));
        mean_ = p.detours.duration_us * 1e6;
        phase_.resize(placement.num_ranks());
        for (std::uint32_t r = 0; r < placement.num_ranks(); ++r) {
            phase_[r] =
                static_cast<Time>(counter_uniform(seed_, 2, coscheduled_ ? 0 : r, 0) * static_cast<double>(period_));
        }
    }

    /// @brief When work of `work` ps that may start at `start` on `rank` ends: a start inside
    /// a detour waits for its end; every detour that begins before the work is done adds its
    /// length. Periodic detours run from before time 0 (a rank may be in one as the call starts).
    [[nodiscard]] Time advance(std::uint32_t rank, Time start, Time work) const {
        if (!any_ || !noisy_[rank]) return start + work;
        return trace_.empty() ? advance_periodic(rank, start, work) : advance_trace(start, work);
    }

    /// @brief How much later than its previous call's end (or time 0) `rank` enters call `iteration`.
    [[nodiscard]] Time entry_delay(std::uint32_t rank, std::uint32_t iteration) const {
        Time delay = rank == late_rank_ ? late_ : 0;
        if (skew_ > 0) {
            const double u = counter_uniform(seed_, 3, rank, iteration);
            delay += static_cast<Time>(std::llround(draw(skew_spread_, skew_, u, 50 * skew_)));
        }
        return delay;
    }

private:
    static Time to_ps(double us) { return static_cast<Time>(std::llround(us * 1e6)); }

    void mark_noisy(const Perturbation& p, const Placement& placement) {
        if (p.noisy_node) {
            for (std::uint32_t r = 0; r < placement.num_ranks(); ++r) noisy_[r] = placement.node(r) == *p.noisy_node;
        } else if (!p.noisy_ranks.empty()) {
            for (const auto r : p.noisy_ranks) noisy_.at(r) = 1;
        } else {
            std::fill(noisy_.begin(), noisy_.end(), 1);
        }
    }

    /// The length of periodic detour k on `rank` (at most a period: detours never overlap).
    [[nodiscard]] Time duration(std::uint32_t rank, std::int64_t k) const {
        const double u = counter_uniform(seed_, 1, coscheduled_ ? 0 : rank, static_cast<std::uint64_t>(k));
        return static_cast<Time>(std::llround(draw(spread_, mean_, u, static_cast<double>(period_))));
    }

    [[nodiscard]] Time advance_periodic(std::uint32_t rank, Time t, Time left) const {
        // Detours began before the call: detour k starts at phase + k·period for every integer k.
        const Time phase = phase_[rank];
        const Time since = t - phase;
        std::int64_t k = since / period_ - (since % period_ < 0 ? 1 : 0);  // floor
        t = std::max(t, phase + k * period_ + duration(rank, k));
        for (++k;; ++k) {
            const Time begin = phase + k * period_;
            if (begin >= t + left) return t + left;
            left -= begin - t;
            t = begin + duration(rank, k);
        }
    }

    [[nodiscard]] Time advance_trace(Time t, Time left) const {
        auto it = std::upper_bound(trace_.begin(), trace_.end(), t,
                                   [](Time value, const std::pair<Time, Time>& d) { return value < d.second; });
        if (it != trace_.end() && it->first <= t) t = (it++)->second;
        for (; it != trace_.end() && it->first < t + left; ++it) {
            left -= it->first - t;
            t = it->second;
        }
        return t + left;
    }

    std::uint64_t seed_;
    Spread spread_;
    bool coscheduled_;
    std::uint32_t late_rank_;
    Time late_;
    double skew_;  // ps
    Spread skew_spread_;
    bool any_ = false;
    std::vector<std::uint8_t> noisy_;  // per rank
    Time period_ = 0;
    double mean_ = 0;                           // ps
    std::vector<Time> phase_;                   // per rank
    std::vector<std::pair<Time, Time>> trace_;  // (start, end), sorted, disjoint
};

}  // namespace nbr::simulator::internal
