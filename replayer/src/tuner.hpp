#pragma once
// Measured selection (NBR_LOAD_MEASURE): per call shape, the candidates an auto directory keeps
// are timed in the job's first calls, the ranks agree on the fastest, and the rest run it.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "nbr.h"
#include "nbr_pattern.pb.h"

namespace nbr::internal {

struct PatternState;

/// @brief How a call was made: nonblocking and persistent calls are timed from their start to
/// the progress that finds them complete, so work the application overlaps with them counts,
/// and each mode is a shape of its own.
enum class CallMode : std::uint8_t { blocking = 0, nonblocking = 1, persistent = 2 };

/// @brief What one decision is for: a collective (v or not) in one mode and, for fixed-size
/// calls, a band of the pattern and a power-of-two class of block sizes inside it. Every rank
/// of a call computes the same key (matching calls have blocks of one size everywhere; v-calls
/// do not depend on sizes).
struct ShapeKey {
    int collective = 0;  ///< index_of(Collective): 0 allgather, 1 alltoall
    bool variable = false;
    CallMode mode = CallMode::blocking;
    std::uint32_t band = 0;        ///< index among the collective's bands (fixed-size and persistent v)
    std::uint32_t size_class = 0;  ///< size_class_of(block bytes), or kAnySize
    /// The size class of persistent v-calls whose mean bytes per edge were not computed
    /// (a single-variant pattern under NBR_LOAD_STATS): their sizes are not known.
    static constexpr std::uint32_t kAnySize = UINT32_MAX;
    friend bool operator==(const ShapeKey&, const ShapeKey&) = default;
};

/// @brief 0 for 0 bytes, k >= 1 for blocks of [2^(k-1), 2^k) bytes.
[[nodiscard]] std::uint32_t size_class_of(std::uint64_t bytes);

/// @brief One candidate of a shape: a variant of the pattern and what was measured of it.
struct TrialCandidate {
    std::uint32_t variant = 0;
    std::vector<double> samples;    ///< this rank's samples, µs: each the mean of a turn's timed calls
    std::uint64_t trial_calls = 0;  ///< this rank's trial calls of it, timed or not
    double span_us = 0;             ///< this rank: time in the current turn's timed calls so far
    std::uint32_t span_calls = 0;   ///< the current turn's timed calls so far
    /// After an agreement: the largest over the ranks of each rank's median, mean and
    /// interquartile range, and the least sample count (0: some rank had none in).
    double median_us = std::numeric_limits<double>::quiet_NaN();
    double mean_us = std::numeric_limits<double>::quiet_NaN();
    double spread_us = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t agreed_samples = 0;
    bool pruned = false;
};

/// @brief A call shape's state. Its trial schedule depends only on the call count and on agreed
/// results, so every rank runs the same candidate in every call.
struct Shape {
    enum class State { single, trial, measured, wisdom, model };
    /// What decided a measured shape (nbr_decision_t); none for the other states.
    enum class Decision { none, told_apart, lowest_median, naive_tie, model_tie, shared_cores };
    ShapeKey key;
    std::vector<TrialCandidate> candidates;  ///< the model's order: [0] is the model's winner
    State state = State::single;
    Decision decision = Decision::none;
    std::uint32_t chosen = 0;  ///< index into candidates: what runs (single, measured, wisdom, model)
    std::uint64_t calls = 0;
    std::uint64_t trial_calls = 0;
    double trial_us = 0;              ///< this rank: time in the trial calls (samples or not)
    double run_us = 0;                ///< this rank: time in the sampled calls after the choice
    std::uint64_t run_calls = 0;      ///< sampled (timed) calls after the choice
    std::uint64_t after_calls = 0;    ///< calls after the choice
    std::uint64_t turn_barriers = 0;  ///< this communicator's barriers before blocking turns (turn_barrier)
    // The trial schedule: rounds over the candidates not pruned, each candidate's turn
    // kWarmCalls untimed calls then kSpanCalls timed ones (their mean one sample); agreements
    // after kPruneRound rounds and every kTrialRounds rounds, the last after kMaxTrialRounds.
    std::uint32_t round = 0;
    std::uint32_t in_round = 0;  ///< calls made in the round (kTurnCalls per live candidate)
    MPI_Request agreement = MPI_REQUEST_NULL;
    std::vector<double> agreement_mine;    // this rank's values (not in place: SMPI 3.32's
    std::vector<double> agreement_buffer;  // MPI_Iallreduce mishandles MPI_IN_PLACE)
    std::uint32_t lag = 0;                 ///< calls still to run before the pending agreement is applied
    bool final_agreement = false;
};

/// @brief What the tuner tells one call: which candidate runs, and whether its time is a trial
/// sample (else it counts to run_us when the shape is decided).
struct Pick {
    int shape = -1;  ///< index into Tuner::shapes; -1: not measured
    std::uint32_t candidate = 0;
    std::uint32_t variant = 0;
    bool trial = false;   ///< a call of the shape's trials (its time counts to trial_us)
    bool sample = false;  ///< a trial call whose time is also a sample of its candidate
    bool timed = false;   ///< the call's time is taken (trial or run)
};

/// @brief Measured selection of one pattern (present when loaded with NBR_LOAD_MEASURE), or its
/// call shapes' statistics alone (NBR_LOAD_STATS: model_only).
class Tuner {
public:
    /// A candidate's turn in a trial round: kWarmCalls untimed calls, so that its timed calls
    /// start from the arrival skew the candidate's own calls leave, not from the previous
    /// candidate's; then kSpanCalls timed calls, whose mean is one sample, so that a sample
    /// also holds what a call leaves to the next one of its own (a call alone and in the
    /// application's stream of calls can rank two candidates in opposite order).
    static constexpr std::uint32_t kWarmCalls = 1;
    static constexpr std::uint32_t kSpanCalls = 2;
    static constexpr std::uint32_t kTurnCalls = kWarmCalls + kSpanCalls;
    /// The round after which clearly slower candidates are pruned, and what "clearly" is.
    static constexpr std::uint32_t kPruneRound = 2;
    static constexpr double kPruneFactor = 1.5;
    /// Rounds of timed trial calls per candidate between the later agreements, and the most a
    /// shape runs: an agreement decides when the fastest is told apart from every other live
    /// candidate (settled), else the candidates still in contention run kTrialRounds more.
    static constexpr std::uint32_t kTrialRounds = 5;
    static constexpr std::uint32_t kMaxTrialRounds = 20;
    /// Settled: even at the ends of the medians' confidence intervals (median ± kNotch · IQR /
    /// √samples, McGill, Tukey and Larsen's box-plot notch, about 95 %) the fastest is at most
    /// kTolerance slower than the other candidate.
    static constexpr double kNotch = 1.58;
    static constexpr double kTolerance = 0.03;
    /// Nonblocking and persistent shapes run this many calls of the model's winner between an
    /// agreement's start and its use, so that a start never waits for other ranks (MPI makes
    /// starts local) unless the application keeps more calls of one shape in flight.
    static constexpr std::uint32_t kAgreementLag = 4;
    /// After the choice one call in this many is timed (the first included): the report's time
    /// per call and saving are from these samples, and the other calls read no clock.
    static constexpr std::uint64_t kRunSample = 16;
    /// A blocking shape whose choice runs MPI's own collective goes straight to it (the hand-off
    /// record, hand_off_shape) once this many of its calls are timed: the report's time per
    /// call is then a mean of that many warm calls.
    static constexpr std::uint64_t kHandOffSamples = 4;

    std::vector<Shape> shapes;
    /// NBR_LOAD_STATS without NBR_LOAD_MEASURE: a shape's only candidate is the model's winner
    /// (state model, or single where the pattern has no other), so nothing is tried or agreed.
    bool model_only = false;
    /// Some node's ranks share cores (MachineFacts): a shape whose last round leaves naive in
    /// contention runs naive (final_choice), since single calls timed there rank candidates by
    /// the scheduler as much as by their messages.
    bool oversubscribed = false;
    /// Where the agreements run (MPI_COMM_NULL when model_only): the pattern's private communicator, except in SimGrid
    /// SMPI builds, where that is the application's own (private_comm) and SMPI's nonblocking collectives, built on
    /// point-to-point messages, could meet nbr's; there a duplicate.
    MPI_Comm comm = MPI_COMM_NULL;
    /// Where fixed-size shapes' agreements run: `comm`, except on a communicator with ranks
    /// without neighbors, which cannot tell those shapes (their block size is free): there a
    /// communicator of the other ranks (MPI_COMM_NULL on those ranks, which never measure them).
    MPI_Comm fixed_comm = MPI_COMM_NULL;
    /// The communicator a shape's agreements run on.
    [[nodiscard]] MPI_Comm agreement_comm(const ShapeKey& key) const { return key.variable ? comm : fixed_comm; }

    /// @brief The shape of the call, from the last call of the same collective, variant and
    /// mode when it had the same block size (applications repeat one shape), else shape_of.
    template <typename MakeKey>
    int shape_for(const PatternState& pattern, int collective, bool variable, CallMode mode, std::uint64_t bytes,
                  MakeKey make_key) {
        LastShape& last = last_[collective][variable ? 1 : 0][static_cast<int>(mode)];
        if (last.shape < 0 || last.bytes != bytes) last = LastShape{bytes, shape_of(pattern, make_key())};
        return last.shape;
    }
    /// @brief The shape of `key`, created on first use with the pattern's candidates for it
    /// (candidates_for, the model's order).
    int shape_of(const PatternState& pattern, const ShapeKey& key);
    /// @brief The candidate the shape's next call runs; may complete an agreement (collective over
    /// the pattern's communicator: every rank reaches it at the same call of the shape). A decided
    /// shape's call, the one after its trials, is inline: a few counters, no other call.
    Pick next(PatternState& pattern, int index) {
        Shape& shape = shapes[static_cast<std::size_t>(index)];
        if (shape.state == Shape::State::trial) return next_in_trials(pattern, index);
        ++shape.calls;
        return decided(index, shape);
    }
    /// @brief Records a call's time (µs) as the pick said.
    void record(const PatternState& pattern, const Pick& pick, double us);
    /// @brief Fixes a shape's choice from wisdom, with the candidates' times the wisdom holds
    /// (the report's); false if its winner is not among the shape's candidates.
    bool apply_wisdom(int shape, const schema::MeasuredShape& measured, const PatternState& pattern);
    /// @brief Completes and applies the agreements still in flight (collective: every rank of
    /// a shape's agreement started it at the same call), as the pattern is freed.
    void complete_agreements(PatternState& pattern);

private:
    struct LastShape {
        std::uint64_t bytes = 0;
        int shape = -1;
    };
    LastShape last_[2][2][3];  ///< per collective, v or not, and mode: the last call's shape

    /// next() for a shape in its trials: a trial call, or the decided one if the agreement this
    /// call completes decides.
    Pick next_in_trials(PatternState& pattern, int index);
    /// A decided shape's call: its choice, timed once in kRunSample calls, from the first call
    /// after trials (the chosen candidate ran in them), else from the second (a shape decided
    /// from its first call, whose first call builds plans and meets its buffers cold).
    static Pick decided(int index, Shape& shape) {
        Pick pick;
        pick.shape = index;
        pick.candidate = shape.chosen;
        pick.variant = shape.candidates[shape.chosen].variant;
        const std::uint64_t first = shape.trial_calls == 0 ? 1 : 0;
        pick.timed = (shape.after_calls++ + kRunSample - first) % kRunSample == 0;
        return pick;
    }
    /// The shape's next trial call, or nothing once the shape is decided (possibly by an
    /// agreement this call completes).
    std::optional<Pick> trial_call(PatternState& pattern, int shape);
    void start_agreement(Shape& shape, std::uint32_t lag);
    /// Before a blocking shape's turn: a barrier over the agreement's communicator, so that every
    /// candidate's turn starts from ranks in step, not from the arrival skew the previous
    /// candidate's calls left (under SMPI that skew made a 12 % difference look like a tie).
    /// Nonblocking and persistent starts stay local (MPI makes them so): their turns have none.
    void turn_barrier(Shape& shape) const;
    void finish_agreement(PatternState& pattern, Shape& shape);
    /// After an agreement that does not decide: at kPruneRound the candidates over
    /// kPruneFactor times the fastest's median and told apart from it leave the trials, later
    /// all those told apart from it.
    static void prune(Shape& shape, std::uint32_t best);
    /// A trial call of `candidate` whose time goes to a sample of it (trial_call unmarks the untimed ones).
    [[nodiscard]] Pick trial_pick(int index, const Shape& shape, std::uint32_t candidate) const;
};

/// @brief Which of `n` live candidates takes `turn` in round `round`: the rounds run the rows of a
/// Williams design (Williams 1949, a crossover design balanced for carryover: the first row 0,
/// 1, n−1, 2, n−2, …, each next row that plus one mod n, and for odd n the n rows mirrored after
/// them), so over n rounds (2n for odd n) every candidate's turn follows every other's equally
/// often, and what a candidate's calls leave to the next turn burdens no candidate more than
/// another. Round 0 starts with the model's winner.
inline std::uint32_t turn_order(std::uint32_t round, std::uint32_t n, std::uint32_t turn) {
    if (n <= 1) return 0;
    const std::uint32_t rows = n % 2 == 0 ? n : 2 * n;
    const std::uint32_t row = round % rows;
    const std::uint32_t t = row >= n ? n - 1 - turn : turn;
    const std::uint32_t first = t == 0 ? 0 : (t % 2 == 1 ? (t + 1) / 2 : n - t / 2);
    return (first + row % n) % n;
}

/// @brief The candidates (variant indices, the model's order) of a shape of the pattern.
[[nodiscard]] std::vector<std::uint32_t> candidates_for(const PatternState& pattern, const ShapeKey& key);

/// @brief The extra time nbr_testing_slow_variant charges a variant's timed calls on this process.
[[nodiscard]] double testing_penalty_us(const std::string& variant);
/// @brief The extra time nbr_testing_noisy_variant charges the sample of a variant that already
/// has `samples` on this process.
[[nodiscard]] double testing_noise_us(const std::string& variant, std::size_t samples);

/// @brief Whether a pattern loaded now counts as oversubscribed: `detected`, unless
/// nbr_testing_oversubscribed forces it.
[[nodiscard]] bool testing_oversubscribed(bool detected);

// ---- wisdom (wisdom.cpp) ----

/// @brief What measured selection needs to know of the machine (collective over comm).
struct MachineFacts {
    /// For wisdom: MPI library, processor, the ranks' spread over nodes, as text; its hash
    /// decides whether wisdom applies.
    std::string fingerprint;
    /// Some node runs more of the communicator's ranks than the logical CPUs their affinity masks
    /// allow (never in SimGrid SMPI builds): the same on every rank.
    bool oversubscribed = false;
};
[[nodiscard]] MachineFacts machine_facts(MPI_Comm comm);

/// @brief Applies what the process measured before for this pattern: its wisdom, then the trials
/// carried from an earlier communicator (collective, one reduction: the ranks agree that they
/// found the same entry and carry the same trials, else that part is not used); returns a line
/// saying what was used or why not ("" when there was nothing to look at).
std::string recall_measurements(PatternState& pattern, MPI_Comm comm);

/// @brief Stores a measured shape's result in the process's wisdom.
void remember(const PatternState& pattern, const Shape& shape);

// ---- trials carried over communicators of one pattern (trial_carry.cpp) ----

/// @brief As a measured pattern is freed: completes its agreements in flight, then keeps the
/// trials of its shapes still in them (what was measured and where the schedule stands; not the
/// communicator's call counts) for the next pattern this process loads with measurement from
/// the same compile for the same communicator size, rank and machine.
void carry_trials(PatternState& pattern);
/// @brief The trials this process carries for the pattern, as one word the ranks compare: their
/// schedules (shapes, rounds, pruned candidates, agreed results), not their own samples; 0: none.
[[nodiscard]] std::uint64_t carried_trials_hash(const PatternState& pattern);
/// @brief Takes the carried trials for the pattern: resumes them in its shapes still in trials
/// when every rank carries the same (`agreed`), else drops them; `any`: some rank carried
/// trials. Returns a note ("" when none was carried).
std::string resume_trials(PatternState& pattern, bool agreed, bool any);
/// @brief Forgets every carried trial (nbr_wisdom_forget).
void forget_carried_trials();

/// @brief The schema's name for a shape key's parts.
[[nodiscard]] schema::CallMode schema_mode(CallMode mode);
/// @brief A shape's decision as wisdom records it.
[[nodiscard]] schema::Decision schema_decision(Shape::Decision decision);

}  // namespace nbr::internal
