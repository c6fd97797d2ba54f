// The critical path of a simulated replay: what the rank that finishes last waited for, op
// by op (docs/simulate.md, "Critical path").
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator::internal {

/// @brief Records, per message and per rank, when each CPU operation started and ended and
/// what it waited for, so that the chain of operations ending in the last completion can be
/// walked back. Kept only when a critical path is asked for (about 100 bytes per message).
class PathTrace {
public:
    using Time = std::int64_t;  ///< picoseconds

    /// @brief What occupied a core or completed a rank: a call start, a send, a rendezvous
    /// answer, a receive, or (for completions only) a send's tail leaving or the receiver's
    /// acknowledgment of it arriving.
    struct Op {
        enum class Kind : std::uint8_t { none, call, send, answer, receive, tail, ack };
        Kind kind = Kind::none;
        std::uint32_t index = 0;  ///< rank (call) or message
    };

    PathTrace(std::uint64_t messages, std::uint32_t ranks, std::size_t cores)
        : message_(messages), rank_(ranks), last_op_(cores), finish_op_(ranks) {}

    /// @brief The rank's call start, then a send (`ready`: when it could start), a rendezvous
    /// answer, a receive (each with when its request or message arrived), on `core`.
    void call(std::uint32_t rank, std::size_t core, Time start, Time end) {
        rank_[rank] = occupy(core, {Op::Kind::call, rank}, start, end);
    }
    void send(std::uint32_t i, std::size_t core, Time ready, Time start, Time end) {
        message_[i].ready = ready;
        message_[i].send = occupy(core, {Op::Kind::send, i}, start, end);
    }
    void answer(std::uint32_t i, std::size_t core, Time request_arrival, Time start, Time end) {
        message_[i].request_arrival = request_arrival;
        message_[i].answer = occupy(core, {Op::Kind::answer, i}, start, end);
    }
    void receive(std::uint32_t i, std::size_t core, Time arrival, Time start, Time end) {
        message_[i].arrival = arrival;
        message_[i].receive = occupy(core, {Op::Kind::receive, i}, start, end);
    }
    /// @brief The arrival of `by` released send `next` (its last dependency).
    void released(std::uint32_t next, std::uint32_t by) { message_[next].released_by = by + 1; }
    /// @brief `op` set the rank's completion time.
    void finished(std::uint32_t rank, Op op) { finish_op_[rank] = op; }

    /// @brief The operations that lead to `rank`'s completion at `finish`, earliest first.
    /// `wake`: per rank, the delay before a rank gets its core back (internal::Cores).
    /// `src`, `dst`, `klass`, `bytes(i)`: per message; `unloaded(i, tail)`: message i's time
    /// from its post (with rendezvous: from the answer) to its arrival (`tail`: to its tail
    /// leaving the sender) with nothing else on its way.
    template <class Bytes, class Unloaded>
    [[nodiscard]] std::vector<PathStep> walk(std::uint32_t rank, Time finish, const std::vector<Time>& wake,
                                             const std::vector<std::uint32_t>& src,
                                             const std::vector<std::uint32_t>& dst,
                                             const std::vector<DistanceClass>& klass, Bytes bytes,
                                             Unloaded unloaded) const {
        std::vector<PathStep> steps;
        // Message i's operation; a transfer (to its arrival or, `tail`, to its tail leaving the
        // sender; not a rendezvous request) is queued for what it takes beyond `unloaded`.
        auto add = [&](PathStep::Kind kind, std::uint32_t i, Time start, Time end, Until until = Until::arrival) {
            const bool on_receiver = kind == PathStep::Kind::answer || kind == PathStep::Kind::receive;
            Time queued = 0;
            if (kind == PathStep::Kind::transfer && until != Until::request) {
                queued = std::max<Time>(0, end - start - unloaded(i, until == Until::tail));
            }
            steps.push_back({kind, on_receiver ? dst[i] : src[i], on_receiver ? src[i] : dst[i], klass[i], bytes(i),
                             us(start), us(end), us(queued)});
        };
        auto add_call = [&](std::uint32_t r) {
            steps.push_back(
                {PathStep::Kind::call, r, r, DistanceClass::socket, 0, us(rank_[r].start), us(rank_[r].end), 0});
        };
        Op op = finish_op_[rank];
        if (op.kind == Op::Kind::tail) {  // the rank finished when a send's tail left it
            add(PathStep::Kind::transfer, op.index, message_[op.index].send.end, finish, Until::tail);
            op = {Op::Kind::send, op.index};
        } else if (op.kind == Op::Kind::ack) {  // the rank finished when its receiver acknowledged a send
            add(PathStep::Kind::ack, op.index, message_[op.index].receive.end, finish);
            op = {Op::Kind::receive, op.index};
        }
        const std::uint64_t bound = 4 * message_.size() + rank_.size() + 1;  // every op at most once
        for (std::uint64_t n = 0; op.kind != Op::Kind::none && n < bound; ++n) {
            op = step_back(op, wake, dst, add, add_call);
        }
        std::reverse(steps.begin(), steps.end());
        return steps;
    }

private:
    enum class Until : std::uint8_t { arrival, tail, request };
    struct Span {
        Time start = 0, end = 0;
        Op before;  ///< what the core did last before this
    };
    struct MessageTrace {
        Time ready = 0, arrival = 0, request_arrival = -1;
        Span send, answer, receive;
        std::uint32_t released_by = 0;  ///< message + 1; 0: no dependency
    };

    static double us(Time t) { return static_cast<double>(t) * 1e-6; }

    /// `op` occupies `core` from `start` to `end`, after the core's previous operation.
    Span occupy(std::size_t core, Op op, Time start, Time end) {
        const Span span{start, end, last_op_[core]};
        last_op_[core] = op;
        return span;
    }

    /// Adds `op` as a step and returns what it waited for: the core's previous operation if
    /// the core was busy when the op could start, else what made it ready.
    template <class Add, class AddCall>
    Op step_back(Op op, const std::vector<Time>& wake, const std::vector<std::uint32_t>& dst, Add& add,
                 AddCall& add_call) const {
        const auto i = op.index;
        switch (op.kind) {
            case Op::Kind::call: {
                add_call(i);
                return rank_[i].before;  // another rank's call on a shared core, or none
            }
            case Op::Kind::send: {
                const auto& m = message_[i];
                add(PathStep::Kind::send, i, m.send.start, m.send.end);
                if (m.send.start > m.ready) return m.send.before;
                return m.released_by != 0 ? Op{Op::Kind::receive, m.released_by - 1} : Op{};
            }
            case Op::Kind::answer: {
                const auto& m = message_[i];
                add(PathStep::Kind::answer, i, m.answer.start, m.answer.end);
                if (m.answer.start > m.request_arrival + wake[dst[i]]) return m.answer.before;
                add(PathStep::Kind::transfer, i, m.send.end, m.request_arrival, Until::request);
                return {Op::Kind::send, i};
            }
            default: {  // receive
                const auto& m = message_[i];
                add(PathStep::Kind::receive, i, m.receive.start, m.receive.end);
                if (m.receive.start > m.arrival + wake[dst[i]]) return m.receive.before;
                const bool rendezvous = m.request_arrival >= 0;
                add(PathStep::Kind::transfer, i, rendezvous ? m.answer.end : m.send.end, m.arrival);
                return {rendezvous ? Op::Kind::answer : Op::Kind::send, i};
            }
        }
    }

    std::vector<MessageTrace> message_;
    std::vector<Span> rank_;     ///< per rank: its call start
    std::vector<Op> last_op_;    ///< per core
    std::vector<Op> finish_op_;  ///< per rank
};

}  // namespace nbr::simulator::internal
