// The hierarchical pattern's radices from a machine model: a closed-form LogGOPS estimate of
// Bruck rounds per level, minimized over the radix.
#include "nbr/compiler/radix_model.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace nbr::compiler {

namespace {

constexpr double kPsPerUs = 1e6;

/// One round: `messages` messages of `message_bytes` each way per member, carrying `blocks`
/// blocks of `block_bytes` in all (ps).
double round_ps(const simulator::Machine& machine, const Level& level, double messages, double message_bytes,
                double blocks, std::uint64_t block_bytes) {
    const auto& c = machine.cost(level.link);
    const auto bytes = static_cast<std::uint64_t>(std::ceil(message_bytes));
    const auto [latency, byte] = c.latency_and_byte_ps(bytes);
    const double per_send = c.send_overhead_at(bytes) + message_bytes * c.send_byte_ps;
    const double injection = c.concurrent_injection ? 0.0 : c.gap_ps + message_bytes * byte;
    double sends = messages * std::max(per_send, injection);
    if (level.nic_senders > 0) {
        const double nic = level.nic_senders * messages * (machine.nic_gap_ps + message_bytes * machine.nic_byte_ps);
        sends = std::max(sends, nic);
    }
    const double receives = messages * (c.recv_overhead_at(bytes) + message_bytes * c.recv_byte_ps + c.post_recv_ps);
    // Packed, then unpacked: each byte at the copy rate of its block size, each block's own cost.
    const double copies =
        2.0 * (messages * message_bytes * machine.copy_byte_ps_at(block_bytes) + blocks * machine.copy_block_ps);
    const double handshake = bytes > c.eager_limit ? 2.0 * latency : 0.0;
    return sends + latency + message_bytes * byte + handshake + receives + copies;
}

std::string radix_text(std::uint32_t radix, std::uint32_t members) {
    if (radix >= members) return "in one round";
    return "radix " + std::to_string(radix) + " (" + std::to_string(bruck_rounds(members, radix)) + " rounds)";
}

}  // namespace

std::uint32_t bruck_rounds(std::uint64_t n, std::uint64_t radix) {
    std::uint32_t rounds = 0;
    for (std::uint64_t reach = 1; reach < n; reach *= radix) ++rounds;
    return rounds;
}

LevelLoads level_loads(const Topology& topology, const Placement& placement) {
    placement.require_ranks(topology.num_ranks(), "the radix model");
    LevelLoads loads;
    loads.largest_node = std::max(placement.max_ranks_per_node(), 1U);
    loads.largest_socket = std::max(placement.max_ranks_per_socket(), 1U);
    loads.nodes = std::max(placement.num_nodes(), 1U);
    std::uint64_t items = 0;
    std::uint64_t off_node = 0;
    std::uint64_t stops = 0;
    std::uint64_t nodes = 0;
    std::vector<std::uint32_t> ranks_here;
    std::vector<std::uint32_t> nodes_there;
    for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) {
        ranks_here.clear();
        nodes_there.clear();
        for (const std::uint32_t d : topology.out_neighbors(r)) {
            if (d == r) continue;
            ++items;
            if (placement.same_node(r, d)) {
                ranks_here.push_back(d);
            } else {
                ++off_node;
                nodes_there.push_back(placement.node(d));
            }
        }
        const auto distinct = [](std::vector<std::uint32_t>& v) {
            std::sort(v.begin(), v.end());
            return static_cast<std::uint64_t>(std::unique(v.begin(), v.end()) - v.begin());
        };
        const std::uint64_t other_nodes = distinct(nodes_there);
        nodes += other_nodes;
        stops += std::min<std::uint64_t>(distinct(ranks_here) + other_nodes, loads.largest_node - 1);
    }
    const double ranks = std::max<double>(topology.num_ranks(), 1.0);
    loads.items_per_rank = static_cast<double>(items) / ranks;
    loads.off_node_items_per_rank = static_cast<double>(off_node) / ranks;
    loads.stops_in_node_per_rank = static_cast<double>(stops) / ranks;
    loads.nodes_per_rank = static_cast<double>(nodes) / ranks;
    return loads;
}

double bruck_rounds_us(const simulator::Machine& machine, const Level& level, std::uint32_t radix,
                       std::uint64_t bytes) {
    if (radix < 2) throw std::invalid_argument("bruck_rounds_us: the radix must be at least 2");
    double total = 0;
    const std::uint32_t rounds = bruck_rounds(level.members, radix);
    std::uint64_t place = 1;
    for (std::uint32_t t = 0; t < rounds; ++t, place *= radix) {
        // Digit t takes values 0..values-1 over the members; items spread evenly over them.
        const auto span = (level.members + place - 1) / place;
        const double values = static_cast<double>(std::min<std::uint64_t>(radix, span));
        double messages = values - 1;
        if (level.stops > 0) {
            // A holder carries the blocks of up to `place` members by now, each with its own stops.
            const double stops = std::min(level.stops * static_cast<double>(place), level.members - 1.0);
            messages *= 1.0 - std::pow(1.0 - 1.0 / values, stops);
        }
        if (messages <= 0) continue;
        const double moving = level.items * (values - 1) / values;
        total += round_ps(machine, level, messages, moving / messages * static_cast<double>(bytes), moving, bytes);
    }
    return total / kPsPerUs;
}

ModelRadices model_radices(const simulator::Machine& machine, const LevelLoads& loads, std::uint64_t bytes) {
    const auto best = [&](const Level& level, double& us) {
        std::uint32_t chosen = std::max(level.members, 2U);
        us = bruck_rounds_us(machine, level, chosen, bytes);
        for (std::uint32_t r = 2; r < level.members; ++r) {
            const double t = bruck_rounds_us(machine, level, r, bytes);
            if (t < us) {
                us = t;
                chosen = r;
            }
            if (bruck_rounds(level.members, r) == 1) break;  // larger radices: the same single round
        }
        return chosen;
    };
    const Level intra{
        loads.largest_node, loads.items_per_rank,
        loads.largest_node > loads.largest_socket ? simulator::DistanceClass::node : simulator::DistanceClass::socket,
        0, loads.stops_in_node_per_rank};
    const Level across{loads.nodes, loads.off_node_items_per_rank, simulator::DistanceClass::network,
                       loads.largest_node, loads.nodes_per_rank};
    ModelRadices out;
    out.intra_radix = best(intra, out.intra_us);
    const std::uint32_t node_radix = best(across, out.across_us);
    out.node_radix = node_radix >= loads.nodes ? 0 : node_radix;
    return out;
}

std::string resolve_model_radices(AlgorithmOptions& options, const Topology& topology,
                                  const simulator::Machine& machine) {
    if (!options.intra_radix_from_machine && !options.node_radix_from_machine) return {};
    if (!options.placement) throw std::invalid_argument("the radices from the machine model need a placement");
    const bool by_socket = options.aggregate_by == AggregateBy::socket;
    const auto loads = by_socket ? level_loads(topology, options.placement->socket_groups())
                                 : level_loads(topology, *options.placement);
    const char* groups = by_socket ? " sockets" : " nodes";
    const auto chosen = model_radices(machine, loads, options.model_bytes);
    const bool both = options.intra_radix_from_machine && options.node_radix_from_machine;
    std::ostringstream note;
    note << std::fixed << std::setprecision(2) << "radices from the machine model (" << machine.name << ", "
         << options.model_bytes << " B per block):";
    if (options.intra_radix_from_machine) {
        const bool one_round = chosen.intra_radix >= loads.largest_node;
        options.intra_node = one_round ? IntraNode::direct : IntraNode::bruck;
        options.intra_radix = one_round ? 2 : chosen.intra_radix;
        note << " inside" << groups << " of up to " << loads.largest_node << " ranks "
             << (one_round ? "directly, in one round" : radix_text(chosen.intra_radix, loads.largest_node)) << ", "
             << chosen.intra_us << " µs a phase";
        options.intra_radix_from_machine = false;
    }
    if (options.node_radix_from_machine) {
        options.node_radix = chosen.node_radix;
        note << (both ? ";" : "") << " across " << loads.nodes << groups << " "
             << radix_text(chosen.node_radix == 0 ? loads.nodes : chosen.node_radix, loads.nodes) << ", "
             << chosen.across_us << " µs";
        if (options.across_nodes != AcrossNodes::cube) note << ", used with --across-nodes cube";
        options.node_radix_from_machine = false;
    }
    return note.str();
}

}  // namespace nbr::compiler
