// Per pair of ranks, the eager bytes a sender has put into its receiver's buffer and the
// receiver has not yet taken out, for the simulator's per-pair eager buffer
// (docs/simulate.md, step 5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nbr::simulator::internal {

/// @brief The buffers of the pairs whose eager messages could overflow (numbered densely by
/// the simulator: pairs with more than one such message, or one that cannot fit). A message
/// fits while what its pair holds, itself included, is at most the capacity; it then holds
/// its bytes until its receive completes. The simulator asks in the order a pair's messages
/// arrive (their send order, as a rank's messages of one size leave in turn) with the time
/// each was sent, and the receiver's receives complete in the order of its CPU's time: both
/// are monotone.
class EagerBuffers {
public:
    using Time = std::int64_t;  ///< picoseconds

    explicit EagerBuffers(std::size_t pairs = 0) : pairs_(pairs) {}

    /// @brief Whether a message taking `bytes`, sent at `now`, fits the buffer of `pair` (of
    /// `capacity`), given the receives completed by then; if it does, it is held from then on.
    bool admit(std::uint32_t pair, std::uint64_t bytes, std::uint64_t capacity, Time now) {
        auto& buffer = pairs_[pair];
        auto& releasing = buffer.releasing;
        while (buffer.head < releasing.size() && releasing[buffer.head].first <= now) {
            buffer.held -= releasing[buffer.head++].second;
        }
        if (buffer.head == releasing.size()) {  // all freed: start over without reallocating
            releasing.clear();
            buffer.head = 0;
        }
        if (buffer.held + bytes > capacity) return false;
        buffer.held += bytes;
        return true;
    }

    /// @brief A held message taking `bytes` of `pair` is received at `done`: free from then on.
    void release(std::uint32_t pair, std::uint64_t bytes, Time done) {
        pairs_[pair].releasing.emplace_back(done, bytes);
    }

private:
    /// A pair's buffer: what it holds, and the receives that free it from [head, end) of
    /// `releasing` (receive completed, bytes), in time order. A vector, not a deque: a pair
    /// costs no allocation until it has a message in flight.
    struct Buffer {
        std::uint64_t held = 0;
        std::size_t head = 0;
        std::vector<std::pair<Time, std::uint64_t>> releasing;
    };
    std::vector<Buffer> pairs_;
};

}  // namespace nbr::simulator::internal
