#pragma once

// Helpers for the unit tests that build machine files by hand (test_calibrate, test_simulate,
// test_simulate_noise).
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "nbr_machine.pb.h"

namespace nbr::test {

/// @brief Appends libnbr's copy rate per block size to `machine`: one
/// (block_bytes, ns_per_byte) pair per entry, in the order given.
inline void add_copy_rates(schema::Machine& machine, std::initializer_list<std::pair<std::uint64_t, double>> rates) {
    for (const auto& [bytes, ns] : rates) {
        auto* rate = machine.add_copy_rates();
        rate->set_block_bytes(bytes);
        rate->set_ns_per_byte(ns);
    }
}

/// @brief A distance class of round numbers: latency, send and receive overheads (µs), byte time (ns).
inline schema::LinkClass round_link(double latency_us, double os_us, double or_us, double byte_ns) {
    schema::LinkClass c;
    c.set_latency_us(latency_us);
    c.set_send_overhead_us(os_us);
    c.set_recv_overhead_us(or_us);
    c.set_byte_time_ns(byte_ns);
    return c;
}

/// @brief The hand-computed tests' machine: L = 1 us, o_s = 0.5 us, o_r = 0.25 us, G = 1 ns/B
/// in every class; copies 0.5 ns/B; NIC 2 ns/B with a 0.1 us gap; nodes of 2 ranks.
inline schema::Machine round_machine() {
    schema::Machine m;
    m.set_format_version(1);
    m.set_name("test");
    m.set_ranks_per_node(2);
    m.set_ranks_per_socket(2);
    m.set_copy_ns_per_byte(0.5);
    *m.mutable_socket() = round_link(1, 0.5, 0.25, 1);
    *m.mutable_node() = round_link(1, 0.5, 0.25, 1);
    *m.mutable_network() = round_link(1, 0.5, 0.25, 1);
    m.mutable_nic()->set_gap_us(0.1);
    m.mutable_nic()->set_byte_time_ns(2);
    return m;
}

}  // namespace nbr::test
