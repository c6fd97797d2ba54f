#pragma once
// A time no schedule of a topology's collective can beat on a machine model, and how close a
// simulated result comes to it (docs/simulate.md, "Lower bound").

#include <cstdint>

#include "nbr/graphs/placement.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator {

/// @brief What of a topology the bound needs, independent of the block size: the farthest
/// distance class any block must cross, and the node that must take in or send out the most
/// distinct blocks across its NIC.
struct TopologyLoad {
    bool any_edge = false;  ///< an edge between two different ranks
    DistanceClass farthest = DistanceClass::socket;
    std::uint32_t busiest_node = 0;
    std::uint64_t node_blocks = 0;  ///< the busiest node's distinct blocks in or out (the larger)
};

/// @brief The topology's load (SimProgram::first_in_edge, in_edge_source) under a placement:
/// allgather: a node takes in each outside source once and sends out each of its sources once;
/// alltoall: every edge across it is a block of its own.
/// @throws std::invalid_argument if the program carries no topology.
[[nodiscard]] TopologyLoad topology_load(const SimProgram& program, const Placement& placement, const Machine& machine);

/// @brief The most blocks the program's own messages carry through one node's NIC in one
/// direction (out of the node or into it, the larger; messages within a node cross none):
/// with `nic_byte_ps` per byte no run of this program at m bytes per block takes less than
/// this × m × nic_byte_ps, however its messages are ordered or split (segments carry the
/// blocks of the message they split). Self-loops and messages within a node count in neither.
[[nodiscard]] std::uint64_t busiest_nic_blocks(const SimProgram& program, const Placement& placement);

/// @brief The lower bound at one block size (LowerBound, simulate.hpp).
[[nodiscard]] LowerBound lower_bound(const TopologyLoad& load, const Machine& machine, Collective collective,
                                     std::uint64_t block_bytes);

}  // namespace nbr::simulator
