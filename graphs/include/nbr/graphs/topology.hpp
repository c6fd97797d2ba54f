#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace nbr {

/// @brief A directed edge of a process graph: `src` sends to `dst`.
struct Edge {
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    friend bool operator==(const Edge&, const Edge&) = default;
};

/// @brief Error in a topology input (file, generator parameters); what() names the file and
/// line where there is one.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// @brief A process topology: N ranks, each with ordered in- and out-neighbor lists.
///
/// The order of a rank's lists is MPI's neighbor order (what MPI_Dist_graph_neighbors
/// returns for a communicator made with MPI_Dist_graph_create_adjacent from these lists).
/// Duplicate edges, self-loops and ranks without neighbors are legal. The k-th occurrence
/// of `d` in out(s) is the same edge as the k-th occurrence of `s` in in(d), which is how
/// MPI matches the messages of a neighborhood collective between the two ranks.
class Topology {
public:
    Topology() = default;

    /// @brief Builds a topology from edges. A rank's out-list follows the order of its
    /// edges as a source, its in-list the order of its edges as a destination.
    /// @throws InputError if an endpoint is not below num_ranks.
    static Topology from_edges(std::uint32_t num_ranks, std::span<const Edge> edges);

    /// @brief Builds a topology from edges that are not held in memory: `out_degree` and
    /// `in_degree` count every rank's edges (num_ranks entries each), and `for_each_edge(emit)`
    /// calls `emit` once per edge, in the order from_edges would see them. Holds only the
    /// result. @throws InputError if the edges do not match the counts (a file that changed
    /// while being read).
    static Topology from_counted_edges(
        std::uint32_t num_ranks, std::vector<std::uint64_t> out_degree, std::vector<std::uint64_t> in_degree,
        const std::function<void(const std::function<void(const Edge&)>&)>& for_each_edge);

    /// @brief Builds a topology from every rank's ordered in- and out-lists, as MPI reports them
    /// (MPI_Dist_graph_neighbors). Every edge must appear in both lists: the k-th occurrence of
    /// `d` in out[s] is matched with the k-th occurrence of `s` in in[d].
    /// @throws InputError naming the rank whose lists disagree or name a rank out of range.
    static Topology from_adjacency(std::span<const std::vector<std::uint32_t>> in,
                                   std::span<const std::vector<std::uint32_t>> out);

    [[nodiscard]] std::uint32_t num_ranks() const noexcept { return num_ranks_; }
    [[nodiscard]] std::uint64_t num_edges() const noexcept { return out_targets_.size(); }

    [[nodiscard]] std::span<const std::uint32_t> out_neighbors(std::uint32_t rank) const {
        return {out_targets_.data() + out_offsets_[rank], out_targets_.data() + out_offsets_[rank + 1]};
    }
    [[nodiscard]] std::span<const std::uint32_t> in_neighbors(std::uint32_t rank) const {
        return {in_sources_.data() + in_offsets_[rank], in_sources_.data() + in_offsets_[rank + 1]};
    }
    /// @brief For each in-edge of `rank`: the slot of that edge in its source's out-list.
    [[nodiscard]] std::span<const std::uint32_t> in_source_slots(std::uint32_t rank) const {
        return {in_slots_.data() + in_offsets_[rank], in_slots_.data() + in_offsets_[rank + 1]};
    }
    [[nodiscard]] std::uint32_t out_degree(std::uint32_t rank) const {
        return static_cast<std::uint32_t>(out_offsets_[rank + 1] - out_offsets_[rank]);
    }
    [[nodiscard]] std::uint32_t in_degree(std::uint32_t rank) const {
        return static_cast<std::uint32_t>(in_offsets_[rank + 1] - in_offsets_[rank]);
    }

    /// @brief All edges, grouped by source in out-list order.
    [[nodiscard]] std::vector<Edge> edges() const;

    /// @brief Hash of N and every rank's ordered in- and out-lists; patterns carry it so
    /// that a pattern cannot be replayed on another topology by mistake.
    [[nodiscard]] std::uint64_t hash() const;

    friend bool operator==(const Topology&, const Topology&) = default;

private:
    std::uint32_t num_ranks_ = 0;
    std::vector<std::uint64_t> out_offsets_{0};
    std::vector<std::uint32_t> out_targets_;
    std::vector<std::uint64_t> in_offsets_{0};
    std::vector<std::uint32_t> in_sources_;
    std::vector<std::uint32_t> in_slots_;
};

/// @brief Hash of one rank's neighborhood as Topology::hash() sees it; exposed so that a
/// component holding only some ranks can recompute its share.
[[nodiscard]] std::uint64_t rank_neighborhood_hash(std::uint32_t rank, std::span<const std::uint32_t> in,
                                                   std::span<const std::uint32_t> out);

/// @brief Topology::hash() from every rank's rank_neighborhood_hash, in rank order.
[[nodiscard]] std::uint64_t topology_hash_of(std::span<const std::uint64_t> rank_hashes);

}  // namespace nbr
