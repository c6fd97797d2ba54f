#include "app_support.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

namespace example {

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double uniform(std::uint64_t& state) {
    return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

Csr csr_from_triplets(std::int64_t rows, std::int64_t cols, std::vector<std::pair<std::int64_t, std::int64_t>> at,
                      std::vector<double> values, std::string name) {
    std::vector<std::size_t> order(at.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return at[x] < at[y]; });
    Csr a;
    a.rows = rows;
    a.cols = cols;
    a.name = std::move(name);
    a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (std::size_t k = 0; k < order.size(); ++k) {
        const auto [i, j] = at[order[k]];
        if (k > 0 && at[order[k - 1]] == at[order[k]]) {
            a.val.back() += values[order[k]];
            continue;
        }
        a.col.push_back(j);
        a.val.push_back(values[order[k]]);
        ++a.row_ptr[static_cast<std::size_t>(i) + 1];
    }
    std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
    return a;
}

namespace {

[[noreturn]] void bad_line(const std::string& path, std::int64_t line, const std::string& what) {
    throw InputError(path + ":" + std::to_string(line) + ": " + what);
}

struct MatrixMarketHeader {
    bool pattern = false;
    bool symmetric = false;
    bool skew = false;
};

MatrixMarketHeader parse_banner(const std::string& path, const std::string& banner) {
    std::istringstream in(banner);
    std::string tag, object, format, field, symmetry;
    in >> tag >> object >> format >> field >> symmetry;
    for (auto* s : {&object, &format, &field, &symmetry}) std::transform(s->begin(), s->end(), s->begin(), ::tolower);
    if (tag != "%%MatrixMarket" || object != "matrix") bad_line(path, 1, "not a Matrix Market matrix file");
    if (format != "coordinate") bad_line(path, 1, "only coordinate (sparse) files are read, not '" + format + "'");
    if (field != "real" && field != "integer" && field != "pattern") {
        bad_line(path, 1, "field '" + field + "' is not read (real, integer or pattern)");
    }
    if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric") {
        bad_line(path, 1, "symmetry '" + symmetry + "' is not read (general, symmetric or skew-symmetric)");
    }
    return {field == "pattern", symmetry != "general", symmetry == "skew-symmetric"};
}

}  // namespace

Csr read_matrix_market(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open");
    std::string line;
    if (!std::getline(in, line)) throw InputError(path + ":1: empty file");
    const MatrixMarketHeader header = parse_banner(path, line);
    std::int64_t number = 1;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line[0] != '%') break;
    }
    std::int64_t rows = 0, cols = 0, entries = 0;
    if (std::istringstream size(line); !(size >> rows >> cols >> entries) || rows <= 0 || cols <= 0 || entries < 0) {
        bad_line(path, number, "expected 'rows cols entries' (positive sizes)");
    }
    if (header.symmetric && rows != cols) bad_line(path, number, "a symmetric matrix must be square");
    if (entries > (std::int64_t{1} << 32)) bad_line(path, number, "more entries than the examples read");
    std::vector<std::pair<std::int64_t, std::int64_t>> at;
    std::vector<double> values;
    for (std::int64_t e = 0; e < entries; ++e) {
        if (!std::getline(in, line)) bad_line(path, number, "the file ends after " + std::to_string(e) + " entries");
        ++number;
        std::istringstream entry(line);
        std::int64_t i = 0, j = 0;
        double v = 1.0;
        if (!(entry >> i >> j) || (!header.pattern && !(entry >> v)))
            bad_line(path, number, "expected 'row col value'");
        if (i < 1 || i > rows || j < 1 || j > cols) bad_line(path, number, "index out of range");
        at.emplace_back(i - 1, j - 1);
        values.push_back(v);
        if (header.symmetric && i != j) {
            at.emplace_back(j - 1, i - 1);
            values.push_back(header.skew ? -v : v);
        }
    }
    const std::string name = path.substr(path.find_last_of('/') + 1);
    Csr a = csr_from_triplets(rows, cols, std::move(at), std::move(values), name);
    a.symmetric = header.symmetric && !header.skew;
    return a;
}

Csr stencil_matrix(int n, int points) {
    if (n < 1 || (points != 7 && points != 27)) throw InputError("stencil: n ≥ 1 and 7 or 27 points");
    Csr a;
    a.rows = a.cols = std::int64_t{n} * n * n;
    a.symmetric = true;
    a.name = "stencil" + std::to_string(points) + "-" + std::to_string(n);
    for (int z = 0; z < n; ++z) {
        for (int y = 0; y < n; ++y) {
            for (int x = 0; x < n; ++x) {
                const std::size_t first = a.col.size();
                std::size_t diagonal = 0;
                for (int dz = -1; dz <= 1; ++dz) {
                    for (int dy = -1; dy <= 1; ++dy) {
                        for (int dx = -1; dx <= 1; ++dx) {
                            const int far = std::abs(dx) + std::abs(dy) + std::abs(dz);
                            if (points == 7 && far > 1) continue;
                            const int nx = x + dx, ny = y + dy, nz = z + dz;
                            if (nx < 0 || ny < 0 || nz < 0 || nx >= n || ny >= n || nz >= n) continue;
                            if (far == 0) diagonal = a.col.size();
                            a.col.push_back((std::int64_t{nz} * n + ny) * n + nx);
                            a.val.push_back(-1.0);
                        }
                    }
                }
                a.val[diagonal] = static_cast<double>(a.col.size() - first);  // neighbors + 1
                a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
            }
        }
    }
    return a;
}

Csr random_matrix(std::int64_t n, double density, std::uint64_t seed) {
    if (n < 1 || !(density >= 0.0 && density <= 1.0)) throw InputError("random: n ≥ 1 and 0 ≤ density ≤ 1");
    Csr a;
    a.rows = a.cols = n;
    a.name = "random-" + std::to_string(n);
    const double skip_scale = density < 1.0 ? 1.0 / std::log1p(-density) : 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        std::uint64_t state = seed ^ (static_cast<std::uint64_t>(i) * 0xd1b54a32d192ed03ULL);
        std::int64_t j = -1;
        while (density > 0.0) {
            // Geometric skip to the next present column.
            const double u = 1.0 - uniform(state);
            j += 1 + (density < 1.0 ? static_cast<std::int64_t>(std::floor(std::log(u) * skip_scale)) : 0);
            if (j >= n || j < 0) break;
            if (j == i) continue;
            a.col.push_back(j);
            a.val.push_back(2.0 * uniform(state) - 1.0);
        }
        const auto at = std::lower_bound(a.col.begin() + a.row_ptr.back(), a.col.end(), i) - a.col.begin();
        a.col.insert(a.col.begin() + at, i);
        a.val.insert(a.val.begin() + at, static_cast<double>(n));
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
    return a;
}

Csr rmat_matrix(int scale, int edge_factor, std::uint64_t seed, bool symmetric) {
    if (scale < 1 || scale > 30 || edge_factor < 1) throw InputError("rmat: 1 ≤ scale ≤ 30 and edge factor ≥ 1");
    const std::int64_t n = std::int64_t{1} << scale;
    const std::int64_t generated = n * edge_factor;
    std::vector<std::pair<std::int64_t, std::int64_t>> at;
    std::vector<double> values;
    std::uint64_t state = seed;
    for (std::int64_t e = 0; e < generated; ++e) {
        std::int64_t i = 0, j = 0;
        for (int level = 0; level < scale; ++level) {
            const double u = uniform(state);
            const int quadrant = u < 0.57 ? 0 : u < 0.76 ? 1 : u < 0.95 ? 2 : 3;
            i = 2 * i + (quadrant >> 1);
            j = 2 * j + (quadrant & 1);
        }
        const double v = 1.0 - uniform(state);
        if (i == j) continue;
        at.emplace_back(i, j);
        values.push_back(v);
        if (symmetric) {
            at.emplace_back(j, i);
            values.push_back(v);
        }
    }
    Csr a = csr_from_triplets(n, n, std::move(at), std::move(values), "rmat-" + std::to_string(scale));
    a.symmetric = symmetric;
    return a;
}

namespace {

/// The blocks other than p's own that row block p of A touches, sorted.
std::vector<int> touched_blocks(const Csr& a, const Block& rows, const Block& cols, int p) {
    std::vector<int> blocks;
    for (std::int64_t i = rows.lo(p); i < rows.hi(p); ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            const int q = cols.owner(a.col[k]);
            if (q != p) blocks.push_back(q);
        }
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    return blocks;
}

}  // namespace

ProcessNeighbors product_neighbors(const Csr& a, const Block& rows, const Block& cols, int rank) {
    ProcessNeighbors mine;
    mine.sources = touched_blocks(a, rows, cols, rank);
    for (int p = 0; p < rows.parts; ++p) {
        if (p == rank) continue;
        const std::vector<int> of_p = touched_blocks(a, rows, cols, p);
        if (std::binary_search(of_p.begin(), of_p.end(), rank)) mine.destinations.push_back(p);
    }
    return mine;
}

void for_each_product_edge(const Csr& a, int ranks, const std::function<void(int, int)>& edge) {
    const Block rows{a.rows, ranks};
    const Block cols{a.cols, ranks};
    for (int p = 0; p < ranks; ++p) {
        for (int q : touched_blocks(a, rows, cols, p)) edge(q, p);
    }
}

void write_edge_list(const std::string& path, int ranks, const std::vector<std::pair<int, int>>& edges,
                     const std::string& comment) {
    const std::string temp = path + ".partial";
    {
        std::ofstream out(temp);
        if (!out) throw InputError(path + ": cannot write");
        out << "# " << comment << "\n# ranks " << ranks << "\n";
        for (const auto& [q, p] : edges) out << q << ' ' << p << '\n';
        out.flush();
        if (!out) throw InputError(path + ": write failed");
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) throw InputError(path + ": cannot rename into place");
}

void add_matrix_options(CLI::App& app, MatrixChoice& choice) {
    auto* file = app.add_option("--matrix", choice.file, "Matrix Market file (coordinate; real, integer or pattern)")
                     ->check(CLI::ExistingFile);
    auto* stencil =
        app.add_option("--stencil", choice.stencil, "3-D stencil matrix on an N×N×N grid")->check(CLI::PositiveNumber);
    app.add_option("--points", choice.points, "Stencil points: 7 or 27")->check(CLI::IsMember({7, 27}));
    auto* random =
        app.add_option("--random", choice.random, "Erdős–Rényi matrix with N rows")->check(CLI::PositiveNumber);
    app.add_option("--density", choice.density, "Erdős–Rényi: probability of each entry")->check(CLI::Range(0.0, 1.0));
    auto* rmat =
        app.add_option("--rmat", choice.rmat, "R-MAT (power-law) matrix with 2^SCALE rows")->check(CLI::Range(1, 30));
    app.add_option("--edge-factor", choice.edge_factor, "R-MAT: generated entries per row")->check(CLI::PositiveNumber);
    app.add_option("--seed", choice.seed, "Seed of the generated matrices");
    file->excludes(stencil)->excludes(random)->excludes(rmat);
    stencil->excludes(random)->excludes(rmat);
    random->excludes(rmat);
}

Csr build_matrix(const MatrixChoice& choice, int default_stencil, bool symmetric) {
    if (!choice.file.empty()) return read_matrix_market(choice.file);
    if (choice.random > 0) return random_matrix(choice.random, choice.density, choice.seed);
    if (choice.rmat > 0) return rmat_matrix(choice.rmat, choice.edge_factor, choice.seed, symmetric);
    return stencil_matrix(choice.stencil > 0 ? choice.stencil : default_stencil, choice.points);
}

void add_topology_option(CLI::App& app, TopologyRequest& request) {
    app.add_option_function<std::pair<int, std::string>>(
           "--write-topology",
           [&request](const std::pair<int, std::string>& value) {
               if (value.first < 1) throw CLI::ValidationError("--write-topology", "N must be positive");
               request.ranks = value.first;
               request.file = value.second;
           },
           "Write the process graph at N ranks to FILE (an edge list for nbrc); no run")
        ->type_name("N FILE");
}

std::int64_t product_halo_entries(const Csr& a, int ranks) {
    const Block rows{a.rows, ranks}, cols{a.cols, ranks};
    std::int64_t total = 0;
    std::vector<std::int64_t> touched;
    for (int p = 0; p < ranks; ++p) {
        touched.clear();
        for (std::int64_t k = a.row_ptr[rows.lo(p)]; k < a.row_ptr[rows.hi(p)]; ++k) {
            if (cols.owner(a.col[k]) != p) touched.push_back(a.col[k]);
        }
        std::sort(touched.begin(), touched.end());
        total += std::unique(touched.begin(), touched.end()) - touched.begin();
    }
    return total;
}

void print_traffic(const std::string& program, int ranks, const Traffic& traffic) {
    std::string calls;
    for (const auto& [collective, bytes] : traffic.calls) {
        calls += (calls.empty() ? "" : ", ") + collective + " " + std::to_string(bytes) + " B";
    }
    std::printf("%s: at %d ranks, per %s: %s%s\n", program.c_str(), ranks, traffic.step.c_str(), calls.c_str(),
                traffic.note.empty() ? "" : (" (" + traffic.note + ")").c_str());
}

int write_product_topology(const Csr& a, const TopologyRequest& request, const std::string& program,
                           const std::string& graph, const std::string& collective, MPI_Comm comm,
                           const std::function<Traffic(std::size_t edges)>& traffic) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0) return 0;
    std::vector<std::pair<int, int>> edges;
    for_each_product_edge(a, request.ranks, [&](int q, int p) { edges.emplace_back(q, p); });
    write_edge_list(request.file, request.ranks, edges,
                    program + " " + graph + " of " + a.name + " (" + collective + ")");
    std::printf("%s: wrote the %s of %s at %d ranks (%zu edges) to %s\n", program.c_str(), graph.c_str(),
                a.name.c_str(), request.ranks, edges.size(), request.file.c_str());
    print_traffic(program, request.ranks, traffic(edges.size()));
    return 0;
}

int run_program(int argc, char** argv, CLI::App& app, const std::function<int(MPI_Comm)>& body) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int code = 0;
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        code = rank == 0 ? app.exit(e) : e.get_exit_code();
        MPI_Finalize();
        return code;
    }
    try {
        code = body(MPI_COMM_WORLD);
    } catch (const InputError& e) {
        if (rank == 0) std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
        code = 2;
    }
    MPI_Finalize();
    return code;
}

long count_failures(long mine, MPI_Comm comm) {
    long total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, comm);
    return total;
}

double max_over_ranks(double mine, MPI_Comm comm) {
    double most = 0.0;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
    return most;
}

}  // namespace example
