// Measured selection: the trial schedule of a call shape and the ranks' agreements on it
// (docs/architecture.md, "Measured selection").
#include "tuner.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

#include "error.hpp"
#include "hand_off.hpp"
#include "handles.hpp"
#include "progress.hpp"
#include "testing.h"

namespace nbr::internal {

namespace {

/// Values per candidate in an agreement: median, mean, interquartile range, −(sample count); all
/// reduced by MAX, so the slowest rank's times and spread decide and the count is the least any
/// rank had.
constexpr std::size_t kAgreed = 4;

double median_of(std::vector<double> values) {
    if (values.empty()) return -1.0;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    if (values.size() % 2 == 1) return *middle;
    const double upper = *middle;
    return (upper + *std::max_element(values.begin(), middle)) / 2;
}

/// The distance between the upper and the lower quartile (linear interpolation between
/// samples), −1 without samples.
double spread_of(std::vector<double> values) {
    if (values.empty()) return -1.0;
    std::sort(values.begin(), values.end());
    const auto quantile = [&](double q) {
        const double at = q * static_cast<double>(values.size() - 1);
        const auto below = static_cast<std::size_t>(at);
        const std::size_t above = std::min(below + 1, values.size() - 1);
        return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
    };
    return quantile(0.75) - quantile(0.25);
}

double mean_of(const std::vector<double>& values) {
    if (values.empty()) return -1.0;
    double sum = 0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

/// Adds a timed trial call to the candidate's current turn; the turn's last one makes the
/// turn's mean a sample (Tuner::kSpanCalls).
void add_to_span(TrialCandidate& candidate, double us) {
    candidate.span_us += us;
    if (++candidate.span_calls < Tuner::kSpanCalls) return;
    candidate.samples.push_back(candidate.span_us / Tuner::kSpanCalls);
    candidate.span_us = 0;
    candidate.span_calls = 0;
}

/// The candidates still in the trial, in the model's order.
std::vector<std::uint32_t> live(const Shape& shape) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t c = 0; c < shape.candidates.size(); ++c) {
        if (!shape.candidates[c].pruned) out.push_back(c);
    }
    return out;
}

/// The fastest candidate every rank measured (least agreed median; ties: the model's order),
/// else the model's winner.
std::uint32_t fastest(const Shape& shape) {
    std::uint32_t best = 0;
    double best_us = std::numeric_limits<double>::infinity();
    for (std::uint32_t c = 0; c < shape.candidates.size(); ++c) {
        const auto& candidate = shape.candidates[c];
        if (candidate.pruned || candidate.agreed_samples == 0) continue;
        if (candidate.median_us < best_us) {
            best_us = candidate.median_us;
            best = c;
        }
    }
    return best;
}

/// The agreed median's confidence half-width (Tuner::kNotch).
double notch(const TrialCandidate& candidate) {
    return Tuner::kNotch * candidate.spread_us / std::sqrt(static_cast<double>(candidate.agreed_samples));
}

/// Whether measurement has told `other` apart from the fastest: even with both medians at the
/// far ends of their intervals, the fastest is at most Tuner::kTolerance slower. A candidate
/// some rank has no sample of is not told apart.
bool settled(const TrialCandidate& fastest, const TrialCandidate& other) {
    if (other.agreed_samples == 0) return false;
    const double fastest_at_worst = fastest.median_us + notch(fastest);
    const double other_at_best = other.median_us - notch(other);
    return fastest_at_worst <= (1 + Tuner::kTolerance) * other_at_best;
}

/// Whether a candidate runs the naive schedule (MPI's own collective, or its pattern).
bool is_naive(const PatternState& pattern, const TrialCandidate& candidate) {
    return pattern.variants[candidate.variant].algorithm == "naive";
}

/// The last agreement's choice among the fastest median and the candidates every rank measured
/// whose medians are at most Tuner::kTolerance above it, so that a difference too small to
/// matter does not decide: naive if it is among them (MPI's own collective, which cannot lose
/// to noise what it never gained), else the first of them in the model's order. Where ranks
/// share cores (Tuner::oversubscribed) naive runs whenever it is still in contention. Returns
/// the choice and which of these rules made it.
std::pair<std::uint32_t, Shape::Decision> final_choice(const PatternState& pattern, const Shape& shape,
                                                       std::uint32_t best) {
    using Decision = Shape::Decision;
    const double within = (1 + Tuner::kTolerance) * shape.candidates[best].median_us;
    const auto contending = [](const TrialCandidate& candidate) {
        return !candidate.pruned && candidate.agreed_samples > 0;
    };
    const auto near = [&](const TrialCandidate& candidate) {
        return contending(candidate) && candidate.median_us <= within;
    };
    const auto first_near = [&] {  // the model's order in a near tie: best if none before it
        std::uint32_t c = 0;
        while (c < best && !near(shape.candidates[c])) ++c;
        return c;
    };
    const bool shared_cores = pattern.tuner->oversubscribed;
    for (std::uint32_t c = 0; c < shape.candidates.size(); ++c) {
        const TrialCandidate& candidate = shape.candidates[c];
        if (!is_naive(pattern, candidate)) continue;
        if (c == best) return {c, first_near() < best ? Decision::naive_tie : Decision::lowest_median};
        if (near(candidate)) return {c, Decision::naive_tie};
        if (shared_cores && contending(candidate)) return {c, Decision::shared_cores};
    }
    const std::uint32_t earlier = first_near();
    return {earlier, earlier < best ? Decision::model_tie : Decision::lowest_median};
}

std::mutex& penalty_mutex() {
    static std::mutex mutex;
    return mutex;
}

std::map<std::string, double>& penalties() {
    static std::map<std::string, double> table;
    return table;
}

std::map<std::string, double>& noises() {
    static std::map<std::string, double> table;
    return table;
}

double looked_up(const std::map<std::string, double>& table, const std::string& variant) {
    const std::lock_guard lock(penalty_mutex());
    const auto it = table.find(variant);
    return it == table.end() ? 0.0 : it->second;
}

int set_testing(std::map<std::string, double>& table, const char* variant, double microseconds) {
    if (variant == nullptr || !(microseconds >= 0)) return NBR_ERR_ARG;
    const std::lock_guard lock(penalty_mutex());
    table[variant] = microseconds;
    return NBR_SUCCESS;
}

/// nbr_testing_oversubscribed's state: -1 as detected, else 0 or 1 as forced.
std::atomic<int>& oversubscription_override() {
    static std::atomic<int> state{-1};
    return state;
}

}  // namespace

std::uint32_t size_class_of(std::uint64_t bytes) {
    return static_cast<std::uint32_t>(std::bit_width(bytes));
}

double testing_penalty_us(const std::string& variant) {
    return looked_up(penalties(), variant);
}

double testing_noise_us(const std::string& variant, std::size_t samples) {
    return samples % 2 == 1 ? looked_up(noises(), variant) : 0.0;
}

bool testing_oversubscribed(bool detected) {
    const int forced = oversubscription_override().load();
    return forced < 0 ? detected : forced == 1;
}

int Tuner::shape_of(const PatternState& pattern, const ShapeKey& key) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
        if (shapes[s].key == key) return static_cast<int>(s);
    }
    auto variants = candidates_for(pattern, key);
    Shape shape;
    shape.key = key;
    shape.state = variants.size() > 1 ? Shape::State::trial : Shape::State::single;
    if (model_only && variants.size() > 1) {
        variants.erase(variants.begin() + 1, variants.end());  // the model's winner
        shape.state = Shape::State::model;
    }
    for (const auto v : variants) {
        TrialCandidate candidate;  // not measured yet: NaN times, no samples
        candidate.variant = v;
        shape.candidates.push_back(std::move(candidate));
    }
    shapes.push_back(std::move(shape));
    return static_cast<int>(shapes.size() - 1);
}

Pick Tuner::trial_pick(int index, const Shape& shape, std::uint32_t candidate) const {
    Pick pick;
    pick.shape = index;
    pick.candidate = candidate;
    pick.variant = shape.candidates[candidate].variant;
    pick.trial = true;
    pick.sample = true;
    pick.timed = true;
    return pick;
}

Pick Tuner::next_in_trials(PatternState& pattern, int index) {
    Shape& shape = shapes[static_cast<std::size_t>(index)];
    ++shape.calls;
    if (const auto pick = trial_call(pattern, index)) {
        ++shape.trial_calls;
        return *pick;
    }
    return decided(index, shape);
}

std::optional<Pick> Tuner::trial_call(PatternState& pattern, int index) {
    Shape& shape = shapes[static_cast<std::size_t>(index)];
    const auto untimed = [&](std::uint32_t candidate) {  // timed for the trials' cost, not a sample
        Pick pick = trial_pick(index, shape, candidate);
        pick.sample = false;
        return pick;
    };
    if (shape.agreement != MPI_REQUEST_NULL) {
        if (shape.lag > 0) {  // the model's winner while the agreement travels
            --shape.lag;
            return untimed(0);
        }
        finish_agreement(pattern, shape);
        if (shape.state != Shape::State::trial) return std::nullopt;
    }
    const auto alive = live(shape);
    if (shape.in_round == kTurnCalls * alive.size()) {
        shape.in_round = 0;
        ++shape.round;
        if (shape.round == kPruneRound || shape.round % kTrialRounds == 0) {
            shape.final_agreement = shape.round >= kMaxTrialRounds;
            start_agreement(shape, shape.key.mode == CallMode::blocking ? 0 : kAgreementLag);
            return trial_call(pattern, index);  // runs the lag, or applies the agreement at once
        }
    }
    // Each candidate's timed calls follow kWarmCalls untimed ones of its own (the first does its
    // first-call setup), so that they start from the arrival skew its own calls leave; a blocking
    // turn starts after a barrier; the candidates' turns in a round follow turn_order.
    if (shape.in_round % kTurnCalls == 0) turn_barrier(shape);
    const std::uint32_t candidate =
        alive[turn_order(shape.round, static_cast<std::uint32_t>(alive.size()), shape.in_round / kTurnCalls)];
    const bool timed = shape.in_round++ % kTurnCalls >= kWarmCalls;
    return timed ? trial_pick(index, shape, candidate) : untimed(candidate);
}

void Tuner::record(const PatternState& pattern, const Pick& pick, double us) {
    if (pick.shape < 0 || !pick.timed) return;
    Shape& shape = shapes[static_cast<std::size_t>(pick.shape)];
    if (pick.trial) {
        const auto& name = pattern.variants[pick.variant].name;
        us += testing_penalty_us(name);
        auto& candidate = shape.candidates[pick.candidate];
        ++candidate.trial_calls;
        if (pick.sample) {
            us += testing_noise_us(name, candidate.samples.size());
            add_to_span(candidate, us);
        }
        shape.trial_us += us;
    } else if (shape.state != Shape::State::trial) {
        shape.run_us += us;
        ++shape.run_calls;
    }
}

void Tuner::start_agreement(Shape& shape, std::uint32_t lag) {
    shape.agreement_mine.assign(kAgreed * shape.candidates.size(), 0.0);
    shape.agreement_buffer.assign(shape.agreement_mine.size(), 0.0);
    for (std::size_t c = 0; c < shape.candidates.size(); ++c) {
        const auto& samples = shape.candidates[c].samples;
        shape.agreement_mine[kAgreed * c] = median_of(samples);
        shape.agreement_mine[kAgreed * c + 1] = mean_of(samples);
        shape.agreement_mine[kAgreed * c + 2] = spread_of(samples);
        shape.agreement_mine[kAgreed * c + 3] = -static_cast<double>(samples.size());
    }
    const int count = static_cast<int>(shape.agreement_buffer.size());
#if defined(NBR_SMPI)
    // SimGrid 3.32's MPI_Iallreduce sends every rank's data to every other rank: P² flows at
    // once, which its flow solver takes minutes for at 256 ranks. A reduction to rank 0 and a
    // broadcast (finish_agreement) are 2(P − 1) messages.
    check_mpi(MPI_Ireduce(shape.agreement_mine.data(), shape.agreement_buffer.data(), count, MPI_DOUBLE, MPI_MAX, 0,
                          agreement_comm(shape.key), &shape.agreement),
              "MPI_Ireduce");
#else
    check_mpi(MPI_Iallreduce(shape.agreement_mine.data(), shape.agreement_buffer.data(), count, MPI_DOUBLE, MPI_MAX,
                             agreement_comm(shape.key), &shape.agreement),
              "MPI_Iallreduce");
#endif
    shape.lag = lag;
}

namespace {

/// Completes an agreement's request. Others' requests may wait for what this rank forwards:
/// progress them meanwhile. With none registered, block in MPI (a polling loop would also keep
/// a simulator's clock still).
void wait_progressing(MPI_Request& request) {
    if (progress::none_registered()) check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    for (int done = 0; request != MPI_REQUEST_NULL;) {
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done) break;
        progress::poll();
    }
}

}  // namespace

void Tuner::turn_barrier(Shape& shape) const {
    if (shape.key.mode != CallMode::blocking) return;
    ++shape.turn_barriers;
    // With nonblocking calls of nbr's own in flight, other ranks' calls may wait for what this
    // rank forwards: progress them meanwhile. Else a plain barrier (SimGrid 3.32's
    // MPI_Ibarrier sends P² messages that overlap the timed calls after it).
    if (progress::none_registered()) {
        check_mpi(MPI_Barrier(agreement_comm(shape.key)), "MPI_Barrier");
        return;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(agreement_comm(shape.key), &request), "MPI_Ibarrier");
    wait_progressing(request);
}

void Tuner::finish_agreement(PatternState& pattern, Shape& shape) {
    wait_progressing(shape.agreement);
#if defined(NBR_SMPI)
    check_mpi(MPI_Ibcast(shape.agreement_buffer.data(), static_cast<int>(shape.agreement_buffer.size()), MPI_DOUBLE, 0,
                         agreement_comm(shape.key), &shape.agreement),
              "MPI_Ibcast");
    wait_progressing(shape.agreement);
#endif
    for (std::size_t c = 0; c < shape.candidates.size(); ++c) {
        auto& candidate = shape.candidates[c];
        candidate.median_us = shape.agreement_buffer[kAgreed * c];
        candidate.mean_us = shape.agreement_buffer[kAgreed * c + 1];
        candidate.spread_us = shape.agreement_buffer[kAgreed * c + 2];
        candidate.agreed_samples = static_cast<std::uint64_t>(-shape.agreement_buffer[kAgreed * c + 3]);
    }
    const std::uint32_t best = fastest(shape);
    if (!shape.final_agreement) prune(shape, best);
    if (shape.final_agreement || live(shape).size() == 1) {
        std::tie(shape.chosen, shape.decision) =
            shape.final_agreement ? final_choice(pattern, shape, best) : std::pair{best, Shape::Decision::told_apart};
        shape.state = Shape::State::measured;
        remember(pattern, shape);
    }
}

void Tuner::complete_agreements(PatternState& pattern) {
    for (auto& shape : shapes) {
        if (shape.agreement == MPI_REQUEST_NULL) continue;
        finish_agreement(pattern, shape);
        shape.lag = 0;
    }
}

void Tuner::prune(Shape& shape, std::uint32_t best) {
    const TrialCandidate& winner = shape.candidates[best];
    for (std::uint32_t c = 0; c < shape.candidates.size(); ++c) {
        auto& candidate = shape.candidates[c];
        if (c == best || candidate.pruned) continue;
        if (shape.round == kPruneRound) {  // only the clearly slower, and told apart on two samples each
            candidate.pruned = candidate.agreed_samples > 0 && candidate.median_us > kPruneFactor * winner.median_us &&
                               settled(winner, candidate);
        } else {  // the told-apart ones: the rest are still in contention
            candidate.pruned = settled(winner, candidate);
        }
    }
}

bool Tuner::apply_wisdom(int index, const schema::MeasuredShape& measured, const PatternState& pattern) {
    Shape& shape = shapes[static_cast<std::size_t>(index)];
    for (auto& candidate : shape.candidates) {  // what the earlier job measured, for the report
        const auto& name = pattern.variants[candidate.variant].name;
        for (const auto& m : measured.candidates()) {
            if (m.name() != name || m.samples() == 0) continue;
            candidate.median_us = m.median_us();
            candidate.mean_us = m.mean_us();
            candidate.agreed_samples = m.samples();
        }
    }
    for (std::uint32_t c = 0; c < shape.candidates.size(); ++c) {
        if (pattern.variants[shape.candidates[c].variant].name == measured.winner()) {
            shape.chosen = c;
            shape.state = shape.candidates.size() > 1 ? Shape::State::wisdom : Shape::State::single;
            return true;
        }
    }
    return false;
}

schema::CallMode schema_mode(CallMode mode) {
    switch (mode) {
        case CallMode::blocking: return schema::BLOCKING;
        case CallMode::nonblocking: return schema::NONBLOCKING;
        case CallMode::persistent: return schema::PERSISTENT;
    }
    return schema::MODE_UNSPECIFIED;
}

schema::Decision schema_decision(Shape::Decision decision) {
    switch (decision) {
        case Shape::Decision::none: return schema::DECISION_UNRECORDED;
        case Shape::Decision::told_apart: return schema::DECIDED_TOLD_APART;
        case Shape::Decision::lowest_median: return schema::DECIDED_LOWEST_MEDIAN;
        case Shape::Decision::naive_tie: return schema::DECIDED_NAIVE_TIE;
        case Shape::Decision::model_tie: return schema::DECIDED_MODEL_TIE;
        case Shape::Decision::shared_cores: return schema::DECIDED_SHARED_CORES;
    }
    return schema::DECISION_UNRECORDED;
}

}  // namespace nbr::internal

extern "C" int nbr_testing_slow_variant(const char* variant, double microseconds) {
    return nbr::internal::set_testing(nbr::internal::penalties(), variant, microseconds);
}

extern "C" int nbr_testing_noisy_variant(const char* variant, double microseconds) {
    return nbr::internal::set_testing(nbr::internal::noises(), variant, microseconds);
}

extern "C" int nbr_testing_oversubscribed(int state) {
    if (state < -1 || state > 1) return NBR_ERR_ARG;
    nbr::internal::oversubscription_override().store(state);
    return NBR_SUCCESS;
}

extern "C" int nbr_testing_turn_barriers(nbr_pattern_t handle, int shape, unsigned long long* barriers) {
    const nbr::internal::PatternState* pattern = nbr::internal::resolve(handle);
    if (pattern == nullptr || !pattern->tuner || barriers == nullptr || shape < 0 ||
        static_cast<std::size_t>(shape) >= pattern->tuner->shapes.size()) {
        return NBR_ERR_ARG;
    }
    *barriers = pattern->tuner->shapes[static_cast<std::size_t>(shape)].turn_barriers;
    return NBR_SUCCESS;
}

namespace {

using nbr::internal::fail;
using nbr::internal::Shape;

const Shape* shape_at(nbr_pattern_t handle, int index, const char* what) {
    const nbr::internal::PatternState* pattern = nbr::internal::resolve(handle);
    if (pattern == nullptr) {
        fail(NBR_ERR_ARG, std::string(what) + ": invalid pattern handle");
        return nullptr;
    }
    if (!pattern->tuner || index < 0 || static_cast<std::size_t>(index) >= pattern->tuner->shapes.size()) {
        fail(NBR_ERR_ARG, std::string(what) + ": no shape " + std::to_string(index));
        return nullptr;
    }
    return &pattern->tuner->shapes[static_cast<std::size_t>(index)];
}

nbr_shape_state_t state_of(Shape::State state) {
    switch (state) {
        case Shape::State::single: return NBR_SHAPE_SINGLE;
        case Shape::State::trial: return NBR_SHAPE_TRIAL;
        case Shape::State::measured: return NBR_SHAPE_MEASURED;
        case Shape::State::wisdom: return NBR_SHAPE_WISDOM;
        case Shape::State::model: return NBR_SHAPE_MODEL;
    }
    return NBR_SHAPE_SINGLE;
}

nbr_decision_t decision_of(Shape::Decision decision) {
    switch (decision) {
        case Shape::Decision::none: return NBR_DECISION_NONE;
        case Shape::Decision::told_apart: return NBR_DECISION_TOLD_APART;
        case Shape::Decision::lowest_median: return NBR_DECISION_LOWEST_MEDIAN;
        case Shape::Decision::naive_tie: return NBR_DECISION_NAIVE_TIE;
        case Shape::Decision::model_tie: return NBR_DECISION_MODEL_TIE;
        case Shape::Decision::shared_cores: return NBR_DECISION_SHARED_CORES;
    }
    return NBR_DECISION_NONE;
}

/// Naive's agreed median (the candidate whose variant is an algorithm "naive"), NaN if none.
double naive_median(const nbr::internal::PatternState& pattern, const Shape& shape) {
    for (const auto& candidate : shape.candidates) {
        if (nbr::internal::is_naive(pattern, candidate) && candidate.agreed_samples > 0) {
            return candidate.median_us;
        }
    }
    return std::numeric_limits<double>::quiet_NaN();
}

/// What the shape's choice saved against running naive in every call, from the agreed medians
/// (one statistic for every candidate, so a shape that runs naive saved nothing after its
/// trials): `after` calls at naive's median less the chosen's, less what each candidate's trial
/// calls cost beyond naive's median. NaN in trials, without naive, or with a median not agreed.
double saved_against_naive(const nbr::internal::PatternState& pattern, const Shape& shape, std::uint64_t after) {
    constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
    const double naive = naive_median(pattern, shape);
    if (shape.state == Shape::State::trial || shape.state == Shape::State::single || !std::isfinite(naive)) {
        return kUnknown;
    }
    const double chosen = shape.candidates[shape.chosen].median_us;
    if (!std::isfinite(chosen)) return kUnknown;
    double saved = static_cast<double>(after) * (naive - chosen);
    for (const auto& candidate : shape.candidates) {
        if (candidate.trial_calls == 0) continue;
        if (!std::isfinite(candidate.median_us)) return kUnknown;
        saved -= static_cast<double>(candidate.trial_calls) * (candidate.median_us - naive);
    }
    return saved;
}

}  // namespace

extern "C" {

int nbr_pattern_shape_count(nbr_pattern_t handle, int* count) {
    const nbr::internal::PatternState* pattern = nbr::internal::resolve(handle);
    if (pattern == nullptr || count == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_shape_count: invalid argument");
    *count = pattern->tuner ? static_cast<int>(pattern->tuner->shapes.size()) : 0;
    return NBR_SUCCESS;
}

int nbr_pattern_shape_stats(nbr_pattern_t handle, int index, nbr_shape_stats_t* stats) {
    const Shape* shape = shape_at(handle, index, "nbr_pattern_shape_stats");
    if (shape == nullptr) return NBR_ERR_ARG;
    if (stats == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_shape_stats: stats is NULL");
    const auto& pattern = *nbr::internal::resolve(handle);
    const auto& key = shape->key;
    *stats = nbr_shape_stats_t{};
    stats->collective = static_cast<nbr_collective_t>(key.collective + (key.variable ? 2 : 0));
    stats->mode = static_cast<nbr_mode_t>(key.mode);
    if ((key.variable && key.mode != nbr::internal::CallMode::persistent) ||
        key.size_class == nbr::internal::ShapeKey::kAnySize) {
        stats->min_bytes = 0;
        stats->max_bytes = SIZE_MAX;
    } else {
        stats->min_bytes = key.size_class == 0 ? 0 : std::size_t{1} << (key.size_class - 1);
        stats->max_bytes = key.size_class == 0 ? 0 : (std::size_t{1} << (key.size_class - 1)) * 2 - 1;
    }
    stats->state = state_of(shape->state);
    stats->variant = pattern.variants[shape->candidates[shape->chosen].variant].name.c_str();
    stats->candidates = static_cast<int>(shape->candidates.size());
    const auto handed_off = nbr::internal::handed_off_calls(pattern, index);  // not seen by the tuner
    stats->calls = shape->calls + handed_off.calls;
    stats->trial_calls = shape->trial_calls;
    stats->trial_us = shape->trial_us;
    stats->run_calls = shape->run_calls + handed_off.timed_calls;
    stats->run_us = shape->run_us + handed_off.timed_us;
    stats->naive_us = naive_median(pattern, *shape);
    stats->after_calls = shape->after_calls + handed_off.calls;
    stats->saved_us = saved_against_naive(pattern, *shape, stats->after_calls);
    return NBR_SUCCESS;
}

int nbr_pattern_shape_decision(nbr_pattern_t handle, int index, nbr_decision_t* decision) {
    const Shape* shape = shape_at(handle, index, "nbr_pattern_shape_decision");
    if (shape == nullptr) return NBR_ERR_ARG;
    if (decision == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_shape_decision: decision is NULL");
    *decision = decision_of(shape->decision);
    return NBR_SUCCESS;
}

int nbr_pattern_shape_candidate(nbr_pattern_t handle, int index, int candidate, const char** name, double* median_us,
                                double* mean_us, unsigned long long* samples) {
    const Shape* shape = shape_at(handle, index, "nbr_pattern_shape_candidate");
    if (shape == nullptr) return NBR_ERR_ARG;
    if (candidate < 0 || static_cast<std::size_t>(candidate) >= shape->candidates.size()) {
        return fail(NBR_ERR_ARG, "nbr_pattern_shape_candidate: no candidate " + std::to_string(candidate));
    }
    const auto& pattern = *nbr::internal::resolve(handle);
    const auto& c = shape->candidates[static_cast<std::size_t>(candidate)];
    if (name != nullptr) *name = pattern.variants[c.variant].name.c_str();
    if (median_us != nullptr) *median_us = c.median_us;
    if (mean_us != nullptr) *mean_us = c.mean_us;
    if (samples != nullptr) *samples = c.agreed_samples;
    return NBR_SUCCESS;
}

}  // extern "C"
