// Text and JSON reports of `nbrc simulate`.
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

std::string result_json(const SimResult& r, const SimResult* baseline) {
    std::ostringstream out;
    out << "    {\"bytes\": " << r.bytes << ", \"latency_us\": " << number(r.latency_us);
    if (baseline != nullptr) {
        out << ", \"baseline_latency_us\": " << number(baseline->latency_us)
            << ", \"speedup\": " << number(r.latency_us > 0 ? baseline->latency_us / r.latency_us : 0)
            << ", \"baseline_host_seconds\": " << number(baseline->host_seconds);
    }
    if (!r.variant.empty()) out << ", \"variant\": " << json_string(r.variant);
    out << ",\n     \"completion_us\": {\"min\": " << number(r.completion_min_us)
        << ", \"mean\": " << number(r.completion_mean_us) << ", \"median\": " << number(r.completion_median_us)
        << ", \"p90\": " << number(r.completion_p90_us) << ", \"p99\": " << number(r.completion_p99_us)
        << ", \"max\": " << number(r.completion_max_us) << "},\n"
        << "     \"critical_path\": {\"messages\": " << r.critical_path_messages << ", \"last_rank\": " << r.last_rank
        << "},\n     \"per_rank\": " << traffic_json(r) << ",\n"
        << "     \"events\": " << r.events << ", \"host_seconds\": " << number(r.host_seconds) << "}";
    return out.str();
}

}  // namespace

std::string format_report(const SimReport& s) {
    std::ostringstream out;
    out << s.pattern << ": " << s.algorithm << ", " << collective_name(s) << ", " << s.ranks << " ranks, " << s.messages
        << " messages\n";
    if (!s.baseline.empty()) {
        out << "baseline " << s.baseline << ": " << s.baseline_algorithm << ", " << s.baseline_messages
            << " messages\n";
    }
    out << "machine " << s.machine << ", placement " << s.placement << " (" << s.nodes << " nodes)\n";
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
    if (!s.results.empty() && !s.results.front().variant.empty()) {
        line[std::strlen(line) - 1] = '\0';  // the variant column goes before the newline
        out << line << "  variant\n";
    } else {
        out << line;
    }
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
        if (!r.variant.empty()) out << "  " << r.variant;
        out << "\n";
    }
    double host = 0;
    for (const auto& r : s.results) host += r.host_seconds;
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
        << ",\n  \"load_seconds\": " << number(s.load_seconds)
        << ",\n  \"peak_memory_mib\": " << number(s.peak_memory_mib) << ",\n";
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
