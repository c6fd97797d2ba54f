// Text and JSON reports of `nbrc simulate`.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "nbr/common/json_text.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator {

namespace {

using nbr::common::internal::json_string;
using nbr::common::internal::number;

const char* collective_name(const SimReport& s) {
    if (s.collective == Collective::allgather) return s.variable ? "allgatherv" : "allgather";
    return s.variable ? "alltoallv" : "alltoall";
}

std::string traffic_json(const SimResult& r) {
    std::string out = "{";
    for (std::size_t k = 0; k < kDistanceClasses; ++k) {
        const auto& t = r.traffic[k];
        out += (k ? ", " : "") + json_string(to_string(static_cast<DistanceClass>(k))) +
               ": {\"messages_mean\": " + number(t.messages_mean) +
               ", \"messages_max\": " + number(static_cast<double>(t.messages_max)) +
               ", \"bytes_mean\": " + number(t.bytes_mean) +
               ", \"bytes_max\": " + number(static_cast<double>(t.bytes_max)) + "}";
    }
    return out + "}";
}

/// Consecutive operations of one kind, rank and distance class (a CPU working through a run of
/// sends or receives) shown as one.
/// Transfers are never merged, so a run's queueing is its first step's.
struct PathRun {
    PathStep first;
    std::uint32_t count = 1;
    bool one_peer = true;
    double end_us = 0;
    std::uint64_t bytes = 0;
};

bool continues(const PathRun& run, const PathStep& step) {
    const auto& first = run.first;
    return step.kind != PathStep::Kind::transfer && first.kind == step.kind && first.rank == step.rank &&
           first.distance == step.distance;
}

std::vector<PathRun> path_runs(const std::vector<PathStep>& path) {
    std::vector<PathRun> runs;
    for (const auto& step : path) {
        if (runs.empty() || !continues(runs.back(), step)) {
            runs.push_back({step, 1, true, step.end_us, step.bytes});
            continue;
        }
        auto& run = runs.back();
        ++run.count;
        run.one_peer = run.one_peer && run.first.peer == step.peer;
        run.end_us = step.end_us;
        run.bytes += step.bytes;
    }
    return runs;
}

/// Where the critical path's time went: CPU operations, messages on their way (without
/// queueing), queueing, and the rest (waits for a core, gaps).
struct PathTotals {
    double cpu = 0, transfer = 0, queued = 0, other = 0;
    std::uint32_t messages = 0;
};

PathTotals path_totals(const SimResult& r) {
    PathTotals t;
    for (const auto& step : r.path) {
        const double span = step.end_us - step.start_us;
        if (step.kind == PathStep::Kind::transfer) {
            t.transfer += span - step.queued_us;
            t.queued += step.queued_us;
            ++t.messages;
        } else if (step.kind == PathStep::Kind::ack) {
            t.transfer += span;  // the acknowledgment on its way back
        } else {
            t.cpu += span;
        }
    }
    t.other = r.latency_us - t.cpu - t.transfer - t.queued;
    if (t.other < 1e-9) t.other = 0;  // rounding
    return t;
}

std::string path_json(const SimResult& r) {
    const auto t = path_totals(r);
    std::ostringstream out;
    out << ",\n     \"path\": {\"cpu_us\": " << number(t.cpu) << ", \"transfer_us\": " << number(t.transfer)
        << ", \"queued_us\": " << number(t.queued) << ", \"other_us\": " << number(t.other) << ", \"steps\": [";
    const auto runs = path_runs(r.path);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& run = runs[i];
        out << (i ? ",\n       " : "\n       ") << "{\"kind\": \"" << to_string(run.first.kind)
            << "\", \"rank\": " << run.first.rank;
        if (run.first.kind != PathStep::Kind::call) {
            out << ", \"peer\": " << (run.one_peer ? std::to_string(run.first.peer) : std::string("null"))
                << ", \"distance\": \"" << to_string(run.first.distance) << "\", \"bytes\": " << run.bytes;
        }
        out << ", \"count\": " << run.count << ", \"start_us\": " << number(run.first.start_us)
            << ", \"end_us\": " << number(run.end_us);
        if (run.first.kind == PathStep::Kind::transfer) out << ", \"queued_us\": " << number(run.first.queued_us);
        out << "}";
    }
    out << "]}";
    return out.str();
}

std::string path_text(const SimResult& r) {
    const auto t = path_totals(r);
    char line[256];
    std::ostringstream out;
    std::snprintf(line, sizeof line,
                  "critical path at %llu B: rank %u done at %.3f us; CPU %.3f, messages on their way %.3f, queued "
                  "%.3f, other %.3f (%u messages)\n",
                  static_cast<unsigned long long>(r.bytes), r.last_rank, r.latency_us, t.cpu, t.transfer, t.queued,
                  t.other, t.messages);
    out << line;
    for (const auto& run : path_runs(r.path)) {
        const auto& s = run.first;
        std::string what = to_string(s.kind);
        if (run.count > 1) what += " x" + std::to_string(run.count);
        std::snprintf(line, sizeof line, "  %10.3f %10.3f  %-12s rank %u", s.start_us, run.end_us, what.c_str(),
                      s.rank);
        out << line;
        if (s.kind != PathStep::Kind::call) {
            const char* arrow = s.kind == PathStep::Kind::send || s.kind == PathStep::Kind::transfer ? "->" : "<-";
            out << " " << arrow << " " << (run.one_peer ? std::to_string(s.peer) : std::string("several")) << " ("
                << to_string(s.distance) << ", " << run.bytes << " B)";
        }
        if (s.kind == PathStep::Kind::transfer && s.queued_us > 0) {
            std::snprintf(line, sizeof line, ", queued %.3f", s.queued_us);
            out << line;
        }
        out << "\n";
    }
    return out.str();
}

std::string noise_json(const NoiseEffect& n) {
    std::ostringstream out;
    out << "{\"seeds\": " << n.seeds << ", \"quiet_us\": " << number(n.quiet_us)
        << ", \"noisy_us\": " << number(n.noisy_us) << ", \"noisy_min_us\": " << number(n.noisy_min_us)
        << ", \"noisy_max_us\": " << number(n.noisy_max_us) << ", \"slowdown\": " << number(n.slowdown)
        << ", \"noise_fraction\": " << number(n.noise_fraction) << ", \"amplification\": " << number(n.amplification)
        << ", \"blast_radius\": ";
    if (n.blast_radius < 0) {
        out << "null}";
    } else {
        out << n.blast_radius << "}";
    }
    return out.str();
}

/// What of the lower bound a result achieves: the bound over its time per call (1: at the bound).
double achieved(const SimResult& r) {
    return r.iteration_us > 0 ? r.bound->us() / r.iteration_us : 0.0;
}

std::string bound_json(const SimResult& r, const SimResult* baseline) {
    std::ostringstream out;
    out << "{\"us\": " << number(r.bound->us()) << ", \"latency_us\": " << number(r.bound->latency_us)
        << ", \"bytes_us\": " << number(r.bound->bytes_us) << ", \"achieved\": " << number(achieved(r));
    if (baseline != nullptr) out << ", \"baseline_achieved\": " << number(achieved(*baseline));
    out << "}";
    return out.str();
}

/// Per size: the lower bound of a call, its two parts and the fraction of it each run achieves.
std::string bound_text(const SimReport& s) {
    if (s.results.empty() || !s.results.front().bound) return {};
    std::ostringstream out;
    char line[256];
    std::snprintf(line, sizeof line, "lower bound per call (docs/simulate.md):\n%10s %12s %12s %12s %9s%s\n", "bytes",
                  "bound_us", "latency_us", "bytes_us", "achieved", s.baseline.empty() ? "" : "  base_achieved");
    out << line;
    for (std::size_t i = 0; i < s.results.size(); ++i) {
        const auto& r = s.results[i];
        std::snprintf(line, sizeof line, "%10llu %12.3f %12.3f %12.3f %9.3f", static_cast<unsigned long long>(r.bytes),
                      r.bound->us(), r.bound->latency_us, r.bound->bytes_us, achieved(r));
        out << line;
        if (!s.baseline.empty()) {
            std::snprintf(line, sizeof line, "  %13.3f", achieved(s.baseline_results[i]));
            out << line;
        }
        out << "\n";
    }
    return out.str();
}

std::string result_json(const SimResult& r, const SimResult* baseline) {
    std::ostringstream out;
    out << "    {\"bytes\": " << r.bytes << ", \"latency_us\": " << number(r.latency_us);
    if (baseline != nullptr) {
        out << ", \"baseline_latency_us\": " << number(baseline->latency_us)
            << ", \"speedup\": " << number(r.latency_us > 0 ? baseline->latency_us / r.latency_us : 0)
            << ", \"baseline_host_seconds\": " << number(baseline->host_seconds);
    }
    if (!r.variant.empty()) out << ", \"variant\": " << json_string(r.variant);
    if (r.segment_units != internal::kWholeMessages) out << ", \"segment_blocks\": " << r.segment_units;
    out << ", \"iterations\": " << r.iterations << ", \"per_call_us\": " << number(r.iteration_us);
    if (r.bound) out << ",\n     \"lower_bound\": " << bound_json(r, baseline);
    if (r.noise) out << ",\n     \"noise\": " << noise_json(*r.noise);
    if (!r.finish_us.empty()) {
        out << ",\n     \"finish_us\": [";
        for (std::size_t k = 0; k < r.finish_us.size(); ++k) out << (k ? ", " : "") << number(r.finish_us[k]);
        out << "]";
    }
    if (baseline != nullptr && baseline->noise) out << ",\n     \"baseline_noise\": " << noise_json(*baseline->noise);
    out << ",\n     \"completion_us\": {\"min\": " << number(r.completion_min_us)
        << ", \"mean\": " << number(r.completion_mean_us) << ", \"median\": " << number(r.completion_median_us)
        << ", \"p90\": " << number(r.completion_p90_us) << ", \"p99\": " << number(r.completion_p99_us)
        << ", \"max\": " << number(r.completion_max_us) << "},\n"
        << "     \"critical_path\": {\"messages\": " << r.critical_path_messages << ", \"last_rank\": " << r.last_rank
        << "},\n     \"per_rank\": " << traffic_json(r) << ",\n"
        << "     \"events\": " << r.events << ", \"host_seconds\": " << number(r.host_seconds);
    if (!r.path.empty()) out << path_json(r);
    out << "}";
    return out.str();
}

/// Per size: time per call against the run without delays, slowdown, amplification, blast
/// radius (and the baseline's), when the report has a perturbation.
std::string noise_text(const SimReport& s) {
    if (s.results.empty() || !s.results.front().noise) return {};
    std::ostringstream out;
    char line[256];
    std::snprintf(line, sizeof line, "%10s %12s %12s %9s %9s %7s%s\n", "bytes", "per_call_us", "quiet_us", "slowdown",
                  "amplif", "blast", s.baseline.empty() ? "" : "  base_call_us  base_slowdown  speedup");
    out << line;
    for (std::size_t i = 0; i < s.results.size(); ++i) {
        const auto& n = *s.results[i].noise;
        std::snprintf(line, sizeof line, "%10llu %12.3f %12.3f %8.1f%% %9.2f %7s",
                      static_cast<unsigned long long>(s.results[i].bytes), n.noisy_us, n.quiet_us, 100 * n.slowdown,
                      n.amplification, n.blast_radius < 0 ? "-" : std::to_string(n.blast_radius).c_str());
        out << line;
        if (!s.baseline.empty() && s.baseline_results[i].noise) {
            const auto& b = *s.baseline_results[i].noise;
            std::snprintf(line, sizeof line, "  %12.3f  %12.1f%%  %6.2fx", b.noisy_us, 100 * b.slowdown,
                          n.noisy_us > 0 ? b.noisy_us / n.noisy_us : 0.0);
            out << line;
        }
        out << "\n";
    }
    return out.str();
}

}  // namespace

const char* to_string(PathStep::Kind kind) {
    switch (kind) {
        case PathStep::Kind::call: return "call";
        case PathStep::Kind::send: return "send";
        case PathStep::Kind::transfer: return "transfer";
        case PathStep::Kind::answer: return "answer";
        case PathStep::Kind::receive: return "receive";
        case PathStep::Kind::ack: return "ack";
    }
    return "?";
}

std::string format_report(const SimReport& s) {
    std::ostringstream out;
    out << s.pattern << ": " << s.algorithm << ", " << collective_name(s) << ", " << s.ranks << " ranks, " << s.messages
        << " messages\n";
    if (!s.baseline.empty()) {
        out << "baseline " << s.baseline << ": " << s.baseline_algorithm << ", " << s.baseline_messages
            << " messages\n";
    }
    out << "machine " << s.machine << ", placement " << s.placement << " (" << s.nodes << " nodes)\n";
    if (!s.perturbation.empty()) out << "run: " << s.perturbation << "\n";
    if (!s.bands_chosen_for.empty()) {
        out << "note: the bands were chosen for " << s.bands_chosen_for
            << "; each size runs the variant they name, as libnbr would here (--machine and --placement or "
               "--ranks-per-node simulate what the compile simulated)\n";
    }
    if (!s.results.empty()) {
        out << "sends per rank by distance (mean / max):";
        for (std::size_t k = 0; k < kDistanceClasses; ++k) {
            const auto& t = s.results.front().traffic[k];
            out << " " << to_string(static_cast<DistanceClass>(k)) << " " << number(t.messages_mean) << " / "
                << t.messages_max;
        }
        out << "\n";
    }
    char line[256];
    std::snprintf(line, sizeof line, "%10s %12s %12s %12s %12s %9s %9s%s\n", "bytes", "latency_us", "median_us",
                  "p99_us", "min_us", "crit_msgs", "last_rank", s.baseline.empty() ? "" : "  baseline_us  speedup");
    const bool segmented = std::any_of(s.results.begin(), s.results.end(),
                                       [](const SimResult& r) { return r.segment_units != internal::kWholeMessages; });
    line[std::strlen(line) - 1] = '\0';  // the segment and variant columns go before the newline
    out << line << (segmented ? "    segment" : "")
        << (!s.results.empty() && !s.results.front().variant.empty() ? "  variant\n" : "\n");
    for (std::size_t i = 0; i < s.results.size(); ++i) {
        const auto& r = s.results[i];
        std::snprintf(line, sizeof line, "%10llu %12.3f %12.3f %12.3f %12.3f %9u %9u",
                      static_cast<unsigned long long>(r.bytes), r.latency_us, r.completion_median_us,
                      r.completion_p99_us, r.completion_min_us, r.critical_path_messages, r.last_rank);
        out << line;
        if (!s.baseline.empty()) {
            const auto& b = s.baseline_results[i];
            std::snprintf(line, sizeof line, "  %11.3f  %7.2fx", b.latency_us,
                          r.latency_us > 0 ? b.latency_us / r.latency_us : 0.0);
            out << line;
        }
        if (segmented) {
            const std::string blocks =
                r.segment_units == internal::kWholeMessages ? "whole" : std::to_string(r.segment_units) + " blk";
            std::snprintf(line, sizeof line, "  %9s", blocks.c_str());
            out << line;
        }
        if (!r.variant.empty()) out << "  " << r.variant;
        out << "\n";
    }
    out << bound_text(s);
    out << noise_text(s);
    double host = 0;
    for (const auto& r : s.results) host += r.host_seconds;
    for (const auto& r : s.results) {
        if (!r.path.empty()) out << path_text(r);
    }
    std::snprintf(line, sizeof line, "host: load %.2f s, simulation %.2f s (%.2g messages/s), peak memory %.0f MiB\n",
                  s.load_seconds, host, host > 0 ? static_cast<double>(s.messages * s.results.size()) / host : 0.0,
                  s.peak_memory_mib);
    out << line;
    return out.str();
}

std::string format_report_json(const SimReport& s) {
    std::ostringstream out;
    out << "{\n  \"pattern\": " << json_string(s.pattern) << ",\n  \"algorithm\": " << json_string(s.algorithm)
        << ",\n  \"collective\": \"" << collective_name(s) << "\",\n  \"ranks\": " << s.ranks
        << ",\n  \"messages\": " << s.messages << ",\n  \"machine\": " << json_string(s.machine)
        << ",\n  \"placement\": " << json_string(s.placement) << ",\n  \"nodes\": " << s.nodes
        << ",\n  \"bands_chosen_for\": " << (s.bands_chosen_for.empty() ? "null" : json_string(s.bands_chosen_for))
        << ",\n  \"load_seconds\": " << number(s.load_seconds)
        << ",\n  \"peak_memory_mib\": " << number(s.peak_memory_mib)
        << ",\n  \"perturbation\": " << (s.perturbation.empty() ? "null" : json_string(s.perturbation)) << ",\n";
    if (!s.baseline.empty()) {
        out << "  \"baseline\": " << json_string(s.baseline)
            << ",\n  \"baseline_algorithm\": " << json_string(s.baseline_algorithm)
            << ",\n  \"baseline_messages\": " << s.baseline_messages << ",\n";
    }
    out << "  \"results\": [\n";
    for (std::size_t i = 0; i < s.results.size(); ++i) {
        out << (i ? ",\n" : "") << result_json(s.results[i], s.baseline.empty() ? nullptr : &s.baseline_results[i]);
    }
    out << "\n  ]\n}\n";
    return out.str();
}

}  // namespace nbr::simulator
