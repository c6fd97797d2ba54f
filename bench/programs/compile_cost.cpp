// nbr-compile-bench: time and peak memory of one pattern compile, with any number of MPI
// processes. One case per launch, so that peak memory belongs to that case.
//
//   mpirun -np 2 nbr-compile-bench --moore 8192,2,4 --algo common-neighbor [--json FILE]
//   mpirun -np 2 nbr-compile-bench --random 4096,0.2,1 --algo common-neighbor
//   mpirun -np 2 nbr-compile-bench --random 2160,0.7,1 --algo distance-halving --ranks-per-node 36 --ranks-per-socket
//   18
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <mpi.h>
#include <CLI/CLI.hpp>

#include "nbr/common/mpi_program.hpp"
#include "nbr/compiler/algorithm_cli.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/inspect.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace {

std::uint64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

struct Settings {
    std::vector<double> moore, random;
    std::string algo = "common-neighbor", json, keep;
    nbr::compiler::AlgorithmKind kind = nbr::compiler::AlgorithmKind::common_neighbor;
    nbr::compiler::AlgorithmOptions options;
    std::uint32_t per_node = 40, per_socket = 20;
};

/// The command line into `s`; an exit code if the program is done (help, usage error).
std::optional<int> parse(int argc, char** argv, int rank, Settings& s) {
    CLI::App app{"nbr-compile-bench: time and peak memory of one pattern compile"};
    auto* m = app.add_option("--moore", s.moore, "N,d,r")->delimiter(',')->expected(3);
    auto* r = app.add_option("--random", s.random, "N,density,seed")->delimiter(',')->expected(3);
    m->excludes(r);
    nbr::compiler::add_algorithm_name_option(&app, s.algo, {}, "Algorithm or configuration (nbrc candidates)");
    nbr::compiler::add_algorithm_options(&app, s.options);
    app.add_option("--ranks-per-node", s.per_node, "distance-halving, kgroup: block placement")->capture_default_str();
    app.add_option("--ranks-per-socket", s.per_socket, "distance-halving: block placement")->capture_default_str();
    app.add_option("--json", s.json, "Append the result as one JSON line to this file");
    app.add_option("--keep", s.keep, "Keep the pattern directory here (default: temporary, removed)");
    try {
        app.parse(argc, argv);
        if (s.moore.empty() && s.random.empty()) throw CLI::ValidationError("give --moore or --random");
        s.kind = nbr::compiler::resolve_algorithm(app, s.algo, s.options);
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        const int code = rank == 0 ? app.exit(e) : app.exit(e, sink, sink);
        return code == 0 ? 0 : 2;
    }
    s.algo = nbr::compiler::configuration_name(s.kind, s.options);
    return std::nullopt;
}

/// The generated topology and its label.
std::pair<nbr::Topology, std::string> make_topology(const Settings& s) {
    if (!s.moore.empty()) {
        const nbr::MooreParams params{static_cast<std::uint32_t>(s.moore[0]), static_cast<std::uint32_t>(s.moore[1]),
                                      static_cast<std::uint32_t>(s.moore[2])};
        return {nbr::generate_moore(params), nbr::describe(params)};
    }
    const nbr::RandomParams params{static_cast<std::uint32_t>(s.random[0]), s.random[1],
                                   static_cast<std::uint64_t>(s.random[2])};
    return {nbr::generate_random(params), nbr::describe(params)};
}

struct Measured {
    double build_seconds = 0, total_seconds = 0;
    std::uint64_t peak_bytes = 0;  // maximum over processes
};

/// Rank 0: one line of text, and one JSON line appended to `s.json` if given.
void report(const Settings& s, const nbr::Topology& topology, const std::string& label, const std::string& dir,
            const Measured& m, int processes) {
    const auto manifest = nbr::read_manifest(dir);
    const auto summary = nbr::compiler::summarize(manifest, nbr::compiler::read_all_rank_patterns(dir, manifest));
    std::printf(
        "%-44s %-22s P=%d  build %8.3f s  total %8.3f s  peak %7.1f MiB/process  sends/rank %.1f (naive %.1f)\n",
        label.c_str(), s.algo.c_str(), processes, m.build_seconds, m.total_seconds,
        static_cast<double>(m.peak_bytes) / (1024.0 * 1024.0), summary.sends_per_rank.mean,
        summary.naive_sends_per_rank.mean);
    if (s.json.empty()) return;
    std::ofstream out(s.json, std::ios::app);
    out << "{\"topology\": \"" << label << "\", \"algorithm\": \"" << s.algo << "\", \"processes\": " << processes
        << ", \"ranks\": " << topology.num_ranks() << ", \"edges\": " << topology.num_edges()
        << ", \"build_seconds\": " << m.build_seconds << ", \"total_seconds\": " << m.total_seconds
        << ", \"peak_rss_bytes\": " << m.peak_bytes << ", \"sends_per_rank_mean\": " << summary.sends_per_rank.mean
        << ", \"naive_sends_per_rank_mean\": " << summary.naive_sends_per_rank.mean << "}\n";
}

int run(int argc, char** argv) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Settings s;
    if (const auto done = parse(argc, argv, rank, s)) return *done;
    const auto [topology, label] = make_topology(s);
    namespace fs = std::filesystem;
    fs::path dir = s.keep;
    if (dir.empty()) dir = fs::temp_directory_path() / ("nbr-compile-bench-" + std::to_string(::getpid()));
    dir = nbr::common::broadcast_string(MPI_COMM_WORLD, dir.string());

    nbr::compiler::CompileOptions options;
    options.algorithm = s.kind;
    options.algorithm_options = s.options;
    options.algorithm_options.placement = nbr::Placement::block(topology.num_ranks(), s.per_node, s.per_socket);
    options.output = dir;
    options.quiet = true;
    options.source = label;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    const auto compiled = nbr::compiler::compile(MPI_COMM_WORLD, topology, options);
    Measured m{compiled.build_seconds, MPI_Wtime() - start, 0};
    const std::uint64_t peak = peak_rss_bytes();
    MPI_Reduce(&peak, &m.peak_bytes, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (const auto& note : compiled.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
        report(s, topology, label, dir, m, size);
        if (s.keep.empty()) fs::remove_all(dir);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return nbr::common::run_mpi_program(argc, argv, "nbr-compile-bench", run);
}
