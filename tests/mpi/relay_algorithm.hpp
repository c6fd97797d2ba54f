#pragma once

// A store-and-forward pattern used to test everything the naive pattern does not exercise:
// multi-item messages, relayed items, several steps, data dependencies. Every edge o -> d
// with o != d and d != relay(o) travels o -> relay(o) (step 0, one combined message) ->
// d (step 1, combined per destination at the relay); other edges go directly in step 0.
#include <map>

#include "nbr/compiler/algorithm.hpp"

namespace nbr::test {

class RelayAlgorithm final : public compiler::Algorithm {
public:
    [[nodiscard]] std::string name() const override { return "test-relay"; }

    static std::uint32_t relay_of(std::uint32_t rank, std::uint32_t n) { return (rank + 1) % n; }

    void build(compiler::Engine& engine, const Topology& topology, compiler::PatternBuilder& out) override {
        using compiler::Item;
        const std::uint32_t n = topology.num_ranks();
        // Superstep: tell the relay which items (origin, slot, destination) it forwards.
        engine.superstep([&](std::uint32_t v, auto, compiler::Engine::Outbox& outbox) {
            const std::uint32_t relay = relay_of(v, n);
            const auto targets = topology.out_neighbors(v);
            auto forwarded = [&](std::uint32_t s) { return targets[s] != v && targets[s] != relay && relay != v; };
            std::vector<std::uint32_t> forward;
            for (std::uint32_t s = 0; s < targets.size(); ++s) {
                if (forwarded(s)) forward.insert(forward.end(), {v, s, targets[s]});
            }
            // With something to forward, the relay's own in-edges from v ride in the same
            // message (a message that both delivers and relays); the rest goes directly.
            std::vector<Item> to_relay;
            for (std::uint32_t s = 0; s < targets.size(); ++s) {
                if (!forward.empty() && (forwarded(s) || (targets[s] == relay && relay != v))) {
                    to_relay.push_back({v, s});
                } else {
                    out.add_send(v, 0, targets[s], {Item{v, s}});
                }
            }
            if (!forward.empty()) {
                out.add_send(v, 0, relay, to_relay);
                outbox.post(relay, forward);
            }
        });
        engine.superstep([&](std::uint32_t v, std::span<const compiler::Message> inbox, auto&) {
            std::map<std::uint32_t, std::vector<Item>> by_destination;
            for (const auto& message : inbox) {
                for (std::size_t i = 0; i + 2 < message.payload.size(); i += 3) {
                    by_destination[message.payload[i + 2]].push_back({message.payload[i], message.payload[i + 1]});
                }
            }
            for (auto& [destination, items] : by_destination) out.add_send(v, 1, destination, std::move(items));
        });
    }
};

}  // namespace nbr::test
