#include "report.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <locale>
#include <sstream>
#include <string>
#include <utility>

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

/// What decided a measured shape: words for the text report after "measured", and its JSON
/// name (null for none).
StateNames decision_names(nbr_decision_t decision) {
    switch (decision) {
        case NBR_DECISION_NONE: return {"", "null"};
        case NBR_DECISION_TOLD_APART: return {": the others told apart as slower", "\"told_apart\""};
        case NBR_DECISION_LOWEST_MEDIAN: return {": lowest median after the last round", "\"lowest_median\""};
        case NBR_DECISION_NAIVE_TIE: return {": naive first in a near tie (medians within 3 %)", "\"naive_tie\""};
        case NBR_DECISION_MODEL_TIE:
            return {": within 3 % of the lowest median, first in the model's order", "\"model_tie\""};
        case NBR_DECISION_SHARED_CORES:
            return {": naive, still in contention after the last round on shared cores", "\"shared_cores\""};
    }
    return {"", "null"};
}

/// "1 call", "2 calls": a count and its noun.
std::string counted(unsigned long long n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
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

ShapeKey key_of(const std::string& id, const nbr_shape_stats_t& s) {
    return {id, static_cast<int>(s.collective), static_cast<int>(s.mode), s.min_bytes, s.max_bytes};
}

/// A key as text fields ("ID COLLECTIVE MODE MIN MAX"; ids hold no blanks) and back.
std::string key_text(const ShapeKey& key) {
    const auto& [id, collective, mode, min_bytes, max_bytes] = key;
    return id + " " + std::to_string(collective) + " " + std::to_string(mode) + " " + std::to_string(min_bytes) + " " +
           std::to_string(max_bytes);
}

bool read_key(std::istringstream& in, ShapeKey& key) {
    auto& [id, collective, mode, min_bytes, max_bytes] = key;
    return static_cast<bool>(in >> id >> collective >> mode >> min_bytes >> max_bytes);
}

/// A time that reads back as the same double, whatever the locale.
std::string exact(double value) {
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    return std::string(buffer, end);
}

/// A line of encoded fields, read in the classic locale (as `exact` writes).
std::istringstream line_stream(const std::string& line) {
    std::istringstream in(line);
    in.imbue(std::locale::classic());
    return in;
}

/// The shape's time per call over its communicator's ranks (this rank's alone without a spread).
std::string time_text(const nbr_shape_stats_t& s, const Spread* spread) {
    if (spread == nullptr) {
        if (s.run_calls == 0) return "";
        return ", " + format("%.2f", s.run_us / static_cast<double>(s.run_calls)) + " us/call (this rank)";
    }
    if (spread->ranks == 1) return ", " + format("%.2f", spread->mean_us()) + " us/call (1 rank)";
    return ", " + format("%.2f", spread->mean_us()) + " us/call (mean of " + std::to_string(spread->ranks) +
           " ranks; slowest rank " + std::to_string(spread->slowest_rank) + ": " + format("%.2f", spread->slowest_us) +
           ")";
}

std::string time_json(const Spread* spread) {
    return ", \"ranks_timed\": " + std::to_string(spread ? spread->ranks : 0) +
           ", \"mean_us_per_call\": " + json_number(spread ? spread->mean_us() : NAN) +
           ", \"slowest_us_per_call\": " + json_number(spread ? spread->slowest_us : NAN) +
           ", \"slowest_rank\": " + (spread ? std::to_string(spread->slowest_rank) : std::string("null"));
}

/// One shape: a text line (and one for its candidates) and a JSON object.
void describe_shape(const std::string& id, const ShapeSnapshot& shape, const Spreads& spreads, std::string& text,
                    std::string& json) {
    const nbr_shape_stats_t& s = shape.stats;
    const auto found = spreads.find(key_of(id, s));
    const Spread* spread = found == spreads.end() ? nullptr : &found->second;
    text += std::string("nbr:   ") + collective_name(s.collective) + " " + mode_name(s.mode) + " " + bytes_text(s) +
            ": " + counted(s.calls, "call") + ", runs " + shape.variant + " (" + state_names(s.state).text +
            decision_names(shape.decision).text + ")";
    if (s.trial_calls > 0) {
        text += ", trials " + counted(s.trial_calls, "call") + " " + format("%.1f", s.trial_us) + " us";
    }
    text += time_text(s, spread);
    if (std::isfinite(s.saved_us)) text += ", saved vs naive " + format("%.1f", s.saved_us) + " us";
    json += std::string("{\"collective\": \"") + collective_name(s.collective) + "\", \"mode\": \"" +
            mode_name(s.mode) + "\", \"min_bytes\": " + std::to_string(s.min_bytes) +
            ", \"max_bytes\": " + (s.max_bytes == SIZE_MAX ? std::string("null") : std::to_string(s.max_bytes)) +
            ", \"calls\": " + std::to_string(s.calls) + ", \"variant\": " + json_string(shape.variant) +
            ", \"state\": \"" + state_names(s.state).json + "\"" +
            ", \"decision\": " + decision_names(shape.decision).json +
            ", \"trial_calls\": " + std::to_string(s.trial_calls) + ", \"trial_us\": " + json_number(s.trial_us) +
            ", \"after_calls\": " + std::to_string(s.after_calls) + ", \"run_calls\": " + std::to_string(s.run_calls) +
            ", \"run_us\": " + json_number(s.run_us) + ", \"naive_us\": " + json_number(s.naive_us) +
            ", \"saved_us\": " + json_number(s.saved_us);
    json += time_json(spread) + ", \"candidates\": [";
    text += "\n";
    std::string line;
    bool first = true;
    for (const CandidateSnapshot& c : shape.candidates) {
        json += std::string(first ? "" : ", ") + "{\"name\": " + json_string(c.name) +
                ", \"median_us\": " + json_number(c.median_us) + ", \"mean_us\": " + json_number(c.mean_us) +
                ", \"samples\": " + std::to_string(c.samples) + "}";
        line += std::string(first ? "" : ", ") + c.name + " " +
                (std::isfinite(c.median_us) ? format("%.2f", c.median_us) + " us" : std::string("not timed"));
        first = false;
    }
    json += "]}";
    if (shape.candidates.size() > 1) text += "nbr:     candidates (slowest rank's median per call): " + line + "\n";
}

/// A shape's candidates as the pattern reports them now.
std::vector<CandidateSnapshot> candidates_of(nbr_pattern_t pattern, int index, int count) {
    std::vector<CandidateSnapshot> list;
    for (int c = 0; c < count; ++c) {
        const char* name = nullptr;
        CandidateSnapshot candidate;
        if (nbr_pattern_shape_candidate(pattern, index, c, &name, &candidate.median_us, &candidate.mean_us,
                                        &candidate.samples) != NBR_SUCCESS) {
            continue;
        }
        candidate.name = name != nullptr ? name : "?";
        list.push_back(std::move(candidate));
    }
    return list;
}

}  // namespace

CommunicatorReport describe_native(const std::string& function, int ranks, const std::string& why) {
    CommunicatorReport report;
    report.text = "nbr: a communicator of " + counted(static_cast<unsigned long long>(ranks), "rank") + " (" +
                  function + ") ran natively: " + why + "\n";
    report.json = "{\"communicator\": null, \"function\": " + json_string(function) +
                  ", \"ranks\": " + std::to_string(ranks) + ", \"native\": " + json_string(why) +
                  ", \"calls\": null, \"shapes\": []}";
    return report;
}

PatternSnapshot snapshot_pattern(nbr_pattern_t pattern, const std::string& id, int rank, int ranks, bool reporter,
                                 const std::string& dir, const std::string& origin, unsigned long long calls) {
    PatternSnapshot snapshot{id, rank, ranks, reporter, "?", dir, origin, calls, {}};
    const char* algorithm = nullptr;
    if (nbr_pattern_algorithm(pattern, &algorithm) == NBR_SUCCESS && algorithm != nullptr)
        snapshot.algorithm = algorithm;
    int shapes = 0;
    (void)nbr_pattern_shape_count(pattern, &shapes);
    for (int i = 0; i < shapes; ++i) {
        ShapeSnapshot shape;
        if (nbr_pattern_shape_stats(pattern, i, &shape.stats) != NBR_SUCCESS) continue;
        shape.variant = shape.stats.variant != nullptr ? shape.stats.variant : "?";
        shape.stats.variant = nullptr;  // owned by the pattern
        (void)nbr_pattern_shape_decision(pattern, i, &shape.decision);
        shape.candidates = candidates_of(pattern, i, shape.stats.candidates);
        snapshot.shapes.push_back(std::move(shape));
    }
    return snapshot;
}

Spreads spreads_of(const std::vector<PatternSnapshot>& snapshots) {
    Spreads spreads;
    for (const PatternSnapshot& snapshot : snapshots) {
        for (const ShapeSnapshot& shape : snapshot.shapes) {
            const nbr_shape_stats_t& s = shape.stats;
            if (s.run_calls == 0 || !std::isfinite(s.run_us)) continue;
            const double per_call = s.run_us / static_cast<double>(s.run_calls);
            merge_spreads(spreads, {{key_of(snapshot.id, s), Spread{1, per_call, per_call, snapshot.rank}}});
        }
    }
    return spreads;
}

void merge_spreads(Spreads& into, const Spreads& from) {
    for (const auto& [key, more] : from) {
        Spread& spread = into[key];
        const bool slower = spread.ranks == 0 || more.slowest_us > spread.slowest_us ||
                            (more.slowest_us == spread.slowest_us && more.slowest_rank < spread.slowest_rank);
        if (slower) {
            spread.slowest_us = more.slowest_us;
            spread.slowest_rank = more.slowest_rank;
        }
        spread.ranks += more.ranks;
        spread.total_us += more.total_us;
    }
}

std::string encode_spreads(const Spreads& spreads) {
    std::string text;
    for (const auto& [key, spread] : spreads) {
        text += key_text(key) + " " + std::to_string(spread.ranks) + " " + exact(spread.total_us) + " " +
                exact(spread.slowest_us) + " " + std::to_string(spread.slowest_rank) + "\n";
    }
    return text;
}

Spreads decode_spreads(const std::string& text) {
    Spreads spreads;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        auto in = line_stream(line);
        ShapeKey key;
        Spread spread;
        if (read_key(in, key) && in >> spread.ranks >> spread.total_us >> spread.slowest_us >> spread.slowest_rank &&
            spread.ranks > 0) {
            spreads[key] = spread;
        }
    }
    return spreads;
}

CommunicatorReport describe_pattern(const PatternSnapshot& snapshot, const Spreads& spreads) {
    CommunicatorReport report;
    report.text = "nbr: communicator " + snapshot.id + " (" +
                  counted(static_cast<unsigned long long>(snapshot.ranks), "rank") + ", " + snapshot.algorithm +
                  " pattern " + snapshot.dir + ", " + snapshot.origin + "): " + counted(snapshot.calls, "call") +
                  " replayed\n";
    report.json = "{\"communicator\": " + json_string(snapshot.id) + ", \"ranks\": " + std::to_string(snapshot.ranks) +
                  ", \"algorithm\": " + json_string(snapshot.algorithm) +
                  ", \"pattern\": " + json_string(snapshot.dir) + ", \"origin\": " + json_string(snapshot.origin) +
                  ", \"calls\": " + std::to_string(snapshot.calls) + ", \"shapes\": [";
    bool first = true;
    for (const ShapeSnapshot& shape : snapshot.shapes) {
        if (!first) report.json += ", ";
        describe_shape(snapshot.id, shape, spreads, report.text, report.json);
        first = false;
    }
    report.json += "]}";
    return report;
}

}  // namespace nbr::interpose
