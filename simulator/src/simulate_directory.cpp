// nbrc simulate's work: a pattern directory (and a baseline) simulated at several sizes.
#include <chrono>

#include <sys/resource.h>

#include "nbr/graphs/topology.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_memory_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

}  // namespace

SimReport simulate_directory(const SimRequest& request, const Machine& machine,
                             const std::function<Placement(std::uint32_t)>& place) {
    SimReport report;
    const auto start = std::chrono::steady_clock::now();
    const auto program = load_program(request.pattern, request.collective);
    report.load_seconds = seconds_since(start);
    const auto placement = place(program.num_ranks);
    report.pattern = request.pattern.string();
    report.algorithm = program.algorithm;
    report.collective = request.collective;
    report.ranks = program.num_ranks;
    report.messages = program.num_messages();
    report.machine = machine.name;
    report.placement = placement.description();
    report.nodes = placement.num_nodes();
    for (const auto size : request.sizes) report.results.push_back(simulate(program, machine, placement, size));
    if (!request.baseline.empty()) {
        const auto baseline = load_program(request.baseline, request.collective);
        if (baseline.num_ranks != program.num_ranks) {
            throw InputError("--baseline " + request.baseline.string() + " has " +
                             std::to_string(baseline.num_ranks) + " ranks, " + request.pattern.string() + " " +
                             std::to_string(program.num_ranks));
        }
        report.baseline = request.baseline.string();
        report.baseline_algorithm = baseline.algorithm;
        report.baseline_messages = baseline.num_messages();
        for (const auto size : request.sizes) {
            report.baseline_results.push_back(simulate(baseline, machine, placement, size));
        }
    }
    report.peak_memory_mib = peak_memory_mib();
    return report;
}

}  // namespace nbr::simulator
