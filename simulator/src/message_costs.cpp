#include "message_costs.hpp"

#include <algorithm>

namespace nbr::simulator::internal {

namespace {

bool has_eager_buffer(const Machine& m) {
    return std::any_of(m.link.begin(), m.link.end(), [](const LinkCost& c) { return c.eager_buffer > 0; });
}

}  // namespace

NetworkModels NetworkModels::of(const Machine& machine) {
    return {machine.nic_sharing == NicSharing::fair, machine.nic_send_sharing == NicSharing::fair,
            machine.uplinks_per_switch > 0, has_eager_buffer(machine)};
}

MessageCosts::MessageCosts(const SimProgram& program, const Machine& machine, const Placement& placement,
                           std::uint64_t block, NetworkModels models)
    : program_(program),
      machine_(machine),
      block_(block),
      models_(models),
      copy_byte_ps_(machine.copy_byte_ps_at(block)),
      class_of_(program.num_messages()) {
    for (std::uint64_t i = 0; i < program.num_messages(); ++i)
        class_of_[i] = machine.distance(placement, program.src[i], program.dst[i]);
}

Time MessageCosts::nic_transfer(std::uint32_t i) const {
    const auto b = bytes(i);
    const auto h = header_bytes(i);
    const double byte = std::max(machine_.nic_byte_ps, cost(i).latency_and_byte_ps(b).second);
    return ps(byte * static_cast<double>(b + h) + (h > 0 ? machine_.nic_gap_ps : 0.0));
}

std::pair<Time, Time> MessageCosts::uplink_transfer(std::uint32_t i) const {
    const auto b = bytes(i) + header_bytes(i);
    const double byte = std::max(machine_.uplink_byte_ps, cost(i).latency_and_byte_ps(bytes(i)).second);
    const double alone = byte * static_cast<double>(b);
    return {ps(alone), ps((alone + machine_.uplink_gap_ps) / machine_.uplinks_per_switch)};
}

double MessageCosts::serial_bound_ps() const {
    const double wake =
        machine_.switch_ps * static_cast<double>(program_.num_ranks);  // (k - 1) switches, k ranks at most
    double total = static_cast<double>(program_.num_ranks) * machine_.call_ps;
    for (std::uint32_t i = 0; i < program_.num_messages(); ++i) {
        const LinkCost& c = cost(i);
        const double b = static_cast<double>(bytes(i) + header_bytes(i));
        const auto [latency, byte] = c.latency_and_byte_ps(bytes(i));
        // Twice (a size header or a rendezvous answer besides the payload) the largest
        // overhead any of them pays.
        const double overheads =
            2 * std::max({c.send_overhead_ps, c.send_overhead_at(bytes(i)), c.send_overhead_at(header_bytes(i))}) +
            2 * std::max({c.recv_overhead_ps, c.recv_overhead_at(bytes(i)), c.recv_overhead_at(header_bytes(i))});
        const double cpu = overheads + c.post_recv_ps + c.overflow_recv_ps +
                           (c.send_byte_ps + c.recv_byte_ps + 2 * copy_byte_ps_) * b +
                           machine_.copy_block_ps * (static_cast<double>(program_.units[i]) + program_.unpack_units[i]);
        const double way = 3 * latency + c.gap_ps + byte * b + std::max(0.0, c.ack_after_receive_ps(bytes(i)));
        const double nic = 4 * machine_.nic_gap_ps + 2 * std::max(machine_.nic_byte_ps, byte) * b;
        const double up =
            via_uplinks(i) ? 2 * (machine_.uplink_gap_ps + std::max(machine_.uplink_byte_ps, byte) * b) : 0.0;
        total += cpu + way + nic + up + 2 * wake;
    }
    return total;
}

Time MessageCosts::unloaded(std::uint32_t i, bool tail) const {
    const LinkCost& c = cost(i);
    const auto b = bytes(i);
    const auto h = header_bytes(i);
    const double byte = c.latency_and_byte_ps(b).second;
    const Time start =
        (b > c.eager_limit ? latency(i) : 0) + (h > 0 ? ps(c.gap_ps + byte * static_cast<double>(h)) : 0);
    const Time rank_tail = start + ps(byte * static_cast<double>(b));
    if (!off_node(i)) return tail ? rank_tail : rank_tail + latency(i);
    const Time x = nic_transfer(i);
    const Time gap = ps(machine_.nic_gap_ps);
    const Time out_tail = std::max(start + x + (models_.fair_nic_out ? gap : 0), rank_tail);
    if (tail) return out_tail;
    Time in_aux = models_.fair_nic_out ? rank_tail : out_tail;
    if (via_uplinks(i)) in_aux = std::max(start + uplink_transfer(i).first, in_aux);  // up and down alike
    const Time head = start + latency(i);
    Time arrival = std::max(head + x + (models_.fair_nic_in ? gap : 0), in_aux + latency(i));
    if (models_.fair_nic_out) arrival = std::max(arrival, out_tail + latency(i));
    return arrival;
}

}  // namespace nbr::simulator::internal
