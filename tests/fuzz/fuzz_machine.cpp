// Fuzz target: machine files (JSON). Any input either parses into a machine or throws
// MachineError naming the file; a machine that parses simulates a small program (8 ranks in a
// ring each way, plus a rank with a message to itself and to the far side) at three sizes on
// its default placement, which completes or throws std::runtime_error (the simulator's range).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "nbr/graphs/placement.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/simulate.hpp"

namespace {

/// Each rank sends one block to each ring neighbor; rank 0 also to itself and to rank 4, and
/// rank 4 forwards that block to rank 5 once it has it (a dependent hop).
nbr::simulator::SimProgram small_program() {
    nbr::simulator::SimProgram p;
    constexpr std::uint32_t kRanks = 8;
    p.num_ranks = kRanks;
    auto add = [&](std::uint32_t from, std::uint32_t to, std::uint32_t units, std::uint32_t waits) {
        p.src.push_back(from);
        p.dst.push_back(to);
        p.units.push_back(units);
        p.unpack_units.push_back(units);
        p.packed.push_back(units > 1 ? 1 : 0);
        p.dependencies.push_back(waits);
    };
    std::uint32_t relayed = 0, relay = 0;
    for (std::uint32_t r = 0; r < kRanks; ++r) {
        p.first_message.push_back(p.src.size());
        add(r, (r + 1) % kRanks, 1, 0);
        add(r, (r + kRanks - 1) % kRanks, 1, 0);
        if (r == 0) {
            add(0, 0, 1, 0);
            relayed = static_cast<std::uint32_t>(p.src.size());
            add(0, 4, 2, 0);
        }
        if (r == 4) {
            relay = static_cast<std::uint32_t>(p.src.size());
            add(4, 5, 2, 1);
        }
    }
    p.first_message.push_back(p.src.size());
    for (std::uint32_t i = 0; i < p.num_messages(); ++i) {
        p.first_dependent.push_back(p.dependents.size());
        if (i == relayed) p.dependents.push_back(relay);
    }
    p.first_dependent.push_back(p.dependents.size());
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    nbr::simulator::Machine machine;
    try {
        machine = nbr::simulator::parse_machine(text, "fuzz.json");
    } catch (const nbr::simulator::MachineError& error) {
        if (std::string(error.what()).rfind("fuzz.json", 0) != 0) std::abort();  // must name the file
        return 0;
    }
    static const auto program = small_program();
    const auto placement = nbr::Placement::block(program.num_ranks, machine.ranks_per_node, machine.ranks_per_socket);
    for (const std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{5000}, std::uint64_t{1} << 20}) {
        try {
            const auto result = nbr::simulator::simulate(program, machine, placement, bytes);
            if (!(result.latency_us >= 0) || result.messages != program.num_messages()) std::abort();
        } catch (const std::runtime_error&) {
        }
    }
    return 0;
}
