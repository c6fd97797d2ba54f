#include "neighbor_rows.hpp"

#include <algorithm>

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
