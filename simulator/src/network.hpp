// The simulator's network resources beyond the ranks' own injection: NICs served first come,
// first served or shared fairly, the leaf switches' uplinks, and the arrival rule of a fairly
// shared sending NIC (docs/simulate.md, "The model, exactly", steps 3 and 4).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "message_costs.hpp"
#include "shared_link.hpp"

namespace nbr::simulator::internal {

/// @brief Links served first come, first served: a message takes a link when it is free and
/// holds it for its busy time.
class FirstComeLinks {
public:
    explicit FirstComeLinks(std::size_t links = 0) : free_(links, 0) {}

    /// @brief A message reaching `link` at `time` and holding it for `busy`: returns when it
    /// starts (the link is free again `busy` later).
    Time take(std::size_t link, Time time, Time busy) {
        const Time start = std::max(time, free_[link]);
        free_[link] = start + busy;
        return start;
    }

private:
    std::vector<Time> free_;
};

/// @brief The leaf switches' uplinks and downlinks (machines with uplinks), per leaf switch.
struct Uplinks {
    explicit Uplinks(std::size_t leaves) : up(leaves), down(leaves) {}
    FirstComeLinks up, down;
};

/// @brief Links whose bandwidth the messages on them share equally (one SharedLink each). A
/// departure is an event: the caller schedules the one next_departure() names and hands its
/// version back to leave(), which ignores a departure a later join or leave made stale.
class FairLinks {
public:
    explicit FairLinks(std::size_t links) : links_(links) {}

    /// @brief `message` joins `link` at `now`, needing `work` ps of the link alone; `aux` is
    /// handed back when it leaves.
    void join(std::size_t link, Time now, double work, std::uint32_t message, Time aux) {
        links_[link].join(now, work, message, aux);
    }

    /// @brief When the first message on `link` leaves if no other joins first, and the version
    /// its departure event must carry; none if the link is idle.
    [[nodiscard]] std::optional<std::pair<Time, Time>> next_departure(std::size_t link) const {
        const auto& l = links_[link];
        if (l.empty()) return std::nullopt;
        return std::pair{l.next_departure(), static_cast<Time>(l.version())};
    }

    /// @brief The departure scheduled with `version` is due at `now`: the message that leaves,
    /// or none if a message joined or left since.
    std::optional<SharedLink::Job> leave(std::size_t link, Time now, Time version) {
        auto& l = links_[link];
        if (static_cast<Time>(l.version()) != version) return std::nullopt;
        return l.leave(now);
    }

private:
    std::vector<SharedLink> links_;
};

/// @brief With a fair sending NIC a message's head moves on at once while its tail still
/// shares the NIC, so it arrives no earlier than its tail left the NIC plus the latency. Per
/// message: when its tail left (once known) and an arrival waiting for that.
class TailGate {
public:
    explicit TailGate(std::size_t messages) : tail_(messages, kUnknown), held_(messages, kUnknown) {}

    /// @brief Message i's tail left its sending NIC at `tail`: the time it passed the
    /// receiving NIC if its arrival was held for this.
    std::optional<Time> tail_left(std::uint32_t i, Time tail) {
        tail_[i] = tail;
        if (held_[i] == kUnknown) return std::nullopt;
        return held_[i];
    }

    /// @brief Message i's tail passed the receiving NIC at `t`: when it arrives, or none
    /// (held) while its tail's departure from the sending NIC is not known.
    std::optional<Time> arrival(std::uint32_t i, Time t, Time latency) {
        if (tail_[i] == kUnknown) {
            held_[i] = t;
            return std::nullopt;
        }
        return std::max(t, tail_[i] + latency);
    }

private:
    std::vector<Time> tail_, held_;
};

}  // namespace nbr::simulator::internal
