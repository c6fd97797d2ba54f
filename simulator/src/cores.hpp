// The simulator's CPUs: which core each rank runs on, when each core is free, and how long an
// arrival waits for a rank sharing its core (docs/simulate.md, "Shared cores").
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "message_costs.hpp"
#include "nbr/simulator/machine.hpp"

namespace nbr::simulator::internal {

/// @brief Each rank's core: its own, or with `cores_per_node`, local rank i of a node on the
/// node's core i mod cores_per_node. Cores are numbered densely over the cores in use (a
/// node's first min(cores_per_node, its ranks)), so there are at most as many as ranks. A
/// rank woken by an arrival waits (k - 1) switches with k ranks on its core.
class Cores {
public:
    Cores(const Machine& machine, const Placement& placement)
        : core_(cores_of(machine, placement)),
          free_(core_.empty() ? 0 : *std::max_element(core_.begin(), core_.end()) + 1, 0),
          wake_(wake_delays(machine, core_, free_.size())) {}

    [[nodiscard]] std::size_t count() const noexcept { return free_.size(); }
    /// @brief The core `rank` runs on.
    [[nodiscard]] std::uint32_t of(std::uint32_t rank) const { return core_[rank]; }
    /// @brief When the core of `rank` is free: the caller moves it on as it uses the core.
    [[nodiscard]] Time& free(std::uint32_t rank) { return free_[core_[rank]]; }
    /// @brief How long an arrival waits for `rank` to get its core back.
    [[nodiscard]] Time wake(std::uint32_t rank) const { return wake_[rank]; }
    [[nodiscard]] const std::vector<Time>& wakes() const noexcept { return wake_; }

private:
    static std::vector<std::uint32_t> cores_of(const Machine& m, const Placement& place) {
        std::vector<std::uint32_t> core(place.num_ranks());
        if (m.cores_per_node == 0) {
            std::iota(core.begin(), core.end(), 0U);
            return core;
        }
        std::vector<std::uint32_t> ranks(place.num_nodes(), 0);
        for (std::uint32_t r = 0; r < place.num_ranks(); ++r) ++ranks[place.node(r)];
        std::vector<std::uint32_t> used(place.num_nodes()), first(place.num_nodes());  // cores in use, first one
        std::uint32_t next = 0;
        for (std::uint32_t node = 0; node < place.num_nodes(); ++node) {
            used[node] = std::min(ranks[node], m.cores_per_node);
            first[node] = next;
            next += used[node];
        }
        std::vector<std::uint32_t> local(place.num_nodes(), 0);
        for (std::uint32_t r = 0; r < place.num_ranks(); ++r) {
            const auto node = place.node(r);
            core[r] = first[node] + local[node]++ % used[node];
        }
        return core;
    }

    static std::vector<Time> wake_delays(const Machine& m, const std::vector<std::uint32_t>& core, std::size_t cores) {
        std::vector<std::uint32_t> sharing(cores, 0);
        for (const auto c : core) ++sharing[c];
        std::vector<Time> wake(core.size());
        for (std::size_t r = 0; r < core.size(); ++r) wake[r] = ps(m.switch_ps * (sharing[core[r]] - 1));
        return wake;
    }

    std::vector<std::uint32_t> core_;  // per rank
    std::vector<Time> free_;           // per core
    std::vector<Time> wake_;           // per rank
};

}  // namespace nbr::simulator::internal
