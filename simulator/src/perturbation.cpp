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

namespace {

/// "A:B[:C]" split at colons.
std::vector<std::string> fields(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string_view::npos; start = colon + 1) {
        out.emplace_back(text.substr(start, colon - start));
    }
    out.emplace_back(text.substr(start));
    return out;
}

/// A non-negative finite number (at most 1e12), or an error naming `text`.
double number(const std::string& field, std::string_view text) {
    try {
        std::size_t used = 0;
        const double value = std::stod(field, &used);
        if (used == field.size() && std::isfinite(value) && value >= 0 && value <= 1e12) return value;
    } catch (const std::exception&) {
    }
    throw InputError("'" + field + "' in '" + std::string(text) + "' is not a number between 0 and 1e12");
}

}  // namespace

Detours parse_detours(std::string_view text) {
    const auto f = fields(text);
    if (f.size() < 2 || f.size() > 3) {
        throw InputError("expected FREQ_HZ:DURATION_US[:SPREAD], got '" + std::string(text) + "'");
    }
    Detours d;
    d.frequency_hz = number(f[0], text);
    d.duration_us = number(f[1], text);
    if (f.size() == 3) d.spread = parse_spread(f[2]);
    const double longest = d.spread == Spread::uniform ? 2 * d.duration_us : d.duration_us;
    if (longest * 1e-6 * d.frequency_hz > 1) {
        throw InputError("detours longer than their period ('" + std::string(text) + "')");
    }
    return d;
}

std::pair<std::uint32_t, double> parse_late(std::string_view text) {
    const auto f = fields(text);
    if (f.size() != 2) throw InputError("expected RANK:DELAY_US, got '" + std::string(text) + "'");
    const double rank = number(f[0], text);
    if (rank != std::floor(rank) || rank > 4294967295.0) {
        throw InputError("rank '" + f[0] + "' in '" + std::string(text) + "' is not a rank number");
    }
    return {static_cast<std::uint32_t>(rank), number(f[1], text)};
}

std::pair<double, Spread> parse_skew(std::string_view text) {
    const auto f = fields(text);
    if (f.size() > 2) throw InputError("expected MEAN_US[:SPREAD], got '" + std::string(text) + "'");
    return {number(f[0], text), f.size() == 2 ? parse_spread(f[1]) : Spread::uniform};
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
