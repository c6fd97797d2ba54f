#include "nbr/plan/plan.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace nbr::internal {

namespace {

std::uint64_t key(std::uint32_t a, std::uint32_t b) {
    return (std::uint64_t{a} << 32) | b;
}

/// Where an operation is, for error messages (built only when one is thrown).
std::string at(int step, int operation) {
    return "step " + std::to_string(step) + " operation " + std::to_string(operation);
}

}  // namespace

namespace {

/// Fills the plan's direct-operation tables when every message is a direct one.
void index_direct_operations(Plan& plan) {
    plan.all_direct = plan.independent;
    for (const RecvPlan& recv : plan.recvs) {
        plan.all_direct = plan.all_direct && recv.direct && recv.deliveries.size() == 1;
    }
    for (const SendPlan& send : plan.sends) plan.all_direct = plan.all_direct && send.direct;
    if (!plan.all_direct) return;
    for (const RecvPlan& recv : plan.recvs) {
        plan.direct_recvs.push_back({static_cast<int>(recv.peer), recv.tag, recv.deliveries[0].second});
    }
    for (const SendPlan& send : plan.sends) {
        plan.direct_sends.push_back({static_cast<int>(send.peer), send.tag, plan.homes[send.units[0]].index});
    }
}

}  // namespace

namespace {

constexpr std::uint32_t kNotYet = std::numeric_limits<std::uint32_t>::max();

/// Builds one rank's plan (build_plan), checking the pattern as it goes: the units and where
/// each one lives, every send's units and the receives it waits for, every receive's units
/// and the in-edges it delivers.
class PlanBuilder {
public:
    PlanBuilder(const schema::RankPattern& pattern, Collective collective)
        : pattern_(pattern),
          collective_(collective),
          me_(pattern.rank()),
          out_degree_(static_cast<std::uint32_t>(pattern.out_neighbors_size())),
          delivered_(static_cast<std::size_t>(pattern.in_neighbors_size()), 0) {
        plan_.collective = collective;
        index_in_edges();
        unit_of_.reserve(static_cast<std::size_t>(pattern.in_neighbors_size() + out_degree_) * 2);
    }

    Plan build() && {
        for (int t = 0; t < pattern_.steps_size(); ++t) {
            const auto& operations = pattern_.steps(t).operations();
            // Sends of step t use what arrived before step t: plan them first.
            for (int i = 0; i < operations.size(); ++i) {
                if (operations[i].kind() == schema::Operation::SEND) plan_send(operations[i], t, i);
            }
            for (int i = 0; i < operations.size(); ++i) {
                if (operations[i].kind() == schema::Operation::RECV) plan_recv(operations[i], t, i);
            }
        }
        check_every_in_edge_delivered();
        index_direct_operations(plan_);
        return std::move(plan_);
    }

private:
    /// (origin, slot) of every in-edge -> in-slot.
    void index_in_edges() {
        in_slot_.reserve(static_cast<std::size_t>(pattern_.in_neighbors_size()) * 2);
        for (int j = 0; j < pattern_.in_neighbors_size(); ++j) {
            const auto edge = key(pattern_.in_neighbors(j), pattern_.in_source_slots(j));
            if (!in_slot_.emplace(edge, static_cast<std::uint32_t>(j)).second) {
                throw PlanError("in-edges " + std::to_string(j) + " and an earlier one name the same edge");
            }
        }
    }

    /// Unit keys: allgather keys by origin, alltoall by (origin, slot).
    [[nodiscard]] std::uint64_t unit_key(std::uint32_t origin, std::uint32_t slot) const {
        return collective_ == Collective::allgather ? key(origin, 0) : key(origin, slot);
    }

    std::uint32_t unit_id(std::uint64_t k) {
        auto [it, inserted] = unit_of_.try_emplace(k, static_cast<std::uint32_t>(plan_.homes.size()));
        if (inserted) {
            plan_.homes.emplace_back();
            home_step_.push_back(kNotYet);
        }
        return it->second;
    }

    /// Own units are available from the start.
    std::uint32_t own_unit(std::uint32_t slot) {
        const std::uint32_t u = unit_id(unit_key(me_, slot));
        if (home_step_[u] != 0) {
            home_step_[u] = 0;
            plan_.homes[u] =
                UnitHome{UnitHome::Kind::send_block, collective_ == Collective::allgather ? 0 : slot, 0, 0};
        }
        return u;
    }

    /// Whether the current operation carried unit `u` already; per unit the last operation
    /// (serial number) that carried it and its position there, so that repeated items in one
    /// message are found in constant time.
    bool carried_before(std::uint32_t u) {
        if (u >= seen_in_.size()) {
            seen_in_.resize(plan_.homes.size(), 0);
            seen_at_.resize(plan_.homes.size(), 0);
        }
        return seen_in_[u] == serial_;
    }

    /// Adds `u` to an operation's units unless it carries it already (allgather: a block
    /// named twice moves once; alltoall: an error).
    void carry(std::uint32_t u, std::vector<std::uint32_t>& units, int t, int i) {
        if (!carried_before(u)) {
            seen_in_[u] = serial_;
            seen_at_[u] = static_cast<std::uint32_t>(units.size());
            units.push_back(u);
        } else if (collective_ == Collective::alltoall) {
            throw PlanError(at(t, i) + ": carries an item twice");
        }
    }

    /// The unit of a sent item that is the rank's own block or arrived in an earlier step.
    std::uint32_t sent_unit(std::uint32_t origin, std::uint32_t slot, int t, int i) {
        if (origin == me_) {
            if (slot >= out_degree_) {
                throw PlanError(at(t, i) + ": sends own slot " + std::to_string(slot) + " but the rank has " +
                                std::to_string(out_degree_) + " out-neighbors");
            }
            return own_unit(slot);
        }
        const auto it = unit_of_.find(unit_key(origin, slot));
        if (it == unit_of_.end() || home_step_[it->second] > static_cast<std::uint32_t>(t)) {
            throw PlanError(at(t, i) + ": sends item (" + std::to_string(origin) + ", " + std::to_string(slot) +
                            ") before receiving it");
        }
        providers_.push_back(plan_.homes[it->second].provider);
        return it->second;
    }

    void plan_send(const schema::Operation& op, int t, int i) {
        ++serial_;
        SendPlan send;
        send.peer = op.peer();
        send.step = static_cast<std::uint32_t>(t);
        send.tag = send_seq_[op.peer()]++;
        bool own_only = true;
        bool to_peer = true;
        providers_.clear();
        for (int k = 0; k < op.origins_size(); ++k) {
            const std::uint32_t origin = op.origins(k);
            const std::uint32_t slot = op.slots(k);
            const std::uint32_t u = sent_unit(origin, slot, t, i);
            own_only = own_only && origin == me_;
            to_peer = to_peer && (origin != me_ || pattern_.out_neighbors(static_cast<int>(slot)) == op.peer());
            carry(u, send.units, t, i);
        }
        send.one_hop = own_only && to_peer;
        send.direct = send.one_hop && send.units.size() == 1;
        std::sort(providers_.begin(), providers_.end());
        providers_.erase(std::unique(providers_.begin(), providers_.end()), providers_.end());
        send.dependencies = static_cast<std::uint32_t>(providers_.size());
        send.first = plan_.send_units;
        plan_.send_units += static_cast<std::uint32_t>(send.units.size());
        if (send.dependencies > 0) plan_.independent = false;
        const auto send_index = static_cast<std::uint32_t>(plan_.sends.size());
        for (auto r : providers_) plan_.recvs[r].dependents.push_back(send_index);
        plan_.max_tag = std::max(plan_.max_tag, send.tag);
        plan_.sends.push_back(std::move(send));
    }

    /// Records that a received item at `position` delivers an in-edge of this rank, if it is
    /// one; false if it is only passing through.
    bool deliver(std::uint32_t origin, std::uint32_t slot, std::uint32_t position, RecvPlan& recv, int t, int i) {
        const auto it = in_slot_.find(key(origin, slot));
        if (it == in_slot_.end()) return false;
        if (delivered_[it->second]++) {
            throw PlanError(at(t, i) + ": delivers in-edge " + std::to_string(it->second) + " (from rank " +
                            std::to_string(origin) + ") a second time");
        }
        recv.deliveries.emplace_back(position, it->second);
        return true;
    }

    void plan_recv(const schema::Operation& op, int t, int i) {
        ++serial_;
        RecvPlan recv;
        recv.peer = op.peer();
        recv.step = static_cast<std::uint32_t>(t);
        recv.tag = recv_seq_[op.peer()]++;
        const auto recv_index = static_cast<std::uint32_t>(plan_.recvs.size());
        bool from_peer_to_me = true;
        for (int k = 0; k < op.origins_size(); ++k) {
            const std::uint32_t origin = op.origins(k);
            const std::uint32_t slot = op.slots(k);
            const std::uint32_t u = unit_id(unit_key(origin, slot));
            carry(u, recv.units, t, i);
            const bool mine = deliver(origin, slot, seen_at_[u], recv, t, i);
            from_peer_to_me = from_peer_to_me && mine && origin == op.peer();
        }
        recv.one_hop = from_peer_to_me;
        recv.direct = recv.one_hop && recv.units.size() == 1;
        recv.first = plan_.recv_units;
        plan_.recv_units += static_cast<std::uint32_t>(recv.units.size());
        if (!recv.direct) plan_.staged_recvs = true;
        for (std::uint32_t position = 0; position < recv.units.size(); ++position) {
            const std::uint32_t u = recv.units[position];
            if (home_step_[u] != kNotYet) continue;
            home_step_[u] = static_cast<std::uint32_t>(t) + 1;
            plan_.homes[u] = recv.direct ? UnitHome{UnitHome::Kind::recv_slot, recv.deliveries[0].second, 0, recv_index}
                                         : UnitHome{UnitHome::Kind::staging, recv_index, position, recv_index};
        }
        plan_.max_tag = std::max(plan_.max_tag, recv.tag);
        plan_.recvs.push_back(std::move(recv));
    }

    void check_every_in_edge_delivered() const {
        for (std::size_t j = 0; j < delivered_.size(); ++j) {
            if (!delivered_[j]) {
                throw PlanError("in-edge " + std::to_string(j) + " (from rank " +
                                std::to_string(pattern_.in_neighbors(static_cast<int>(j))) + ") is never delivered");
            }
        }
    }

    const schema::RankPattern& pattern_;
    const Collective collective_;
    const std::uint32_t me_;
    const std::uint32_t out_degree_;
    Plan plan_;
    std::unordered_map<std::uint64_t, std::uint32_t> in_slot_;  // (origin, slot) of an in-edge -> in-slot
    std::vector<char> delivered_;                               // per in-slot
    std::unordered_map<std::uint64_t, std::uint32_t> unit_of_;  // unit key -> unit
    std::vector<std::uint32_t> home_step_;                      // per unit: the step it is available from
    std::vector<std::uint32_t> seen_in_, seen_at_;              // carried_before
    std::uint32_t serial_ = 0;
    std::unordered_map<std::uint32_t, int> send_seq_, recv_seq_;  // per peer: the next tag
    std::vector<std::uint32_t> providers_;                        // per send: receives it waits for (reused)
};

}  // namespace

Plan build_plan(const schema::RankPattern& pattern, Collective collective) {
    return PlanBuilder(pattern, collective).build();
}

}  // namespace nbr::internal
