// nbr-noise-bench: one late rank, or periodic CPU detours on chosen ranks, on real MPI. For
// every size it times the native neighborhood collective, nbr's replay under its event-driven
// rule and under the step rule (NBR_LOAD_STEP_SYNC), each quiet and disturbed, in the same
// run. Every call starts after a barrier; each rank records when it left the call, measured
// from its own barrier exit. The per-rank median over the calls, disturbed minus quiet, is how
// much later the disturbance made the rank finish; ranks later by more than half the delay
// make the blast radius (nbrc simulate --late reports the same quantity).
//
//   mpirun -np N nbr-noise-bench --patterns DIR [--sizes 64,65536] [--iters 50]
//                                [--collective allgather|alltoall] [--late RANK --delay-us D]
//                                [--detour-ranks 3,5 --detour-hz F --detour-us U] [--json FILE]
//
// The late rank sleeps before its call (its core is free meanwhile). A detour is a busy wait
// of U us run by a timer signal F times a second on each chosen rank, as operating-system noise
// takes the core from the process.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/time.h>

#include <mpi.h>
#include <CLI/CLI.hpp>

#include "nbr.h"
#include "nbr/simulator/sizes.hpp"

namespace {

struct Options {
    std::string patterns;
    std::string sizes = "64,65536";
    int iters = 50;
    std::string collective = "allgather";
    int late = -1;
    double delay_us = 0;
    std::vector<int> detour_ranks;
    double detour_hz = 0;
    double detour_us = 0;
    std::string json;
};

int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

double now_us() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

// Detours: a timer signal whose handler busy-waits (clock_gettime is async-signal-safe).
volatile std::sig_atomic_t detour_ns = 0;

void detour(int /*signal*/) {
    const int saved = errno;
    timespec start{}, t{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - start.tv_sec) * 1000000000L + (t.tv_nsec - start.tv_nsec) < detour_ns);
    errno = saved;
}

/// Starts (hz > 0) or stops (hz = 0) this process's periodic detours.
void set_detours(double hz, double us) {
    detour_ns = static_cast<std::sig_atomic_t>(us * 1e3);
    struct sigaction action {};
    action.sa_handler = detour;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, nullptr);
    itimerval timer{};
    if (hz > 0) {
        const auto period = static_cast<long>(1e6 / hz);
        timer.it_interval = {period / 1000000, period % 1000000};
        timer.it_value = timer.it_interval;
    }
    setitimer(ITIMER_REAL, &timer, nullptr);
}

/// One collective call of a variant: native on the graph communicator, or nbr's.
struct Variant {
    std::string name;
    nbr_pattern_t pattern = NBR_PATTERN_NULL;  // null: native
};

int call(const Variant& v, bool alltoall, const std::vector<unsigned char>& send, std::vector<unsigned char>& recv,
         int bytes, MPI_Comm graph) {
    if (v.pattern == NBR_PATTERN_NULL) {
        return alltoall ? MPI_Neighbor_alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, graph)
                        : MPI_Neighbor_allgather(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, graph);
    }
    return alltoall ? nbr_neighbor_alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, v.pattern)
                    : nbr_neighbor_allgather(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, v.pattern);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

/// Per rank (on rank 0): the median over `iters` calls of the time from the barrier's exit to
/// the call's end, disturbed or not.
std::vector<double> finish_times(const Variant& v, const Options& o, bool disturbed, bool alltoall, int bytes, int in,
                                 int out, MPI_Comm graph) {
    std::vector<unsigned char> send(static_cast<std::size_t>(bytes) * (alltoall ? std::max(out, 1) : 1), 1);
    std::vector<unsigned char> recv(static_cast<std::size_t>(bytes) * std::max(in, 1));
    const int me = world_rank();
    const bool detours =
        disturbed && std::find(o.detour_ranks.begin(), o.detour_ranks.end(), me) != o.detour_ranks.end();
    if (detours) set_detours(o.detour_hz, o.detour_us);
    std::vector<double> mine;
    for (int i = 0; i < o.iters + 3; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = now_us();
        if (disturbed && me == o.late && o.delay_us > 0) {
            const auto ns = static_cast<long>(o.delay_us * 1e3);
            timespec t{ns / 1000000000L, ns % 1000000000L};
            while (nanosleep(&t, &t) != 0 && errno == EINTR) {
            }
        }
        if (call(v, alltoall, send, recv, bytes, graph) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
        if (i >= 3) mine.push_back(now_us() - start);  // three warm-up calls
    }
    if (detours) set_detours(0, 0);
    const double m = median(mine);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<double> all(static_cast<std::size_t>(size));
    MPI_Gather(&m, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
}

std::string json_array(const std::vector<double>& v) {
    std::ostringstream s;
    s << "[";
    for (std::size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
    s << "]";
    return s.str();
}

int run(const Options& o) {
    const bool alltoall = o.collective == "alltoall";
    std::vector<Variant> variants{
        {"native", NBR_PATTERN_NULL}, {"nbr-event", NBR_PATTERN_NULL}, {"nbr-step", NBR_PATTERN_NULL}};
    if (nbr_load_pattern_flags(o.patterns.c_str(), MPI_COMM_WORLD, NBR_LOAD_NO_NATIVE, &variants[1].pattern) != 0 ||
        nbr_load_pattern_flags(o.patterns.c_str(), MPI_COMM_WORLD, NBR_LOAD_NO_NATIVE | NBR_LOAD_STEP_SYNC,
                               &variants[2].pattern) != 0) {
        if (world_rank() == 0) std::fprintf(stderr, "nbr-noise-bench: %s\n", nbr_last_error());
        return 1;
    }
    int in = 0, out = 0;
    nbr_pattern_neighbors_count(variants[1].pattern, &in, &out);
    std::vector<int> sources(static_cast<std::size_t>(in) + 1), destinations(static_cast<std::size_t>(out) + 1);
    nbr_pattern_neighbors(variants[1].pattern, in, sources.data(), out, destinations.data());
    MPI_Comm graph = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, sources.data(), MPI_UNWEIGHTED, out, destinations.data(),
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    std::ostringstream json;
    json << "{\"collective\": \"" << o.collective << "\", \"late_rank\": " << o.late << ", \"delay_us\": " << o.delay_us
         << ", \"detour_hz\": " << o.detour_hz << ", \"detour_us\": " << o.detour_us << ", \"iters\": " << o.iters
         << ", \"results\": [";
    bool first = true;
    for (const auto bytes : nbr::simulator::parse_sizes(o.sizes)) {
        for (const auto& v : variants) {
            const auto quiet = finish_times(v, o, false, alltoall, static_cast<int>(bytes), in, out, graph);
            const auto noisy = finish_times(v, o, true, alltoall, static_cast<int>(bytes), in, out, graph);
            if (world_rank() != 0) continue;
            // The blast radius needs a late rank (detours alone delay ranks by varying amounts).
            int blast = -1;
            if (o.late >= 0) {
                blast = 0;
                for (std::size_t r = 0; r < quiet.size(); ++r) blast += noisy[r] - quiet[r] > o.delay_us / 2;
            }
            std::printf("%8llu B %-10s quiet %10.1f us  disturbed %10.1f us  blast radius %s\n",
                        static_cast<unsigned long long>(bytes), v.name.c_str(),
                        *std::max_element(quiet.begin(), quiet.end()), *std::max_element(noisy.begin(), noisy.end()),
                        blast < 0 ? "-" : std::to_string(blast).c_str());
            json << (first ? "\n" : ",\n") << "  {\"bytes\": " << bytes << ", \"variant\": \"" << v.name
                 << "\", \"blast_radius\": " << (blast < 0 ? std::string("null") : std::to_string(blast))
                 << ", \"quiet_us\": " << json_array(quiet) << ", \"disturbed_us\": " << json_array(noisy) << "}";
            first = false;
        }
    }
    json << "\n]}\n";
    if (world_rank() == 0 && !o.json.empty()) std::ofstream(o.json) << json.str();
    MPI_Comm_free(&graph);
    nbr_pattern_free(&variants[1].pattern);
    nbr_pattern_free(&variants[2].pattern);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Options o;
    CLI::App app("nbr-noise-bench: a late rank or CPU detours on real MPI, per execution rule");
    app.add_option("--patterns", o.patterns, "Pattern directory")->required()->check(CLI::ExistingDirectory);
    app.add_option("--sizes", o.sizes, "Block sizes (K, M suffixes)")->capture_default_str();
    app.add_option("--iters", o.iters, "Timed calls per variant and condition")->check(CLI::Range(1, 1000000));
    app.add_option("--collective", o.collective, "allgather or alltoall")
        ->check(CLI::IsMember({"allgather", "alltoall"}))
        ->capture_default_str();
    app.add_option("--late", o.late, "The rank that enters every disturbed call late");
    app.add_option("--delay-us", o.delay_us, "How late (microseconds)")->check(CLI::NonNegativeNumber);
    app.add_option("--detour-ranks", o.detour_ranks, "Ranks with periodic detours")->delimiter(',');
    app.add_option("--detour-hz", o.detour_hz, "Detours per second")->check(CLI::Range(0.0, 10000.0));
    app.add_option("--detour-us", o.detour_us, "Detour length (microseconds)")->check(CLI::NonNegativeNumber);
    app.add_option("--json", o.json, "Write the per-rank results as JSON");
    int code = 0;
    try {
        app.parse(argc, argv);
        code = run(o);
    } catch (const CLI::ParseError& e) {
        code = world_rank() == 0 ? app.exit(e) : 1;
    } catch (const std::exception& e) {
        if (world_rank() == 0) std::fprintf(stderr, "nbr-noise-bench: %s\n", e.what());
        code = 1;
    }
    MPI_Finalize();
    return code;
}
