#include "report.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "nbr/common/json_text.hpp"

namespace nbr::interpose {

namespace {

using nbr::common::internal::json_string;

const char* collective_name(nbr_collective_t collective) {
    switch (collective) {
        case NBR_ALLGATHER: return "allgather";
        case NBR_ALLTOALL: return "alltoall";
        case NBR_ALLGATHERV: return "allgatherv";
        case NBR_ALLTOALLV: return "alltoallv";
    }
    return "?";
}

const char* mode_name(nbr_mode_t mode) {
    switch (mode) {
        case NBR_MODE_BLOCKING: return "blocking";
        case NBR_MODE_NONBLOCKING: return "nonblocking";
        case NBR_MODE_PERSISTENT: return "persistent";
    }
    return "?";
}

/// A shape state's words in the text report and its JSON name.
struct StateNames {
    const char* text;
    const char* json;
};

StateNames state_names(nbr_shape_state_t state) {
    switch (state) {
        case NBR_SHAPE_SINGLE: return {"only candidate", "single"};
        case NBR_SHAPE_TRIAL: return {"still in trials", "trial"};
        case NBR_SHAPE_MEASURED: return {"measured", "measured"};
        case NBR_SHAPE_WISDOM: return {"from wisdom", "wisdom"};
        case NBR_SHAPE_MODEL: return {"model's choice", "model"};
    }
    return {"?", "?"};
}

std::string format(const char* spec, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, spec, value);
    return buffer;
}

/// A JSON number, null for NaN.
std::string json_number(double value) {
    return std::isfinite(value) ? format("%.6g", value) : "null";
}

std::string bytes_text(const nbr_shape_stats_t& s) {
    if (s.max_bytes == SIZE_MAX) return "any size";
    return std::to_string(s.min_bytes) + (s.max_bytes == s.min_bytes ? "" : "-" + std::to_string(s.max_bytes)) + " B";
}

/// One shape: a text line (and one for its candidates) and a JSON object.
void describe_shape(nbr_pattern_t pattern, int index, std::string& text, std::string& json) {
    nbr_shape_stats_t s;
    if (nbr_pattern_shape_stats(pattern, index, &s) != NBR_SUCCESS) return;
    text += std::string("nbr:   ") + collective_name(s.collective) + " " + mode_name(s.mode) + " " + bytes_text(s) +
            ": " + std::to_string(s.calls) + " calls, runs " + s.variant + " (" + state_names(s.state).text + ")";
    if (s.trial_calls > 0) {
        text += ", trials " + std::to_string(s.trial_calls) + " calls " + format("%.1f", s.trial_us) + " us";
    }
    if (s.run_calls > 0) text += ", " + format("%.2f", s.run_us / static_cast<double>(s.run_calls)) + " us/call";
    if (std::isfinite(s.saved_us)) text += ", saved vs naive " + format("%.1f", s.saved_us) + " us";
    text += "\n";
    json += std::string("{\"collective\": \"") + collective_name(s.collective) + "\", \"mode\": \"" +
            mode_name(s.mode) + "\", \"min_bytes\": " + std::to_string(s.min_bytes) +
            ", \"max_bytes\": " + (s.max_bytes == SIZE_MAX ? std::string("null") : std::to_string(s.max_bytes)) +
            ", \"calls\": " + std::to_string(s.calls) + ", \"variant\": " + json_string(s.variant) + ", \"state\": \"" +
            state_names(s.state).json + "\"" + ", \"trial_calls\": " + std::to_string(s.trial_calls) +
            ", \"trial_us\": " + json_number(s.trial_us) + ", \"after_calls\": " + std::to_string(s.after_calls) +
            ", \"run_calls\": " + std::to_string(s.run_calls) + ", \"run_us\": " + json_number(s.run_us) +
            ", \"naive_us\": " + json_number(s.naive_us) + ", \"saved_us\": " + json_number(s.saved_us) +
            ", \"candidates\": [";
    std::string line;
    for (int c = 0; c < s.candidates; ++c) {
        const char* name = nullptr;
        double median = NAN, mean = NAN;
        unsigned long long samples = 0;
        if (nbr_pattern_shape_candidate(pattern, index, c, &name, &median, &mean, &samples) != NBR_SUCCESS) continue;
        json += std::string(c ? ", " : "") + "{\"name\": " + json_string(name) +
                ", \"median_us\": " + json_number(median) + ", \"mean_us\": " + json_number(mean) +
                ", \"samples\": " + std::to_string(samples) + "}";
        line += std::string(c ? ", " : "") + name + " " +
                (std::isfinite(median) ? format("%.2f", median) + " us" : std::string("not timed"));
    }
    json += "]}";
    if (s.candidates > 1) text += "nbr:     candidates (slowest rank's median per call): " + line + "\n";
}

}  // namespace

CommunicatorReport describe_native(const std::string& function, int ranks, const std::string& why) {
    CommunicatorReport report;
    report.text =
        "nbr: a communicator of " + std::to_string(ranks) + " ranks (" + function + ") ran natively: " + why + "\n";
    report.json = "{\"communicator\": null, \"function\": " + json_string(function) +
                  ", \"ranks\": " + std::to_string(ranks) + ", \"native\": " + json_string(why) +
                  ", \"calls\": null, \"shapes\": []}";
    return report;
}

CommunicatorReport describe_pattern(nbr_pattern_t pattern, const std::string& id, int ranks, const std::string& dir,
                                    const std::string& origin, unsigned long long calls) {
    CommunicatorReport report;
    const char* algorithm = "?";
    (void)nbr_pattern_algorithm(pattern, &algorithm);
    int shapes = 0;
    (void)nbr_pattern_shape_count(pattern, &shapes);
    report.text = "nbr: communicator " + id + " (" + std::to_string(ranks) + " ranks, " + algorithm + " pattern " +
                  dir + ", " + origin + "): " + std::to_string(calls) + " calls replayed\n";
    report.json = "{\"communicator\": " + json_string(id) + ", \"ranks\": " + std::to_string(ranks) +
                  ", \"algorithm\": " + json_string(algorithm) + ", \"pattern\": " + json_string(dir) +
                  ", \"origin\": " + json_string(origin) + ", \"calls\": " + std::to_string(calls) + ", \"shapes\": [";
    for (int i = 0; i < shapes; ++i) {
        if (i > 0) report.json += ", ";
        describe_shape(pattern, i, report.text, report.json);
    }
    report.json += "]}";
    return report;
}

}  // namespace nbr::interpose
