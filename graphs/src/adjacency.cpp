#include "nbr/graphs/adjacency.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
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

/// The shortest rank line ("7:;") is 3 bytes plus a newline.
constexpr std::size_t kMinRankLineBytes = 4;

/// Reads the `# ranks N` line (only comments and blank lines may precede it).
std::uint32_t read_rank_count(LineReader& lines, const std::string& source, std::uint32_t max_ranks) {
    std::string_view line;
    while (lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty()) continue;
        if (fields[0] != "#") {
            if (fields[0].front() == '#') continue;
            throw InputError(where(source, lines.number()) + "expected '# ranks N' before the first rank line");
        }
        if (fields.size() != 3 || fields[1] != "ranks") continue;
        std::uint32_t n = 0;
        if (!parse_unsigned(fields[2], n) || n == 0) {
            throw InputError(where(source, lines.number()) + "bad '# ranks' value '" + excerpt(fields[2]) + "'");
        }
        if (n > max_ranks) {
            throw InputError(where(source, lines.number()) + std::to_string(n) + " ranks exceed the limit of " +
                             std::to_string(max_ranks) + " (raise it with --max-ranks)");
        }
        if (n > lines.remaining() / kMinRankLineBytes + 1) {
            throw InputError(where(source, lines.number()) + "declares " + std::to_string(n) +
                             " ranks, but the rest of the file holds at most " +
                             std::to_string(lines.remaining() / kMinRankLineBytes + 1) + " rank lines");
        }
        return n;
    }
    throw InputError(source + ": no '# ranks N' line");
}

/// Parses "a b c" into ranks below n.
void parse_list(std::string_view text, std::uint32_t n, std::vector<std::uint32_t>& list, const std::string& at) {
    for (const auto field : fields_of(text)) {
        std::uint32_t r = 0;
        if (!parse_unsigned(field, r)) throw InputError(at + "not a rank: '" + excerpt(field) + "'");
        if (r >= n) throw InputError(at + "rank " + std::to_string(r) + " out of range [0, " + std::to_string(n) + ")");
        list.push_back(r);
    }
}

}  // namespace

Topology parse_adjacency(std::string_view text, const std::string& source, std::uint32_t max_ranks) {
    LineReader lines(text);
    const std::uint32_t n = read_rank_count(lines, source, max_ranks);
    std::vector<std::vector<std::uint32_t>> in(n), out(n);
    std::vector<char> seen(n, 0);
    std::string_view line;
    while (lines.next(line)) {
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        if (fields_of(line).empty()) continue;
        const std::string at = where(source, lines.number());
        const auto colon = line.find(':');
        const auto semicolon = line.find(';');
        if (colon == std::string_view::npos || semicolon == std::string_view::npos || semicolon < colon) {
            throw InputError(at + "expected 'RANK: IN-NEIGHBORS ; OUT-NEIGHBORS', found '" + excerpt(line) + "'");
        }
        const auto head = fields_of(line.substr(0, colon));
        std::uint32_t rank = 0;
        if (head.size() != 1 || !parse_unsigned(head[0], rank) || rank >= n) {
            throw InputError(at + "bad rank '" + excerpt(line.substr(0, colon)) + "' for " + std::to_string(n) +
                             " ranks");
        }
        if (seen[rank] != 0) throw InputError(at + "rank " + std::to_string(rank) + " listed twice");
        seen[rank] = 1;
        parse_list(line.substr(colon + 1, semicolon - colon - 1), n, in[rank], at);
        parse_list(line.substr(semicolon + 1), n, out[rank], at);
    }
    for (std::uint32_t r = 0; r < n; ++r) {
        if (seen[r] == 0) throw InputError(source + ": rank " + std::to_string(r) + " has no line");
    }
    try {
        return Topology::from_adjacency(in, out);
    } catch (const InputError& error) {
        throw InputError(source + ": " + error.what());
    }
}

Topology read_adjacency(const std::string& path, std::uint32_t max_ranks) {
    return parse_adjacency(internal::load(path), path, max_ranks);
}

void write_adjacency(const std::filesystem::path& path, const Topology& topology, const std::string& comment) {
    // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on " " + std::to_string(...).
    std::string text;
    std::istringstream comment_lines(comment);
    for (std::string line; std::getline(comment_lines, line);) text.append("# ").append(line).append("\n");
    text.append("# ranks ").append(std::to_string(topology.num_ranks())).append("\n");
    for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) {
        text.append(std::to_string(r)).append(":");
        for (const auto s : topology.in_neighbors(r)) text.append(" ").append(std::to_string(s));
        text.append(" ;");
        for (const auto d : topology.out_neighbors(r)) text.append(" ").append(std::to_string(d));
        text.append("\n");
    }
    write_whole_file(path, text);
}

bool is_capture_dir(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_directory(path, ec) && std::filesystem::is_regular_file(path / kCaptureTopologyFile, ec);
}

std::vector<std::filesystem::path> list_capture_dirs(const std::filesystem::path& root) {
    std::vector<std::filesystem::path> captures;
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec) || is_capture_dir(root)) return captures;
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
        if (is_capture_dir(entry.path())) captures.push_back(entry.path());
    }
    std::sort(captures.begin(), captures.end());
    return captures;
}

}  // namespace nbr
