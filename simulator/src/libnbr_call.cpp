#include "nbr/simulator/libnbr_call.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "nbr.h"
#include "nbr/compiler/compile.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/schema/file_io.hpp"

namespace nbr::simulator {

namespace {

namespace fs = std::filesystem;
using compiler::internal::collective_try;

/// This rank's temporary directory, removed when it goes out of scope.
struct OwnedTempDir {
    fs::path path;
    OwnedTempDir() = default;
    OwnedTempDir(const OwnedTempDir&) = delete;
    OwnedTempDir& operator=(const OwnedTempDir&) = delete;
    ~OwnedTempDir() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

/// The pair's pattern over `parallel` edges each way, compiled by this rank alone into `dir`:
/// naive (one message per edge; libnbr hands it to MPI's call), or with `combined` over more
/// than one edge distance halving (on two ranks one message each way carries every block,
/// packed and unpacked by libnbr).
std::string compile_pair_pattern(const fs::path& dir, std::uint32_t parallel, bool combined) {
    compiler::CompileOptions options;
    options.output = dir / "pair";
    options.quiet = true;
    options.source = "nbr-calibrate: " + std::to_string(parallel) + " parallel edges each way";
    if (combined && parallel > 1) {
        options.algorithm = compiler::AlgorithmKind::distance_halving;
        options.algorithm_options.placement = Placement::block(2, 2, 2);
    }
    std::vector<Edge> edges;
    for (std::uint32_t k = 0; k < parallel; ++k) edges.insert(edges.end(), {{0, 1}, {1, 0}});
    (void)compiler::compile(MPI_COMM_SELF, Topology::from_edges(2, edges), options);
    return options.output.string();
}

/// Median over `repeat` loops of 1000 calls, per call; `error` names a failed call.
double time_calls(MPI_Comm graph, nbr_pattern_t pattern, std::uint64_t bytes, std::uint32_t parallel, int repeat,
                  std::string& error) {
    constexpr int kCalls = 1000;
    const int count = static_cast<int>(bytes);
    std::vector<char> send(bytes * parallel, 1), recv(bytes * parallel, 0);
    std::vector<double> times;
    int code = NBR_SUCCESS;
    for (int r = 0; r <= std::max(1, repeat) && code == NBR_SUCCESS; ++r) {  // the first loop warms up
        MPI_Barrier(graph);
        const double t0 = MPI_Wtime();
        for (int k = 0; k < kCalls && code == NBR_SUCCESS; ++k) {
            code = nbr_neighbor_alltoall(send.data(), count, MPI_BYTE, recv.data(), count, MPI_BYTE, pattern);
        }
        if (r > 0) times.push_back((MPI_Wtime() - t0) * 1e6 / kCalls);
    }
    if (code != NBR_SUCCESS) error = std::string("nbr_neighbor_alltoall: ") + nbr_last_error();
    if (times.empty()) return 0;
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

double time_libnbr_call(MPI_Comm pair, std::uint64_t bytes, std::uint32_t parallel, bool combined, int repeat) {
    int rank = 0;
    MPI_Comm_rank(pair, &rank);
    const std::vector<int> other(parallel, 1 - rank);
    const int degree = static_cast<int>(parallel);
    OwnedTempDir dir;
    std::string pattern_dir;
    collective_try(pair, [&] {
        try {
            dir.path = make_owned_temp_dir(fs::temp_directory_path(), "nbr-calibrate-");
            pattern_dir = compile_pair_pattern(dir.path, parallel, combined);
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string("timing libnbr's call: ") + e.what());
        }
    });
    MPI_Comm graph = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(pair, degree, other.data(), MPI_UNWEIGHTED, degree, other.data(), MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph);
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    const int loaded = nbr_load_pattern(pattern_dir.c_str(), graph, &pattern);  // collective: both agree
    if (loaded != NBR_SUCCESS) {
        MPI_Comm_free(&graph);
        throw std::runtime_error(std::string("timing libnbr's call: ") + nbr_last_error());
    }
    // Both ranks make the same calls with the same arguments, so a call that fails (it should
    // not, on this pattern) fails on both: both loops stop there, and the ranks agree.
    std::string failed;
    double t = time_calls(graph, pattern, bytes, parallel, repeat, failed);
    (void)nbr_pattern_free(&pattern);
    MPI_Comm_free(&graph);
    collective_try(pair, [&] {
        if (!failed.empty()) throw std::runtime_error("timing libnbr's call: " + failed);
    });
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, pair);
    return t;
}

Calibration measure_link_with_libnbr_call(MPI_Comm comm, MeasureOptions options) {
    options.time_call = time_libnbr_call;
    return measure_link(comm, options);
}

Calibration measure_patterns_with_libnbr_call(MPI_Comm comm, MeasureOptions options) {
    options.time_call = time_libnbr_call;
    return measure_patterns(comm, options);
}

}  // namespace nbr::simulator
