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

Plan build_plan(const schema::RankPattern& pattern, Collective collective) {
    Plan plan;
    plan.collective = collective;
    const std::uint32_t me = pattern.rank();
    const auto out_degree = static_cast<std::uint32_t>(pattern.out_neighbors_size());

    // (origin, slot) of every in-edge -> in-slot.
    std::unordered_map<std::uint64_t, std::uint32_t> in_slot;
    in_slot.reserve(static_cast<std::size_t>(pattern.in_neighbors_size()) * 2);
    for (int j = 0; j < pattern.in_neighbors_size(); ++j) {
        if (!in_slot.emplace(key(pattern.in_neighbors(j), pattern.in_source_slots(j)), static_cast<std::uint32_t>(j))
                 .second) {
            throw PlanError("in-edges " + std::to_string(j) + " and an earlier one name the same edge");
        }
    }
    std::vector<char> delivered(static_cast<std::size_t>(pattern.in_neighbors_size()), 0);

    // Unit ids: allgather keys by origin, alltoall by (origin, slot).
    std::unordered_map<std::uint64_t, std::uint32_t> unit_of;
    unit_of.reserve(static_cast<std::size_t>(pattern.in_neighbors_size() + out_degree) * 2);
    std::vector<std::uint32_t> home_step;  // step at which a unit becomes available
    auto unit_key = [&](std::uint32_t origin, std::uint32_t slot) {
        return collective == Collective::allgather ? key(origin, 0) : key(origin, slot);
    };
    auto unit_id = [&](std::uint64_t k) {
        auto [it, inserted] = unit_of.try_emplace(k, static_cast<std::uint32_t>(plan.homes.size()));
        if (inserted) {
            plan.homes.emplace_back();
            home_step.push_back(std::numeric_limits<std::uint32_t>::max());
        }
        return it->second;
    };
    // Own units are available from the start.
    auto own_unit = [&](std::uint32_t slot) {
        const std::uint32_t u = unit_id(unit_key(me, slot));
        if (home_step[u] != 0) {
            home_step[u] = 0;
            plan.homes[u] = UnitHome{UnitHome::Kind::send_block, collective == Collective::allgather ? 0 : slot, 0, 0};
        }
        return u;
    };

    // Per unit: the last operation (serial number) that carried it and its position there, so
    // that repeated items in one message are found in constant time.
    std::vector<std::uint32_t> seen_in, seen_at;
    std::uint32_t serial = 0;
    auto carried_before = [&](std::uint32_t u) {
        if (u >= seen_in.size()) {
            seen_in.resize(plan.homes.size(), 0);
            seen_at.resize(plan.homes.size(), 0);
        }
        return seen_in[u] == serial;
    };

    std::unordered_map<std::uint32_t, int> send_seq, recv_seq;
    std::vector<std::uint32_t> providers;  // per send: receives it waits for (reused)
    for (int t = 0; t < pattern.steps_size(); ++t) {
        const auto step = static_cast<std::uint32_t>(t);
        const auto& operations = pattern.steps(t).operations();
        // Sends of step t use what arrived before step t: plan them first.
        for (int i = 0; i < operations.size(); ++i) {
            const auto& op = operations[i];
            if (op.kind() != schema::Operation::SEND) continue;
            ++serial;
            SendPlan send;
            send.peer = op.peer();
            send.tag = send_seq[op.peer()]++;
            bool own_only = true;
            bool to_peer = true;
            providers.clear();
            for (int k = 0; k < op.origins_size(); ++k) {
                const std::uint32_t origin = op.origins(k);
                const std::uint32_t slot = op.slots(k);
                std::uint32_t u = 0;
                if (origin == me) {
                    if (slot >= out_degree) {
                        throw PlanError(at(t, i) + ": sends own slot " + std::to_string(slot) + " but the rank has " +
                                        std::to_string(out_degree) + " out-neighbors");
                    }
                    u = own_unit(slot);
                    to_peer = to_peer && pattern.out_neighbors(static_cast<int>(slot)) == op.peer();
                } else {
                    own_only = false;
                    const auto it = unit_of.find(unit_key(origin, slot));
                    if (it == unit_of.end() || home_step[it->second] > step) {
                        throw PlanError(at(t, i) + ": sends item (" + std::to_string(origin) + ", " +
                                        std::to_string(slot) + ") before receiving it");
                    }
                    u = it->second;
                    providers.push_back(plan.homes[u].provider);
                }
                if (!carried_before(u)) {
                    seen_in[u] = serial;
                    send.units.push_back(u);
                } else if (collective == Collective::alltoall) {
                    throw PlanError(at(t, i) + ": carries an item twice");
                }
            }
            send.direct = own_only && to_peer && send.units.size() == 1;
            std::sort(providers.begin(), providers.end());
            providers.erase(std::unique(providers.begin(), providers.end()), providers.end());
            send.dependencies = static_cast<std::uint32_t>(providers.size());
            send.first = plan.send_units;
            plan.send_units += static_cast<std::uint32_t>(send.units.size());
            if (send.dependencies > 0) plan.independent = false;
            const auto send_index = static_cast<std::uint32_t>(plan.sends.size());
            for (auto r : providers) plan.recvs[r].dependents.push_back(send_index);
            plan.max_tag = std::max(plan.max_tag, send.tag);
            plan.sends.push_back(std::move(send));
        }
        for (int i = 0; i < operations.size(); ++i) {
            const auto& op = operations[i];
            if (op.kind() != schema::Operation::RECV) continue;
            ++serial;
            RecvPlan recv;
            recv.peer = op.peer();
            recv.tag = recv_seq[op.peer()]++;
            const auto recv_index = static_cast<std::uint32_t>(plan.recvs.size());
            bool from_peer_to_me = true;
            for (int k = 0; k < op.origins_size(); ++k) {
                const std::uint32_t origin = op.origins(k);
                const std::uint32_t slot = op.slots(k);
                const std::uint32_t u = unit_id(unit_key(origin, slot));
                if (!carried_before(u)) {
                    seen_in[u] = serial;
                    seen_at[u] = static_cast<std::uint32_t>(recv.units.size());
                    recv.units.push_back(u);
                } else if (collective == Collective::alltoall) {
                    throw PlanError(at(t, i) + ": carries an item twice");
                }
                const std::uint32_t position = seen_at[u];
                const auto it = in_slot.find(key(origin, slot));
                if (it != in_slot.end()) {
                    if (delivered[it->second]++) {
                        throw PlanError(at(t, i) + ": delivers in-edge " + std::to_string(it->second) + " (from rank " +
                                        std::to_string(origin) + ") a second time");
                    }
                    recv.deliveries.emplace_back(position, it->second);
                } else {
                    from_peer_to_me = false;
                }
                if (origin != op.peer()) from_peer_to_me = false;
            }
            recv.direct = from_peer_to_me && recv.units.size() == 1;
            recv.first = plan.recv_units;
            plan.recv_units += static_cast<std::uint32_t>(recv.units.size());
            if (!recv.direct) plan.staged_recvs = true;
            for (std::uint32_t position = 0; position < recv.units.size(); ++position) {
                const std::uint32_t u = recv.units[position];
                if (home_step[u] != std::numeric_limits<std::uint32_t>::max()) continue;
                home_step[u] = step + 1;
                plan.homes[u] = recv.direct
                                    ? UnitHome{UnitHome::Kind::recv_slot, recv.deliveries[0].second, 0, recv_index}
                                    : UnitHome{UnitHome::Kind::staging, recv_index, position, recv_index};
            }
            plan.max_tag = std::max(plan.max_tag, recv.tag);
            plan.recvs.push_back(std::move(recv));
        }
    }
    for (std::size_t j = 0; j < delivered.size(); ++j) {
        if (!delivered[j]) {
            throw PlanError("in-edge " + std::to_string(j) + " (from rank " +
                            std::to_string(pattern.in_neighbors(static_cast<int>(j))) + ") is never delivered");
        }
    }
    index_direct_operations(plan);
    return plan;
}

}  // namespace nbr::internal
