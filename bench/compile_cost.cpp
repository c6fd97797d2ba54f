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

int run(int argc, char** argv) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CLI::App app{"nbr-compile-bench: time and peak memory of one pattern compile"};
    std::vector<double> moore, random;
    std::string algo = "common-neighbor", json, keep;
    std::uint32_t per_node = 40, per_socket = 20;
    nbr::compiler::AlgorithmOptions algorithm_options;
    nbr::compiler::AlgorithmKind kind = nbr::compiler::AlgorithmKind::naive;
    auto* m = app.add_option("--moore", moore, "N,d,r")->delimiter(',')->expected(3);
    auto* r = app.add_option("--random", random, "N,density,seed")->delimiter(',')->expected(3);
    m->excludes(r);
    nbr::compiler::add_algorithm_name_option(&app, algo, {}, "Algorithm or configuration (nbrc candidates)");
    nbr::compiler::add_algorithm_options(&app, algorithm_options);
    app.add_option("--ranks-per-node", per_node, "distance-halving, kgroup: block placement")->capture_default_str();
    app.add_option("--ranks-per-socket", per_socket, "distance-halving: block placement")->capture_default_str();
    app.add_option("--json", json, "Append the result as one JSON line to this file");
    app.add_option("--keep", keep, "Keep the pattern directory here (default: temporary, removed)");
    try {
        app.parse(argc, argv);
        if (moore.empty() && random.empty()) throw CLI::ValidationError("give --moore or --random");
        kind = nbr::compiler::resolve_algorithm(app, algo, algorithm_options);
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        const int code = rank == 0 ? app.exit(e) : app.exit(e, sink, sink);
        return code == 0 ? 0 : 2;
    }
    nbr::Topology topology;
    std::string label;
    if (!moore.empty()) {
        const nbr::MooreParams params{static_cast<std::uint32_t>(moore[0]), static_cast<std::uint32_t>(moore[1]),
                                      static_cast<std::uint32_t>(moore[2])};
        topology = nbr::generate_moore(params);
        label = nbr::describe(params);
    } else {
        const nbr::RandomParams params{static_cast<std::uint32_t>(random[0]), random[1],
                                       static_cast<std::uint64_t>(random[2])};
        topology = nbr::generate_random(params);
        label = nbr::describe(params);
    }
    namespace fs = std::filesystem;
    fs::path dir = keep;
    if (dir.empty()) dir = fs::temp_directory_path() / ("nbr-compile-bench-" + std::to_string(::getpid()));
    dir = nbr::common::broadcast_string(MPI_COMM_WORLD, dir.string());

    nbr::compiler::CompileOptions options;
    options.algorithm = kind;
    options.algorithm_options = algorithm_options;
    options.algorithm_options.placement = nbr::Placement::block(topology.num_ranks(), per_node, per_socket);
    options.output = dir;
    options.quiet = true;
    options.source = label;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    const auto report = nbr::compiler::compile(MPI_COMM_WORLD, topology, options);
    const double total = MPI_Wtime() - start;
    std::uint64_t peak = peak_rss_bytes(), max_peak = 0;
    MPI_Reduce(&peak, &max_peak, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (const auto& note : report.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
        algo = nbr::compiler::configuration_name(kind, algorithm_options);
        const auto manifest = nbr::read_manifest(dir);
        const auto summary = nbr::compiler::summarize(manifest, nbr::compiler::read_all_rank_patterns(dir, manifest));
        std::printf(
            "%-44s %-22s P=%d  build %8.3f s  total %8.3f s  peak %7.1f MiB/process  sends/rank %.1f (naive %.1f)\n",
            label.c_str(), algo.c_str(), size, report.build_seconds, total,
            static_cast<double>(max_peak) / (1024.0 * 1024.0), summary.sends_per_rank.mean,
            summary.naive_sends_per_rank.mean);
        if (!json.empty()) {
            std::ofstream out(json, std::ios::app);
            out << "{\"topology\": \"" << label << "\", \"algorithm\": \"" << algo << "\", \"processes\": " << size
                << ", \"ranks\": " << topology.num_ranks() << ", \"edges\": " << topology.num_edges()
                << ", \"build_seconds\": " << report.build_seconds << ", \"total_seconds\": " << total
                << ", \"peak_rss_bytes\": " << max_peak << ", \"sends_per_rank_mean\": " << summary.sends_per_rank.mean
                << ", \"naive_sends_per_rank_mean\": " << summary.naive_sends_per_rank.mean << "}\n";
        }
        if (keep.empty()) fs::remove_all(dir);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return nbr::common::run_mpi_program(argc, argv, "nbr-compile-bench", run);
}
