#include "neighbor_rows.hpp"

#include <algorithm>
#include <iterator>

namespace nbr::compiler::internal {

std::vector<std::uint32_t> distinct_without(std::span<const std::uint32_t> list, std::uint32_t self) {
    std::vector<std::uint32_t> result;
    result.reserve(list.size());
    for (auto r : list) {
        if (r != self) result.push_back(r);
    }
    std::sort(result.begin(), result.end());
    result.erase(std::unique(result.begin(), result.end()), result.end());
    return result;
}

SlotPairs slot_pairs(std::span<const std::uint32_t> targets) {
    SlotPairs pairs;
    for (std::uint32_t slot = 0; slot < targets.size(); ++slot) pairs.emplace_back(targets[slot], slot);
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

SlotPairs SlotExchange::decode(std::span<const std::uint32_t> words) {
    SlotPairs pairs;
    WordReader r(words);
    r.get();  // the tag
    r.get_list([&](WordReader& in) {
        const std::uint32_t neighbor = in.get();
        pairs.emplace_back(neighbor, in.get());
    });
    r.finish();
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

void append_items(const SlotPairs& pairs, std::uint32_t w, std::uint32_t origin, std::vector<Item>& items) {
    auto it = std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(w, std::uint32_t{0}));
    for (; it != pairs.end() && it->first == w; ++it) items.push_back({origin, it->second});
}

std::span<const std::uint32_t> Departures::decode(std::span<const std::uint32_t> words) {
    WordReader r(words);
    r.get();  // the tag
    const auto left = r.get_words();
    r.finish();
    return left;
}

void announce_departures(Engine::Outbox& outbox, std::uint32_t tag, std::span<const std::uint32_t> left,
                         std::vector<std::uint32_t>& in_active) {
    if (left.empty()) return;
    outbox.multicast(in_active, Departures::encode(tag, left));
    std::vector<std::uint32_t> remaining;
    std::set_difference(in_active.begin(), in_active.end(), left.begin(), left.end(), std::back_inserter(remaining));
    in_active.swap(remaining);
}

void NeighborRows::exchange(Engine& engine, const Topology& topology) {
    engine.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) {
        const auto row = distinct_without(topology.in_neighbors(v), v);
        outbox.multicast(row, row);
    });
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        for (const Message& m : engine.inbox(v)) {
            // Every local in-neighbor of the source gets the same row; it is never empty (it
            // holds the receiver), so an empty slot means "not stored yet".
            auto& row = rows_[m.source];
            if (row.empty()) row.assign(m.payload.begin(), m.payload.end());
        }
    }
}

}  // namespace nbr::compiler::internal
