// Trials carried over communicators of one pattern: an application that creates its topology
// communicator anew for each solve (and frees it after) calls each shape only as often as one
// solve does, often fewer times than the trials need. A shape still in trials when its pattern
// is freed leaves its trials to the next pattern the process loads with measurement from the
// same compile, for the same communicator size, rank and machine; the ranks resume them only
// when every rank carries the same (docs/architecture.md, "Measured selection").
#include <bit>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "handles.hpp"
#include "nbr/schema/hash.hpp"
#include "tuner.hpp"

namespace nbr::internal {

namespace {

/// Whose trials: the pattern's compile, communicator size and rank, the machine's fingerprint
/// (MPI, processor, the ranks' spread) and whether ranks share cores.
using CarryKey = std::tuple<std::uint64_t, int, int, std::string, bool>;

CarryKey carry_key(const PatternState& pattern) {
    return {pattern.compile_id, pattern.size, pattern.rank, pattern.machine, pattern.tuner->oversubscribed};
}

std::mutex& carry_mutex() {
    static std::mutex mutex;
    return mutex;
}

/// The process's carried trials: per key, the shapes still in trials when a pattern was freed.
std::map<CarryKey, std::vector<Shape>>& carried() {
    static auto* store = new std::map<CarryKey, std::vector<Shape>>;  // patterns may outlive static destruction
    return *store;
}

/// What of a shape goes on in the next communicator: the candidates' samples and agreed results
/// and the schedule's place; the communicator's own counts start at zero.
Shape carried_copy(const Shape& shape) {
    Shape copy;
    copy.key = shape.key;
    copy.state = shape.state;
    copy.round = shape.round;
    copy.in_round = shape.in_round;
    copy.final_agreement = shape.final_agreement;
    copy.candidates = shape.candidates;
    for (auto& candidate : copy.candidates) candidate.trial_calls = 0;
    return copy;
}

/// The part of carried shapes every rank must share for their schedules to stay in step.
std::uint64_t schedule_hash(const std::vector<Shape>& shapes) {
    Hasher hasher;
    for (const auto& shape : shapes) {
        const auto& key = shape.key;
        hasher.update(static_cast<std::uint64_t>(key.collective) | (key.variable ? 2U : 0U) |
                      (static_cast<std::uint64_t>(key.mode) << 2));
        hasher.update(key.band);
        hasher.update(key.size_class);
        hasher.update(shape.round);
        hasher.update(shape.in_round);
        hasher.update(shape.final_agreement ? 1 : 0);
        for (const auto& candidate : shape.candidates) {
            hasher.update(candidate.variant);
            hasher.update(candidate.pruned ? 1 : 0);
            hasher.update(std::bit_cast<std::uint64_t>(candidate.median_us));
            hasher.update(std::bit_cast<std::uint64_t>(candidate.mean_us));
            hasher.update(std::bit_cast<std::uint64_t>(candidate.spread_us));
            hasher.update(candidate.agreed_samples);
        }
    }
    return hasher.digest() | 1;  // never 0, which means "none"
}

/// Puts a carried shape in place of the pattern's fresh one; false if that is not in trials (wisdom
/// decided it) or has other candidates.
bool resume_shape(PatternState& pattern, Shape& from) {
    Shape& shape = pattern.tuner->shapes[static_cast<std::size_t>(pattern.tuner->shape_of(pattern, from.key))];
    if (shape.state != Shape::State::trial || shape.candidates.size() != from.candidates.size()) return false;
    for (std::size_t c = 0; c < shape.candidates.size(); ++c) {
        if (shape.candidates[c].variant != from.candidates[c].variant) return false;
    }
    shape = std::move(from);
    return true;
}

}  // namespace

void carry_trials(PatternState& pattern) {
    if (!pattern.tuner || pattern.tuner->model_only) return;
    pattern.tuner->complete_agreements(pattern);
    std::vector<Shape> kept;
    for (const auto& shape : pattern.tuner->shapes) {
        if (shape.state == Shape::State::trial) kept.push_back(carried_copy(shape));
    }
    const std::lock_guard lock(carry_mutex());
    if (kept.empty()) {
        carried().erase(carry_key(pattern));
    } else {
        carried()[carry_key(pattern)] = std::move(kept);
    }
}

std::uint64_t carried_trials_hash(const PatternState& pattern) {
    const std::lock_guard lock(carry_mutex());
    const auto found = carried().find(carry_key(pattern));
    return found == carried().end() ? 0 : schedule_hash(found->second);
}

std::string resume_trials(PatternState& pattern, bool agreed, bool any) {
    std::vector<Shape> shapes;
    {
        const std::lock_guard lock(carry_mutex());
        const auto found = carried().find(carry_key(pattern));
        if (found != carried().end()) {
            shapes = std::move(found->second);
            carried().erase(found);
        }
    }
    if (!any) return {};
    if (!agreed) return "ranks carry different trials from an earlier communicator of this pattern; started anew";
    std::size_t resumed = 0;
    for (auto& shape : shapes) resumed += resume_shape(pattern, shape) ? 1 : 0;
    if (resumed == 0) return {};  // wisdom imported since decided them
    return "trials of " + std::to_string(resumed) + " shape" + (resumed == 1 ? "" : "s") +
           " resumed from an earlier communicator of this pattern";
}

void forget_carried_trials() {
    const std::lock_guard lock(carry_mutex());
    carried().clear();
}

}  // namespace nbr::internal
