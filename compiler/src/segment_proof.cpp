#include "segment_proof.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace nbr::compiler::internal {

namespace {

/// Per receive, the sends it releases, sorted.
std::vector<std::vector<std::uint32_t>> released_by(const nbr::internal::Plan& plan) {
    std::vector<std::vector<std::uint32_t>> released(plan.recvs.size());
    for (std::size_t r = 0; r < plan.recvs.size(); ++r) {
        released[r] = plan.recvs[r].dependents;
        std::sort(released[r].begin(), released[r].end());
    }
    return released;
}

void check_waits(const nbr::internal::Plan& plan, const std::string& where) {
    std::vector<std::uint32_t> waits(plan.sends.size(), 0);
    for (const auto& r : plan.recvs) {
        for (const auto s : r.dependents) ++waits.at(s);
    }
    const auto released = released_by(plan);
    for (std::uint32_t s = 0; s < plan.sends.size(); ++s) {
        const auto& send = plan.sends[s];
        if (waits[s] != send.dependencies) {
            throw std::runtime_error(where + ": send " + std::to_string(s) + " waits for " +
                                     std::to_string(send.dependencies) + " receives, " + std::to_string(waits[s]) +
                                     " release it");
        }
        for (const auto unit : send.units) {
            const auto& home = plan.homes.at(unit);
            if (home.kind == nbr::internal::UnitHome::Kind::send_block) continue;
            const auto& by = released.at(home.provider);
            if (!std::binary_search(by.begin(), by.end(), s)) {
                throw std::runtime_error(where + ": send " + std::to_string(s) + " packs a block of receive " +
                                         std::to_string(home.provider) + " without waiting for it");
            }
        }
    }
}

void check_deliveries(const nbr::internal::Plan& plan, std::uint32_t in_slots, const std::string& where) {
    std::vector<std::uint32_t> delivered(in_slots, 0);
    for (const auto& r : plan.recvs) {
        for (const auto& [position, slot] : r.deliveries) {
            if (slot >= in_slots) throw std::runtime_error(where + ": a delivery to in-slot " + std::to_string(slot));
            ++delivered[slot];
        }
    }
    for (std::uint32_t slot = 0; slot < in_slots; ++slot) {
        if (delivered[slot] != 1) {
            throw std::runtime_error(where + ": in-slot " + std::to_string(slot) + " delivered " +
                                     std::to_string(delivered[slot]) + " times");
        }
    }
}

}  // namespace

void check_segmented_plan(const nbr::internal::Plan& plan, std::uint32_t in_slots, const std::string& where) {
    check_waits(plan, where);
    check_deliveries(plan, in_slots, where);
}

void check_acyclic(const simulator::SimProgram& program, const std::string& where) {
    std::vector<std::uint32_t> waiting(program.dependencies);
    std::vector<std::uint32_t> ready;
    for (std::uint32_t i = 0; i < program.num_messages(); ++i) {
        if (waiting[i] == 0) ready.push_back(i);
    }
    std::uint64_t done = 0;
    while (!ready.empty()) {
        const auto i = ready.back();
        ready.pop_back();
        ++done;
        for (auto k = program.first_dependent[i]; k < program.first_dependent[i + 1]; ++k) {
            if (--waiting[program.dependents[k]] == 0) ready.push_back(program.dependents[k]);
        }
    }
    if (done != program.num_messages()) {
        throw std::runtime_error(where + ": " + std::to_string(program.num_messages() - done) +
                                 " messages wait in a cycle and are never sent");
    }
}

}  // namespace nbr::compiler::internal
