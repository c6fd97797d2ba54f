// nbr-cache-bench: what a pattern built in the job (nbr_pattern_build) costs and when it pays.
// For each algorithm, on a dist-graph communicator over all ranks, it measures side by side in
// one run (maximum over ranks; median over repeats):
//   build  - nbr_pattern_build on an empty cache: gather the topology, detect the placement,
//            build, write the entry, load it;
//   hit    - nbr_pattern_build again: the entry found and loaded;
//   native - MPI_Neighbor_alltoall of --bytes per block, per call;
//   nbr    - nbr_neighbor_alltoall of the same, per call (the two interleaved);
//   break-even - the calls whose saving pays for the build: build / (native - nbr), or "never"
//            where nbr is not faster here.
// One JSON object per algorithm on stdout (rank 0).
//
//   mpirun -np N nbr-cache-bench [--graph random|moore] [--degree D] [--algos naive,default,...]
//                                [--ranks-per-node R] [--bytes B] [--calls C] [--repeats K]
//                                [--keep-cache DIR]
// bench/cache_cost/run.sh runs it over rank counts and adds the offline compile and the modelled
// saving per call on a cluster (nbrc simulate), which oversubscribed timings here cannot give.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#if defined(NBR_SMPI)
// smpicxx injects an exit() macro (smpi_helpers.h) that breaks CLI11's App::exit; this
// program leaves main by returning, so the macro is not needed.
#undef exit
#endif
#include <mpi.h>
#include <CLI/CLI.hpp>

#include "nbr.h"
#include "nbr/common/mpi_program.hpp"
#include "nbr/graphs/generators.hpp"

namespace {

namespace fs = std::filesystem;

struct Settings {
    std::string graph = "random";
    std::uint32_t degree = 8;
    std::vector<std::string> algos{"naive", "common-neighbor", "distance-halving", "hierarchical", "default"};
    std::uint32_t ranks_per_node = 0;  // 0: detected
    int bytes = 8;
    int calls = 200;
    int repeats = 5;
    std::string keep_cache;  // the first repeat's caches stay here (ALGO-0), for nbrc simulate
};

double max_over_ranks(double mine) {
    double result = 0;
    MPI_Allreduce(&mine, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return result;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

nbr::Topology make_topology(const Settings& s, std::uint32_t n) {
    if (s.graph == "moore") {
        const std::uint32_t dims = 2;
        return nbr::generate_moore({n, dims, std::max<std::uint32_t>(1, s.degree)});
    }
    const double density = n > 1 ? std::min(1.0, static_cast<double>(s.degree) / (n - 1)) : 0.0;
    return nbr::generate_random({n, density, 1});
}

/// The communicator the patterns are built for: a dist-graph one (real MPI), or MPI_COMM_WORLD
/// with the rank's lists given (SMPI, which has no dist-graph communicators).
struct Neighborhood {
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<int> in, out;
    bool plain = false;
};

Neighborhood neighborhood(const nbr::Topology& t, int rank) {
    const auto r = static_cast<std::uint32_t>(rank);
    Neighborhood n;
    n.in.assign(t.in_neighbors(r).begin(), t.in_neighbors(r).end());
    n.out.assign(t.out_neighbors(r).begin(), t.out_neighbors(r).end());
#if defined(NBR_SMPI)
    n.comm = MPI_COMM_WORLD;
    n.plain = true;
#else
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(n.in.size()), n.in.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(n.out.size()), n.out.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &n.comm);
#endif
    return n;
}

/// nbr_pattern_build's wall time, maximum over ranks; the pattern in *pattern (NULL on failure).
double timed_build(const Neighborhood& n, const std::string& cache, MPI_Info info, nbr_pattern_t* pattern, int& code) {
    MPI_Barrier(n.comm);
    const double t0 = MPI_Wtime();
    code = n.plain ? nbr_pattern_build_adjacent(n.comm, static_cast<int>(n.in.size()), n.in.data(),
                                                static_cast<int>(n.out.size()), n.out.data(), cache.c_str(), info, 0,
                                                pattern)
                   : nbr_pattern_build(n.comm, cache.c_str(), info, 0, pattern);
    return max_over_ranks(MPI_Wtime() - t0);
}

/// Per-call seconds of native and nbr alltoall, interleaved in rounds; maximum over ranks per round
/// (not under SMPI, which has no native neighborhood collectives: NaN).
std::pair<double, double> per_call(const Neighborhood& n, nbr_pattern_t pattern, const Settings& s) {
    if (n.plain) return {std::nan(""), std::nan("")};
    const MPI_Comm comm = n.comm;
    const auto in = n.in.size(), out = n.out.size();
    std::vector<char> send(static_cast<std::size_t>(out) * s.bytes + 1, 1),
        recv(static_cast<std::size_t>(in) * s.bytes + 1);
    std::vector<double> native, replayed;
    for (int round = 0; round < s.repeats; ++round) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int c = 0; c < s.calls; ++c) {
            MPI_Neighbor_alltoall(send.data(), s.bytes, MPI_CHAR, recv.data(), s.bytes, MPI_CHAR, comm);
        }
        native.push_back(max_over_ranks(MPI_Wtime() - t0) / s.calls);
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        for (int c = 0; c < s.calls; ++c) {
            nbr_neighbor_alltoall(send.data(), s.bytes, MPI_CHAR, recv.data(), s.bytes, MPI_CHAR, pattern);
        }
        replayed.push_back(max_over_ranks(MPI_Wtime() - t0) / s.calls);
    }
    return {median(native), median(replayed)};
}

/// A JSON number with three decimals, null for NaN (not measured).
std::string json_number(double value) {
    if (!std::isfinite(value)) return "null";
    char text[64];
    std::snprintf(text, sizeof text, "%.3f", value);
    return text;
}

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// One algorithm's row; false if a build failed.
bool measure(const Settings& s, const std::string& algo, const Neighborhood& comm, const std::string& root, int rank,
             int size) {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbr_algo", algo.c_str());
    if (s.ranks_per_node > 0) MPI_Info_set(info, "nbr_ranks_per_node", std::to_string(s.ranks_per_node).c_str());
    std::vector<double> builds, hits;
    std::string origin, variant;
    std::pair<double, double> call{0, 0};
    for (int rep = 0; rep < s.repeats; ++rep) {
        const std::string cache = root + "/" + algo + "-" + std::to_string(rep);
        nbr_pattern_t pattern = NBR_PATTERN_NULL;
        int code = 0;
        builds.push_back(timed_build(comm, cache, info, &pattern, code));
        if (code == NBR_ERR_DECLINED) {  // a row all the same: the topology is not worth building
            if (rank == 0) {
                std::printf("{\"algo\": %s, \"ranks\": %d, \"graph\": %s, \"degree\": %u, \"declined\": %s}\n",
                            json_string(algo).c_str(), size, json_string(s.graph).c_str(), s.degree,
                            json_string(nbr_last_error()).c_str());
            }
            MPI_Info_free(&info);
            return true;
        }
        if (code != NBR_SUCCESS) {
            if (rank == 0)
                std::fprintf(stderr, "nbr-cache-bench: %s: %s: %s\n", algo.c_str(), nbr_strerror(code),
                             nbr_last_error());
            MPI_Info_free(&info);
            return false;
        }
        const char* dir = nullptr;
        const char* note = nullptr;
        nbr_pattern_origin(pattern, &dir, &note);
        if (rep == 0) origin = note;
        const char* name = nullptr;
        nbr_pattern_variant(pattern, NBR_ALLTOALL, static_cast<std::size_t>(s.bytes), &name);
        variant = name;
        nbr_pattern_free(&pattern);
        hits.push_back(timed_build(comm, cache, info, &pattern, code));
        if (rep == 0) call = per_call(comm, pattern, s);
        nbr_pattern_free(&pattern);
    }
    MPI_Info_free(&info);
    if (rank != 0) return true;
    const double build = median(builds), saving = call.first - call.second;
    std::printf(
        "{\"algo\": %s, \"ranks\": %d, \"graph\": %s, \"degree\": %u, \"bytes\": %d, \"variant\": %s, "
        "\"build_s\": %.6f, \"hit_s\": %.6f, \"native_us\": %s, \"nbr_us\": %s, \"break_even_calls\": %s, "
        "\"origin\": %s}\n",
        json_string(algo).c_str(), size, json_string(s.graph).c_str(), s.degree, s.bytes, json_string(variant).c_str(),
        build, median(hits), json_number(call.first * 1e6).c_str(), json_number(call.second * 1e6).c_str(),
        saving > 0 ? std::to_string(static_cast<long long>(build / saving + 0.5)).c_str() : "null",
        json_string(origin).c_str());
    std::fflush(stdout);
    return true;
}

std::optional<int> parse(int argc, char** argv, int rank, Settings& s) {
    CLI::App app{"nbr-cache-bench: in-job build (nbr_pattern_build) against loading and the calls that pay for it"};
    app.add_option("--graph", s.graph, "Topology family")
        ->check(CLI::IsMember({"random", "moore"}))
        ->capture_default_str();
    app.add_option("--degree", s.degree, "random: mean out-degree; moore: radius (2-D)")->capture_default_str();
    app.add_option("--algos", s.algos, "nbr_algo values")->delimiter(',')->capture_default_str();
    app.add_option("--ranks-per-node", s.ranks_per_node, "Block placement instead of the detected one (0: detected)");
    app.add_option("--bytes", s.bytes, "Bytes per block of the timed alltoall")->check(CLI::PositiveNumber);
    app.add_option("--calls", s.calls, "Calls per timed round")->check(CLI::PositiveNumber);
    app.add_option("--repeats", s.repeats, "Builds (each into an empty cache) and timed rounds")
        ->check(CLI::PositiveNumber);
    app.add_option("--keep-cache", s.keep_cache,
                   "Build into DIR/ALGO-REPEAT and keep them (else a temporary directory)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        const int code = rank == 0 ? app.exit(e) : app.exit(e, sink, sink);
        return code == 0 ? 0 : 2;
    }
    return std::nullopt;
}

int run(int argc, char** argv) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Settings s;
    if (const auto code = parse(argc, argv, rank, s)) return *code;
    const auto topology = make_topology(s, static_cast<std::uint32_t>(size));
    Neighborhood comm = neighborhood(topology, rank);
    const std::string root =
        !s.keep_cache.empty()
            ? s.keep_cache
            : nbr::common::broadcast_string(
                  MPI_COMM_WORLD,
                  (fs::temp_directory_path() / ("nbr-cache-bench-" + std::to_string(::getpid()))).string());
    bool ok = true;
    for (const auto& algo : s.algos) ok = measure(s, algo, comm, root, rank, size) && ok;
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ec;
    if (rank == 0 && s.keep_cache.empty()) fs::remove_all(root, ec);
    if (!comm.plain) MPI_Comm_free(&comm.comm);
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int code = 2;
    try {
        code = run(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr-cache-bench: %s\n", error.what());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return code;
}
