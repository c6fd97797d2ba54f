// The lower bound of a collective on a machine model (docs/simulate.md, "Lower bound").
#include "nbr/simulator/lower_bound.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace nbr::simulator {

namespace {

/// One message of one block from rank 0 to the last rank, zero-copy, nothing else: the least
/// any block pays to reach another rank.
SimProgram one_message(std::uint32_t ranks, Collective collective) {
    SimProgram p;
    p.num_ranks = ranks;
    p.collective = collective;
    p.first_message.assign(ranks + 1, 1);
    p.first_message[0] = 0;
    p.src = {0};
    p.dst = {ranks - 1};
    p.units = {1};
    p.unpack_units = {0};
    p.packed = {0};
    p.dependencies = {0};
    p.first_dependent = {0, 0};
    return p;
}

/// Ranks placed so that rank 0 and the last rank are `c` apart (every other rank on a node of
/// its own between them: across a switch takes nodes_per_switch + 1 nodes).
Placement placement_at(DistanceClass c, const Machine& machine) {
    switch (c) {
        case DistanceClass::socket: return Placement::from_lists({0, 0}, {0, 0}, "lower bound: one socket");
        case DistanceClass::node: return Placement::from_lists({0, 0}, {0, 1}, "lower bound: one node");
        case DistanceClass::leaf: return Placement::from_lists({0, 1}, {0, 0}, "lower bound: one leaf switch");
        case DistanceClass::network: break;
    }
    const std::uint32_t nodes = std::max(2U, machine.nodes_per_switch + 1);
    std::vector<std::uint32_t> node(nodes);
    for (std::uint32_t r = 0; r < nodes; ++r) node[r] = r;
    return Placement::from_lists(std::move(node), std::vector<std::uint32_t>(nodes, 0), "lower bound: two switches");
}

/// Whether two ranks can be `c` apart on the machine (leaf: only with two nodes or more per switch).
bool possible(DistanceClass c, const Machine& machine) {
    return c != DistanceClass::leaf || machine.nodes_per_switch >= 2;
}

/// allgather: per node, the outside sources it takes in (each once) and its own sources with a
/// destination outside (each sent out once).
std::vector<std::pair<std::uint64_t, std::uint64_t>> allgather_blocks(const SimProgram& program,
                                                                      const Placement& placement) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks(placement.num_nodes());
    std::vector<std::uint64_t> taken;  // node × ranks + source, for outside sources
    std::vector<bool> leaves(program.num_ranks, false);
    const std::uint64_t ranks = program.num_ranks;
    for (std::uint32_t v = 0; v < program.num_ranks; ++v) {
        for (auto e = program.first_in_edge[v]; e < program.first_in_edge[v + 1]; ++e) {
            const auto u = program.in_edge_source[e];
            if (placement.same_node(u, v)) continue;
            taken.push_back(placement.node(v) * ranks + u);
            leaves[u] = true;
        }
    }
    std::sort(taken.begin(), taken.end());
    taken.erase(std::unique(taken.begin(), taken.end()), taken.end());
    for (const auto key : taken) ++blocks[key / ranks].first;
    for (std::uint32_t u = 0; u < program.num_ranks; ++u) {
        if (leaves[u]) ++blocks[placement.node(u)].second;
    }
    return blocks;
}

/// alltoall: every edge between two nodes is a block of its own, in at one and out at the other.
std::vector<std::pair<std::uint64_t, std::uint64_t>> alltoall_blocks(const SimProgram& program,
                                                                     const Placement& placement) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks(placement.num_nodes());
    for (std::uint32_t v = 0; v < program.num_ranks; ++v) {
        for (auto e = program.first_in_edge[v]; e < program.first_in_edge[v + 1]; ++e) {
            const auto u = program.in_edge_source[e];
            if (placement.same_node(u, v)) continue;
            ++blocks[placement.node(v)].first;
            ++blocks[placement.node(u)].second;
        }
    }
    return blocks;
}

}  // namespace

TopologyLoad topology_load(const SimProgram& program, const Placement& placement, const Machine& machine) {
    if (program.first_in_edge.size() != std::size_t{program.num_ranks} + 1) {
        throw std::invalid_argument("the lower bound needs the pattern's topology (a program built by hand has none)");
    }
    TopologyLoad load;
    for (std::uint32_t v = 0; v < program.num_ranks; ++v) {
        for (auto e = program.first_in_edge[v]; e < program.first_in_edge[v + 1]; ++e) {
            const auto u = program.in_edge_source[e];
            if (u == v) continue;
            load.any_edge = true;
            load.farthest = std::max(load.farthest, machine.distance(placement, u, v));
        }
    }
    const auto blocks = program.collective == Collective::allgather ? allgather_blocks(program, placement)
                                                                    : alltoall_blocks(program, placement);
    for (std::uint32_t n = 0; n < blocks.size(); ++n) {
        const auto most = std::max(blocks[n].first, blocks[n].second);
        if (most > load.node_blocks) {
            load.node_blocks = most;
            load.busiest_node = n;
        }
    }
    return load;
}

std::uint64_t busiest_nic_blocks(const SimProgram& program, const Placement& placement) {
    std::vector<std::uint64_t> out(placement.num_nodes(), 0), in(placement.num_nodes(), 0);
    for (std::uint64_t i = 0; i < program.num_messages(); ++i) {
        const auto from = placement.node(program.src[i]), to = placement.node(program.dst[i]);
        if (from == to) continue;
        out[from] += program.units[i];
        in[to] += program.units[i];
    }
    std::uint64_t most = 0;
    for (std::size_t n = 0; n < out.size(); ++n) most = std::max({most, out[n], in[n]});
    return most;
}

LowerBound lower_bound(const TopologyLoad& load, const Machine& machine, Collective collective,
                       std::uint64_t block_bytes) {
    LowerBound bound;
    if (!load.any_edge) return bound;  // only self-loops, or no edge: nothing crosses between ranks
    double least = std::numeric_limits<double>::infinity();
    for (auto c = static_cast<std::size_t>(load.farthest); c < kDistanceClasses; ++c) {
        const auto klass = static_cast<DistanceClass>(c);
        if (!possible(klass, machine)) continue;
        const auto placement = placement_at(klass, machine);
        const auto one = one_message(placement.num_ranks(), collective);
        least = std::min(least, simulate(one, machine, placement, block_bytes).latency_us);
    }
    bound.latency_us = least;
    bound.bytes_us =
        static_cast<double>(load.node_blocks) * static_cast<double>(block_bytes) * machine.nic_byte_ps * 1e-6;
    return bound;
}

}  // namespace nbr::simulator
