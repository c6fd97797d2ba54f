#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nbr/simulator/machine.hpp"
#include "nbr_machine.pb.h"

namespace nbr::simulator {

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
    double rate_us = 0;       ///< time per message of a stream of messages (PRTT(n) − PRTT(1)) / (n − 1)
    int stream_messages = 2;  ///< n of the stream (and of the send and receive bursts)
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
};

/// @brief Fits the simulator's LogGOPS parameters of one class to the measurements, so that
/// the simulator reproduces the measured one-way time and message rate at every measured
/// size, the one-way time only where a stream is no slower per message than one message
/// alone (L is at least 0; docs/simulate.md, "Calibration"):
/// - o_s, o_r: medians of the bursts' per-message times, at most the stream's time per
///   message at the smallest size (per-byte CPU costs are not separated from G: on shared
///   memory the CPU's copy is the transfer);
/// - g: the stream's time per message at the smallest size; G per size segment: the rest of
///   the stream's time per message, per byte;
/// - L per size segment: the one-way time less o_s, G·b and o_r (eager), or a third of what
///   remains after the receiver's answer o_r (rendezvous: three latencies), at least 0;
/// - the posted-receive cost: the measured time per posted receive;
/// - the acknowledgment latency (above the eager limit, where measured): per size segment the
///   sender's completion less the one-way time (at least 0), the median of them for the class.
/// @throws std::invalid_argument if there are no points or sizes are not increasing.
[[nodiscard]] schema::LinkClass fit_link_class(const Calibration& calibration);

/// @brief The per-call cost: the measured neighborhood call less what the simulator predicts
/// for its two messages on `machine` with two ranks at distance `klass` (at least 0).
[[nodiscard]] double fit_call_overhead(const schema::Machine& machine, DistanceClass klass,
                                       const Calibration& calibration);

/// @brief The switch time of two ranks sharing a core: their measured one-way time of `bytes`
/// less the one-way time `machine` predicts for two ranks on one socket with a core each (at
/// least 0).
[[nodiscard]] double fit_switch(const schema::Machine& machine, double shared_one_way_us, std::uint64_t bytes);

/// @brief Puts the fitted class into `machine` (replacing what was there), the copy cost and
/// the per-call cost too when the class is `socket` (the machine becomes format 2, or 6 with
/// an acknowledgment), and a line in `sources`: "CLASS: measured by " + `source` (the tool and
/// what it measured).
/// @throws std::invalid_argument for `leaf` on a machine without `nodes_per_switch`.
void apply_calibration(schema::Machine& machine, DistanceClass klass, const Calibration& calibration,
                       const std::string& source);

/// @brief How `calibrated_machine` describes the node.
struct NewMachine {
    std::string name = "calibrated";
    std::uint32_t cores = 1;             ///< cores of one node
    std::uint32_t ranks_per_node = 0;    ///< 0: `cores`
    std::uint32_t ranks_per_socket = 0;  ///< 0: `ranks_per_node`
};

/// @brief A new machine whose every distance class is a copy of the one measured at `klass`
/// (usable at once for ranks at that distance; `sources` says the others are copies until
/// measured), then `apply_calibration` of `klass` with `source`.
[[nodiscard]] schema::Machine calibrated_machine(const Calibration& calibration, DistanceClass klass,
                                                 const NewMachine& node, const std::string& source);

/// @brief The simulator's prediction of one measured point next to the measurement.
struct CalibrationCheck {
    std::uint64_t bytes = 0;
    double one_way_us = 0, predicted_one_way_us = 0;
    double rate_us = 0, predicted_rate_us = 0;
    /// The sender's completion (rendezvous sizes; negative where not measured) and the
    /// model's: the later of the sender's and the receiver's completion, so the one-way time
    /// where a send completes when its tail leaves.
    double complete_us = -1, predicted_complete_us = 0;
};

/// @brief Simulates the ping-pong half round trip and the stream of every point on `machine`
/// with two ranks at distance `klass`: how well the machine file reproduces the measurements.
[[nodiscard]] std::vector<CalibrationCheck> check_calibration(const schema::Machine& machine, DistanceClass klass,
                                                              const Calibration& calibration);

}  // namespace nbr::simulator
