// What each message of a simulated program costs on a machine at one block size: the part of
// the simulator every other part reads (docs/simulate.md, "The model, exactly").
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator::internal {

using Time = std::int64_t;  ///< simulated time in picoseconds
constexpr Time kUnknown = -1;

inline Time ps(double value) {
    return static_cast<Time>(std::llround(value));
}

/// @brief The optional parts of the network model a machine states, chosen once per
/// simulation: fair sharing of the receiving and the sending NIC (else first come, first
/// served), contention on the leaf switches' uplinks, per-pair eager buffers.
struct NetworkModels {
    bool fair_nic_in = false;
    bool fair_nic_out = false;
    bool uplinks = false;
    bool eager_buffers = false;

    [[nodiscard]] static NetworkModels of(const Machine& machine);
};

/// @brief Per message of a program: its bytes and size header at the block size, its distance
/// class with that class's costs, and the times derived from them (latency, time through a
/// NIC or an uplink, copies); also the two whole-program figures built from them, the serial
/// bound and a message's unloaded time.
class MessageCosts {
public:
    MessageCosts(const SimProgram& program, const Machine& machine, const Placement& placement, std::uint64_t block,
                 NetworkModels models);

    [[nodiscard]] const std::vector<DistanceClass>& classes() const noexcept { return class_of_; }
    [[nodiscard]] DistanceClass class_of(std::uint32_t i) const { return class_of_[i]; }
    [[nodiscard]] const LinkCost& cost(std::uint32_t i) const { return machine_.cost(class_of_[i]); }
    [[nodiscard]] bool off_node(std::uint32_t i) const { return class_of_[i] >= DistanceClass::leaf; }
    /// Through the leaf switches' uplinks (machines with uplinks, other leaf).
    [[nodiscard]] bool via_uplinks(std::uint32_t i) const {
        return models_.uplinks && class_of_[i] == DistanceClass::network;
    }
    [[nodiscard]] std::uint64_t bytes(std::uint32_t i) const { return std::uint64_t{program_.units[i]} * block_; }
    /// v-variants: the size header sent ahead of a staged message (one uint64 per block).
    [[nodiscard]] std::uint64_t header_bytes(std::uint32_t i) const {
        return program_.size_headers && program_.packed[i] ? std::uint64_t{program_.units[i]} * sizeof(std::uint64_t)
                                                           : 0;
    }
    /// A copy of `blocks` blocks, `b` bytes in all (packing or unpacking).
    [[nodiscard]] double copy_ps(std::uint64_t b, std::uint32_t blocks) const {
        return copy_byte_ps_ * static_cast<double>(b) + machine_.copy_block_ps * static_cast<double>(blocks);
    }
    /// L of message i's class at its size.
    [[nodiscard]] Time latency(std::uint32_t i) const { return ps(cost(i).latency_and_byte_ps(bytes(i)).first); }
    /// Time a message occupies a NIC: a message never crosses the NIC faster than its class's
    /// byte time (measured point to point, through the NIC) allows.
    [[nodiscard]] Time nic_transfer(std::uint32_t i) const;
    /// Time one message takes through one uplink, and the time it occupies its leaf's uplinks
    /// (shared by uplinks_per_switch of them).
    [[nodiscard]] std::pair<Time, Time> uplink_transfer(std::uint32_t i) const;

    /// Every stage of every message and every call, one after another: no simulated time can
    /// be later (each event waits only for earlier stages and for resources busy with them).
    [[nodiscard]] double serial_bound_ps() const;
    /// How long message i takes from its post (with rendezvous: from the answer) to its
    /// arrival, or with `tail` to its tail leaving the sender (its rank, or its NIC), with
    /// nothing else on its way (the critical path's queued time is the rest).
    [[nodiscard]] Time unloaded(std::uint32_t i, bool tail) const;

private:
    const SimProgram& program_;
    const Machine& machine_;
    std::uint64_t block_;
    NetworkModels models_;
    double copy_byte_ps_;  ///< the machine's copy per byte at this block size
    std::vector<DistanceClass> class_of_;
};

}  // namespace nbr::simulator::internal
