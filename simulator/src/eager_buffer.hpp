// Per pair of ranks, the eager bytes a sender has put into its receiver's buffer and the
// receiver has not yet taken out, for the simulator's per-pair eager buffer (machine format 7,
// docs/simulate.md, step 5).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>

namespace nbr::simulator::internal {

/// @brief The buffers of the pairs that have sent eager messages. A message fits while what
/// its pair holds, itself included, is at most the capacity; it then holds its bytes until
/// its receive completes. The simulator asks in the order a pair's messages arrive (their
/// send order, as a rank's messages of one size leave in turn) with the time each was sent,
/// and the receiver's receives complete in the order of its CPU's time: both are monotone.
class EagerBuffers {
public:
    using Time = std::int64_t;  ///< picoseconds

    /// @brief Whether a message taking `bytes`, sent at `now`, fits the buffer of `pair` (of
    /// `capacity`), given the receives completed by then; if it does, it is held from then on.
    bool admit(std::uint64_t pair, std::uint64_t bytes, std::uint64_t capacity, Time now) {
        auto& buffer = pairs_[pair];
        while (!buffer.releasing.empty() && buffer.releasing.front().first <= now) {
            buffer.held -= buffer.releasing.front().second;
            buffer.releasing.pop_front();
        }
        if (buffer.held + bytes > capacity) return false;
        buffer.held += bytes;
        return true;
    }

    /// @brief A held message taking `bytes` of `pair` is received at `done`: free from then on.
    void release(std::uint64_t pair, std::uint64_t bytes, Time done) {
        pairs_[pair].releasing.emplace_back(done, bytes);
    }

private:
    struct Buffer {
        std::uint64_t held = 0;
        std::deque<std::pair<Time, std::uint64_t>> releasing;  ///< (receive completed, bytes), in time order
    };
    std::unordered_map<std::uint64_t, Buffer> pairs_;
};

}  // namespace nbr::simulator::internal
