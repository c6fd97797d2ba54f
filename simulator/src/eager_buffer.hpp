// Per pair of ranks, the eager bytes a sender has put into its receiver's buffer and the
// receiver has not yet taken out, for the simulator's per-pair eager buffer
// (docs/simulate.md, step 5).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "message_costs.hpp"

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

/// @brief The per-pair eager buffer model of a simulation: which messages could overflow their
/// pair's buffer, and, as they are sent, arrive and are received, whether each was held in
/// the buffer or overflowed it (then its receive pays the class's overflow cost).
class PairEagerBuffers {
public:
    /// Numbers the pairs whose messages could overflow, those with more than one bufferable
    /// message or one that does not fit alone (sorted by pair: no per-pair map); the others
    /// always fit and need no state.
    PairEagerBuffers(const SimProgram& program, const MessageCosts& costs)
        : costs_(costs),
          state_(program.num_messages(), State::fits),
          sent_at_(program.num_messages(), 0),
          pair_(program.num_messages(), kUntracked) {
        std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;  // (pair, message)
        for (std::uint32_t i = 0; i < program.num_messages(); ++i) {
            if (bufferable(i))
                keyed.emplace_back(std::uint64_t{program.src[i]} * program.num_ranks + program.dst[i], i);
        }
        std::sort(keyed.begin(), keyed.end());
        std::uint32_t pairs = 0;
        for (std::size_t a = 0, b = 0; a < keyed.size(); a = b) {
            while (b < keyed.size() && keyed[b].first == keyed[a].first) ++b;
            const auto i = keyed[a].second;
            if (b - a == 1 && footprint(i) <= costs_.cost(i).eager_buffer) continue;
            for (std::size_t k = a; k < b; ++k) pair_[keyed[k].second] = pairs;
            ++pairs;
        }
        buffers_ = EagerBuffers(pairs);
    }

    /// @brief Message i's send started at `start`.
    void sent(std::uint32_t i, Time start) { sent_at_[i] = start; }

    /// @brief Message i arrives: whether it fit its pair's buffer as it was when the message
    /// was sent (then held until received) or overflowed it. Decided in the order a pair's
    /// messages arrive: by then every earlier message of the pair has been received or is
    /// waiting, so what the buffer held at the send is known.
    bool overflows(std::uint32_t i) {
        if (pair_[i] == kUntracked) return false;
        const bool fits = buffers_.admit(pair_[i], footprint(i), costs_.cost(i).eager_buffer, sent_at_[i]);
        state_[i] = fits ? State::held : State::overflow;
        return !fits;
    }

    /// @brief Message i's receive completed at `done`: what it held is free from then on.
    void received(std::uint32_t i, Time done) {
        if (state_[i] == State::held) buffers_.release(pair_[i], footprint(i), done);
    }

private:
    enum class State : std::uint8_t { fits, held, overflow };
    static constexpr std::uint32_t kUntracked = ~0U;

    [[nodiscard]] bool bufferable(std::uint32_t i) const {
        const LinkCost& c = costs_.cost(i);
        return c.eager_buffer > 0 && costs_.bytes(i) <= c.eager_limit;
    }
    [[nodiscard]] std::uint64_t footprint(std::uint32_t i) const {
        return costs_.bytes(i) + costs_.header_bytes(i) + costs_.cost(i).eager_buffer_message;
    }

    const MessageCosts& costs_;
    std::vector<State> state_;         // per message
    std::vector<Time> sent_at_;        // per message: when its send started
    std::vector<std::uint32_t> pair_;  // per message: its pair's buffer, or kUntracked (always fits)
    EagerBuffers buffers_;
};

}  // namespace nbr::simulator::internal
