#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nbr_pattern.pb.h"

namespace nbr::internal {

/// @brief Which collective a plan serves; they differ in what a data unit is.
enum class Collective {
    allgather,  ///< unit = an origin's send buffer (one block per origin in a message)
    alltoall    ///< unit = one edge's block (one block per item)
};

/// @brief Where a rank finds a unit when it packs a message.
struct UnitHome {
    enum class Kind : std::uint8_t { send_block, recv_slot, staging };
    Kind kind = Kind::send_block;
    std::uint32_t index = 0;     ///< send block, in-slot, or receive operation
    std::uint32_t position = 0;  ///< block position inside the staged message (staging only)
    std::uint32_t provider = 0;  ///< receive operation that brings it (not for send_block)
};

/// @brief A receive of the schedule.
struct RecvPlan {
    std::uint32_t peer = 0;
    int tag = 0;
    /// Typed message: one unit from the peer's own buffer, received straight into recvbuf.
    bool direct = false;
    /// Every block is the peer's own and delivered here: nothing relays it, so it is never
    /// segmented (the sender's SendPlan::one_hop says the same of it).
    bool one_hop = false;
    std::vector<std::uint32_t> units;  ///< message layout
    /// (position in message, in-slot) for every in-edge this message delivers.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> deliveries;
    std::vector<std::uint32_t> dependents;  ///< sends waiting for this receive
    std::uint32_t first = 0;                ///< index of units[0] among all receives' units (flat per-unit arrays)
    std::uint32_t step = 0;                 ///< the pattern step it belongs to
};

/// @brief A send of the schedule.
struct SendPlan {
    std::uint32_t peer = 0;
    int tag = 0;
    /// Typed message: one unit of this rank's own data, sent straight from sendbuf.
    bool direct = false;
    /// Every block is this rank's own and addressed to the peer: nothing relays it, so it is
    /// never segmented (the receiver's RecvPlan::one_hop says the same of it).
    bool one_hop = false;
    std::vector<std::uint32_t> units;  ///< message layout
    std::uint32_t dependencies = 0;    ///< number of receives it waits for
    std::uint32_t first = 0;           ///< index of units[0] among all sends' units
    std::uint32_t step = 0;            ///< the pattern step it belongs to
};

/// @brief A typed message straight between a user buffer block and a peer (the naive
/// pattern's only kind): what start() needs, packed for a tight posting loop.
struct DirectOp {
    int peer = 0;
    int tag = 0;
    std::uint32_t block = 0;  ///< receive slot or send block
};

/// @brief Error in a rank pattern found while planning (NBR_ERR_PATTERN).
class PlanError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// @brief The size-independent schedule of one rank for one collective: which messages,
/// their layout, and the data dependencies between receives and sends. Built once at
/// load time; an execution only adds byte offsets.
struct Plan {
    Collective collective = Collective::allgather;
    std::vector<RecvPlan> recvs;
    std::vector<SendPlan> sends;
    std::vector<UnitHome> homes;  ///< per unit
    int max_tag = 0;
    std::uint32_t recv_units = 0;  ///< units of all receives (size of flat per-unit arrays)
    std::uint32_t send_units = 0;  ///< units of all sends
    /// No send waits for a receive: everything is posted at start and completes together.
    bool independent = true;
    /// Some receive is staged (a combined or forwarded message rather than one typed block).
    bool staged_recvs = false;
    /// Every message is direct, each receive delivers one block and no send waits: start()
    /// posts direct_recvs and direct_sends and completion has nothing to unpack.
    bool all_direct = false;
    std::vector<DirectOp> direct_recvs;
    std::vector<DirectOp> direct_sends;
};

/// @brief Builds the plan of `pattern` for `collective`, checking locally that every
/// in-edge is delivered exactly once and that every sent item is owned or received in an
/// earlier step. @throws PlanError naming step and operation.
[[nodiscard]] Plan build_plan(const schema::RankPattern& pattern, Collective collective);

/// @brief Blocks per segment: no segmentation (kWholeMessages) without a segment size or for
/// empty blocks, else the largest power of two of whole blocks that fits in `segment_bytes`, at
/// least one (a block is never split; powers of two keep the plans a replayer or simulator
/// builds for different block sizes few).
inline constexpr std::uint32_t kWholeMessages = std::numeric_limits<std::uint32_t>::max();
[[nodiscard]] std::uint32_t segment_units(std::uint64_t segment_bytes, std::uint64_t block_bytes);

/// @brief Blocks of the longest message of `plan` that segment_plan may split (not one-hop);
/// segment_plan(plan, units) returns `plan` for any `units` at or above it.
[[nodiscard]] std::uint32_t longest_segmentable(const Plan& plan);

/// @brief `plan` with every relayed message (not one-hop: its sender forwards some block or
/// its receiver does) of more than `max_units` blocks split into segments of `max_units`
/// consecutive blocks (the last one shorter), each a message of its own: a segment of a send
/// waits only for the segments of receives that bring its blocks, so a forwarder sends what
/// has arrived while the rest arrives. One-hop messages (direct ones among them) stay whole:
/// with no relay there is nothing to overlap, and each segment would pay a message's costs.
/// Tags are renumbered per peer in the same order on both sides (a message's segments take
/// consecutive tags), so matching and tag windows hold. kWholeMessages returns `plan`.
[[nodiscard]] Plan segment_plan(const Plan& plan, std::uint32_t max_units);

/// @brief segment_plan(plan, max_units).max_tag, counted without building the plan.
[[nodiscard]] int segmented_max_tag(const Plan& plan, std::uint32_t max_units);

}  // namespace nbr::internal
