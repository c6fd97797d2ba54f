#include "nbr/graphs/topology.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <utility>

#include "nbr/schema/hash.hpp"

namespace nbr {

Topology Topology::from_edges(std::uint32_t num_ranks, std::span<const Edge> edges) {
    std::vector<std::uint64_t> out_degree(num_ranks, 0);
    std::vector<std::uint64_t> in_degree(num_ranks, 0);
    for (const Edge& e : edges) {
        if (e.src >= num_ranks || e.dst >= num_ranks) {
            throw InputError("edge " + std::to_string(e.src) + " -> " + std::to_string(e.dst) +
                             " has an endpoint outside [0, " + std::to_string(num_ranks) + ")");
        }
        ++out_degree[e.src];
        ++in_degree[e.dst];
    }
    return from_counted_edges(num_ranks, std::move(out_degree), std::move(in_degree), [&](const auto& emit) {
        for (const Edge& e : edges) emit(e);
    });
}

Topology Topology::from_counted_edges(
    std::uint32_t num_ranks, std::vector<std::uint64_t> out_degree, std::vector<std::uint64_t> in_degree,
    const std::function<void(const std::function<void(const Edge&)>&)>& for_each_edge) {
    Topology topo;
    topo.num_ranks_ = num_ranks;
    topo.out_offsets_.assign(std::size_t{num_ranks} + 1, 0);
    topo.in_offsets_.assign(std::size_t{num_ranks} + 1, 0);
    for (std::uint32_t r = 0; r < num_ranks; ++r) {
        topo.out_offsets_[r + 1] = topo.out_offsets_[r] + out_degree[r];
        topo.in_offsets_[r + 1] = topo.in_offsets_[r] + in_degree[r];
    }
    if (topo.out_offsets_.back() != topo.in_offsets_.back()) throw InputError("edge counts differ");
    const std::uint64_t edges = topo.out_offsets_.back();
    topo.out_targets_.resize(edges);
    topo.in_sources_.resize(edges);
    topo.in_slots_.resize(edges);
    // The fill positions reuse the count vectors: rank r's next free out- and in-position.
    std::copy(topo.out_offsets_.begin(), topo.out_offsets_.end() - 1, out_degree.begin());
    std::copy(topo.in_offsets_.begin(), topo.in_offsets_.end() - 1, in_degree.begin());
    std::uint64_t placed = 0;
    for_each_edge([&](const Edge& e) {
        if (e.src >= num_ranks || e.dst >= num_ranks || out_degree[e.src] == topo.out_offsets_[e.src + 1] ||
            in_degree[e.dst] == topo.in_offsets_[e.dst + 1]) {
            throw InputError("the edges changed while being read");
        }
        const std::uint64_t out_pos = out_degree[e.src]++;
        const std::uint64_t in_pos = in_degree[e.dst]++;
        topo.out_targets_[out_pos] = e.dst;
        topo.in_sources_[in_pos] = e.src;
        topo.in_slots_[in_pos] = static_cast<std::uint32_t>(out_pos - topo.out_offsets_[e.src]);
        ++placed;
    });
    if (placed != edges) throw InputError("the edges changed while being read");
    // Edges were placed in input order on both sides, so the k-th src->dst edge in the
    // source's out-list is the k-th in the destination's in-list, as MPI matches them.
    return topo;
}

Topology Topology::from_adjacency(std::span<const std::vector<std::uint32_t>> in,
                                  std::span<const std::vector<std::uint32_t>> out) {
    if (in.size() != out.size() || in.size() > UINT32_MAX) throw InputError("in- and out-lists differ in ranks");
    const auto n = static_cast<std::uint32_t>(in.size());
    Topology topo;
    topo.num_ranks_ = n;
    topo.out_offsets_.assign(std::size_t{n} + 1, 0);
    topo.in_offsets_.assign(std::size_t{n} + 1, 0);
    // Out-slots of every (source, destination) pair in out-list order, consumed in in-list order.
    std::unordered_map<std::uint64_t, std::deque<std::uint32_t>> slots;
    const auto key = [](std::uint32_t s, std::uint32_t d) { return (std::uint64_t{s} << 32) | d; };
    for (std::uint32_t s = 0; s < n; ++s) {
        for (std::uint32_t j = 0; j < out[s].size(); ++j) {
            const std::uint32_t d = out[s][j];
            if (d >= n)
                throw InputError("rank " + std::to_string(s) + ": out-neighbor " + std::to_string(d) +
                                 " out of range [0, " + std::to_string(n) + ")");
            slots[key(s, d)].push_back(j);
            topo.out_targets_.push_back(d);
        }
        topo.out_offsets_[s + 1] = topo.out_targets_.size();
    }
    for (std::uint32_t d = 0; d < n; ++d) {
        for (const std::uint32_t s : in[d]) {
            if (s >= n)
                throw InputError("rank " + std::to_string(d) + ": in-neighbor " + std::to_string(s) +
                                 " out of range [0, " + std::to_string(n) + ")");
            auto it = slots.find(key(s, d));
            if (it == slots.end() || it->second.empty()) {
                throw InputError("rank " + std::to_string(d) + " lists " + std::to_string(s) +
                                 " as in-neighbor more often than rank " + std::to_string(s) +
                                 " lists it as out-neighbor");
            }
            topo.in_sources_.push_back(s);
            topo.in_slots_.push_back(it->second.front());
            it->second.pop_front();
        }
        topo.in_offsets_[d + 1] = topo.in_sources_.size();
    }
    for (std::uint32_t s = 0; s < n; ++s) {  // in out-list order, so the message is deterministic
        for (const std::uint32_t d : out[s]) {
            if (slots[key(s, d)].empty()) continue;
            throw InputError("rank " + std::to_string(s) + " lists " + std::to_string(d) +
                             " as out-neighbor more often than rank " + std::to_string(d) + " lists it as in-neighbor");
        }
    }
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

std::uint64_t topology_hash_of(std::span<const std::uint64_t> rank_hashes) {
    internal::Hasher hasher;
    hasher.update(static_cast<std::uint32_t>(rank_hashes.size()));
    for (const auto h : rank_hashes) hasher.update(h);
    return hasher.digest();
}

std::uint64_t Topology::hash() const {
    std::vector<std::uint64_t> ranks(num_ranks_);
    for (std::uint32_t r = 0; r < num_ranks_; ++r)
        ranks[r] = rank_neighborhood_hash(r, in_neighbors(r), out_neighbors(r));
    return topology_hash_of(ranks);
}

}  // namespace nbr
