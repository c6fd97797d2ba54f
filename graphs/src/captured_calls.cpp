#include "nbr/graphs/captured_calls.hpp"

#include <algorithm>
#include <vector>

#include "nbr/schema/file_io.hpp"
#include "text_input.hpp"

namespace nbr {

namespace {

using internal::excerpt;
using internal::fields_of;
using internal::LineReader;
using internal::parse_unsigned;
using internal::where;

constexpr std::array<std::string_view, kCallKinds> kKindNames{"allgather", "alltoall", "allgatherv", "alltoallv"};
constexpr std::string_view kColumns = "kind calls block_min block_max mean_min mean_max edges bytes";
constexpr std::size_t kFields = 8;

/// Reads the "# nbr capture calls N" line (only blank lines may precede it).
void read_format_line(LineReader& lines, const std::string& source) {
    std::string_view line;
    while (lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty()) continue;
        std::uint32_t format = 0;
        if (fields.size() != 5 || fields[0] != "#" || fields[1] != "nbr" || fields[2] != "capture" ||
            fields[3] != "calls" || !parse_unsigned(fields[4], format) || format == 0) {
            throw InputError(where(source, lines.number()) + "expected '# nbr capture calls N' first, got '" +
                             excerpt(line) + "'");
        }
        if (format > kCapturedCallsFormat) {
            throw InputError(where(source, lines.number()) + "calls format " + std::to_string(format) +
                             " is newer than this build reads (" + std::to_string(kCapturedCallsFormat) +
                             "): update nbr");
        }
        return;
    }
    throw InputError(source + ": empty (expected '# nbr capture calls N')");
}

CallStats parse_stats(const std::vector<std::string_view>& fields, const std::string& at) {
    std::array<std::uint64_t, kFields - 1> v{};
    for (std::size_t i = 1; i < kFields; ++i) {
        if (!parse_unsigned(fields[i], v[i - 1])) throw InputError(at + "not a count: '" + excerpt(fields[i]) + "'");
    }
    const CallStats s{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    if (s.block_min > s.block_max || s.mean_min > s.mean_max) throw InputError(at + "a minimum above its maximum");
    return s;
}

}  // namespace

std::string_view to_string(CallKind kind) {
    return kKindNames.at(static_cast<std::size_t>(kind));
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> CapturedCalls::variable_bytes() const {
    std::optional<std::pair<std::uint64_t, std::uint64_t>> range;
    for (const CallKind k : {CallKind::allgatherv, CallKind::alltoallv}) {
        const CallStats& s = (*this)[k];
        if (s.calls == 0 || s.edges == 0 || s.mean_max == 0) continue;
        if (!range) range = {s.mean_min, s.mean_max};
        range->first = std::min(range->first, s.mean_min);
        range->second = std::max(range->second, s.mean_max);
    }
    return range;
}

std::string format_captured_calls(const CapturedCalls& calls) {
    std::string text = "# nbr capture calls " + std::to_string(kCapturedCallsFormat) + "\n";
    text += "# the neighborhood collectives called on this communicator (libnbr-capture); bytes per block on\n";
    text += "# the send side; a call's mean: a rank's bytes over its out-edges; persistent requests once\n";
    text.append("# ").append(kColumns).append("\n");
    for (std::size_t k = 0; k < kCallKinds; ++k) {
        const CallStats& s = calls.kinds[k];
        text.append(kKindNames[k]);
        for (const auto v : {s.calls, s.block_min, s.block_max, s.mean_min, s.mean_max, s.edges, s.bytes}) {
            text.append(" ").append(std::to_string(v));
        }
        text += "\n";
    }
    return text;
}

CapturedCalls parse_captured_calls(std::string_view text, const std::string& source) {
    LineReader lines(text);
    read_format_line(lines, source);
    CapturedCalls calls;
    std::array<bool, kCallKinds> seen{};
    std::string_view line;
    while (lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty() || fields[0].front() == '#') continue;
        const std::string at = where(source, lines.number());
        const auto* name = std::find(kKindNames.begin(), kKindNames.end(), fields[0]);
        if (name == kKindNames.end()) throw InputError(at + "unknown collective '" + excerpt(fields[0]) + "'");
        const auto k = static_cast<std::size_t>(name - kKindNames.begin());
        if (seen[k]) throw InputError(at + std::string(*name) + " listed twice");
        if (fields.size() != kFields) {
            throw InputError(at + "expected " + std::to_string(kFields) + " fields (" + std::string(kColumns) +
                             "), got " + std::to_string(fields.size()));
        }
        calls.kinds[k] = parse_stats(fields, at);
        seen[k] = true;
    }
    for (std::size_t k = 0; k < kCallKinds; ++k) {
        if (!seen[k]) throw InputError(source + ": no line for " + std::string(kKindNames[k]));
    }
    return calls;
}

std::optional<CapturedCalls> read_captured_calls(const std::filesystem::path& capture_dir) {
    const auto path = capture_dir / kCaptureCallsFile;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    return parse_captured_calls(internal::load(path.string()), path.string());
}

void write_captured_calls(const std::filesystem::path& capture_dir, const CapturedCalls& calls) {
    replace_whole_file(capture_dir / kCaptureCallsFile, format_captured_calls(calls));
}

}  // namespace nbr
