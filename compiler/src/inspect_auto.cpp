// nbrc inspect on an auto directory: the bands, every candidate's predictions, and why each
// band's winner won.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "nbr/common/json_text.hpp"
#include "nbr/compiler/auto_compile.hpp"
#include "nbr/compiler/inspect.hpp"

namespace nbr::compiler {

namespace {

using nbr::common::internal::json_string;
using nbr::common::internal::number;

/// Whether the manifest records a margin per size (else `margin` applied at every size).
bool margins_per_size(const schema::Manifest& manifest) {
    return manifest.margins_size() > 0 && manifest.margins_size() == manifest.sizes_size();
}

/// The margin applied at size index `s`.
double margin_at(const schema::Manifest& manifest, int s) {
    return margins_per_size(manifest) ? manifest.margins(s) : manifest.margin();
}

/// A margin as a percentage of three significant digits ("1%", "14.6%").
std::string percent(double fraction) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g%%", fraction * 100);
    return text;
}

/// The margins of sizes [first, last): "5.1%", or "1%-5.1%" where they differ.
std::string margin_range(const schema::Manifest& manifest, int first, int last) {
    if (last <= first) return percent(manifest.margin());
    double low = margin_at(manifest, first), high = low;
    for (int s = first; s < last; ++s) {
        low = std::min(low, margin_at(manifest, s));
        high = std::max(high, margin_at(manifest, s));
    }
    return low == high ? percent(low) : percent(low) + "-" + percent(high);
}

/// The margin line: --margin, and where the machine file's ratio errors raised it.
std::string margin_text(const schema::Manifest& manifest) {
    const bool raised = manifest.margin_source() == "ratio_error";
    if (!margins_per_size(manifest)) {
        return percent(manifest.margin()) + (raised ? " (the machine file's ratio_error)" : "");
    }
    if (!raised) return percent(manifest.margin()) + " (--margin)";
    return percent(manifest.margin()) + " (--margin), " + margin_range(manifest, 0, manifest.sizes_size()) +
           " by size (the machine file's ratio errors; column margin)";
}

/// The predictions' collectives; the v-variants' are blocking calls with uniform blocks.
const char* kCollectiveNames[4] = {"allgather", "alltoall", "allgatherv", "alltoallv"};

const google::protobuf::RepeatedField<double>& latencies(const schema::Candidate& candidate, int c) {
    switch (c) {
        case 0: return candidate.allgather_us();
        case 1: return candidate.alltoall_us();
        case 2: return candidate.allgatherv_us();
        default: return candidate.alltoallv_us();
    }
}

int candidate_index(const schema::Manifest& manifest, const std::string& name) {
    for (int i = 0; i < manifest.candidates_size(); ++i) {
        if (manifest.candidates(i).name() == name) return i;
    }
    return -1;
}

/// Sizes [first, last) of Manifest.sizes that a band covers.
std::pair<int, int> band_sizes(const schema::Manifest& manifest, int band) {
    const auto& b = manifest.bands(band);
    const auto next = band + 1 < manifest.bands_size() && manifest.bands(band + 1).collective() == b.collective()
                          ? manifest.bands(band + 1).from_bytes()
                          : UINT64_MAX;
    int first = manifest.sizes_size(), last = 0;
    for (int s = 0; s < manifest.sizes_size(); ++s) {
        if (manifest.sizes(s) >= b.from_bytes() && manifest.sizes(s) < next) {
            first = std::min(first, s);
            last = s + 1;
        }
    }
    return {first, std::max(first, last)};
}

/// Geometric-mean speedup of candidate i over naive (candidate 0) at sizes [first, last).
double speedup(const schema::Manifest& manifest, int i, int c, int first, int last) {
    const auto& naive = latencies(manifest.candidates(0), c);
    const auto& mine = latencies(manifest.candidates(i), c);
    if (mine.empty() || last <= first) return 0;
    double sum = 0;
    for (int s = first; s < last; ++s) sum += mine[s] > 0 && naive[s] > 0 ? std::log(naive[s] / mine[s]) : 0.0;
    return std::exp(sum / (last - first));
}

/// Whether candidates i and j have the same predictions everywhere (equal schedules: a search
/// that found nothing to combine builds naive's, the cube in one round on two nodes that of radix 4).
bool same_predictions(const schema::Manifest& manifest, int i, int j) {
    for (int c = 0; c < 4; ++c) {
        const auto& a = latencies(manifest.candidates(i), c);
        const auto& b = latencies(manifest.candidates(j), c);
        if (!std::equal(a.begin(), a.end(), b.begin(), b.end())) return false;
    }
    return true;
}

/// Whether candidates i and j predict collective c alike at the sizes [first, last) of a band
/// (a segmented copy where its segments cut nothing: its base's schedule).
bool same_in_band(const schema::Manifest& manifest, int i, int j, int c, int first, int last) {
    const auto& a = latencies(manifest.candidates(i), c);
    const auto& b = latencies(manifest.candidates(j), c);
    if (first >= last) return false;
    for (int s = first; s < last; ++s) {
        if (s >= a.size() || s >= b.size() || a[s] != b[s]) return false;
    }
    return true;
}

/// Why band `band` runs its variant: its speedup over naive and the best other candidate (not
/// one that predicts what the winner, or naive, predicts there: that is the same schedule again;
/// nor one the fixed-size bands may not choose, Candidate.through_ranks_without_neighbors).
std::string band_reason(const schema::Manifest& manifest, int band) {
    const auto& b = manifest.bands(band);
    const int c = b.collective() == schema::ALLGATHER ? 0 : 1;
    const auto [first, last] = band_sizes(manifest, band);
    const int winner = candidate_index(manifest, manifest.variants(static_cast<int>(b.variant())).name());
    int runner = -1;
    double runner_speedup = 0;
    for (int i = 0; i < manifest.candidates_size(); ++i) {
        if (i == winner || i == 0 || same_predictions(manifest, i, 0)) continue;
        if (manifest.candidates(i).through_ranks_without_neighbors()) continue;
        if (winner > 0 && same_in_band(manifest, i, winner, c, first, last)) continue;
        const double x = speedup(manifest, i, c, first, last);
        if (x > runner_speedup) runner_speedup = x, runner = i;
    }
    char runner_text[160] = "no candidate but naive differs here";
    if (runner >= 0) {
        std::snprintf(runner_text, sizeof runner_text, "%s %s %.2fx",
                      winner <= 0 ? "best:" : "next best:", manifest.candidates(runner).name().c_str(), runner_speedup);
    }
    char text[256];
    if (winner <= 0) {
        std::snprintf(text, sizeof text, "no candidate beats naive by the %s margin (%s)",
                      margin_range(manifest, first, last).c_str(), runner_text);
    } else {
        std::snprintf(text, sizeof text, "%.2fx faster than naive (%s)", speedup(manifest, winner, c, first, last),
                      runner_text);
    }
    return text;
}

std::string byte_text(std::uint64_t bytes) {
    if (bytes >= (1U << 20) && bytes % (1U << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

/// The --v-bytes range the v choice was made for, if the compile named one.
std::optional<std::pair<std::uint64_t, std::uint64_t>> variable_bytes(const schema::Manifest& manifest) {
    if (manifest.variable_to_bytes() == 0) return std::nullopt;
    return std::pair{manifest.variable_from_bytes(), manifest.variable_to_bytes()};
}

/// Who stated the v range: the user (`--v-bytes`, also in manifests older than the field) or a
/// capture's calls.txt.
std::string variable_source(const schema::Manifest& manifest) {
    return manifest.variable_bytes_source().empty() ? "--v-bytes" : manifest.variable_bytes_source();
}

/// " (measured beside: a, b)" for a list of alternatives, "" for none.
template <class List>
std::string alternatives_text(const schema::Manifest& manifest, const List& alternatives) {
    std::string text;
    for (const auto v : alternatives) {
        text += (text.empty() ? " [measured beside: " : ", ") + manifest.variants(static_cast<int>(v)).name();
    }
    return text.empty() ? text : text + "]";
}

template <class List>
std::string alternatives_json(const schema::Manifest& manifest, const List& alternatives) {
    std::string text = "[";
    for (const auto v : alternatives) {
        text += (text.size() > 1 ? ", " : "") + json_string(manifest.variants(static_cast<int>(v)).name());
    }
    return text + "]";
}

std::string variable_line(const schema::Manifest& manifest, int c) {
    const auto v = c == 2 ? manifest.allgatherv_variant() : manifest.alltoallv_variant();
    const auto& name = manifest.variants(static_cast<int>(v)).name();
    const std::vector<std::uint64_t> sizes(manifest.sizes().begin(), manifest.sizes().end());
    const auto bytes = variable_bytes(manifest);
    const auto [first, last] = variable_size_range(sizes, bytes);
    const std::string over = !bytes || sizes.empty()
                                 ? "the sizes"
                                 : byte_text(sizes[first]) + " to " + byte_text(sizes[last]) + " (" +
                                       variable_source(manifest) + " " + std::to_string(bytes->first) + ":" +
                                       std::to_string(bytes->second) + ")";
    const int i = candidate_index(manifest, name);
    const auto kept =
        alternatives_text(manifest, c == 2 ? manifest.allgatherv_alternatives() : manifest.alltoallv_alternatives());
    if (i <= 0 || latencies(manifest.candidates(i), c).empty()) {
        return name + (bytes ? " (judged over " + over + ")" : "") + kept + "\n";
    }
    char text[64];
    std::snprintf(text, sizeof text, " (%.2fx faster than naive",
                  speedup(manifest, i, c, static_cast<int>(first), static_cast<int>(last) + 1));
    return name + text + ", geometric mean over " + over + ")" + kept + "\n";
}

/// The candidate whose schedules candidate `i`'s equal, if the compile recorded one.
const schema::Candidate* same_schedules(const schema::Manifest& manifest, int i) {
    const auto same = manifest.candidates(i).same_schedules_as();
    return same > 0 && static_cast<int>(same) <= i ? &manifest.candidates(static_cast<int>(same) - 1) : nullptr;
}

/// "kgroup-k4 = naive, ...": the candidates simulated once for an earlier one's schedules.
std::string same_schedules_text(const schema::Manifest& manifest) {
    std::vector<std::string> pairs;
    for (int i = 0; i < manifest.candidates_size(); ++i) {
        if (const auto* same = same_schedules(manifest, i))
            pairs.push_back(manifest.candidates(i).name() + " = " + same->name());
    }
    return common::internal::join(pairs);
}

/// Whether some candidate's schedules are an earlier one's.
bool any_same_schedules(const schema::Manifest& manifest) {
    for (int i = 0; i < manifest.candidates_size(); ++i) {
        if (same_schedules(manifest, i) != nullptr) return true;
    }
    return false;
}

/// Whether candidate `i` has a column of its own in the predictions: it was simulated for
/// collective `c` and its schedules are not an earlier candidate's ("same schedules" names those).
bool has_column(const schema::Manifest& manifest, int i, int c) {
    return !latencies(manifest.candidates(i), c).empty() && same_schedules(manifest, i) == nullptr;
}

void format_predictions(std::ostringstream& out, const schema::Manifest& manifest, int c) {
    out << "predicted latency (us), " << kCollectiveNames[c]
        << (!any_same_schedules(manifest) ? "" : " (a column per schedule: \"same schedules\" above)") << ":\n"
        << "   bytes";
    const bool margins = margins_per_size(manifest);
    if (margins) out << "   margin";
    char cell[64];
    bool unsimulated = false;
    std::vector<int> width(static_cast<std::size_t>(manifest.candidates_size()), 17);  // the name's, at least 17
    for (int i = 0; i < manifest.candidates_size(); ++i) {
        if (!has_column(manifest, i, c)) continue;
        const auto& name = manifest.candidates(i).name();
        auto& w = width[static_cast<std::size_t>(i)];
        w = std::max(w, static_cast<int>(std::min<std::size_t>(name.size(), 48)));
        out << " " << std::setw(w) << name;
    }
    out << "\n";
    for (int s = 0; s < manifest.sizes_size(); ++s) {
        std::snprintf(cell, sizeof cell, "%8s", byte_text(manifest.sizes(s)).c_str());
        out << cell;
        if (margins) {
            std::snprintf(cell, sizeof cell, " %8s", percent(manifest.margins(s)).c_str());
            out << cell;
        }
        for (int i = 0; i < manifest.candidates_size(); ++i) {
            if (!has_column(manifest, i, c)) continue;
            const double us = latencies(manifest.candidates(i), c)[s];
            unsimulated = unsimulated || std::isinf(us);
            const int w = width[static_cast<std::size_t>(i)];
            if (std::isinf(us)) {
                std::snprintf(cell, sizeof cell, " %*s", w, "not simulated");
            } else {
                std::snprintf(cell, sizeof cell, " %*.3f", w, us);
            }
            out << cell;
        }
        out << "\n";
    }
    if (unsimulated) {
        out << "not simulated: a segmented copy's size where the blocks through its busiest NIC take longer than "
               "the kept candidates' predictions (docs/algorithms.md, \"auto\")\n";
    }
}

/// `--candidates` as given: "a, b*".
std::string selectors_text(const schema::Manifest& manifest) {
    return common::internal::join(manifest.candidate_selectors()) + " (--candidates; naive always)";
}

}  // namespace

std::string format_auto(const schema::Manifest& manifest) {
    std::ostringstream out;
    out << "auto pattern: " << manifest.num_ranks() << " ranks, " << manifest.num_edges() << " edges, chosen for "
        << manifest.machine() << " (placement " << manifest.placement() << "), margin " << margin_text(manifest)
        << "\n";
    out << "source: " << manifest.source() << "\n";
    if (manifest.candidate_selectors_size() > 0) out << "candidates: " << selectors_text(manifest) << "\n";
    out << "variants (each a pattern directory: nbrc inspect DIR/NAME):";
    for (const auto& v : manifest.variants()) {
        out << " " << v.name();
        if (!v.files().empty())
            out << " (DIR/" << v.files() << " in segments of " << byte_text(v.segment_bytes()) << ")";
    }
    out << "\n";
    if (const auto same = same_schedules_text(manifest); !same.empty()) {
        out << "same schedules (simulated once, the same predictions): " << same << "\n";
    }
    for (int c = 0; c < 2; ++c) {
        out << kCollectiveNames[c] << " bands:\n";
        for (int b = 0; b < manifest.bands_size(); ++b) {
            if (manifest.bands(b).collective() != (c == 0 ? schema::ALLGATHER : schema::ALLTOALL)) continue;
            char line[96];
            std::snprintf(line, sizeof line, "  from %8s: %-18s ", byte_text(manifest.bands(b).from_bytes()).c_str(),
                          manifest.variants(static_cast<int>(manifest.bands(b).variant())).name().c_str());
            out << line << band_reason(manifest, b) << alternatives_text(manifest, manifest.bands(b).alternatives())
                << "\n";
        }
    }
    out << "allgatherv (blocking, nonblocking): " << variable_line(manifest, 2)
        << "alltoallv (blocking, nonblocking): " << variable_line(manifest, 3)
        << "(persistent v-variants: the bands, at the mean bytes per edge over all ranks)\n";
    for (const auto& candidate : manifest.candidates()) {
        if (!candidate.note().empty()) out << "note: " << candidate.name() << ": " << candidate.note() << "\n";
    }
    for (int c = 0; c < 4; ++c) format_predictions(out, manifest, c);
    return out.str();
}

std::string format_auto_json(const schema::Manifest& manifest) {
    std::ostringstream out;
    out << "{\n  \"algorithm\": \"auto\", \"ranks\": " << manifest.num_ranks()
        << ", \"edges\": " << manifest.num_edges() << ",\n  \"source\": " << json_string(manifest.source())
        << ", \"machine\": " << json_string(manifest.machine())
        << ", \"placement\": " << json_string(manifest.placement()) << ", \"margin\": " << number(manifest.margin())
        << ", \"margin_source\": " << json_string(manifest.margin_source()) << ",\n  \"candidate_selectors\": [";
    for (int i = 0; i < manifest.candidate_selectors_size(); ++i)
        out << (i ? ", " : "") << json_string(manifest.candidate_selectors(i));
    out << "],\n  \"sizes\": [";
    for (int s = 0; s < manifest.sizes_size(); ++s) out << (s ? ", " : "") << manifest.sizes(s);
    out << "],\n  \"margins\": [";
    for (int s = 0; s < manifest.sizes_size(); ++s) out << (s ? ", " : "") << number(margin_at(manifest, s));
    out << "],\n  \"variants\": [";
    for (int v = 0; v < manifest.variants_size(); ++v)
        out << (v ? ", " : "") << json_string(manifest.variants(v).name());
    out << "],\n  \"shared_files\": [";  // variants forwarding another's schedules in segments
    bool first = true;
    for (const auto& v : manifest.variants()) {
        if (v.files().empty()) continue;
        out << (first ? "" : ", ") << "{\"variant\": " << json_string(v.name())
            << ", \"files\": " << json_string(v.files()) << ", \"segment_bytes\": " << v.segment_bytes() << "}";
        first = false;
    }
    out << "],\n  \"bands\": [";
    for (int b = 0; b < manifest.bands_size(); ++b) {
        const auto& band = manifest.bands(b);
        out << (b ? ",\n" : "\n") << "    {\"collective\": \""
            << kCollectiveNames[band.collective() == schema::ALLGATHER ? 0 : 1]
            << "\", \"from_bytes\": " << band.from_bytes()
            << ", \"variant\": " << json_string(manifest.variants(static_cast<int>(band.variant())).name())
            << ", \"reason\": " << json_string(band_reason(manifest, b))
            << ", \"alternatives\": " << alternatives_json(manifest, band.alternatives()) << "}";
    }
    out << "],\n  \"allgatherv_variant\": "
        << json_string(manifest.variants(static_cast<int>(manifest.allgatherv_variant())).name())
        << ", \"alltoallv_variant\": "
        << json_string(manifest.variants(static_cast<int>(manifest.alltoallv_variant())).name())
        << ", \"allgatherv_alternatives\": " << alternatives_json(manifest, manifest.allgatherv_alternatives())
        << ", \"alltoallv_alternatives\": " << alternatives_json(manifest, manifest.alltoallv_alternatives())
        << ", \"keep\": " << std::max<std::uint32_t>(1, manifest.keep()) << ", \"variable_bytes\": ";
    if (const auto bytes = variable_bytes(manifest)) {
        out << "[" << bytes->first << ", " << bytes->second
            << "], \"variable_bytes_source\": " << json_string(variable_source(manifest));
    } else {
        out << "null, \"variable_bytes_source\": null";
    }
    out << ",\n  \"candidates\": [";
    for (int i = 0; i < manifest.candidates_size(); ++i) {
        const auto& candidate = manifest.candidates(i);
        out << (i ? ",\n" : "\n") << "    {\"name\": " << json_string(candidate.name())
            << ", \"algorithm\": " << json_string(candidate.algorithm()) << ", \"messages\": " << candidate.messages()
            << ", \"note\": " << json_string(candidate.note()) << ", \"same_schedules_as\": ";
        const auto* same = same_schedules(manifest, i);
        out << (same != nullptr ? json_string(same->name()) : std::string("null"));
        for (int c = 0; c < 4; ++c) {
            out << ", \"" << kCollectiveNames[c] << "_us\": [";
            const auto& list = latencies(candidate, c);
            for (int s = 0; s < list.size(); ++s) out << (s ? ", " : "") << number(list[s]);
            out << "]";
        }
        out << "}";
    }
    out << "]\n}\n";
    return out.str();
}

namespace {

const char* mode_text(schema::CallMode mode) {
    switch (mode) {
        case schema::BLOCKING: return "blocking";
        case schema::NONBLOCKING: return "nonblocking";
        case schema::PERSISTENT: return "persistent";
        default: return "?";
    }
}

/// ", decided by RULE" for the trials' rule a wisdom shape records, "" for none recorded.
std::string decision_text(schema::Decision decision) {
    switch (decision) {
        case schema::DECIDED_TOLD_APART: return ", decided by told_apart (the others told apart as slower)";
        case schema::DECIDED_LOWEST_MEDIAN: return ", decided by lowest_median (after the last round)";
        case schema::DECIDED_NAIVE_TIE: return ", decided by naive_tie (naive first in a near tie)";
        case schema::DECIDED_MODEL_TIE: return ", decided by model_tie (the model's order in a near tie)";
        case schema::DECIDED_SHARED_CORES: return ", decided by shared_cores (naive in contention on shared cores)";
        default: return "";
    }
}

/// The model's latency of candidate `name` for the shape (NaN if not predicted): the v
/// predictions for v-calls, at the simulated size nearest the shape's smallest block.
double predicted_us(const schema::Manifest& manifest, const schema::MeasuredShape& shape, const std::string& name) {
    const int i = candidate_index(manifest, name);
    if (i < 0 || manifest.sizes_size() == 0) return std::nan("");
    const int kind = (shape.collective() == schema::ALLGATHER ? 0 : 1) + (shape.variable() ? 2 : 0);
    const auto& list = latencies(manifest.candidates(i), kind);
    const bool sized = !shape.variable() || shape.mode() == schema::PERSISTENT;
    double bytes = shape.size_class() == 0 ? 1.0 : std::ldexp(1.0, static_cast<int>(shape.size_class()) - 1);
    if (!sized) bytes = std::max<double>(1.0, static_cast<double>(manifest.variable_from_bytes()));  // --v-bytes
    int nearest = 0;
    for (int s = 1; s < manifest.sizes_size(); ++s) {
        const auto gap = [&](int k) { return std::fabs(std::log(static_cast<double>(manifest.sizes(k)) / bytes)); };
        if (gap(s) < gap(nearest)) nearest = s;
    }
    return nearest < list.size() ? list[nearest] : std::nan("");
}

/// Why a wisdom file says nothing of this directory: which patterns its entries are for (a
/// pattern compiled again has a new compile id, and its old wisdom no longer applies).
std::string no_entry(const schema::Manifest& manifest, const schema::Wisdom& wisdom) {
    std::ostringstream out;
    out << "wisdom: no entry for this directory (compile id " << manifest.compile_id() << ")";
    if (wisdom.entries_size() == 0) {
        out << "; the file holds no entry\n";
        return out.str();
    }
    constexpr int kListed = 4;
    out << "; the file's " << wisdom.entries_size() << (wisdom.entries_size() == 1 ? " entry is" : " entries are")
        << " for compile id";
    for (int i = 0; i < wisdom.entries_size() && i < kListed; ++i) {
        const auto& entry = wisdom.entries(i);
        out << (i == 0 ? " " : ", ") << entry.compile_id() << " (" << entry.num_ranks() << " ranks)";
    }
    if (wisdom.entries_size() > kListed) out << ", ...";
    out << " (a pattern compiled again has a new compile id)\n";
    return out.str();
}

}  // namespace

std::string format_wisdom(const schema::Manifest& manifest, const schema::Wisdom& wisdom) {
    std::ostringstream out;
    int found = 0;
    for (const auto& entry : wisdom.entries()) {
        if (entry.compile_id() != manifest.compile_id()) continue;
        ++found;
        out << "wisdom: " << entry.num_ranks() << " ranks on " << entry.machine()
            << (entry.tag().empty() ? "" : " (tag '" + entry.tag() + "')") << "\n";
        for (const auto& shape : entry.shapes()) {
            const bool sized = !shape.variable() || shape.mode() == schema::PERSISTENT;
            const std::string bytes =
                !sized ? "any size"
                : shape.size_class() == 0
                    ? "0 B"
                    : byte_text(std::uint64_t{1} << (shape.size_class() - 1)) + "-" +
                          byte_text(shape.size_class() >= 64 ? UINT64_MAX
                                                             : (std::uint64_t{1} << shape.size_class()) - 1);
            out << "  "
                << kCollectiveNames[(shape.collective() == schema::ALLGATHER ? 0 : 1) + (shape.variable() ? 2 : 0)]
                << " " << mode_text(shape.mode()) << " " << bytes << ": measured " << shape.winner()
                << decision_text(shape.decision()) << "\n";
            for (const auto& candidate : shape.candidates()) {
                char line[160];
                std::snprintf(line, sizeof line, "    %-28s measured %10.2f us  model %10.2f us  (%llu samples)\n",
                              candidate.name().c_str(), candidate.median_us(),
                              predicted_us(manifest, shape, candidate.name()),
                              static_cast<unsigned long long>(candidate.samples()));
                out << line;
            }
        }
    }
    if (found == 0) out << no_entry(manifest, wisdom);
    return out.str();
}

}  // namespace nbr::compiler
