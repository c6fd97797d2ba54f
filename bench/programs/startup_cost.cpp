// nbr-startup-bench: the product's central claim, measured in one job. For patterns of
// increasing degree it times, per rank (maximum over ranks, median over repeats):
//   online  - computing the pattern in the job: the compiler's algorithm with P = N (one
//             virtual rank per process), derived receives and the rank's pattern, no file I/O;
//   offline - nbr_load_pattern of the precompiled directory (read, check, plan).
//
//   mpirun -np N nbr-startup-bench [--degrees 2,4,8,...] [--graph random|circulant]
//                                  [--algo common-neighbor] [--repeats 5] [--patterns DIR,...]
// Topology of degree d (d < N): random (default), Erdős–Rényi with δ = d / (N - 1), seed 1,
// so the mean out-degree is d; circulant, rank r sends to r+1 .. r+d (mod N), a worst case
// for the friend matching (its pairings resolve one after another along the ring).
//
// --patterns adds load-only rows for pattern directories compiled beforehand with nbrc (the
// product's workflow): the load cost of high-degree patterns can be measured in jobs where
// simulating the online construction would take too long (bench/smpi_startup/README.md).
//
// Built for SimGrid SMPI (NBR_SMPI) it runs jobs of thousands of ranks on one machine: run it
// with smpi/simulate-computation:yes so that each rank's computation is timed on the host
// and charged to the simulated clock (bench/smpi_startup/run.sh).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#if defined(NBR_SMPI)
// smpicxx injects an exit() macro (smpi_helpers.h) that breaks CLI11's App::exit; this
// program leaves main by returning, so the macro is not needed.
#undef exit
#endif
#include <mpi.h>
#include <CLI/CLI.hpp>

#include "nbr.h"
#include "nbr/common/mpi_program.hpp"
#include "nbr/compiler/algorithm_cli.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/pattern_builder.hpp"
#include "nbr/graphs/generators.hpp"

namespace {

double max_over_ranks(double mine) {
    double result = 0;
    MPI_Allreduce(&mine, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return result;
}

std::uint64_t sum_over_ranks(std::uint64_t mine) {
    std::uint64_t result = 0;
    MPI_Allreduce(&mine, &result, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return result;
}

struct Degrees {
    double mean = 0;
    double max = 0;
};

/// Times nbr_load_pattern of `dir` (read, check, plan), maximum over ranks; on success and if
/// `degrees` is given also reports the pattern's mean and maximum out-degree. Returns false
/// (message on rank 0) if loading failed on any rank.
bool time_load(const std::string& dir, int rank, double& seconds, Degrees* degrees = nullptr) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    nbr_pattern_t pattern = nullptr;
    const int err = nbr_load_pattern(dir.c_str(), MPI_COMM_WORLD, &pattern);
    seconds = max_over_ranks(MPI_Wtime() - t0);
    if (err != NBR_SUCCESS) {
        if (rank == 0)
            std::fprintf(stderr, "nbr-startup-bench: loading %s failed: %s\n", dir.c_str(), nbr_last_error());
        return false;
    }
    if (degrees != nullptr) {
        int indegree = 0, outdegree = 0;
        nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        degrees->mean = static_cast<double>(sum_over_ranks(static_cast<std::uint64_t>(outdegree))) / size;
        degrees->max = max_over_ranks(outdegree);
    }
    nbr_pattern_free(&pattern);
    return true;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

struct Settings {
    std::vector<std::uint32_t> degrees{2, 4, 8, 16, 32, 64, 128, 256, 512, 1000};
    std::vector<std::string> pattern_dirs;
    std::string algo = "common-neighbor";
    nbr::compiler::AlgorithmKind kind = nbr::compiler::AlgorithmKind::common_neighbor;
    nbr::compiler::AlgorithmOptions options;
    std::string graph = "random";
    int repeats = 5;
};

/// The command line into `s`; an exit code if the program is done (help, usage error).
std::optional<int> parse(int argc, char** argv, int rank, Settings& s) {
    CLI::App app{"nbr-startup-bench: online pattern construction vs nbr_load_pattern"};
    auto* degrees_option = app.add_option("--degrees", s.degrees, "Out-degrees to measure (each < N)")->delimiter(',');
    app.add_option("--patterns", s.pattern_dirs,
                   "Load-only rows for these precompiled pattern directories (no --degrees rows unless given)")
        ->delimiter(',');
    nbr::compiler::add_algorithm_name_option(&app, s.algo, {}, "Algorithm or configuration (nbrc candidates)");
    app.add_option("--repeats", s.repeats)->check(CLI::PositiveNumber)->capture_default_str();
    app.add_option("--graph", s.graph, "Topology family")
        ->check(CLI::IsMember({"random", "circulant"}))
        ->capture_default_str();
    try {
        app.parse(argc, argv);
        s.kind = nbr::compiler::resolve_algorithm(app, s.algo, s.options);
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        const int code = rank == 0 ? app.exit(e) : app.exit(e, sink, sink);
        return code == 0 ? 0 : 2;
    }
    if (!s.pattern_dirs.empty() && degrees_option->count() == 0) s.degrees.clear();
    return std::nullopt;
}

/// Out-degree d on n ranks: random (mean d) or circulant (r to r+1 .. r+d).
nbr::Topology make_topology(const std::string& graph, std::uint32_t n, std::uint32_t d) {
    if (graph == "random") return nbr::generate_random({n, static_cast<double>(d) / (n - 1), 1});
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r < n; ++r) {
        for (std::uint32_t k = 1; k <= d; ++k) edges.push_back({r, (r + k) % n});
    }
    return nbr::Topology::from_edges(n, edges);
}

/// Online: what a job would do at start without nbr (seconds, maximum over ranks); the
/// pattern is written to `options.output` if `write` (not timed).
double build_online(const nbr::Topology& topology, const Settings& s, const nbr::compiler::CompileOptions& options,
                    int rank, bool write) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    auto algorithm = nbr::compiler::make_algorithm(s.kind, s.options);
    nbr::compiler::Engine engine(MPI_COMM_WORLD, topology.num_ranks());
    nbr::compiler::PatternBuilder builder(engine);
    algorithm->build(engine, topology, builder);
    builder.derive_receives(engine);
    const auto mine = builder.rank_pattern(static_cast<std::uint32_t>(rank), topology, algorithm->name(), 0);
    if (mine.rank() != static_cast<std::uint32_t>(rank)) std::abort();
    const double seconds = max_over_ranks(MPI_Wtime() - t0);
    // Offline: the same pattern written as a pattern directory once (the compiler produces
    // identical files for any process count), then loaded.
    if (write) nbr::compiler::write_pattern(MPI_COMM_WORLD, engine, builder, topology, *algorithm, options);
    return seconds;
}

/// One row: online construction against loading, at out-degree d. False if a load failed.
bool measure_degree(const Settings& s, std::uint32_t d, int rank, std::uint32_t n) {
    namespace fs = std::filesystem;
    if (d >= n) {
        if (rank == 0) std::printf("%8u %10s %14s %14s %12s   (needs more than %u ranks)\n", d, "-", "-", "-", "-", d);
        return true;
    }
    const nbr::Topology topology = make_topology(s.graph, n, d);
    std::uint32_t max_degree = 0;
    for (std::uint32_t r = 0; r < n; ++r) max_degree = std::max(max_degree, topology.out_degree(r));
    nbr::compiler::CompileOptions options;
    options.algorithm = s.kind;
    options.algorithm_options = s.options;
    options.output = nbr::common::broadcast_string(
        MPI_COMM_WORLD, (fs::temp_directory_path() / ("nbr-startup-" + std::to_string(::getpid()))).string());
    options.quiet = true;
    std::vector<double> online, load;
    for (int rep = 0; rep < s.repeats; ++rep) {
        online.push_back(build_online(topology, s, options, rank, rep == 0));
        double seconds = 0;
        if (!time_load(options.output, rank, seconds)) return false;
        load.push_back(seconds);
    }
    if (rank == 0) {
        std::printf("%8u %10u %14.3f %14.3f %12.1f\n", d, max_degree, median(online) * 1e3, median(load) * 1e3,
                    median(online) / median(load));
        std::fflush(stdout);
        fs::remove_all(options.output);
    }
    return true;
}

/// A load-only row for a precompiled directory. False if a load failed.
bool measure_load(const Settings& s, const std::string& dir, int rank) {
    std::vector<double> load;
    Degrees pattern_degrees;
    for (int rep = 0; rep < s.repeats; ++rep) {
        double seconds = 0;
        if (!time_load(dir, rank, seconds, rep == 0 ? &pattern_degrees : nullptr)) return false;
        load.push_back(seconds);
    }
    if (rank == 0) {
        std::printf("%8.1f %10.0f %14s %14.3f %12s   (load only: %s)\n", pattern_degrees.mean, pattern_degrees.max, "-",
                    median(load) * 1e3, "-", dir.c_str());
        std::fflush(stdout);
    }
    return true;
}

int run(int argc, char** argv) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Settings s;
    if (const auto done = parse(argc, argv, rank, s)) return *done;
    if (rank == 0) {
        std::printf("# nbr-startup-bench: %d ranks, %s graphs, %s, median of %d, max over ranks\n", size,
                    s.graph.c_str(), s.algo.c_str(), s.repeats);
        std::printf("%8s %10s %14s %14s %12s\n", "degree", "max deg", "online ms", "load ms", "online/load");
    }
    for (const auto d : s.degrees) {
        if (!measure_degree(s, d, rank, static_cast<std::uint32_t>(size))) return 1;
    }
    for (const auto& dir : s.pattern_dirs) {
        if (!measure_load(s, dir, rank)) return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return nbr::common::run_mpi_program(argc, argv, "nbr-startup-bench", run);
}
