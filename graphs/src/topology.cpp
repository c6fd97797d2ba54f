#include "nbr/graphs/topology.hpp"

#include "nbr/schema/hash.hpp"

namespace nbr {

Topology Topology::from_edges(std::uint32_t num_ranks, std::span<const Edge> edges) {
    Topology topo;
    topo.num_ranks_ = num_ranks;
    topo.out_offsets_.assign(std::size_t{num_ranks} + 1, 0);
    topo.in_offsets_.assign(std::size_t{num_ranks} + 1, 0);
    for (const Edge& e : edges) {
        if (e.src >= num_ranks || e.dst >= num_ranks) {
            throw InputError("edge " + std::to_string(e.src) + " -> " + std::to_string(e.dst) +
                             " has an endpoint outside [0, " + std::to_string(num_ranks) + ")");
        }
        ++topo.out_offsets_[e.src + 1];
        ++topo.in_offsets_[e.dst + 1];
    }
    for (std::uint32_t r = 0; r < num_ranks; ++r) {
        topo.out_offsets_[r + 1] += topo.out_offsets_[r];
        topo.in_offsets_[r + 1] += topo.in_offsets_[r];
    }
    topo.out_targets_.resize(edges.size());
    topo.in_sources_.resize(edges.size());
    topo.in_slots_.resize(edges.size());
    std::vector<std::uint64_t> out_fill(topo.out_offsets_.begin(), topo.out_offsets_.end() - 1);
    std::vector<std::uint64_t> in_fill(topo.in_offsets_.begin(), topo.in_offsets_.end() - 1);
    for (const Edge& e : edges) {
        const std::uint64_t out_pos = out_fill[e.src]++;
        const std::uint64_t in_pos = in_fill[e.dst]++;
        topo.out_targets_[out_pos] = e.dst;
        topo.in_sources_[in_pos] = e.src;
        topo.in_slots_[in_pos] = static_cast<std::uint32_t>(out_pos - topo.out_offsets_[e.src]);
    }
    // Edges were placed in input order on both sides, so the k-th src->dst edge in the
    // source's out-list is the k-th in the destination's in-list, as MPI matches them.
    return topo;
}

std::vector<Edge> Topology::edges() const {
    std::vector<Edge> result;
    result.reserve(out_targets_.size());
    for (std::uint32_t r = 0; r < num_ranks_; ++r) {
        for (auto d : out_neighbors(r)) result.push_back({r, d});
    }
    return result;
}

std::uint64_t rank_neighborhood_hash(std::uint32_t rank, std::span<const std::uint32_t> in,
                                     std::span<const std::uint32_t> out) {
    internal::Hasher hasher;
    hasher.update(rank);
    hasher.update(in.size());
    for (auto r : in) hasher.update(r);
    hasher.update(out.size());
    for (auto r : out) hasher.update(r);
    return hasher.digest();
}

std::uint64_t Topology::hash() const {
    internal::Hasher hasher;
    hasher.update(num_ranks_);
    for (std::uint32_t r = 0; r < num_ranks_; ++r) {
        hasher.update(rank_neighborhood_hash(r, in_neighbors(r), out_neighbors(r)));
    }
    return hasher.digest();
}

}  // namespace nbr
