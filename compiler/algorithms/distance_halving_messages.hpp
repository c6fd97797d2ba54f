#pragma once
// The distance-halving algorithm's engine messages (distance_halving.cpp), each kind with its
// encode() and decode() side by side (nbr/compiler/words.hpp). A request carries nothing but
// its sender (Message::source).

#include "nbr/compiler/words.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace nbr::compiler::internal {

/// An item a rank is responsible for delivering, and its destination.
struct Held {
    std::uint32_t origin = 0;
    std::uint32_t slot = 0;
    std::uint32_t target = 0;
    friend bool operator==(const Held&, const Held&) = default;
};

/// accept: the published pair of an agent and the origin it serves.
struct AgentPair {
    std::uint32_t agent = 0;
    std::uint32_t origin = 0;

    [[nodiscard]] std::vector<std::uint32_t> encode() const {
        WordWriter w;
        w.put(agent).put(origin);
        return w.take();
    }
    static AgentPair decode(std::span<const std::uint32_t> words) {
        AgentPair pair;
        WordReader r(words);
        pair.agent = r.get();
        pair.origin = r.get();
        r.finish();
        return pair;
    }
    friend bool operator==(const AgentPair&, const AgentPair&) = default;
};

/// offload: the items a rank hands its agent, which holds them from now on.
struct HeldItems {
    [[nodiscard]] static std::vector<std::uint32_t> encode(std::span<const Held> items) {
        WordWriter w;
        w.put_list(items, [](WordWriter& o, const Held& h) { o.put(h.origin).put(h.slot).put(h.target); });
        return w.take();
    }
    static std::vector<Held> decode(std::span<const std::uint32_t> words) {
        std::vector<Held> items;
        WordReader r(words);
        r.get_list([&](WordReader& in) {
            Held h;
            h.origin = in.get();
            h.slot = in.get();
            h.target = in.get();
            items.push_back(h);
        });
        r.finish();
        return items;
    }
};

}  // namespace nbr::compiler::internal
