// nbr-bench: the papers' microbenchmark. For every message size it times, on the same
// topology in the same run: the native neighborhood collective in its blocking, nonblocking
// (MPI_Ineighbor_* + MPI_Wait) and persistent forms (where the library has one), the naive
// schedule posted by hand with MPI_Irecv/MPI_Isend + MPI_Waitall ("p2p"), nbr replay of the
// pattern in the same three forms, "nbr-engine" (nbr's own engine where blocking calls would
// go to the native collective: all-direct plans on topology communicators), and nbr replay of
// the naive pattern of the same topology. Mean time per call after warm-up, maximum over
// ranks; the data of every variant is checked after timing. The v-variants send `bytes` per
// edge, with per-edge counts and displacements as an application's halo exchange passes them;
// alltoallw as alltoallv, with a datatype (MPI_BYTE) and a byte displacement per edge.
//
//   mpirun -np N nbr-bench --patterns DIR [--naive DIR] [--sizes 1,4,16] [--iters 1000]
//                          [--collective allgather|alltoall|allgatherv|alltoallv|alltoallw] [--json FILE]
//   nbr-bench --list-collectives
//
// Built with SimGrid's smpicxx (NBR_SMPI), the native variants are skipped: SMPI has no
// dist-graph communicators. The naive pattern replay then stands for what an MPI library's
// naive algorithm puts on the wire. The persistent and nonblocking variants send the same
// messages as the blocking ones, so the SMPI build times them only with --persistent and
// --nonblocking.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <mpi.h>

#include "nbr.h"

#if !defined(NBR_SMPI)
#include <CLI/CLI.hpp>

#include "nbr/simulator/calibrate.hpp"
#include "nbr/simulator/libnbr_call.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/measure.hpp"
#include "nbr/simulator/sizes.hpp"
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#endif

namespace {

enum class Kind { allgather, alltoall, allgatherv, alltoallv, alltoallw };

const std::vector<std::string>& collective_names() {
    static const std::vector<std::string> names{"allgather", "alltoall", "allgatherv", "alltoallv", "alltoallw"};
    return names;
}

Kind kind_of(const std::string& name) {
    const auto& names = collective_names();
    return static_cast<Kind>(std::find(names.begin(), names.end(), name) - names.begin());
}

/// The arguments of one call at one size: blocks of `bytes` MPI_BYTEs; the v-variants pass
/// per-neighbor counts and consecutive displacements (alltoallw: in bytes, and a type each).
struct Args {
    Kind kind = Kind::allgather;
    int bytes = 0;
    std::vector<unsigned char> send;
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
    std::vector<MPI_Aint> send_bytes, recv_bytes;      // alltoallw's displacements
    std::vector<MPI_Datatype> send_types, recv_types;  // alltoallw's types

    [[nodiscard]] bool alltoall() const { return kind != Kind::allgather && kind != Kind::allgatherv; }
};

Args make_args(Kind kind, int bytes, int indegree, int outdegree, int me) {
    Args a;
    a.kind = kind;
    a.bytes = bytes;
    const int send_blocks = a.alltoall() ? outdegree : 1;
    a.send.resize(static_cast<std::size_t>(bytes) * static_cast<std::size_t>(std::max(send_blocks, 1)));
    for (std::size_t i = 0; i < a.send.size(); ++i) a.send[i] = static_cast<unsigned char>(me * 31 + i * 7 + 1);
    for (int j = 0; j <= outdegree; ++j) {
        a.send_counts.push_back(bytes);
        a.send_displs.push_back(j * bytes);
    }
    for (int i = 0; i <= indegree; ++i) {
        a.recv_counts.push_back(bytes);
        a.recv_displs.push_back(i * bytes);
    }
    a.send_bytes.assign(a.send_displs.begin(), a.send_displs.end());
    a.recv_bytes.assign(a.recv_displs.begin(), a.recv_displs.end());
    a.send_types.assign(a.send_displs.size(), MPI_BYTE);
    a.recv_types.assign(a.recv_displs.size(), MPI_BYTE);
    return a;
}

int nbr_blocking(const Args& a, void* recv, nbr_pattern_t p) {
    const void* s = a.send.data();
    const int n = a.bytes;
    switch (a.kind) {
        case Kind::allgather: return nbr_neighbor_allgather(s, n, MPI_BYTE, recv, n, MPI_BYTE, p);
        case Kind::alltoall: return nbr_neighbor_alltoall(s, n, MPI_BYTE, recv, n, MPI_BYTE, p);
        case Kind::allgatherv:
            return nbr_neighbor_allgatherv(s, n, MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE,
                                           p);
        case Kind::alltoallv:
            return nbr_neighbor_alltoallv(s, a.send_counts.data(), a.send_displs.data(), MPI_BYTE, recv,
                                          a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE, p);
        case Kind::alltoallw:
            return nbr_neighbor_alltoallw(s, a.send_counts.data(), a.send_bytes.data(), a.send_types.data(), recv,
                                          a.recv_counts.data(), a.recv_bytes.data(), a.recv_types.data(), p);
    }
    return NBR_ERR_ARG;
}

int nbr_nonblocking(const Args& a, void* recv, nbr_pattern_t p, nbr_request_t* r) {
    const void* s = a.send.data();
    const int n = a.bytes;
    switch (a.kind) {
        case Kind::allgather: return nbr_ineighbor_allgather(s, n, MPI_BYTE, recv, n, MPI_BYTE, p, r);
        case Kind::alltoall: return nbr_ineighbor_alltoall(s, n, MPI_BYTE, recv, n, MPI_BYTE, p, r);
        case Kind::allgatherv:
            return nbr_ineighbor_allgatherv(s, n, MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE,
                                            p, r);
        case Kind::alltoallv:
            return nbr_ineighbor_alltoallv(s, a.send_counts.data(), a.send_displs.data(), MPI_BYTE, recv,
                                           a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE, p, r);
        case Kind::alltoallw:
            return nbr_ineighbor_alltoallw(s, a.send_counts.data(), a.send_bytes.data(), a.send_types.data(), recv,
                                           a.recv_counts.data(), a.recv_bytes.data(), a.recv_types.data(), p, r);
    }
    return NBR_ERR_ARG;
}

int nbr_persistent_init(const Args& a, void* recv, nbr_pattern_t p, nbr_request_t* r) {
    const void* s = a.send.data();
    const int n = a.bytes;
    switch (a.kind) {
        case Kind::allgather: return nbr_neighbor_allgather_init(s, n, MPI_BYTE, recv, n, MPI_BYTE, p, 0, r);
        case Kind::alltoall: return nbr_neighbor_alltoall_init(s, n, MPI_BYTE, recv, n, MPI_BYTE, p, 0, r);
        case Kind::allgatherv:
            return nbr_neighbor_allgatherv_init(s, n, MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(),
                                                MPI_BYTE, p, 0, r);
        case Kind::alltoallv:
            return nbr_neighbor_alltoallv_init(s, a.send_counts.data(), a.send_displs.data(), MPI_BYTE, recv,
                                               a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE, p, 0, r);
        case Kind::alltoallw:
            return nbr_neighbor_alltoallw_init(s, a.send_counts.data(), a.send_bytes.data(), a.send_types.data(), recv,
                                               a.recv_counts.data(), a.recv_bytes.data(), a.recv_types.data(), p, 0, r);
    }
    return NBR_ERR_ARG;
}

#if !defined(NBR_SMPI)
void native_blocking(const Args& a, void* recv, MPI_Comm c) {
    const void* s = a.send.data();
    const int n = a.bytes;
    switch (a.kind) {
        case Kind::allgather: MPI_Neighbor_allgather(s, n, MPI_BYTE, recv, n, MPI_BYTE, c); return;
        case Kind::alltoall: MPI_Neighbor_alltoall(s, n, MPI_BYTE, recv, n, MPI_BYTE, c); return;
        case Kind::allgatherv:
            MPI_Neighbor_allgatherv(s, n, MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE, c);
            return;
        case Kind::alltoallv:
            MPI_Neighbor_alltoallv(s, a.send_counts.data(), a.send_displs.data(), MPI_BYTE, recv, a.recv_counts.data(),
                                   a.recv_displs.data(), MPI_BYTE, c);
            return;
        case Kind::alltoallw:
            MPI_Neighbor_alltoallw(s, a.send_counts.data(), a.send_bytes.data(), a.send_types.data(), recv,
                                   a.recv_counts.data(), a.recv_bytes.data(), a.recv_types.data(), c);
            return;
    }
}

void native_nonblocking(const Args& a, void* recv, MPI_Comm c, MPI_Request* r) {
    const void* s = a.send.data();
    const int n = a.bytes;
    switch (a.kind) {
        case Kind::allgather: MPI_Ineighbor_allgather(s, n, MPI_BYTE, recv, n, MPI_BYTE, c, r); return;
        case Kind::alltoall: MPI_Ineighbor_alltoall(s, n, MPI_BYTE, recv, n, MPI_BYTE, c, r); return;
        case Kind::allgatherv:
            MPI_Ineighbor_allgatherv(s, n, MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE, c, r);
            return;
        case Kind::alltoallv:
            MPI_Ineighbor_alltoallv(s, a.send_counts.data(), a.send_displs.data(), MPI_BYTE, recv, a.recv_counts.data(),
                                    a.recv_displs.data(), MPI_BYTE, c, r);
            return;
        case Kind::alltoallw:
            MPI_Ineighbor_alltoallw(s, a.send_counts.data(), a.send_bytes.data(), a.send_types.data(), recv,
                                    a.recv_counts.data(), a.recv_bytes.data(), a.recv_types.data(), c, r);
            return;
    }
}

// Persistent neighborhood collectives: MPI-4 (MPICH 4), or Open MPI 4.1's MPIX extension.
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_NATIVE_PERSISTENT 1
#define NBR_NATIVE_INIT(name) MPIX_Neighbor_##name##_init
#elif MPI_VERSION >= 4
#define NBR_NATIVE_PERSISTENT 1
#define NBR_NATIVE_INIT(name) MPI_Neighbor_##name##_init
#endif

#if defined(NBR_NATIVE_PERSISTENT)
void native_persistent_init(const Args& a, void* recv, MPI_Comm c, MPI_Request* r) {
    const void* s = a.send.data();
    const int n = a.bytes;
    switch (a.kind) {
        case Kind::allgather:
            NBR_NATIVE_INIT(allgather)(s, n, MPI_BYTE, recv, n, MPI_BYTE, c, MPI_INFO_NULL, r);
            return;
        case Kind::alltoall: NBR_NATIVE_INIT(alltoall)(s, n, MPI_BYTE, recv, n, MPI_BYTE, c, MPI_INFO_NULL, r); return;
        case Kind::allgatherv:
            NBR_NATIVE_INIT(allgatherv)
            (s, n, MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(), MPI_BYTE, c, MPI_INFO_NULL, r);
            return;
        case Kind::alltoallv:
            NBR_NATIVE_INIT(alltoallv)
            (s, a.send_counts.data(), a.send_displs.data(), MPI_BYTE, recv, a.recv_counts.data(), a.recv_displs.data(),
             MPI_BYTE, c, MPI_INFO_NULL, r);
            return;
        case Kind::alltoallw:
            NBR_NATIVE_INIT(alltoallw)
            (s, a.send_counts.data(), a.send_bytes.data(), a.send_types.data(), recv, a.recv_counts.data(),
             a.recv_bytes.data(), a.recv_types.data(), c, MPI_INFO_NULL, r);
            return;
    }
}
#endif
#endif

struct Options {
    std::string patterns;
    std::string naive;
    std::vector<int> sizes{1, 4, 16, 64, 256, 1024, 4096, 16384};
    int iters = 1000;
    int warmup = -1;  // default: iters / 10, at least 10
    int rounds = 1;   // variants timed in turn, iters / rounds calls each; the median round kept
    std::string collective = "allgather";
    std::string json;
    std::vector<std::string> only;  // variants to time (empty: all); the others are not run
    bool control = false;           // a second, identical native variant: the noise floor of a ratio
    bool measure = false;           // --measure: nbr-measured (NBR_LOAD_MEASURE) and each kept candidate alone
    std::string calibrate;          // machine file measured in this launch before the timing
#if !defined(NBR_SMPI)
    std::vector<std::uint64_t> calibrate_sizes;  // --calibrate's message sizes (default: nbr-calibrate's)
    int calibrate_repeat = nbr::simulator::MeasureOptions{}.repeat;  // --calibrate's repetitions per quantity
#endif
#if defined(NBR_SMPI)
    bool persistent = false;   // --persistent: same messages as the blocking variants
    bool nonblocking = false;  // --nonblocking: same messages as the blocking variants
#else
    bool persistent = true;
    bool nonblocking = true;
#endif
};

int rank_of(MPI_Comm comm) {
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
}

void die(const std::string& message) {
    if (rank_of(MPI_COMM_WORLD) == 0) std::fprintf(stderr, "nbr-bench: %s\n", message.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

void check(int err, const char* what) {
    if (err != NBR_SUCCESS) die(std::string(what) + ": " + nbr_strerror(err) + ": " + nbr_last_error());
}

/// One timed variant: call(recv) runs one collective call into `recv` (a persistent variant's
/// setup(recv) binds it, its call ignores it).
struct Variant {
    std::string name;
    std::function<void(unsigned char*)> call;
    std::function<void(unsigned char*)> setup;  // before timing (persistent init)
    std::function<void()> teardown;             // after timing
    std::vector<unsigned char>* recv;           // its own: what its last round left, for the check
    std::function<bool()> in_trials;            // nbr-measured: some shape still in its trials
};

/// The most calls a warm-up runs beyond --warmup while measured selection's trials go on (a
/// shape's trials end after at most Tuner::kMaxTrialRounds rounds; this only guards the loop).
constexpr int kMaxTrialWarmup = 100000;

/// Rank-slowest seconds per call of `v` into `recv`, after `warmup` untimed calls and, for
/// nbr-measured, more until its trials have decided (every rank decides at the same call, so
/// all stop together): the timed calls run the choice.
double time_variant(Variant& v, unsigned char* recv, int iters, int warmup) {
    if (v.setup) v.setup(recv);
    for (int i = 0; i < warmup; ++i) v.call(recv);
    for (int i = 0; v.in_trials && i < kMaxTrialWarmup && v.in_trials(); ++i) v.call(recv);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) v.call(recv);
    const double mine = (MPI_Wtime() - start) / iters;
    if (v.teardown) v.teardown();
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/// Every variant timed `rounds` times in turn, each round starting one variant later (so no
/// variant is always first after the synchronization); warm-up calls in the first round; the
/// median round per variant. All receive into `recv`: where a buffer lies (its pages, its
/// cache sets) can change the time of a call that copies much, so variants timed into buffers
/// of their own could differ by where those landed, not by what they do. In the last
/// round `recv` is zeroed before each variant and what it received is kept for the data check.
void time_rounds(std::vector<Variant>& variants, unsigned char* recv, const Options& o, int warmup,
                 std::map<std::string, double>& out) {
    const int rounds = std::max(1, std::min(o.rounds, o.iters));
    std::map<std::string, std::vector<double>> times;
    const std::size_t n = variants.size();
    for (int r = 0; r < rounds; ++r) {
        for (std::size_t k = 0; k < n; ++k) {  // each round starts one variant later
            auto& v = variants[(k + static_cast<std::size_t>(r)) % n];
            const bool last = r == rounds - 1;
            if (last) std::fill(recv, recv + v.recv->size(), 0);
            // nbr-measured warms up by one call at least: its size's shape exists from its first call
            const int w = r > 0 ? 0 : v.in_trials ? std::max(warmup, 1) : warmup;
            times[v.name].push_back(time_variant(v, recv, o.iters / rounds, w));
            if (last) std::copy(recv, recv + v.recv->size(), v.recv->begin());
        }
    }
    for (auto& [name, t] : times) {
        std::sort(t.begin(), t.end());
        out[name] = t[t.size() / 2];
    }
}

/// Drops the variants not named in `only` (none when it is empty); stops the job if `only`
/// names a variant this run does not have (every rank has the same list).
void keep_only(std::vector<Variant>& variants, const std::vector<std::string>& only) {
    if (only.empty()) return;
    for (const auto& name : only) {
        if (std::none_of(variants.begin(), variants.end(), [&](const Variant& v) { return v.name == name; })) {
            die("--only: no variant named " + name + " in this run");
        }
    }
    variants.erase(
        std::remove_if(variants.begin(), variants.end(),
                       [&](const Variant& v) { return std::find(only.begin(), only.end(), v.name) == only.end(); }),
        variants.end());
}

std::vector<std::string> variant_names(const std::vector<Variant>& variants) {
    std::vector<std::string> names;
    for (const auto& v : variants) names.push_back(v.name);
    return names;
}

/// What the ratios are taken against and the data checked with: the native call, else the
/// naive pattern's replay (SMPI), else the first variant timed.
std::string baseline_of(const std::vector<std::string>& names) {
    for (const char* name : {"native", "nbr-naive"}) {
        if (std::find(names.begin(), names.end(), name) != names.end()) return name;
    }
    return names.front();
}

std::vector<int> parse_sizes(const std::string& text) {
    std::vector<int> sizes;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) sizes.push_back(std::stoi(item));
    return sizes;
}

#if defined(NBR_SMPI)
/// SMPI build: a minimal parser (CLI11 is not needed by the simulated program).
Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die("missing value for " + a);
            return argv[++i];
        };
        if (a == "--patterns")
            o.patterns = value();
        else if (a == "--naive")
            o.naive = value();
        else if (a == "--sizes")
            o.sizes = parse_sizes(value());
        else if (a == "--iters")
            o.iters = std::stoi(value());
        else if (a == "--warmup")
            o.warmup = std::stoi(value());
        else if (a == "--rounds")
            o.rounds = std::stoi(value());
        else if (a == "--collective")
            o.collective = value();
        else if (a == "--json")
            o.json = value();
        else if (a == "--only") {
            std::stringstream names(value());
            for (std::string name; std::getline(names, name, ',');) o.only.push_back(name);
        } else if (a == "--persistent")
            o.persistent = true;
        else if (a == "--nonblocking")
            o.nonblocking = true;
        else if (a == "--measure")
            o.measure = true;
        else
            die("unknown argument " + a);
    }
    if (std::find(collective_names().begin(), collective_names().end(), o.collective) == collective_names().end()) {
        die("unknown collective " + o.collective);
    }
    if (o.patterns.empty()) die("--patterns is required");
    if (o.naive.empty()) die("--naive is required in the SMPI build");
    return o;
}
#else
bool parse(int argc, char** argv, Options& o, int& exit_code) {
    CLI::App app{"nbr-bench: native vs nbr neighborhood collectives on one topology"};
    std::string sizes;
    bool list = false;
    app.add_flag("--list-collectives", list, "Print the collectives --collective accepts and exit");
    auto* patterns = app.add_option("--patterns", o.patterns, "Pattern directory to replay");
    app.add_option("--naive", o.naive, "Naive pattern of the same topology (default: compiled in the job)");
    app.add_option("--sizes", sizes, "Message sizes in bytes, comma-separated");
    app.add_option("--iters", o.iters, "Timed calls per variant and size")->check(CLI::PositiveNumber);
    app.add_option("--warmup", o.warmup,
                   "Untimed calls first (default iters/10, >= 10; nbr-measured's go on until its trials decide)");
    app.add_option("--rounds", o.rounds,
                   "Time the variants in turn this many times (iters/rounds calls each) and keep each "
                   "variant's median round: drift and stragglers hit all variants alike")
        ->check(CLI::PositiveNumber);
    app.add_option("--collective", o.collective)->check(CLI::IsMember(collective_names()));
    app.add_option("--json", o.json, "Write all results to this JSON file");
    app.add_flag("--measure", o.measure,
                 "Also time nbr-measured (measured selection, its trials inside the warm-up) and, for an auto "
                 "directory, variants alone (cand-NAME): those --only names, else each subdirectory");
    app.add_option("--only", o.only, "Time only these variants (comma-separated names, as in the output)")
        ->delimiter(',');
    app.add_flag("--control", o.control,
                 "Also time native-control, the native call again (native/native-control is the noise floor of "
                 "every ratio in the run), and native-dup, the native call on a duplicate of the communicator "
                 "(what libnbr's hand-off to the native call can reach)");
    app.add_option("--calibrate", o.calibrate,
                   "First measure ranks 0 and 1 as nbr-calibrate does and write the machine file here: a "
                   "prediction from it shares this launch's state of the machine with the times");
    std::string calibrate_sizes = nbr::simulator::kCalibrationSizes;
    app.add_option("--calibrate-sizes", calibrate_sizes,
                   "--calibrate's message sizes (K, M suffixes; as nbr-calibrate --sizes)")
        ->capture_default_str();
    app.add_option("--calibrate-repeat", o.calibrate_repeat,
                   "--calibrate's repetitions per quantity (median kept; as nbr-calibrate --repeat)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    try {
        app.parse(argc, argv);
        try {
            o.calibrate_sizes = nbr::simulator::parse_sizes_up_to(calibrate_sizes, 1ULL << 30);
        } catch (const std::invalid_argument& error) {
            throw CLI::ValidationError("--calibrate-sizes", error.what());
        }
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        const int code = rank_of(MPI_COMM_WORLD) == 0 ? app.exit(e) : app.exit(e, sink, sink);
        exit_code = code == 0 ? 0 : 2;
        return false;
    }
    if (list) {
        if (rank_of(MPI_COMM_WORLD) == 0) {
            for (const auto& name : collective_names()) std::printf("%s\n", name.c_str());
        }
        return false;
    }
    if (patterns->count() == 0) {
        if (rank_of(MPI_COMM_WORLD) == 0) std::fprintf(stderr, "nbr-bench: --patterns is required\n");
        exit_code = 2;
        return false;
    }
    if (!sizes.empty()) o.sizes = parse_sizes(sizes);
    return true;
}
#endif

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

/// The patterns a run replays, the communicators it replays them on and the rank's neighbors;
/// frees them at the end of the run.
struct Setup {
    int indegree = 0;
    int outdegree = 0;
    std::vector<int> sources;
    std::vector<int> destinations;
    const char* algorithm = "";
    MPI_Comm comm = MPI_COMM_WORLD;  // where the patterns are replayed
    nbr_pattern_t plain = nullptr;   // --patterns on MPI_COMM_WORLD
    nbr_pattern_t pattern = nullptr;
    nbr_pattern_t naive = nullptr;
    nbr_pattern_t measured = nullptr;                               // --measure
    std::vector<std::pair<std::string, nbr_pattern_t>> candidates;  // --measure: each variant alone
#if !defined(NBR_SMPI)
    MPI_Comm graph = MPI_COMM_NULL;  // the dist-graph communicator of the pattern's neighbors
    MPI_Comm p2p = MPI_COMM_NULL;    // its duplicate for the hand-posted schedule
    nbr_pattern_t engine = nullptr;  // nbr's own engine even where blocking calls would go native
#endif

    explicit Setup(const Options& o) {
        check(nbr_load_pattern(o.patterns.c_str(), MPI_COMM_WORLD, &plain), "loading --patterns");
        nbr_pattern_neighbors_count(plain, &indegree, &outdegree);
        sources.resize(static_cast<std::size_t>(indegree) + 1);
        destinations.resize(static_cast<std::size_t>(outdegree) + 1);
        nbr_pattern_neighbors(plain, indegree, sources.data(), outdegree, destinations.data());
        nbr_pattern_algorithm(plain, &algorithm);
        pattern = plain;
#if !defined(NBR_SMPI)
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indegree, sources.data(), MPI_UNWEIGHTED, outdegree,
                                       destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
        check(nbr_load_pattern(o.patterns.c_str(), graph, &pattern),
              "loading --patterns on the dist-graph communicator");
        comm = graph;
        MPI_Comm_dup(graph, &p2p);
        check(nbr_load_pattern_flags(o.patterns.c_str(), graph, NBR_LOAD_NO_NATIVE, &engine),
              "loading --patterns for nbr-engine");
#endif
        if (!o.naive.empty()) check(nbr_load_pattern(o.naive.c_str(), comm, &naive), "loading --naive");
        if (o.measure) load_measured(o);
    }
    void load_measured(const Options& o) {
        check(nbr_load_pattern_flags(o.patterns.c_str(), comm, NBR_LOAD_MEASURE, &measured), "loading --measure");
        // The variants --only names (cand-NAME: AUTO/NAME, also a variant sharing another's
        // files), else the auto directory's subdirectories that hold a manifest, in name order.
        std::vector<std::filesystem::path> variants;
        for (const auto& name : o.only) {
            if (name.rfind("cand-", 0) == 0) variants.push_back(std::filesystem::path(o.patterns) / name.substr(5));
        }
        if (variants.empty()) {
            for (const auto& entry : std::filesystem::directory_iterator(o.patterns)) {
                if (entry.is_directory() && std::filesystem::exists(entry.path() / "manifest.pb")) {
                    variants.push_back(entry.path());
                }
            }
        }
        std::sort(variants.begin(), variants.end());
        for (const auto& dir : variants) {
            nbr_pattern_t p = nullptr;
            check(nbr_load_pattern(dir.c_str(), comm, &p), "loading a kept variant");
            candidates.emplace_back("cand-" + dir.filename().string(), p);
        }
    }
    ~Setup() {
        if (measured != nullptr) nbr_pattern_free(&measured);
        for (auto& [name, p] : candidates) nbr_pattern_free(&p);
        if (naive != nullptr) nbr_pattern_free(&naive);
        if (pattern != plain) nbr_pattern_free(&pattern);
        nbr_pattern_free(&plain);
#if !defined(NBR_SMPI)
        nbr_pattern_free(&engine);
        MPI_Comm_free(&p2p);
        MPI_Comm_free(&graph);
#endif
    }
    Setup(const Setup&) = delete;
    Setup& operator=(const Setup&) = delete;
};

/// The variants of one message size: the call arguments, the receive buffer they are timed
/// into, one per variant for its data check, and the calls (which refer to the arguments, so a
/// SizeRun stays where it was made).
struct SizeRun {
    Args args;
    std::size_t recv_bytes = 0;
    std::vector<unsigned char> timed;
    std::map<std::string, std::vector<unsigned char>> recv;
    std::vector<Variant> variants;

    SizeRun(Kind kind, int bytes, const Setup& s, int me)
        : args(make_args(kind, bytes, s.indegree, s.outdegree, me)),
          recv_bytes(static_cast<std::size_t>(bytes) * static_cast<std::size_t>(std::max(s.indegree, 1))),
          timed(recv_bytes, 0) {}
    SizeRun(const SizeRun&) = delete;
    SizeRun& operator=(const SizeRun&) = delete;

    std::vector<unsigned char>* buffer(const std::string& name) {
        auto& b = recv[name];
        b.assign(recv_bytes, 0);
        return &b;
    }
    void add(const std::string& name, std::function<void(unsigned char*)> call) {
        variants.push_back({name, std::move(call), nullptr, nullptr, buffer(name), nullptr});
    }
};

/// nbr's replay of `p` as a blocking call, and (as the options ask) persistent and nonblocking.
void add_nbr_forms(SizeRun& run, const Options& o, const std::string& name, nbr_pattern_t p) {
    const Args& args = run.args;
    run.add(name, [&args, p](unsigned char* b) { check(nbr_blocking(args, b, p), "replay"); });
    if (o.persistent) {
        auto* b = run.buffer(name + "-persistent");
        auto request = std::make_shared<nbr_request_t>(nullptr);
        run.variants.push_back({name + "-persistent",
                                [request](unsigned char*) {
                                    check(nbr_start(request.get()), "nbr_start");
                                    check(nbr_wait(request.get()), "nbr_wait");
                                },
                                [&args, p, request](unsigned char* recv) {
                                    check(nbr_persistent_init(args, recv, p, request.get()), "persistent init");
                                },
                                [request] { nbr_request_free(request.get()); }, b, nullptr});
    }
    if (o.nonblocking) {
        run.add(name + "-nonblocking", [&args, p](unsigned char* b) {
            nbr_request_t request = nullptr;
            check(nbr_nonblocking(args, b, p, &request), "nonblocking replay");
            check(nbr_wait(&request), "nbr_wait");
        });
    }
}

#if !defined(NBR_SMPI)
/// The naive schedule through MPI's point-to-point API into `recv`: receives in in-neighbor
/// order, sends in out-neighbor order, one tag on one communicator, so that MPI's
/// non-overtaking rule pairs duplicate edges in order, as the standard defines a neighborhood
/// collective (MPI-4.1 section 8.6). `requests` holds indegree + outdegree.
void exchange_p2p(const Args& args, const Setup& s, unsigned char* recv, MPI_Request* requests) {
    const int bytes = args.bytes;
    MPI_Request* r = requests;
    for (int i = 0; i < s.indegree; ++i) {
        MPI_Irecv(recv + static_cast<std::size_t>(i) * bytes, bytes, MPI_BYTE, s.sources[static_cast<std::size_t>(i)],
                  0, s.p2p, r++);
    }
    for (int j = 0; j < s.outdegree; ++j) {
        const std::size_t block = args.alltoall() ? static_cast<std::size_t>(j) : 0;
        MPI_Isend(args.send.data() + block * bytes, bytes, MPI_BYTE, s.destinations[static_cast<std::size_t>(j)], 0,
                  s.p2p, r++);
    }
    MPI_Waitall(s.indegree + s.outdegree, requests, MPI_STATUSES_IGNORE);
}

/// The naive schedule posted by hand: the floor for any replayer built on MPI's point-to-point
/// API (the native collective calls the layer below the API).
void add_p2p(SizeRun& run, const Setup& s) {
    auto requests = std::make_shared<std::vector<MPI_Request>>(s.indegree + s.outdegree);
    const Args& args = run.args;
    run.add("p2p", [&args, &s, requests](unsigned char* b) { exchange_p2p(args, s, b, requests->data()); });
}

/// What the standard delivers for this call: the point-to-point exchange, once.
std::vector<unsigned char> standard_delivery(const SizeRun& run, const Setup& s) {
    std::vector<unsigned char> recv(run.recv_bytes, 0);
    std::vector<MPI_Request> requests(static_cast<std::size_t>(s.indegree + s.outdegree));
    exchange_p2p(run.args, s, recv.data(), requests.data());
    return recv;
}

/// The native collective: blocking (twice with --control), persistent where the library has
/// it, nonblocking; and the hand-posted schedule.
void add_native(SizeRun& run, const Options& o, const Setup& s) {
    const Args& args = run.args;
    const MPI_Comm graph = s.graph;
    run.add("native", [&args, graph](unsigned char* b) { native_blocking(args, b, graph); });
    if (o.control) {
        run.add("native-control", [&args, graph](unsigned char* b) { native_blocking(args, b, graph); });
        const MPI_Comm dup = s.p2p;  // a duplicate, as libnbr holds one
        run.add("native-dup", [&args, dup](unsigned char* b) { native_blocking(args, b, dup); });
    }
#if defined(NBR_NATIVE_PERSISTENT)
    {
        auto* b = run.buffer("native-persistent");
        auto request = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
        run.variants.push_back(
            {"native-persistent",
             [request](unsigned char*) {
                 MPI_Start(request.get());
                 MPI_Wait(request.get(), MPI_STATUS_IGNORE);
             },
             [&args, graph, request](unsigned char* recv) { native_persistent_init(args, recv, graph, request.get()); },
             [request] { MPI_Request_free(request.get()); }, b, nullptr});
    }
#endif
    add_p2p(run, s);
    run.add("native-nonblocking", [&args, graph](unsigned char* b) {
        MPI_Request request = MPI_REQUEST_NULL;
        native_nonblocking(args, b, graph, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    });
}
#endif

/// Whether `v` received what the reference did and, for allgather, each block its sender's
/// data; agreed over all ranks.
bool data_correct(const Variant& v, const std::vector<unsigned char>& reference, const Args& args, const Setup& s) {
    bool ok = *v.recv == reference;
    if (!args.alltoall()) {
        for (int b = 0; b < s.indegree && ok; ++b) {
            for (int i = 0; i < args.bytes && ok; ++i) {
                const auto expected =
                    static_cast<unsigned char>(s.sources[static_cast<std::size_t>(b)] * 31 + i * 7 + 1);
                ok = (*v.recv)[static_cast<std::size_t>(b) * args.bytes + i] == expected;
            }
        }
    }
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

/// With --calibrate, the machine's state as rank 0 sees it: the one-way times (µs) of
/// kProbeBytes between ranks 0 and 1. A virtual machine's state can change within a launch,
/// between one size's timing and the next; a prediction from the calibration describes only
/// the sizes timed in its state. 1 B is what the CPU and the transport's latency take, 4 KiB
/// what the copies across the processes take (they can slow down while 1 B does not).
constexpr std::array<std::uint64_t, 2> kProbeBytes{1, 4096};
using Probe = std::array<double, kProbeBytes.size()>;  // negative: not measured
constexpr Probe kNoProbe{-1, -1};

struct Row {
    int bytes;
    std::map<std::string, double> seconds;
    std::map<std::string, bool> correct;
    Probe before = kNoProbe, after = kNoProbe;  // --calibrate: the state before and after the timing
};

/// Whether some call shape of a measured pattern is still in its trials (the same on every rank).
bool in_trials(nbr_pattern_t pattern) {
    int shapes = 0;
    nbr_pattern_shape_count(pattern, &shapes);
    for (int i = 0; i < shapes; ++i) {
        nbr_shape_stats_t stats;
        if (nbr_pattern_shape_stats(pattern, i, &stats) == NBR_SUCCESS && stats.state == NBR_SHAPE_TRIAL) return true;
    }
    return false;
}

/// Times every variant at one size, then checks their data against the reference: what the
/// standard delivers (the point-to-point exchange; under SMPI, without topologies, the naive
/// replay, or with --only and that not kept, the first variant kept).
Row run_size(const Options& o, const Setup& s, int bytes, int warmup, std::vector<std::string>& names) {
    SizeRun run(kind_of(o.collective), bytes, s, rank_of(MPI_COMM_WORLD));
#if !defined(NBR_SMPI)
    add_native(run, o, s);
#endif
    add_nbr_forms(run, o, "nbr", s.pattern);
#if !defined(NBR_SMPI)
    run.add("nbr-engine", [&run, &s](unsigned char* b) { check(nbr_blocking(run.args, b, s.engine), "replay"); });
#endif
    if (s.naive != nullptr) add_nbr_forms(run, o, "nbr-naive", s.naive);
    if (s.measured != nullptr) {
        run.add("nbr-measured",
                [&run, &s](unsigned char* b) { check(nbr_blocking(run.args, b, s.measured), "replay"); });
        run.variants.back().in_trials = [&s] { return in_trials(s.measured); };
        for (const auto& [name, p] : s.candidates) {
            run.add(name, [&run, p = p](unsigned char* b) { check(nbr_blocking(run.args, b, p), "replay"); });
        }
    }
    keep_only(run.variants, o.only);
    Row row{bytes, {}, {}};
    time_rounds(run.variants, run.timed.data(), o, warmup, row.seconds);
    names = variant_names(run.variants);
#if defined(NBR_SMPI)
    const auto& reference = run.recv[baseline_of(names)];
#else
    const auto reference = standard_delivery(run, s);
#endif
    for (const auto& v : run.variants) row.correct[v.name] = data_correct(v, reference, run.args, s);
    return row;
}

/// The table on stdout (times and ratios to the baseline, then any data mismatch); 1 if a
/// variant's data was wrong.
int print_table(const Options& o, const Setup& s, const std::vector<Row>& rows, const std::vector<std::string>& order,
                int warmup) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string base = baseline_of(order);
    std::printf("# nbr-bench: %s, %d ranks, pattern %s (%s), %d iterations after %d warm-up, max over ranks\n",
                o.collective.c_str(), size, o.patterns.c_str(), s.algorithm, o.iters, warmup);
    std::printf("%8s", "bytes");
    for (const auto& name : order) std::printf(" %14s", (name + " us").c_str());
    for (const auto& name : order) {
        if (name != base) std::printf(" %16s", (base + "/" + name).c_str());
    }
    std::printf("\n");
    int status = 0;
    bool native_differs = false;
    for (const auto& row : rows) {
        std::printf("%8d", row.bytes);
        for (const auto& name : order) std::printf(" %14.2f", row.seconds.at(name) * 1e6);
        for (const auto& name : order) {
            if (name != base) std::printf(" %16.2f", row.seconds.at(base) / row.seconds.at(name));
        }
        std::printf("\n");
        for (const auto& [name, ok] : row.correct) {
            if (ok) continue;
            if (name.rfind("native", 0) == 0) {  // MPI's own result: reported, not nbr's failure
                native_differs = true;
                std::printf(
                    "# %s differs from the standard's delivery at %d bytes (MPICH 4.0 pairs duplicate "
                    "edges in reverse order: pmodels/mpich#7945)\n",
                    name.c_str(), row.bytes);
                continue;
            }
            std::printf("# DATA MISMATCH: %s at %d bytes\n", name.c_str(), row.bytes);
            status = 1;
        }
    }
    if (status == 0) {
        std::printf("# data checked after timing: %s\n",
                    native_differs ? "nbr's variants correct (the native call's result differs, above)"
                                   : "all variants correct");
    }
    return status;
}

std::string probe_json(const Probe& probe) {
    std::ostringstream text;
    text << "[" << probe[0] << ", " << probe[1] << "]";
    return text.str();
}

/// --calibrate: `"state_one_way_us"`, the probes of the calibration and, per size, before and
/// after its timing (each a list over `probe_bytes`).
void write_state(std::ostream& out, const std::vector<Row>& rows, const Probe& calibration) {
    out << "  \"state_one_way_us\": {\"probe_bytes\": [" << kProbeBytes[0] << ", " << kProbeBytes[1]
        << "], \"calibration\": " << probe_json(calibration) << ", \"sizes\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        out << (i == 0 ? "" : ", ") << "{\"bytes\": " << rows[i].bytes << ", \"before\": " << probe_json(rows[i].before)
            << ", \"after\": " << probe_json(rows[i].after) << "}";
    }
    out << "]},\n";
}

/// The same results as JSON (--json).
void write_json(const Options& o, const Setup& s, const std::vector<Row>& rows, const std::vector<std::string>& order,
                int warmup, const Probe& calibration) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string base = baseline_of(order);
    std::ofstream out(o.json);
    out << "{\n  \"collective\": \"" << o.collective << "\",\n  \"ranks\": " << size << ",\n  \"patterns\": \""
        << json_escape(o.patterns) << "\",\n  \"algorithm\": \"" << json_escape(s.algorithm)
        << "\",\n  \"iters\": " << o.iters << ",\n  \"warmup\": " << warmup << ",\n  \"rounds\": " << o.rounds
        << ",\n  \"baseline\": \"" << base << "\",\n";
#if defined(NBR_SMPI)
    out << "  \"simulated\": true,\n";
#else
    out << "  \"simulated\": false,\n";
#endif
    if (calibration != kNoProbe) write_state(out, rows, calibration);
    out << "  \"results\": [\n";
    bool first = true;
    for (const auto& row : rows) {
        for (const auto& name : order) {
            out << (first ? "" : ",\n") << "    {\"bytes\": " << row.bytes << ", \"variant\": \"" << name
                << "\", \"seconds\": " << row.seconds.at(name)
                << ", \"ratio_to_baseline\": " << row.seconds.at(base) / row.seconds.at(name)
                << ", \"correct\": " << (row.correct.at(name) ? "true" : "false") << "}";
            first = false;
        }
    }
    out << "\n  ]\n}\n";
}

#if !defined(NBR_SMPI)
/// The state now: the one-way times of kProbeBytes (median of 11 round trips each; rank 0).
Probe probe_state() {
    Probe probe = kNoProbe;
    for (std::size_t i = 0; i < kProbeBytes.size(); ++i) {
        probe[i] = nbr::simulator::measure_one_way(MPI_COMM_WORLD, kProbeBytes[i], 11);
    }
    return probe;
}

/// The calibration's own one-way times at kProbeBytes (where it measured them).
Probe calibration_probe(const nbr::simulator::Calibration& c) {
    Probe probe = kNoProbe;
    for (const auto& point : c.points) {
        for (std::size_t i = 0; i < kProbeBytes.size(); ++i) {
            if (point.bytes == kProbeBytes[i]) probe[i] = point.one_way_us;
        }
    }
    return probe;
}

/// --calibrate: the same-socket class between ranks 0 and 1, measured now and written by rank 0.
/// Returns (on rank 0) the calibration's one-way times at kProbeBytes.
Probe calibrate(const Options& o) {
    const std::string& path = o.calibrate;
    try {
        nbr::simulator::MeasureOptions measure;
        measure.sizes = o.calibrate_sizes;
        measure.repeat = o.calibrate_repeat;
        const auto c = nbr::simulator::measure_link_with_libnbr_call(MPI_COMM_WORLD, measure);
        if (rank_of(MPI_COMM_WORLD) != 0) return kNoProbe;
        nbr::simulator::NewMachine node;
        node.cores = std::thread::hardware_concurrency();
        const auto machine =
            nbr::simulator::calibrated_machine(c, nbr::simulator::DistanceClass::socket, node,
                                               "nbr-bench --calibrate: ping-pong, bursts, streams, a late receiver, "
                                               "the sender's completion and libnbr's call between two ranks, in the "
                                               "launch that was timed");
        nbr::simulator::save_machine(path, machine);
        return calibration_probe(c);
    } catch (const std::exception& e) {
        die(std::string("--calibrate ") + path + ": " + e.what());
    }
    return kNoProbe;
}
#endif

/// What measured selection chose per shape, on this rank: "# measured: allgather blocking
/// 64-127 B: cand (measured; trials 18 calls, 123.4 us; naive 5.1 us, cand 3.2 us, ...)" and,
/// for a measured shape, " decided by RULE" (nbr_decision_t: told_apart, lowest_median, ...).
void print_measured(nbr_pattern_t pattern) {
    int shapes = 0;
    nbr_pattern_shape_count(pattern, &shapes);
    static const char* const kCollectives[] = {"allgather", "alltoall", "allgatherv", "alltoallv"};
    static const char* const kModes[] = {"blocking", "nonblocking", "persistent"};
    static const char* const kStates[] = {"only candidate", "still in trials", "measured", "from wisdom",
                                          "model's choice"};  // nbr_shape_state_t
    for (int i = 0; i < shapes; ++i) {
        nbr_shape_stats_t s;
        if (nbr_pattern_shape_stats(pattern, i, &s) != NBR_SUCCESS) continue;
        std::printf("# measured: %s %s %zu-%zu B: %s (%s; trials %llu calls, %.1f us;", kCollectives[s.collective],
                    kModes[s.mode], s.min_bytes, s.max_bytes, s.variant, kStates[s.state], s.trial_calls, s.trial_us);
        for (int c = 0; c < s.candidates; ++c) {
            const char* name = nullptr;
            double median = 0;
            nbr_pattern_shape_candidate(pattern, i, c, &name, &median, nullptr, nullptr);
            std::printf(" %s %.2f us%s", name, median, c + 1 < s.candidates ? "," : ")");
        }
        static const char* const kDecisions[] = {"",          "told_apart", "lowest_median",
                                                 "naive_tie", "model_tie",  "shared_cores"};  // nbr_decision_t
        nbr_decision_t decision = NBR_DECISION_NONE;
        nbr_pattern_shape_decision(pattern, i, &decision);
        std::printf("%s%s\n", decision == NBR_DECISION_NONE ? "" : " decided by ", kDecisions[decision]);
    }
}

int run(const Options& o) {
    Probe calibration = kNoProbe;
#if !defined(NBR_SMPI)
    const bool probing = !o.calibrate.empty();
    if (probing) calibration = calibrate(o);
#endif
    const int warmup = o.warmup >= 0 ? o.warmup : std::max(10, o.iters / 10);
    const Setup setup(o);
    std::vector<Row> rows;
    std::vector<std::string> order;
    for (const int bytes : o.sizes) {
        std::vector<std::string> names;
#if !defined(NBR_SMPI)
        const Probe before = probing ? probe_state() : kNoProbe;
        rows.push_back(run_size(o, setup, bytes, warmup, names));
        rows.back().before = before;
        if (probing) rows.back().after = probe_state();
#else
        rows.push_back(run_size(o, setup, bytes, warmup, names));
#endif
        if (order.empty()) order = names;
    }
    int status = 0;
    if (rank_of(MPI_COMM_WORLD) == 0) {
        status = print_table(o, setup, rows, order, warmup);
        if (setup.measured != nullptr) print_measured(setup.measured);
        if (!o.json.empty()) write_json(o, setup, rows, order, warmup, calibration);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int status = 0;
#if defined(NBR_SMPI)
    status = run(parse(argc, argv));
#else
    Options o;
    if (parse(argc, argv, o, status)) status = run(o);
#endif
    MPI_Finalize();
    return status;
}
