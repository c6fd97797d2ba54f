// nbr-bench: the papers' microbenchmark. For every message size it times, on the same
// topology in the same run: the native neighbor collective, its persistent form where the
// library has one, nbr replay of the pattern (blocking and persistent), and nbr replay of the
// naive pattern of the same topology. Mean time per call after warm-up, maximum over ranks;
// the data of every variant is checked after timing.
//
//   mpirun -np N nbr-bench --patterns DIR [--naive DIR] [--sizes 1,4,16] [--iters 1000]
//                          [--collective allgather|alltoall] [--json FILE]
//
// Built with SimGrid's smpicxx (NBR_SMPI), the native variants are skipped: SMPI has no
// dist-graph communicators. The naive pattern replay then stands for what an MPI library's
// naive algorithm puts on the wire. The persistent variants send the same messages as the
// blocking ones, so the SMPI build times them only with --persistent.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <mpi.h>

#include "nbr.h"

#if !defined(NBR_SMPI)
#include <CLI/CLI.hpp>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#endif

namespace {

#if !defined(NBR_SMPI)
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_NATIVE_PERSISTENT 1
int native_persistent_init(bool alltoall, const void* s, int n, void* r, MPI_Comm comm, MPI_Request* req) {
    return alltoall ? MPIX_Neighbor_alltoall_init(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, MPI_INFO_NULL, req)
                    : MPIX_Neighbor_allgather_init(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, MPI_INFO_NULL, req);
}
#elif MPI_VERSION >= 4
#define NBR_NATIVE_PERSISTENT 1
int native_persistent_init(bool alltoall, const void* s, int n, void* r, MPI_Comm comm, MPI_Request* req) {
    return alltoall ? MPI_Neighbor_alltoall_init(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, MPI_INFO_NULL, req)
                    : MPI_Neighbor_allgather_init(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, MPI_INFO_NULL, req);
}
#endif
#endif

struct Options {
    std::string patterns;
    std::string naive;
    std::vector<int> sizes{1, 4, 16, 64, 256, 1024, 4096, 16384};
    int iters = 1000;
    int warmup = -1;  // default: iters / 10, at least 10
    std::string collective = "allgather";
    std::string json;
#if defined(NBR_SMPI)
    bool persistent = false;  // --persistent: same messages as the blocking variants
#else
    bool persistent = true;
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

/// One timed variant: start() runs one collective call.
struct Variant {
    std::string name;
    std::function<void()> call;
    std::function<void()> setup;     // before timing (persistent init)
    std::function<void()> teardown;  // after timing
    std::vector<unsigned char>* recv;
};

double time_variant(Variant& v, int iters, int warmup) {
    if (v.setup) v.setup();
    for (int i = 0; i < warmup; ++i) v.call();
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) v.call();
    const double mine = (MPI_Wtime() - start) / iters;
    if (v.teardown) v.teardown();
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
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
        else if (a == "--collective")
            o.collective = value();
        else if (a == "--json")
            o.json = value();
        else if (a == "--persistent")
            o.persistent = true;
        else
            die("unknown argument " + a);
    }
    if (o.patterns.empty()) die("--patterns is required");
    if (o.naive.empty()) die("--naive is required in the SMPI build");
    return o;
}
#else
bool parse(int argc, char** argv, Options& o, int& exit_code) {
    CLI::App app{"nbr-bench: native vs nbr neighborhood collectives on one topology"};
    std::string sizes;
    app.add_option("--patterns", o.patterns, "Pattern directory to replay")->required();
    app.add_option("--naive", o.naive, "Naive pattern of the same topology (default: compiled in the job)");
    app.add_option("--sizes", sizes, "Message sizes in bytes, comma-separated");
    app.add_option("--iters", o.iters, "Timed calls per variant and size")->check(CLI::PositiveNumber);
    app.add_option("--warmup", o.warmup, "Untimed calls first (default iters/10, >= 10)");
    app.add_option("--collective", o.collective)->check(CLI::IsMember({"allgather", "alltoall"}));
    app.add_option("--json", o.json, "Write all results to this JSON file");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        const int code = rank_of(MPI_COMM_WORLD) == 0 ? app.exit(e) : app.exit(e, sink, sink);
        exit_code = code == 0 ? 0 : 2;
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

int run(const Options& o) {
    const int me = rank_of(MPI_COMM_WORLD);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const bool alltoall = o.collective == "alltoall";
    const int warmup = o.warmup >= 0 ? o.warmup : std::max(10, o.iters / 10);

    nbr_pattern_t plain = nullptr;
    check(nbr_load_pattern(o.patterns.c_str(), MPI_COMM_WORLD, &plain), "loading --patterns");
    int indegree = 0, outdegree = 0;
    nbr_pattern_neighbors_count(plain, &indegree, &outdegree);
    std::vector<int> sources(static_cast<std::size_t>(indegree) + 1),
        destinations(static_cast<std::size_t>(outdegree) + 1);
    nbr_pattern_neighbors(plain, indegree, sources.data(), outdegree, destinations.data());
    const char* algorithm = "";
    nbr_pattern_algorithm(plain, &algorithm);

    MPI_Comm comm = MPI_COMM_WORLD;  // where the patterns are replayed
    nbr_pattern_t pattern = plain;
#if !defined(NBR_SMPI)
    MPI_Comm graph = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indegree, sources.data(), MPI_UNWEIGHTED, outdegree,
                                   destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    check(nbr_load_pattern(o.patterns.c_str(), graph, &pattern), "loading --patterns on the dist-graph communicator");
    comm = graph;
#endif
    nbr_pattern_t naive = nullptr;
    if (!o.naive.empty()) check(nbr_load_pattern(o.naive.c_str(), comm, &naive), "loading --naive");

    struct Row {
        int bytes;
        std::map<std::string, double> seconds;
        std::map<std::string, bool> correct;
    };
    std::vector<Row> rows;
    std::vector<std::string> order;
    for (const int bytes : o.sizes) {
        const std::size_t send_bytes = static_cast<std::size_t>(bytes) * (alltoall ? std::max(outdegree, 1) : 1);
        const std::size_t recv_bytes = static_cast<std::size_t>(bytes) * std::max(indegree, 1);
        std::vector<unsigned char> send(send_bytes);
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<unsigned char>(me * 31 + i * 7 + 1);
        std::map<std::string, std::vector<unsigned char>> recv;
        std::vector<Variant> variants;
        auto add_nbr = [&](const std::string& name, nbr_pattern_t p) {
            auto& buffer = recv[name];
            buffer.assign(recv_bytes, 0);
            variants.push_back({name,
                                [&, p] {
                                    check(alltoall ? nbr_neighbor_alltoall(send.data(), bytes, MPI_BYTE, buffer.data(),
                                                                           bytes, MPI_BYTE, p)
                                                   : nbr_neighbor_allgather(send.data(), bytes, MPI_BYTE, buffer.data(),
                                                                            bytes, MPI_BYTE, p),
                                          "replay");
                                },
                                nullptr, nullptr, &buffer});
        };
        auto add_nbr_persistent = [&](const std::string& name, nbr_pattern_t p) {
            auto& buffer = recv[name];
            buffer.assign(recv_bytes, 0);
            auto request = std::make_shared<nbr_request_t>(nullptr);
            variants.push_back({name,
                                [request] {
                                    check(nbr_start(*request), "nbr_start");
                                    check(nbr_wait(*request), "nbr_wait");
                                },
                                [&, p, request] {
                                    check(alltoall
                                              ? nbr_neighbor_alltoall_init(send.data(), bytes, MPI_BYTE, buffer.data(),
                                                                           bytes, MPI_BYTE, p, 0, request.get())
                                              : nbr_neighbor_allgather_init(send.data(), bytes, MPI_BYTE, buffer.data(),
                                                                            bytes, MPI_BYTE, p, 0, request.get()),
                                          "persistent init");
                                },
                                [request] { nbr_request_free(request.get()); }, &buffer});
        };
#if !defined(NBR_SMPI)
        {
            auto& buffer = recv["native"];
            buffer.assign(recv_bytes, 0);
            variants.push_back(
                {"native",
                 [&] {
                     if (alltoall)
                         MPI_Neighbor_alltoall(send.data(), bytes, MPI_BYTE, buffer.data(), bytes, MPI_BYTE, graph);
                     else
                         MPI_Neighbor_allgather(send.data(), bytes, MPI_BYTE, buffer.data(), bytes, MPI_BYTE, graph);
                 },
                 nullptr, nullptr, &buffer});
        }
#if defined(NBR_NATIVE_PERSISTENT)
        {
            auto& buffer = recv["native-persistent"];
            buffer.assign(recv_bytes, 0);
            auto request = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
            variants.push_back({"native-persistent",
                                [request] {
                                    MPI_Start(request.get());
                                    MPI_Wait(request.get(), MPI_STATUS_IGNORE);
                                },
                                [&, request] {
                                    native_persistent_init(alltoall, send.data(), bytes, buffer.data(), graph,
                                                           request.get());
                                },
                                [request] { MPI_Request_free(request.get()); }, &buffer});
        }
#endif
#endif
        add_nbr("nbr", pattern);
        if (o.persistent) add_nbr_persistent("nbr-persistent", pattern);
        if (naive != nullptr) {
            add_nbr("nbr-naive", naive);
            if (o.persistent) add_nbr_persistent("nbr-naive-persistent", naive);
        }
        Row row{bytes, {}, {}};
        for (auto& v : variants) {
            row.seconds[v.name] = time_variant(v, o.iters, warmup);
            if (rows.empty()) order.push_back(v.name);
        }
        // Data check after timing: every variant against the reference (native, or the naive
        // replay under SMPI), plus allgather's blocks against their senders' data.
        const std::string reference = recv.count("native") ? "native" : (recv.count("nbr-naive") ? "nbr-naive" : "nbr");
        for (auto& v : variants) {
            bool ok = *v.recv == recv[reference];
            if (!alltoall) {
                for (int b = 0; b < indegree && ok; ++b) {
                    for (int i = 0; i < bytes; ++i) {
                        const auto expected =
                            static_cast<unsigned char>(sources[static_cast<std::size_t>(b)] * 31 + i * 7 + 1);
                        if ((*v.recv)[static_cast<std::size_t>(b) * bytes + i] != expected) {
                            ok = false;
                            break;
                        }
                    }
                }
            }
            int mine = ok ? 1 : 0, all = 0;
            MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            row.correct[v.name] = all == 1;
        }
        rows.push_back(row);
    }

    int status = 0;
    if (me == 0) {
        const std::string base =
            std::find(order.begin(), order.end(), "native") != order.end() ? "native" : "nbr-naive";
        std::printf("# nbr-bench: %s, %d ranks, pattern %s (%s), %d iterations after %d warm-up, max over ranks\n",
                    o.collective.c_str(), size, o.patterns.c_str(), algorithm, o.iters, warmup);
        std::printf("%8s", "bytes");
        for (const auto& name : order) std::printf(" %14s", (name + " us").c_str());
        for (const auto& name : order) {
            if (name != base) std::printf(" %16s", (base + "/" + name).c_str());
        }
        std::printf("\n");
        for (const auto& row : rows) {
            std::printf("%8d", row.bytes);
            for (const auto& name : order) std::printf(" %14.2f", row.seconds.at(name) * 1e6);
            for (const auto& name : order) {
                if (name != base) std::printf(" %16.2f", row.seconds.at(base) / row.seconds.at(name));
            }
            std::printf("\n");
            for (const auto& [name, ok] : row.correct) {
                if (!ok) {
                    std::printf("# DATA MISMATCH: %s at %d bytes\n", name.c_str(), row.bytes);
                    status = 1;
                }
            }
        }
        if (status == 0) std::printf("# data checked after timing: all variants correct\n");
        if (!o.json.empty()) {
            std::ofstream out(o.json);
            out << "{\n  \"collective\": \"" << o.collective << "\",\n  \"ranks\": " << size << ",\n  \"patterns\": \""
                << json_escape(o.patterns) << "\",\n  \"algorithm\": \"" << json_escape(algorithm)
                << "\",\n  \"iters\": " << o.iters << ",\n  \"warmup\": " << warmup << ",\n  \"baseline\": \"" << base
                << "\",\n";
#if defined(NBR_SMPI)
            out << "  \"simulated\": true,\n";
#else
            out << "  \"simulated\": false,\n";
#endif
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
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (naive != nullptr) nbr_pattern_free(&naive);
    if (pattern != plain) nbr_pattern_free(&pattern);
    nbr_pattern_free(&plain);
#if !defined(NBR_SMPI)
    MPI_Comm_free(&graph);
#endif
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
