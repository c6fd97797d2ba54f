// The hierarchical pattern's radices per level from a machine model (docs/algorithms.md,
// "Radices from the machine model").
#pragma once

#include <cstdint>
#include <string>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/simulator/machine.hpp"

namespace nbr::compiler {

/// @brief What the hierarchical pattern's levels carry, counted for alltoall (one block per
/// edge): the shape of the placement and the mean blocks a rank holds.
struct LevelLoads {
    std::uint32_t largest_node = 1;      ///< ranks of the largest node: the Bruck rounds' n
    std::uint32_t largest_socket = 1;    ///< ranks of the largest socket
    std::uint32_t nodes = 1;             ///< nodes with ranks: the cube's m
    double items_per_rank = 0;           ///< mean out-degree (self-loops excluded)
    double off_node_items_per_rank = 0;  ///< mean out-edges to another node
    /// mean distinct next stops of a rank's blocks inside its node: the other ranks of its node
    /// it sends to, plus the other nodes it sends to (each a forwarder), at most the node's ranks − 1
    double stops_in_node_per_rank = 0;
    double nodes_per_rank = 0;  ///< mean distinct other nodes a rank sends to
};

/// @brief Counts the loads of `topology` on `placement` (one pass over the edges).
[[nodiscard]] LevelLoads level_loads(const Topology& topology, const Placement& placement);

/// @brief Bruck's rounds of radix `radix` (≥ 2) over `n` members: ⌈log_radix n⌉, 0 for one member.
[[nodiscard]] std::uint32_t bruck_rounds(std::uint64_t n, std::uint64_t radix);

/// @brief A level of the hierarchy as the estimate sees it.
struct Level {
    std::uint32_t members = 1;  ///< ranks (inside a node) or nodes (across) routed over
    double items = 0;           ///< blocks each member holds, on average
    simulator::DistanceClass link = simulator::DistanceClass::node;
    std::uint32_t nic_senders = 0;  ///< ranks whose messages share one NIC per round (0: none)
    /// distinct places a member's own blocks go (0: every digit value taken): a round sends one
    /// message per nonzero digit value its blocks' distances take, expected as for uniform
    /// distances to the places of the members whose blocks it holds by then (up to r^t of them)
    double stops = 0;
};

/// @brief Estimated time in µs of Bruck's ⌈log_r n⌉ rounds of radix `radix` over a level, with
/// blocks of `bytes`: per round, a member sends one message per nonzero digit value its items
/// take (all of them, or the expected number for `level.stops` places), each with its share of
/// the items that move, and receives as many; LogGOPS costs of the level's distance class,
/// packing and unpacking at the machine's copy rate, a rendezvous round trip above the eager
/// limit, and the NIC's gap and byte time for all its senders across nodes. A closed form for
/// choosing a radix, not a simulation: the dependencies between ranks and the imbalance of
/// real graphs are not in it.
[[nodiscard]] double bruck_rounds_us(const simulator::Machine& machine, const Level& level, std::uint32_t radix,
                                     std::uint64_t bytes);

/// @brief The radices the estimate finds fastest at `bytes` per block.
struct ModelRadices {
    std::uint32_t intra_radix = 2;  ///< Bruck rounds inside the node; ≥ largest node: one round (direct)
    std::uint32_t node_radix = 0;   ///< cube of nodes; 0: every node in one round
    double intra_us = 0;            ///< the estimate at that radix, one phase inside the node
    double across_us = 0;           ///< the estimate at that radix, across nodes
};

/// @brief Per level, the radix in [2, members] with the smallest bruck_rounds_us (the smallest on
/// ties); a radix that reaches every member in one round is reported as one round.
[[nodiscard]] ModelRadices model_radices(const simulator::Machine& machine, const LevelLoads& loads,
                                         std::uint64_t bytes);

/// @brief Replaces the radices `options` asks to take from the machine (`--radix machine`,
/// `--node-radix machine`) by model_radices at `options.model_bytes`; with `--radix machine`
/// the model also chooses between Bruck rounds and direct hand-off and delivery. Needs the
/// placement. Returns a note saying what was chosen (empty when nothing was asked).
/// @throws std::invalid_argument without a placement.
std::string resolve_model_radices(AlgorithmOptions& options, const Topology& topology,
                                  const simulator::Machine& machine);

}  // namespace nbr::compiler
