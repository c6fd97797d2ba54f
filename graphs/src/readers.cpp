#include "nbr/graphs/readers.hpp"
#include "nbr/graphs/adjacency.hpp"

#include "text_input.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

namespace nbr {

namespace {

using internal::excerpt;
using internal::fields_of;
using internal::LineReader;
using internal::load;
using internal::parse_unsigned;
using internal::where;

bool parse_number(std::string_view field) {
    // Value columns of Matrix Market files: any real number.
    if (field.empty()) return false;
    std::string copy(field);
    char* end = nullptr;
    (void)std::strtod(copy.c_str(), &end);
    return end == copy.c_str() + copy.size();
}

std::string too_many_ranks(std::uint64_t ranks, std::uint32_t max_ranks) {
    return std::to_string(ranks) + " ranks exceed the limit of " + std::to_string(max_ranks) +
           " (raise it with --max-ranks)";
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

std::optional<InputFormat> parse_input_format(std::string_view name) {
    if (name == "auto") return InputFormat::automatic;
    if (name == "edgelist") return InputFormat::edge_list;
    if (name == "mtx") return InputFormat::matrix_market;
    if (name == "adj") return InputFormat::adjacency;
    return std::nullopt;
}

std::uint32_t block_owner(std::uint64_t index, std::uint64_t count, std::uint32_t parts) {
    const std::uint64_t base = count / parts;
    const std::uint64_t extra = count % parts;
    const std::uint64_t big = extra * (base + 1);
    if (index < big) return static_cast<std::uint32_t>(index / (base + 1));
    return static_cast<std::uint32_t>(extra + (index - big) / base);
}

namespace {

/// One line of an edge list: a `# ranks N` directive (into `declared`), a comment or blank
/// line (false), or an edge (true, into `edge`). @throws InputError naming file and line.
template <class Lines>
bool parse_edge_line(std::string_view line, const Lines& lines, const std::string& path, std::uint32_t max_ranks,
                     std::optional<std::uint32_t>& declared, Edge& edge) {
    const auto hash = line.find('#');
    if (hash != std::string_view::npos) {
        const auto comment = fields_of(line.substr(hash + 1));
        if (hash == line.find_first_not_of(" \t") && comment.size() == 2 && comment[0] == "ranks") {
            std::uint32_t n = 0;
            if (!parse_unsigned(comment[1], n)) {
                throw InputError(where(path, lines.number()) + "bad '# ranks' value '" + excerpt(comment[1]) + "'");
            }
            if (n > max_ranks) throw InputError(where(path, lines.number()) + too_many_ranks(n, max_ranks));
            declared = n;
        }
        line = line.substr(0, hash);
    }
    const auto fields = fields_of(line);
    if (fields.empty()) return false;
    if (fields.size() < 2) {
        throw InputError(where(path, lines.number()) + "expected 'src dst', found '" + excerpt(line) + "'" +
                         (lines.ends_with_newline() ? "" : " (file truncated?)"));
    }
    std::uint64_t src = 0, dst = 0;
    if (!parse_unsigned(fields[0], src) || !parse_unsigned(fields[1], dst)) {
        throw InputError(where(path, lines.number()) + "ranks must be non-negative integers, found '" +
                         excerpt(fields[0]) + " " + excerpt(fields[1]) + "'");
    }
    if (std::max(src, dst) >= max_ranks) {
        throw InputError(where(path, lines.number()) + "rank " + std::to_string(std::max(src, dst)) + ": " +
                         too_many_ranks(std::max(src, dst) + 1, max_ranks));
    }
    edge = {static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(dst)};
    return true;
}

/// Reads an edge list in two passes over `make_lines()`, holding only the degree counts and
/// then the topology (not the edges, nor the text when the lines come from a file): the first
/// checks every line and counts, the second places the edges.
template <class MakeLines>
Topology parse_edges(const MakeLines& make_lines, const std::string& path, std::optional<std::uint32_t> ranks,
                     std::uint32_t max_ranks) {
    if (ranks && *ranks > max_ranks) throw InputError(path + ": " + too_many_ranks(*ranks, max_ranks));
    std::optional<std::uint32_t> declared;
    std::vector<std::uint64_t> out_degree, in_degree;  // grow with the largest rank seen
    std::uint64_t max_index = 0;
    bool any = false;
    {
        auto lines = make_lines();
        std::string_view line;
        Edge e;
        while (lines.next(line)) {
            if (!parse_edge_line(line, lines, path, max_ranks, declared, e)) continue;
            max_index = std::max<std::uint64_t>({max_index, e.src, e.dst});
            any = true;
            if (max_index >= out_degree.size()) {
                out_degree.resize(max_index + 1, 0);
                in_degree.resize(max_index + 1, 0);
            }
            ++out_degree[e.src];
            ++in_degree[e.dst];
        }
    }
    const std::uint32_t n =
        ranks ? *ranks : (declared ? *declared : (any ? static_cast<std::uint32_t>(max_index + 1) : 0));
    if (n == 0) throw InputError(path + ": no ranks (empty edge list and no '# ranks N' line)");
    // The edges that name a rank >= n (only if N was given): report the first one's line.
    const auto for_each_edge = [&](const std::function<void(const Edge&, std::size_t)>& emit) {
        auto lines = make_lines();
        std::string_view line;
        std::optional<std::uint32_t> ignored;
        Edge e;
        while (lines.next(line)) {
            if (parse_edge_line(line, lines, path, max_ranks, ignored, e)) emit(e, lines.number());
        }
    };
    if (any && max_index >= n) {
        for_each_edge([&](const Edge& e, std::size_t number) {
            if (std::max(e.src, e.dst) < n) return;
            throw InputError(where(path, number) + "rank " + std::to_string(std::max(e.src, e.dst)) +
                             " out of range [0, " + std::to_string(n) + ")");
        });
    }
    out_degree.resize(n, 0);
    in_degree.resize(n, 0);
    return Topology::from_counted_edges(n, std::move(out_degree), std::move(in_degree), [&](const auto& emit) {
        for_each_edge([&](const Edge& e, std::size_t) { emit(e); });
    });
}

}  // namespace

Topology read_edge_list(const std::string& path, std::optional<std::uint32_t> ranks, std::uint32_t max_ranks) {
    return parse_edges([&] { return internal::FileLineReader(path); }, path, ranks, max_ranks);
}

Topology parse_edge_list(std::string_view text, const std::string& path, std::optional<std::uint32_t> ranks,
                         std::uint32_t max_ranks) {
    return parse_edges([&] { return LineReader(text); }, path, ranks, max_ranks);
}

Topology read_matrix_market(const std::string& path, std::optional<std::uint32_t> ranks, std::uint32_t max_ranks) {
    return parse_matrix_market(load(path), path, ranks, max_ranks);
}

Topology parse_matrix_market(std::string_view text, const std::string& path, std::optional<std::uint32_t> ranks,
                             std::uint32_t max_ranks) {
    LineReader lines(text);
    std::string_view line;
    if (!lines.next(line)) throw InputError(path + ": empty file");
    const auto header = fields_of(line);
    if (header.size() != 5 || lower(header[0]) != "%%matrixmarket") {
        throw InputError(where(path, 1) +
                         "not a Matrix Market file (expected "
                         "'%%MatrixMarket matrix coordinate <field> <symmetry>')");
    }
    if (lower(header[1]) != "matrix") {
        throw InputError(where(path, 1) + "object '" + excerpt(header[1]) + "' is not supported, only 'matrix'");
    }
    if (lower(header[2]) != "coordinate") {
        throw InputError(where(path, 1) + "format '" + excerpt(header[2]) +
                         "' is not supported: a process graph needs a sparse 'coordinate' matrix");
    }
    const std::string field = lower(header[3]);
    int value_columns = 0;
    if (field == "pattern") {
        value_columns = 0;
    } else if (field == "integer" || field == "real" || field == "double") {
        value_columns = 1;
    } else if (field == "complex") {
        value_columns = 2;
    } else {
        throw InputError(where(path, 1) + "unknown field '" + excerpt(header[3]) + "'");
    }
    const std::string symmetry = lower(header[4]);
    const bool general = symmetry == "general";
    if (!general && symmetry != "symmetric" && symmetry != "skew-symmetric" && symmetry != "hermitian") {
        throw InputError(where(path, 1) + "unknown symmetry '" + excerpt(header[4]) + "'");
    }
    if (symmetry == "hermitian" && field != "complex") {
        throw InputError(where(path, 1) + "hermitian symmetry needs complex values");
    }

    // Size line after comments.
    std::uint64_t rows = 0, cols = 0, entries = 0;
    bool have_size = false;
    std::size_t size_line = 0;
    while (lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty() || fields[0].front() == '%') continue;
        if (fields.size() != 3 || !parse_unsigned(fields[0], rows) || !parse_unsigned(fields[1], cols) ||
            !parse_unsigned(fields[2], entries)) {
            throw InputError(where(path, lines.number()) + "expected the size line 'rows cols entries'");
        }
        have_size = true;
        size_line = lines.number();
        break;
    }
    if (!have_size) throw InputError(path + ": size line missing (file truncated?)");
    if (rows == 0 || cols == 0) throw InputError(path + ": matrix has no rows or no columns");
    if (!general && rows != cols) {
        throw InputError(path + ": " + symmetry + " matrix must be square, is " + std::to_string(rows) + "x" +
                         std::to_string(cols));
    }
    if (!ranks && rows > max_ranks) {
        throw InputError(where(path, size_line) + std::to_string(rows) +
                         " rows, one rank per row: " + too_many_ranks(rows, max_ranks) + "; give --ranks");
    }
    if (ranks && *ranks > max_ranks) throw InputError(path + ": " + too_many_ranks(*ranks, max_ranks));
    const std::uint32_t parts = ranks ? *ranks : static_cast<std::uint32_t>(rows);
    if (parts == 0) throw InputError(path + ": number of ranks must be positive");
    // Every entry line takes at least 4 bytes ("1 1" and a line end; the last may lack it).
    const std::uint64_t room = lines.remaining() / 4 + 1;
    if (entries > room) {
        throw InputError(where(path, size_line) + "declares " + std::to_string(entries) + " entries, but the " +
                         std::to_string(lines.remaining()) + " bytes after it hold at most " + std::to_string(room) +
                         " (file truncated?)");
    }

    std::vector<Edge> pairs;
    pairs.reserve(general ? entries : 2 * entries);
    std::uint64_t seen = 0;
    while (lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty() || fields[0].front() == '%') continue;
        if (seen == entries) {
            throw InputError(where(path, lines.number()) + "more entries than the " + std::to_string(entries) +
                             " the size line declares");
        }
        if (fields.size() != static_cast<std::size_t>(2 + value_columns)) {
            throw InputError(where(path, lines.number()) + "expected " + std::to_string(2 + value_columns) +
                             " columns for a '" + field + "' matrix, found " + std::to_string(fields.size()) +
                             (lines.ends_with_newline() ? "" : " (file truncated?)"));
        }
        std::uint64_t i = 0, j = 0;
        if (!parse_unsigned(fields[0], i) || !parse_unsigned(fields[1], j)) {
            throw InputError(where(path, lines.number()) + "indices must be positive integers");
        }
        for (int v = 0; v < value_columns; ++v) {
            if (!parse_number(fields[2 + v])) {
                throw InputError(where(path, lines.number()) + "bad value '" + excerpt(fields[2 + v]) + "'");
            }
        }
        if (i < 1 || i > rows || j < 1 || j > cols) {
            throw InputError(where(path, lines.number()) + "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                             ") outside the " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix");
        }
        ++seen;
        --i;
        --j;
        // A(i,j): the owner of x_j (column block) sends to the owner of y_i (row block).
        const auto col_owner = block_owner(j, cols, parts);
        const auto row_owner = block_owner(i, rows, parts);
        if (col_owner != row_owner) pairs.push_back({col_owner, row_owner});
        if (!general && i != j) {
            // The implied A(j,i).
            const auto col_owner_t = block_owner(i, cols, parts);
            const auto row_owner_t = block_owner(j, rows, parts);
            if (col_owner_t != row_owner_t) pairs.push_back({col_owner_t, row_owner_t});
        }
    }
    if (seen < entries) {
        throw InputError(path + ": " + std::to_string(seen) + " entries found, " + std::to_string(entries) +
                         " declared (file truncated?)");
    }
    std::sort(pairs.begin(), pairs.end(),
              [](const Edge& a, const Edge& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    return Topology::from_edges(parts, pairs);
}

Topology read_topology(const std::string& path, InputFormat format, std::optional<std::uint32_t> ranks,
                       std::uint32_t max_ranks) {
    const auto ends_with = [&](const char* suffix) {
        const std::string_view s(suffix);
        return path.size() >= s.size() && lower(path.substr(path.size() - s.size())) == s;
    };
    if (is_capture_dir(path))
        return read_topology((std::filesystem::path(path) / kCaptureTopologyFile).string(), InputFormat::adjacency,
                             ranks, max_ranks);
    if (format == InputFormat::automatic) {
        format = ends_with(".mtx")   ? InputFormat::matrix_market
                 : ends_with(".adj") ? InputFormat::adjacency
                                     : InputFormat::edge_list;
    }
    switch (format) {
        case InputFormat::matrix_market: return read_matrix_market(path, ranks, max_ranks);
        case InputFormat::adjacency: {
            Topology topology = read_adjacency(path, max_ranks);
            if (ranks && *ranks != topology.num_ranks()) {
                throw InputError(path + ": has " + std::to_string(topology.num_ranks()) + " ranks, --ranks says " +
                                 std::to_string(*ranks));
            }
            return topology;
        }
        default: return read_edge_list(path, ranks, max_ranks);
    }
}

void write_edge_list(const std::string& path, const Topology& topology, const std::string& comment) {
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) throw InputError(path + ": cannot create file");
    std::string buffer;
    if (!comment.empty()) {
        std::istringstream lines(comment);
        std::string text;
        while (std::getline(lines, text)) buffer += "# " + text + "\n";
    }
    buffer += "# ranks " + std::to_string(topology.num_ranks()) + "\n";
    char edge[32];
    for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) {
        for (auto d : topology.out_neighbors(r)) {
            const int len = std::snprintf(edge, sizeof edge, "%u %u\n", r, d);
            buffer.append(edge, static_cast<std::size_t>(len));
        }
        if (buffer.size() > (1u << 20)) {
            std::fwrite(buffer.data(), 1, buffer.size(), file);
            buffer.clear();
        }
    }
    std::fwrite(buffer.data(), 1, buffer.size(), file);
    if (std::fclose(file) != 0) throw InputError(path + ": write failed");
}

}  // namespace nbr
