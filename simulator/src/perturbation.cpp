// Noise, skew and execution rules of a simulation: names, descriptions, detour traces.
#include "nbr/simulator/perturbation.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "nbr/graphs/topology.hpp"

namespace nbr::simulator {

const char* to_string(ExecutionRule rule) {
    switch (rule) {
        case ExecutionRule::event: return "event";
        case ExecutionRule::step: return "step";
        case ExecutionRule::bsp: return "bsp";
    }
    return "?";
}

ExecutionRule parse_execution_rule(std::string_view name) {
    for (const auto rule : {ExecutionRule::event, ExecutionRule::step, ExecutionRule::bsp}) {
        if (name == to_string(rule)) return rule;
    }
    throw InputError("unknown execution rule '" + std::string(name) + "' (event, step, bsp)");
}

const char* to_string(Spread spread) {
    switch (spread) {
        case Spread::fixed: return "fixed";
        case Spread::uniform: return "uniform";
        case Spread::exponential: return "exponential";
    }
    return "?";
}

Spread parse_spread(std::string_view name) {
    for (const auto spread : {Spread::fixed, Spread::uniform, Spread::exponential}) {
        if (name == to_string(spread)) return spread;
    }
    throw InputError("unknown distribution '" + std::string(name) + "' (fixed, uniform, exponential)");
}

double Detours::fraction() const noexcept {
    if (!trace.empty()) {
        double busy = 0, end = 0;
        for (const auto& [start, duration] : trace) {
            busy += duration;
            end = std::max(end, start + duration);
        }
        return end > 0 ? busy / end : 0.0;
    }
    return any() ? frequency_hz * duration_us * 1e-6 : 0.0;
}

std::vector<std::pair<double, double>> read_detour_trace(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path.string() + ": cannot open the detour trace");
    std::vector<std::pair<double, double>> trace;
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        const auto at = [&] { return path.string() + ":" + std::to_string(number) + ": "; };
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream fields(line);
        double start = 0, duration = 0;
        if (!(fields >> start)) {
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            throw InputError(at() + "expected 'start duration' (microseconds)");
        }
        std::string rest;
        if (!(fields >> duration) || (fields >> rest))
            throw InputError(at() + "expected 'start duration' (microseconds)");
        if (!std::isfinite(start) || !std::isfinite(duration) || start < 0 || duration < 0 || start > 1e12 ||
            duration > 1e12) {
            throw InputError(at() + "start and duration must be between 0 and 1e12 microseconds");
        }
        if (!trace.empty() && start < trace.back().first + trace.back().second) {
            throw InputError(at() + "detours must be in increasing order and must not overlap");
        }
        trace.emplace_back(start, duration);
    }
    if (trace.empty()) throw InputError(path.string() + ": the detour trace has no detours");
    return trace;
}

std::string Perturbation::describe() const {
    std::ostringstream s;
    s << "rule " << to_string(rule);
    if (!detours.trace.empty()) {
        s << ", detour trace (" << detours.trace.size() << " detours)";
    } else if (detours.any()) {
        s << ", detours " << detours.frequency_hz << " Hz x " << detours.duration_us << " us "
          << to_string(detours.spread) << (detours.coscheduled ? " co-scheduled" : "");
    }
    if (detours.any()) {
        if (noisy_node) {
            s << " on node " << *noisy_node;
        } else if (!noisy_ranks.empty()) {
            s << " on " << noisy_ranks.size() << " rank(s)";
        }
        s << " (noise " << 100 * detours.fraction() << " %)";
    }
    if (late_rank) s << ", rank " << *late_rank << " late by " << late_us << " us";
    if (skew_us > 0) s << ", entry skew " << to_string(skew_spread) << " " << skew_us << " us";
    if (iterations > 1) s << ", " << iterations << " back-to-back calls";
    if (!quiet()) s << ", seed " << seed;
    return s.str();
}

}  // namespace nbr::simulator
