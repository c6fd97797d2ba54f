#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbr/graphs/placement.hpp"
#include "nbr/simulator/perturbation.hpp"
#include "nbr_machine.pb.h"

namespace nbr::simulator {

/// @brief Error in a machine file or preset name; what() names the file.
class MachineError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// @brief How far apart two ranks are; each class has its own LogGOPS parameters.
enum class DistanceClass : std::uint8_t {
    socket,   ///< same socket (including a rank and itself)
    node,     ///< other socket of the same node
    leaf,     ///< other node under the same leaf switch (machines with nodes_per_switch)
    network,  ///< other node
};
inline constexpr std::size_t kDistanceClasses = 4;
[[nodiscard]] const char* to_string(DistanceClass c);

/// @brief Size-dependent override of latency, byte time, acknowledgment and CPU overheads
/// (picoseconds).
struct SizeSegment {
    std::uint64_t from_bytes = 0;
    double latency_ps = 0;
    double byte_ps = 0;
    double ack_ps = -1;
    double send_overhead_ps = 0;   ///< o_s at these sizes (else the class's)
    double recv_overhead_ps = 0;   ///< o_r at these sizes (else the class's)
    double exchange_byte_ps = -1;  ///< G of streams that cross; negative: `byte_ps`
};

/// @brief LogGOPS parameters of one distance class, in picoseconds (per byte where named so).
struct LinkCost {
    double latency_ps = 0;              ///< L
    double send_overhead_ps = 0;        ///< o_s
    double recv_overhead_ps = 0;        ///< o_r
    double gap_ps = 0;                  ///< g
    double byte_ps = 0;                 ///< G
    double send_byte_ps = 0;            ///< O_s
    double recv_byte_ps = 0;            ///< O_r
    std::uint64_t eager_limit = ~0ULL;  ///< S: larger messages use rendezvous
    double post_recv_ps = 0;            ///< receiver CPU per posted receive
    bool concurrent_injection = false;  ///< a rank's messages do not queue for g and G
    /// Above the eager limit: the send completes this long after the receive;
    /// negative: when its tail leaves the sender.
    double ack_ps = -1;
    /// Per pair of ranks, bytes of eager messages sent and not yet received that fit before a
    /// message overflows to the transport's slower queue; 0: unlimited.
    std::uint64_t eager_buffer = 0;
    std::uint64_t eager_buffer_message = 0;  ///< what a message takes in the buffer beyond its bytes
    double overflow_recv_ps = 0;             ///< receiver CPU per overflowing message, beyond o_r
    std::vector<SizeSegment> segments;       ///< sorted by from_bytes

    /// @brief The last segment whose from_bytes is at most `bytes`; nullptr if none.
    [[nodiscard]] const SizeSegment* segment_for(std::uint64_t bytes) const;
    /// @brief Latency and byte time for a message of `bytes` bytes (segments applied).
    [[nodiscard]] std::pair<double, double> latency_and_byte_ps(std::uint64_t bytes) const;
    /// @brief The byte time for a message of `bytes` bytes in a stream that crosses another
    /// (where its segment sets none, the byte time).
    [[nodiscard]] double exchange_byte_ps_at(std::uint64_t bytes) const;
    /// @brief o_s and o_r for a message of `bytes` bytes (segments applied).
    [[nodiscard]] double send_overhead_at(std::uint64_t bytes) const;
    [[nodiscard]] double recv_overhead_at(std::uint64_t bytes) const;
    /// @brief How long after its receive a send of `bytes` completes (segments applied);
    /// negative: when its tail leaves (eager sizes, or no acknowledgment in the machine).
    [[nodiscard]] double ack_after_receive_ps(std::uint64_t bytes) const;
};

/// @brief How messages that meet at a node's NIC share it.
enum class NicSharing {
    first_come,  ///< one after another, in arrival order
    fair,        ///< the messages on the NIC share it equally
};

/// @brief One block size's ratio error (a pattern check).
struct RatioPoint {
    std::uint64_t bytes = 0;
    double error = 0;
};

/// @brief The ratio error that covers every block size of [lo, hi]: the largest error of
/// `points` (increasing sizes) from the last at or below `lo` (the first if none is) to the
/// first at or above `hi` (the last if none is: an error stays near the size it was found at,
/// on either side); `overall` where there is no point.
[[nodiscard]] double ratio_error_over(const std::vector<RatioPoint>& points, double overall, std::uint64_t lo,
                                      std::uint64_t hi);

/// @brief A copy's time per byte at one block size.
struct CopyRatePoint {
    std::uint64_t block_bytes = 0;
    double byte_ps = 0;
};

/// @brief The time per byte of copying blocks of `block_bytes`: linear in log2 of the block
/// size between the two `points` (increasing sizes) around it, the nearest point's outside
/// them; `fallback` where there is no point.
[[nodiscard]] double copy_byte_ps_at(const std::vector<CopyRatePoint>& points, double fallback,
                                     std::uint64_t block_bytes);

/// @brief A machine model, validated and converted to picoseconds.
struct Machine {
    std::string name;
    std::string description;
    std::uint32_t ranks_per_node = 1;
    std::uint32_t ranks_per_socket = 1;
    double copy_byte_ps = 0;   ///< memory copy per byte (packing and unpacking)
    double copy_block_ps = 0;  ///< memory copy per block beyond its bytes
    /// The copy per byte by block size (increasing; empty: `copy_byte_ps` at every size).
    std::vector<CopyRatePoint> copy_rates;
    std::array<LinkCost, kDistanceClasses> link;
    double nic_gap_ps = 0;
    double nic_byte_ps = 0;
    std::uint32_t nodes_per_switch = 0;                    ///< 0: no switch level (class leaf unused)
    double call_ps = 0;                                    ///< CPU per rank per call
    std::uint32_t cores_per_node = 0;                      ///< 0: a core per rank
    double switch_ps = 0;                                  ///< a core passing from one rank to another
    std::uint32_t uplinks_per_switch = 0;                  ///< 0: no contention above the NIC
    double uplink_gap_ps = 0;                              ///< per uplink: minimum time between two messages
    double uplink_byte_ps = 0;                             ///< per uplink: time per byte
    NicSharing nic_sharing = NicSharing::first_come;       ///< receiving NIC
    NicSharing nic_send_sharing = NicSharing::first_come;  ///< sending NIC
    /// The least relative gain over naive that auto acts on (the calibration's
    /// pattern checks; 0: none stated).
    double ratio_error = 0;
    /// The ratio error per block size (increasing; empty: `ratio_error` at every size).
    std::vector<RatioPoint> ratio_errors;
    /// The cluster's CPU noise (Detours::any() false: a quiet machine).
    Detours noise;
    std::vector<std::string> sources;
    schema::Machine spec;  ///< as read (for printing)

    [[nodiscard]] const LinkCost& cost(DistanceClass c) const { return link[static_cast<std::size_t>(c)]; }
    /// @brief The distance class between ranks `a` and `b` placed by `placement`.
    [[nodiscard]] DistanceClass distance(const Placement& placement, std::uint32_t a, std::uint32_t b) const {
        if (placement.same_socket(a, b)) return DistanceClass::socket;
        if (placement.same_node(a, b)) return DistanceClass::node;
        if (nodes_per_switch > 0 && placement.node(a) / nodes_per_switch == placement.node(b) / nodes_per_switch) {
            return DistanceClass::leaf;
        }
        return DistanceClass::network;
    }
    /// @brief The copy per byte of packing or unpacking blocks of `block_bytes`.
    [[nodiscard]] double copy_byte_ps_at(std::uint64_t block_bytes) const {
        return simulator::copy_byte_ps_at(copy_rates, copy_byte_ps, block_bytes);
    }
    /// @brief The least relative gain over naive auto acts on for block sizes [lo, hi].
    [[nodiscard]] double ratio_error_over(std::uint64_t lo, std::uint64_t hi) const {
        return simulator::ratio_error_over(ratio_errors, ratio_error, lo, hi);
    }
};

/// @brief Newest machine-file format this build reads (and nbr-calibrate writes); older
/// files are read with the newer costs 0.
inline constexpr std::uint32_t kMachineFormatVersion = 13;

/// @brief The segment size `nbrc compile --algo auto` gives its forwarding candidates on this
/// machine (docs/algorithms.md, "Segmented forwarding"): Hockney's n½ of the network class,
/// the message whose wire time equals its fixed costs, (L + o_s + o_r) / max(G, NIC byte
/// time), rounded up to a power of two within [1 KiB, 1 MiB]; 0 when the class moves bytes
/// for free (nothing to pipeline).
[[nodiscard]] std::uint64_t segment_size_for(const Machine& machine);

/// @brief Names of the built-in machines (`--machine NAME`).
[[nodiscard]] std::vector<std::string> machine_preset_names();

/// @brief A preset by name, or a JSON machine file by path (a name that is not a preset is
/// read as a file). @throws MachineError naming the file or listing the presets.
[[nodiscard]] Machine load_machine(const std::string& name_or_path);

/// @brief Parses and validates machine JSON; `source` names it in errors.
[[nodiscard]] Machine parse_machine(const std::string& json, const std::string& source);

/// @brief Validates a machine message and converts it. @throws MachineError naming `source`.
[[nodiscard]] Machine machine_from_spec(const schema::Machine& spec, const std::string& source);

/// @brief The machine message as JSON (field names as in nbr_machine.proto), readable by
/// parse_machine.
[[nodiscard]] std::string machine_to_json(const schema::Machine& spec);

/// @brief `machine_to_json`, checked to read back (parse_machine, errors naming `source`).
/// @throws std::invalid_argument if it does not.
[[nodiscard]] std::string checked_machine_json(const schema::Machine& spec, const std::string& source);

/// @brief Writes `spec` as JSON to `path` through a temporary file renamed into place, so a
/// failure leaves no half-written file; the text is checked to read back first.
/// @throws std::invalid_argument if it does not; FileError if it cannot be written.
void save_machine(const std::string& path, const schema::Machine& spec);

}  // namespace nbr::simulator
