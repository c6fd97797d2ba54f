#pragma once

// Helpers for the unit tests that build machine files by hand (test_calibrate, test_simulate).
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "nbr_machine.pb.h"

namespace nbr::test {

/// @brief Appends libnbr's copy rate per block size to `machine` (format 11): one
/// (block_bytes, ns_per_byte) pair per entry, in the order given.
inline void add_copy_rates(schema::Machine& machine, std::initializer_list<std::pair<std::uint64_t, double>> rates) {
    for (const auto& [bytes, ns] : rates) {
        auto* rate = machine.add_copy_rates();
        rate->set_block_bytes(bytes);
        rate->set_ns_per_byte(ns);
    }
}

}  // namespace nbr::test
