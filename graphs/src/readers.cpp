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
#include <numeric>
#include <span>
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

namespace {

/// What the header and size line of a Matrix Market file declare.
struct MatrixMarketShape {
    std::uint64_t rows = 0, cols = 0, entries = 0;
    int value_columns = 0;  ///< per entry line: 0 (pattern), 1 (real, integer) or 2 (complex)
    bool general = true;    ///< false: symmetric, skew-symmetric or hermitian (A(j,i) implied)
    std::string field, symmetry;
    std::uint32_t parts = 0;  ///< ranks: rows and columns are split into this many blocks
};

/// The field and symmetry of a Matrix Market header line. @throws InputError naming line 1.
void parse_mtx_banner(std::string_view line, const std::string& path, MatrixMarketShape& shape) {
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
    shape.field = lower(header[3]);
    if (shape.field == "pattern") {
        shape.value_columns = 0;
    } else if (shape.field == "integer" || shape.field == "real" || shape.field == "double") {
        shape.value_columns = 1;
    } else if (shape.field == "complex") {
        shape.value_columns = 2;
    } else {
        throw InputError(where(path, 1) + "unknown field '" + excerpt(header[3]) + "'");
    }
    shape.symmetry = lower(header[4]);
    const std::string& symmetry = shape.symmetry;
    shape.general = symmetry == "general";
    if (!shape.general && symmetry != "symmetric" && symmetry != "skew-symmetric" && symmetry != "hermitian") {
        throw InputError(where(path, 1) + "unknown symmetry '" + excerpt(header[4]) + "'");
    }
    if (symmetry == "hermitian" && shape.field != "complex") {
        throw InputError(where(path, 1) + "hermitian symmetry needs complex values");
    }
}

/// Reads the header and the size line, checks them against the rank limit and the bytes that
/// follow, and leaves `lines` at the first entry. @throws InputError naming file and line.
template <class Lines>
MatrixMarketShape read_mtx_shape(Lines& lines, const std::string& path, std::optional<std::uint32_t> ranks,
                                 std::uint32_t max_ranks) {
    MatrixMarketShape shape;
    std::string_view line;
    if (!lines.next(line)) throw InputError(path + ": empty file");
    parse_mtx_banner(line, path, shape);
    std::size_t size_line = 0;
    while (size_line == 0 && lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty() || fields[0].front() == '%') continue;
        if (fields.size() != 3 || !parse_unsigned(fields[0], shape.rows) || !parse_unsigned(fields[1], shape.cols) ||
            !parse_unsigned(fields[2], shape.entries)) {
            throw InputError(where(path, lines.number()) + "expected the size line 'rows cols entries'");
        }
        size_line = lines.number();
    }
    if (size_line == 0) throw InputError(path + ": size line missing (file truncated?)");
    if (shape.rows == 0 || shape.cols == 0) throw InputError(path + ": matrix has no rows or no columns");
    if (!shape.general && shape.rows != shape.cols) {
        throw InputError(path + ": " + shape.symmetry + " matrix must be square, is " + std::to_string(shape.rows) +
                         "x" + std::to_string(shape.cols));
    }
    if (!ranks && shape.rows > max_ranks) {
        throw InputError(where(path, size_line) + std::to_string(shape.rows) +
                         " rows, one rank per row: " + too_many_ranks(shape.rows, max_ranks) + "; give --ranks");
    }
    if (ranks && *ranks > max_ranks) throw InputError(path + ": " + too_many_ranks(*ranks, max_ranks));
    shape.parts = ranks ? *ranks : static_cast<std::uint32_t>(shape.rows);
    if (shape.parts == 0) throw InputError(path + ": number of ranks must be positive");
    // Every entry line takes at least 4 bytes ("1 1" and a line end; the last may lack it).
    const std::uint64_t room = lines.remaining() / 4 + 1;
    if (shape.entries > room) {
        throw InputError(where(path, size_line) + "declares " + std::to_string(shape.entries) + " entries, but the " +
                         std::to_string(lines.remaining()) + " bytes after it hold at most " + std::to_string(room) +
                         " (file truncated?)");
    }
    return shape;
}

/// Checks one entry line and returns its 0-based (row, column). @throws InputError.
template <class Lines>
std::pair<std::uint64_t, std::uint64_t> parse_mtx_entry(std::span<const std::string_view> fields, const Lines& lines,
                                                        const MatrixMarketShape& shape, const std::string& path) {
    if (fields.size() != static_cast<std::size_t>(2 + shape.value_columns)) {
        throw InputError(where(path, lines.number()) + "expected " + std::to_string(2 + shape.value_columns) +
                         " columns for a '" + shape.field + "' matrix, found " + std::to_string(fields.size()) +
                         (lines.ends_with_newline() ? "" : " (file truncated?)"));
    }
    std::uint64_t i = 0, j = 0;
    if (!parse_unsigned(fields[0], i) || !parse_unsigned(fields[1], j)) {
        throw InputError(where(path, lines.number()) + "indices must be positive integers");
    }
    for (int v = 0; v < shape.value_columns; ++v) {
        if (!parse_number(fields[2 + v])) {
            throw InputError(where(path, lines.number()) + "bad value '" + excerpt(fields[2 + v]) + "'");
        }
    }
    if (i < 1 || i > shape.rows || j < 1 || j > shape.cols) {
        throw InputError(where(path, lines.number()) + "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                         ") outside the " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + " matrix");
    }
    return {i - 1, j - 1};
}

/// Checks every entry line after the size line and calls `emit(edge)` for each entry (and,
/// unless general, its implied transpose) whose row and column blocks differ: A(i,j) makes
/// the owner of x_j (column block) send to the owner of y_i (row block).
template <class Lines, class Emit>
void for_each_mtx_edge(Lines& lines, const MatrixMarketShape& shape, const std::string& path, const Emit& emit) {
    const auto pair = [&](std::uint64_t row, std::uint64_t col) {
        const auto col_owner = block_owner(col, shape.cols, shape.parts);
        const auto row_owner = block_owner(row, shape.rows, shape.parts);
        if (col_owner != row_owner) emit(Edge{col_owner, row_owner});
    };
    std::string_view line;
    std::uint64_t seen = 0;
    while (lines.next(line)) {
        const auto fields = fields_of(line);
        if (fields.empty() || fields[0].front() == '%') continue;
        if (seen == shape.entries) {
            throw InputError(where(path, lines.number()) + "more entries than the " + std::to_string(shape.entries) +
                             " the size line declares");
        }
        const auto [i, j] = parse_mtx_entry(fields, lines, shape, path);
        ++seen;
        pair(i, j);
        if (!shape.general && i != j) pair(j, i);
    }
    if (seen < shape.entries) {
        throw InputError(path + ": " + std::to_string(seen) + " entries found, " + std::to_string(shape.entries) +
                         " declared (file truncated?)");
    }
}

/// Sorts each source's targets, [offsets[r], offsets[r + 1]), and drops repeats, compacting
/// `targets` and `offsets` in place; returns each source's number of distinct targets.
std::vector<std::uint64_t> sort_unique_per_source(std::vector<std::uint64_t>& offsets,
                                                  std::vector<std::uint32_t>& targets) {
    const std::size_t sources = offsets.size() - 1;
    std::vector<std::uint64_t> count(sources, 0);
    std::uint64_t kept = 0;
    for (std::size_t r = 0; r < sources; ++r) {
        const auto first = targets.begin() + static_cast<std::ptrdiff_t>(offsets[r]);
        auto last = targets.begin() + static_cast<std::ptrdiff_t>(offsets[r + 1]);
        std::sort(first, last);
        last = std::unique(first, last);
        offsets[r] = kept;  // kept never passes the old offsets[r]
        std::copy(first, last, targets.begin() + static_cast<std::ptrdiff_t>(kept));
        count[r] = static_cast<std::uint64_t>(last - first);
        kept += count[r];
    }
    offsets[sources] = kept;
    targets.resize(kept);
    return count;
}

/// Reads a Matrix Market file in two passes over `make_lines()`, holding neither the text nor
/// an edge array: the first checks every line and counts each source rank's edges, the second
/// places their targets in one array, which is then sorted and freed of repeats per source.
/// The topology has each distinct (source, destination) pair once, in ascending order.
template <class MakeLines>
Topology parse_mtx(const MakeLines& make_lines, const std::string& path, std::optional<std::uint32_t> ranks,
                   std::uint32_t max_ranks) {
    MatrixMarketShape shape;
    std::vector<std::uint64_t> offsets;  // rank r's targets at [offsets[r], offsets[r + 1])
    {
        auto lines = make_lines();
        shape = read_mtx_shape(lines, path, ranks, max_ranks);
        offsets.assign(std::size_t{shape.parts} + 1, 0);
        for_each_mtx_edge(lines, shape, path, [&](const Edge& e) { ++offsets[e.src + 1]; });
    }
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    std::vector<std::uint32_t> targets(offsets.back());
    {
        std::vector<std::uint64_t> next(offsets.begin(), offsets.end() - 1);
        auto lines = make_lines();
        (void)read_mtx_shape(lines, path, ranks, max_ranks);
        for_each_mtx_edge(lines, shape, path, [&](const Edge& e) {
            if (next[e.src] == offsets[e.src + 1]) throw InputError(path + ": the file changed while being read");
            targets[next[e.src]++] = e.dst;
        });
    }
    std::vector<std::uint64_t> out_degree = sort_unique_per_source(offsets, targets);
    std::vector<std::uint64_t> in_degree(shape.parts, 0);
    for (const auto t : targets) ++in_degree[t];
    const auto for_each_edge = [&](const auto& emit) {
        for (std::uint32_t r = 0; r < shape.parts; ++r) {
            for (auto k = offsets[r]; k < offsets[r + 1]; ++k) emit(Edge{r, targets[k]});
        }
    };
    return Topology::from_counted_edges(shape.parts, std::move(out_degree), std::move(in_degree), for_each_edge);
}

}  // namespace

Topology read_matrix_market(const std::string& path, std::optional<std::uint32_t> ranks, std::uint32_t max_ranks) {
    return parse_mtx([&] { return internal::FileLineReader(path); }, path, ranks, max_ranks);
}

Topology parse_matrix_market(std::string_view text, const std::string& path, std::optional<std::uint32_t> ranks,
                             std::uint32_t max_ranks) {
    return parse_mtx([&] { return LineReader(text); }, path, ranks, max_ranks);
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
