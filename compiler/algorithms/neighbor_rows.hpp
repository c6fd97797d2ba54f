// What the combining algorithms share: the rows of the common-neighborhood matrix
// (Mirsadeghi et al. Sec. IV-B1; distance halving's and kgroup's matrix A, via M), and the
// (neighbor, slot) bookkeeping of combined sends.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nbr/compiler/engine.hpp"
#include "nbr/compiler/pattern_builder.hpp"
#include "nbr/compiler/words.hpp"
#include "nbr/graphs/topology.hpp"

namespace nbr::compiler::internal {

/// @brief The distinct entries of `list` other than `self`, sorted.
[[nodiscard]] std::vector<std::uint32_t> distinct_without(std::span<const std::uint32_t> list, std::uint32_t self);

/// @brief (neighbor, out-slot) pairs, sorted: where a rank's edges to a neighbor sit.
using SlotPairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// @brief The pairs of a rank's out-list `targets`.
[[nodiscard]] SlotPairs slot_pairs(std::span<const std::uint32_t> targets);

/// @brief The exchange message of common-neighbor and kgroup: after the algorithm's tag, the
/// (neighbor, slot) pairs of the items a rank sends a partner (or group member) for the
/// common neighbors that partner serves.
struct SlotExchange {
    [[nodiscard]] static std::vector<std::uint32_t> encode(std::uint32_t tag, const SlotPairs& pairs) {
        WordWriter w;
        w.put(tag).put_list(pairs, [](WordWriter& o, const auto& p) { o.put(p.first).put(p.second); });
        return w.take();
    }
    /// The pairs, sorted (the tag is the caller's: it read it to tell the message's kind).
    static SlotPairs decode(std::span<const std::uint32_t> words);
};

/// @brief Appends the item (origin, slot) of every pair with neighbor w (duplicate edges give
/// several).
void append_items(const SlotPairs& pairs, std::uint32_t w, std::uint32_t origin, std::vector<Item>& items);

/// @brief The departure message of the matrix update (Mirsadeghi et al. Sec. IV-B3): after
/// the algorithm's tag, the ranks that left the sender's active in-set, sorted.
struct Departures {
    [[nodiscard]] static std::vector<std::uint32_t> encode(std::uint32_t tag, std::span<const std::uint32_t> left) {
        WordWriter w;
        w.put(tag).put_words(left);
        return w.take();
    }
    /// The ranks that left (the tag is the caller's: it read it to tell the message's kind), a
    /// view into `words`.
    static std::span<const std::uint32_t> decode(std::span<const std::uint32_t> words);
};

/// @brief The matrix update: a rank whose active in-set lost the ranks `left` (sorted) posts
/// their Departures to its old active in-set `in_active` and removes them from it.
void announce_departures(Engine::Outbox& outbox, std::uint32_t tag, std::span<const std::uint32_t> left,
                         std::vector<std::uint32_t>& in_active);

/// @brief For every out-neighbor w of a local rank: w's distinct in-neighbors other than w
/// (the ranks that, like the local rank, send to w). Rows are identical for all local ranks
/// that need them, so each process stores each row once.
class NeighborRows {
public:
    explicit NeighborRows(std::uint32_t num_ranks) : rows_(num_ranks) {}

    /// @brief One superstep: every rank sends its row to each of its in-neighbors.
    /// Collective over the engine's processes.
    void exchange(Engine& engine, const Topology& topology);

    /// @brief Row of rank w (empty unless w is an out-neighbor of a local rank).
    [[nodiscard]] std::vector<std::uint32_t>& operator[](std::uint32_t w) { return rows_[w]; }
    [[nodiscard]] const std::vector<std::uint32_t>& operator[](std::uint32_t w) const { return rows_[w]; }

private:
    std::vector<std::vector<std::uint32_t>> rows_;
};

}  // namespace nbr::compiler::internal
