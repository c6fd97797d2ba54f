#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nbr/simulator/machine.hpp"
#include "nbr_machine.pb.h"

namespace nbr::simulator {

/// @brief Messages each way of the calibration's second exchange (`exchange_many_us`): enough
/// for the rate of messages that cross, a quarter of the 32 parallel edges the pattern checks
/// time.
inline constexpr int kExchangeMessages = 8;

/// @brief Messages each way of the calibration's largest exchange (`exchange_more_us`), half
/// the pattern checks' 32: with `kExchangeMessages`, what a message costs as more of them
/// wait together.
inline constexpr int kExchangeMoreMessages = 2 * kExchangeMessages;

/// @brief What `nbr-calibrate` measured between two ranks at one message size (medians).
struct CalibrationPoint {
    std::uint64_t bytes = 0;
    double one_way_us = 0;  ///< half a ping-pong round trip
    double send_us = 0;     ///< sender CPU time to post one nonblocking send (a burst, per message)
    /// Receiver CPU time to complete one receive whose data has arrived (a burst, per message);
    /// negative where not measured (rendezvous sizes: completion includes the handshake).
    double recv_us = -1;
    /// Sender time from posting a nonblocking send to its completion, the receiver waiting in
    /// its receive; negative where not measured (eager sizes: the send completes on its own).
    double complete_us = -1;
    /// One message each way, both receives posted before the sends, then a wait for all (as a
    /// neighborhood call over one edge); negative where not measured (eager sizes).
    double exchange_us = -1;
    /// The same with `kExchangeMessages` messages each way (the byte time
    /// while both ranks send); negative where not measured (eager sizes).
    double exchange_many_us = -1;
    /// The same with `kExchangeMoreMessages` each way (the byte time is fitted to both);
    /// negative where not measured.
    double exchange_more_us = -1;
    double rate_us = 0;       ///< time per message of a stream of messages (PRTT(n) − PRTT(1)) / (n − 1)
    int stream_messages = 2;  ///< n of the stream (and of the send and receive bursts)
};

/// @brief Exchanges of one size between the two ranks: n messages each way, every receive
/// posted before the sends (as a neighborhood call posts them), for n = 1, 2, ...; rank 0's
/// time per exchange (median; index n − 1).
struct ExchangeBursts {
    std::uint64_t bytes = 0;
    std::vector<double> us;
};

/// @brief The per-pair eager buffer the exchanges show: up to a number of
/// messages each way, each costs less than every one after it.
struct EagerBuffer {
    std::uint64_t capacity = 0;       ///< bytes per pair; 0: no buffer found
    std::uint64_t message_bytes = 0;  ///< what a message takes in it beyond its own bytes
    double overflow_recv_us = 0;      ///< the extra per message that does not fit
    std::vector<int> fitting;         ///< per exchange size, the messages that fit (0: no knee)
};

/// @brief Fits the buffer to exchanges of two eager sizes, the larger first (nbr-calibrate:
/// 128 and 64 B, at most half and a quarter of the eager limit). Per size, the times are split at the n where two
/// least-squares lines (n up to it, n beyond) fit best; a knee counts where the line beyond is
/// steeper by at least a quarter and the two lines leave at most half the single line's
/// squared error. With knees k₁ at the larger size s₁ and k₂ > k₁ at s₂, a message takes
/// h = (k₁s₁ − k₂s₂)/(k₂ − k₁) bytes beyond its own (at least 0) and the capacity is
/// k₁(s₁ + h); the overflow cost is the difference of the slopes at s₁. Otherwise (a knee
/// missing, or no more of the smaller messages fitting) capacity 0: a buffer of bytes holds
/// more of the smaller messages.
[[nodiscard]] EagerBuffer fit_eager_buffer(const std::vector<ExchangeBursts>& exchanges);

/// @brief A neighborhood alltoall over parallel edges between the two ranks, timed as libnbr
/// runs it naive (one message per edge) and combined (one message each way with every block).
struct PatternPoint {
    std::uint64_t bytes = 0;  ///< per block
    double naive_us = -1;     ///< per call
    double combined_us = -1;  ///< per call
};

/// @brief A call over parallel edges combined into one message each way, with blocks of
/// `bytes`.
struct BlocksCall {
    std::uint64_t bytes = 0;
    double us = -1;  ///< per call; negative: not measured
};

/// @brief One distance class, measured.
struct Calibration {
    std::vector<CalibrationPoint> points;  ///< sorted by size
    /// Largest size sent eagerly (a send completes before the receiver posts its receive);
    /// 0 if every measured size was eager.
    std::uint64_t eager_limit = 0;
    double copy_ns_per_byte = 0;  ///< single-core memcpy, for packing and unpacking
    double post_recv_us = 0;      ///< receiver CPU time to post one receive (smallest size)
    /// Time per call of a blocking neighborhood alltoall of `call_bytes` over one edge each
    /// way (nbr-calibrate: libnbr's call, `time_libnbr_call`); negative: not measured.
    double call_us = -1;
    std::uint64_t call_bytes = 1;
    /// The same call over `blocks_call_edges` parallel edges each way whose blocks travel in
    /// one message each way (packed by the sender, unpacked by the receiver: what combining
    /// patterns do); negative: not measured.
    double blocks_call_us = -1;
    std::uint32_t blocks_call_edges = 32;
    /// The same with larger blocks (the copies' bytes then count), increasing sizes: the copy's
    /// rate per byte at each (negative `us`: not measured).
    std::vector<BlocksCall> byte_calls{{512, -1}, {8192, -1}};
    /// The pattern checks: the same call over `blocks_call_edges` parallel edges at each of
    /// these block sizes, naive and combined; nothing is fitted to them.
    std::vector<PatternPoint> pattern_points;
    /// The smallest size's one-way time measured again after libnbr's calls (negative: not
    /// measured): against `points.front()`, whether the machine's state held (state_changed).
    double late_one_way_us = -1;
    /// Exchanges of two eager sizes, and the buffer fitted to them (the bursts of `points` at
    /// eager sizes stay within it).
    std::vector<ExchangeBursts> buffer_exchanges;
    EagerBuffer buffer;
};

/// @brief Several measurement passes over the same sizes as one (nbr-calibrate `--passes`):
/// per size every timed quantity's median over the passes (the upper median of an even
/// count), likewise the posted-receive cost, the calls and the pattern checks; the eager limit,
/// the buffer, the stream lengths, the copy rate and the late one-way time from the first
/// pass. On a machine whose state changes for seconds at a time (a virtual machine whose cores
/// the hypervisor moves), a state met in only one pass of three then moves nothing.
/// @throws std::invalid_argument if `passes` is empty or the passes measured different sizes.
[[nodiscard]] Calibration median_of_passes(const std::vector<Calibration>& passes);

/// @brief Fits the simulator's LogGOPS parameters of one class to the measurements, so that
/// the simulator reproduces the measured one-way time and message rate at every measured
/// size, the one-way time only where a stream is no slower per message than one message
/// alone (L is at least 0; docs/simulate.md, "Calibration"):
/// - o_s, o_r: the bursts' per-message times at the smallest size for the class, each larger
///   size's in its segment (o_r of the class above the eager limit), each at most
///   the stream's time per message at its size;
/// - g: the stream's time per message at the smallest size; G per size segment: the rest of
///   the stream's time per message, per byte;
/// - L per size segment: the one-way time less o_s, G·b and o_r of the size (eager), or a
///   third of what remains after the receiver's answer o_r (rendezvous: three latencies), at
///   least 0;
/// - the posted-receive cost: the measured time per posted receive;
/// - the acknowledgment latency (above the eager limit, where measured): per size segment the
///   sender's completion less the one-way time (at least 0), raised by what the exchange of
///   one message each way took beyond the class's prediction of it; the median of them for
///   the class.
/// @throws std::invalid_argument if there are no points or sizes are not increasing.
[[nodiscard]] schema::LinkClass fit_link_class(const Calibration& calibration);

/// @brief The per-call cost: the measured neighborhood call less what the simulator predicts
/// for its two messages on `machine` with two ranks at distance `klass` (at least 0).
[[nodiscard]] double fit_call_overhead(const schema::Machine& machine, DistanceClass klass,
                                       const Calibration& calibration);

/// @brief The copy costs of libnbr's packing and unpacking, from its calls over parallel edges
/// combined into one message each way.
struct CopyCosts {
    /// The copy's time per byte at one block size.
    struct Rate {
        std::uint64_t block_bytes = 0;
        double ns_per_byte = 0;
    };
    double block_ns = 0;  ///< per block beyond its bytes
    double byte_ns = 0;   ///< per byte at the smallest block size measured (or the memcpy's)
    /// Per byte at each block size measured (`Calibration::byte_calls`), increasing sizes.
    std::vector<Rate> rates;
};

/// @brief Fits `CopyCosts`: per block, the call of 1 B blocks less what the simulator
/// predicts for it on `machine` (its per-call cost included), per block each rank packs or
/// unpacks (at least 0); per byte at each block size of `byte_calls`, that call less the
/// prediction with the block cost and no byte cost, per byte each rank packs or unpacks (at
/// least the machine's `copy_ns_per_byte`, the memcpy measured). Where a call was not
/// measured: no block cost, and the machine's `copy_ns_per_byte` (memcpy) per byte.
[[nodiscard]] CopyCosts fit_copy_costs(const schema::Machine& machine, DistanceClass klass,
                                       const Calibration& calibration);

/// @brief The switch time of two ranks sharing a core: their measured one-way time of `bytes`
/// less the one-way time `machine` predicts for two ranks on one socket with a core each (at
/// least 0).
[[nodiscard]] double fit_switch(const schema::Machine& machine, double shared_one_way_us, std::uint64_t bytes);

/// @brief The simulator's prediction of one measured point next to the measurement.
struct CalibrationCheck {
    std::uint64_t bytes = 0;
    double one_way_us = 0, predicted_one_way_us = 0;
    double rate_us = 0, predicted_rate_us = 0;
    /// The sender's completion (rendezvous sizes; negative where not measured) and the
    /// model's: the later of the sender's and the receiver's completion, so the one-way time
    /// where a send completes when its tail leaves.
    double complete_us = -1, predicted_complete_us = 0;
    /// The exchange of one message each way (rendezvous sizes; negative where not measured).
    double exchange_us = -1, predicted_exchange_us = 0;
    /// The exchange of `kExchangeMessages` each way (negative where not measured).
    double exchange_many_us = -1, predicted_exchange_many_us = 0;
    /// The exchange of `kExchangeMoreMessages` each way (negative where not measured).
    double exchange_more_us = -1, predicted_exchange_more_us = 0;
};

/// @brief Simulates the ping-pong half round trip and the stream of every point on `machine`
/// with two ranks at distance `klass`: how well the machine file reproduces the measurements.
[[nodiscard]] std::vector<CalibrationCheck> check_calibration(const schema::Machine& machine, DistanceClass klass,
                                                              const Calibration& calibration);

/// @brief The machine format that carries `ratio_error`.
inline constexpr std::uint32_t kRatioErrorFormat = 9;

/// @brief The machine format that carries `ratio_errors` (per block size).
inline constexpr std::uint32_t kRatioErrorsFormat = 10;
/// The machine format nbr-calibrate writes: everything it measures (not format 13's noise,
/// which a user states), so that its files stay readable by builds that know format 12.
inline constexpr std::uint32_t kCalibratedFormat = 12;

/// @brief The largest `ratio_error` a check reports (auto's margin stays below 10).
inline constexpr double kMaxRatioError = 9.99;

/// @brief A pattern check: the simulator's prediction of the naive and the combined call over
/// parallel edges next to the measured ones (`Calibration::pattern_points`).
struct PatternCheck {
    std::uint64_t bytes = 0;
    double naive_us = 0, predicted_naive_us = 0;
    double combined_us = 0, predicted_combined_us = 0;
    /// How much the model overstates combining's gain over naive here: the predicted ratio
    /// naive / combined over the measured one, less 1; 0 where it understates it (a choice
    /// then errs towards naive), at most `kMaxRatioError`.
    [[nodiscard]] double ratio_error() const;
    /// The naive prediction's relative error, |predicted − measured| / measured.
    [[nodiscard]] double naive_error() const;
};

/// @brief Simulates the pattern points on `machine` (its call and copy costs included) with
/// two ranks at distance `klass`; points not measured are left out.
[[nodiscard]] std::vector<PatternCheck> check_patterns(const schema::Machine& machine, DistanceClass klass,
                                                       const Calibration& calibration);

/// @brief The smallest size's check if its naive call is more than 25 % off the prediction,
/// else null. That call is small messages and the per-call cost, which the fit reproduces
/// within a few per cent on Open MPI while the machine holds still: a larger error says its
/// state changed during the calibration, or that the model misses how the transport handles
/// many small messages (MPICH: 25-28 % in every calibration); state_changed tells which.
[[nodiscard]] const PatternCheck* unsettled_check(const std::vector<PatternCheck>& checks);

/// @brief How many times as long as measured the fit predicts the naive calls of `checks`
/// (the median over the sizes; 1 if none): far above 1, the fit was measured in a slower
/// state of the machine than these checks, far below in a faster one. One size off says
/// little (the model's error there); most sizes off in one direction say the states differ.
[[nodiscard]] double fit_time_ratio(const std::vector<PatternCheck>& checks);

/// @brief Whether the machine's state changed during the calibration: the smallest size's
/// one-way time, measured again after libnbr's calls, more than 25 % from the first
/// measurement (on this virtual machine 0.10 µs in its fast state, 0.36 in its slow one).
/// False where it was not measured again. nbr-calibrate then warns.
[[nodiscard]] bool state_changed(const Calibration& calibration);

/// @brief The largest ratio error of `checks` (0 if none): the machine file's `ratio_error`,
/// the least margin `nbrc compile --algo auto` acts on.
[[nodiscard]] double ratio_error(const std::vector<PatternCheck>& checks);

/// @brief The ratio error of `checks` per block size (increasing; a size checked twice: the
/// larger).
[[nodiscard]] std::vector<RatioPoint> ratio_points(const std::vector<PatternCheck>& checks);

/// @brief Puts the ratio errors of `checks` into `machine`: `ratio_error` the
/// larger of the file's and the checks' largest; `ratio_errors` at every size either has, the
/// larger of the two there (each side's ratio_error_over the size: a file without points
/// counts its `ratio_error` at every size).
void merge_ratio_errors(schema::Machine& machine, const std::vector<PatternCheck>& checks);

/// @brief Puts the fitted class into `machine` (replacing what was there), the copy costs and
/// the per-call cost too when the class is `socket` (the machine becomes format 2, 6 with an
/// acknowledgment, 7 with an eager buffer, 8 with overheads per size or a copy cost per
/// block, 11 with copy rates at two block sizes or more), the ratio errors from the pattern checks where measured
/// (merge_ratio_errors), and a line in `sources`: "CLASS: measured by " + `source` (the tool and what it measured).
/// @return the pattern checks it simulated for the ratio errors (check_patterns; empty where
/// none were measured)
/// @throws std::invalid_argument for `leaf` on a machine without `nodes_per_switch`.
std::vector<PatternCheck> apply_calibration(schema::Machine& machine, DistanceClass klass,
                                            const Calibration& calibration, const std::string& source);

/// @brief How `machine_like` and `calibrated_machine` describe the node.
struct NewMachine {
    std::string name = "calibrated";
    std::uint32_t cores = 1;             ///< cores of one node
    std::uint32_t ranks_per_node = 0;    ///< 0: `cores`
    std::uint32_t ranks_per_socket = 0;  ///< 0: `ranks_per_node`
};

/// @brief A new machine whose every distance class is a copy of the class fitted to
/// `calibration` (usable at once for ranks at its distance; `sources` says the others are
/// copies until measured), for `apply_calibration`.
[[nodiscard]] schema::Machine machine_like(const Calibration& calibration, const NewMachine& node);

/// @brief `machine_like`, then `apply_calibration` of `klass` with `source`.
[[nodiscard]] schema::Machine calibrated_machine(const Calibration& calibration, DistanceClass klass,
                                                 const NewMachine& node, const std::string& source);

/// @brief Pattern checks measured in another launch than the fit (`nbr-calibrate --recheck`):
/// simulates them on `machine` as it is (check_patterns, class `klass`), merges their ratio
/// errors into it (merge_ratio_errors) and records `source` in `sources` once. Where the
/// machine's state differs between launches, the errors then cover the states the checks met.
/// @return the checks
std::vector<PatternCheck> recheck_patterns(schema::Machine& machine, DistanceClass klass,
                                           const Calibration& calibration, const std::string& source);

}  // namespace nbr::simulator
