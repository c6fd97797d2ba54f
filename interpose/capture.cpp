// libnbr-capture: records the topology of every topology communicator an application
// creates, without changing what the application does.
//
// Preloaded (LD_PRELOAD) or linked, it wraps MPI_Dist_graph_create_adjacent,
// MPI_Dist_graph_create, MPI_Graph_create and MPI_Cart_create through the MPI profiling
// interface. After each successful creation, with NBR_CAPTURE=DIR set, the ranks of the new
// communicator gather what MPI reports (each rank's ordered in- and out-neighbors) and where
// they run (node from MPI_Comm_split_type, socket, NUMA domain and core from hwloc), and rank 0
// writes DIR/NNNNNN/{neighbors.adj,placement.txt} (docs/format.md), the number being the next
// free one: the files are written in a hidden directory that is renamed into place, so a
// capture is complete or absent. `nbrc compile DIR/NNNNNN` compiles it. Failures are reported
// on rank 0's stderr and never reach the application.
//
// It also counts the neighborhood collectives called on each captured communicator (calls and
// block sizes per shape, nbr/graphs/captured_calls.hpp) and, when the communicator is freed
// (MPI_Comm_free) or MPI is finalized, the ranks reduce them and rank 0 writes
// DIR/NNNNNN/calls.txt: what `nbrc compile --algo auto` judges the v-variants by. Calls on a
// duplicate (MPI_Comm_dup, _idup, _dup_with_info: an attribute's copy callback follows them)
// count with the captured communicator's, which is captured once and written when its last
// handle is freed (over a private duplicate the library keeps for that). Where the
// MPI library's Fortran binding bypasses these C wrappers (Open MPI), capture_fortran.cpp
// wraps its entry points.
#include <unistd.h>

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "capture.hpp"
#include "collective_table.hpp"
#include "nbr/graphs/adjacency.hpp"
#include "nbr/schema/file_io.hpp"
#include "neighbors.hpp"

namespace {

namespace fs = std::filesystem;

using nbr::CallKind;

/// One shape's calls as this rank saw them (doubles: reduced with MPI_DOUBLE; exact to 2^53).
struct Seen {
    double calls = 0;
    double block_min = std::numeric_limits<double>::infinity();
    double block_max = 0;
    double mean_min = std::numeric_limits<double>::infinity();
    double mean_max = 0;
    double edges = 0;
    double bytes = 0;
};

/// A captured communicator: its calls so far (on it and its duplicates), and on rank 0 where
/// its capture went.
struct Tracked {
    std::uint64_t outdegree = 0;
    std::vector<std::uint32_t> out_slots;  // send-buffer block of out-edge j (empty: j)
    std::string dir;                       // rank 0: the capture directory (empty elsewhere, or if it was not written)
    std::array<Seen, nbr::kCallKinds> kinds{};
    int handles = 1;               // the application's live handles: the original and its duplicates
    MPI_Comm own = MPI_COMM_NULL;  // a private duplicate, to reduce the calls over when the last goes
};

std::list<Tracked> captured;           // every captured communicator with a live handle, in creation order
std::map<MPI_Comm, Tracked*> tracked;  // handles seen: the originals and the duplicates called on
int keyval = MPI_KEYVAL_INVALID;       // its attribute follows duplicates to their Tracked

/// MPI_Comm_dup and its kin copy the attribute: one more handle of the same communicator.
int copy_tracked(MPI_Comm, int, void*, void* in, void* out, int* flag) {
    ++static_cast<Tracked*>(in)->handles;
    *static_cast<void**>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/// The captured communicator behind a handle (an original, or a duplicate of one), or nullptr.
Tracked* lookup(MPI_Comm comm) {
    if (const auto it = tracked.find(comm); it != tracked.end()) return it->second;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return nullptr;
    void* value = nullptr;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &flag) != MPI_SUCCESS || flag == 0) return nullptr;
    return tracked[comm] = static_cast<Tracked*>(value);
}
double calls_recorded = 0;  // on this rank, over all captured communicators

/// One call's blocks: `blocks(j)` bytes on out-edge j's send-buffer block j.
template <class Blocks>
void record(MPI_Comm comm, CallKind kind, Blocks&& blocks) {
    Tracked* t = lookup(comm);
    if (t == nullptr) return;
    Seen& s = t->kinds[static_cast<std::size_t>(kind)];
    ++s.calls;
    ++calls_recorded;
    const auto edges = t->outdegree;
    if (edges == 0) return;
    double sum = 0;
    const auto& slots = t->out_slots;
    for (std::uint64_t j = 0; j < edges; ++j) {
        const double b = blocks(slots.empty() ? j : std::uint64_t{slots[j]});
        s.block_min = std::min(s.block_min, b);
        s.block_max = std::max(s.block_max, b);
        sum += b;
    }
    const double mean = sum / static_cast<double>(edges);
    s.mean_min = std::min(s.mean_min, mean);
    s.mean_max = std::max(s.mean_max, mean);
    s.edges += static_cast<double>(edges);
    s.bytes += sum;
}

double type_bytes(MPI_Count count, MPI_Datatype type) {
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0) return 0;
    return static_cast<double>(count) * static_cast<double>(size);
}

}  // namespace

void nbr::interpose::record_fixed(MPI_Comm comm, CallKind kind, MPI_Count sendcount, MPI_Datatype sendtype,
                                  MPI_Count recvcount, MPI_Datatype recvtype) {
    const double block = std::max(type_bytes(sendcount, sendtype), type_bytes(recvcount, recvtype));
    record(comm, kind, [&](std::uint64_t) { return block; });
}

void nbr::interpose::record_allgatherv(MPI_Comm comm, CallKind kind, MPI_Count sendcount, MPI_Datatype sendtype) {
    const double block = type_bytes(sendcount, sendtype);
    record(comm, kind, [&](std::uint64_t) { return block; });
}

void nbr::interpose::record_alltoallv(MPI_Comm comm, CallKind kind, const int sendcounts[], MPI_Datatype sendtype) {
    record(comm, kind, [&](std::uint64_t j) { return type_bytes(sendcounts[j], sendtype); });
}

void nbr::interpose::record_alltoallv(MPI_Comm comm, CallKind kind, const MPI_Count sendcounts[],
                                      MPI_Datatype sendtype) {
    record(comm, kind, [&](std::uint64_t j) { return type_bytes(sendcounts[j], sendtype); });
}

void nbr::interpose::record_alltoallw(MPI_Comm comm, CallKind kind, const MPI_Count sendcounts[],
                                      const MPI_Datatype sendtypes[]) {
    record(comm, kind, [&](std::uint64_t j) { return type_bytes(sendcounts[j], sendtypes[j]); });
}

void nbr::interpose::record_alltoallw(MPI_Comm comm, CallKind kind, const int sendcounts[],
                                      const MPI_Datatype sendtypes[]) {
    record(comm, kind, [&](std::uint64_t j) { return type_bytes(sendcounts[j], sendtypes[j]); });
}

void nbr::interpose::record_alltoallw_fortran(MPI_Comm comm, CallKind kind, const int sendcounts[],
                                              const MPI_Fint sendtypes[]) {
    record(comm, kind, [&](std::uint64_t j) { return type_bytes(sendcounts[j], PMPI_Type_f2c(sendtypes[j])); });
}

namespace {

/// Where the calling process runs (placement file columns).
struct Location {
    int node = 0;  // communicator rank of the node's first rank
    int socket = 0;
    int numa = 0;
    int core = 0;
};

/// Socket (package), NUMA domain and core of the first processing unit of the process's
/// binding, or of the one it last ran on when it is not bound. hwloc is loaded once.
void locate_in_node(Location& where) {
    static hwloc_topology_t topology = nullptr;
    if (topology == nullptr && (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0)) {
        topology = nullptr;
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    const bool bound = hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_PROCESS) == 0 &&
                       !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topology), set);
    if (!bound) (void)hwloc_get_last_cpu_location(topology, set, HWLOC_CPUBIND_PROCESS);
    const int first = hwloc_bitmap_first(set);
    hwloc_bitmap_free(set);
    if (first < 0) return;
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topology, static_cast<unsigned>(first));
    if (pu == nullptr) return;
    if (auto* package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, pu)) {
        where.socket = static_cast<int>(package->logical_index);
    }
    if (auto* core = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu)) {
        where.core = static_cast<int>(core->logical_index);
    }
    for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); numa != nullptr;
         numa = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, numa)) {
        if (numa->cpuset != nullptr && hwloc_bitmap_isset(numa->cpuset, static_cast<unsigned>(first))) {
            where.numa = static_cast<int>(numa->logical_index);
            break;
        }
    }
}

Location locate(MPI_Comm comm, int rank) {
    Location where;
    MPI_Comm node = MPI_COMM_NULL;
    where.node = rank;
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        PMPI_Bcast(&where.node, 1, MPI_INT, 0, node);  // the node's first rank names the node
        PMPI_Comm_free(&node);
    }
    locate_in_node(where);
    return where;
}

/// Writes the capture of rank 0 into the next free DIR/NNNNNN; returns its path.
fs::path publish(const fs::path& dir, const nbr::Topology& topology, const std::string& comment,
                 const std::string& placement) {
    fs::create_directories(dir);
    const std::string temp = nbr::make_owned_temp_dir(dir, ".capture.tmp-").string();
    try {
        nbr::write_adjacency(fs::path(temp) / nbr::kCaptureTopologyFile, topology, comment);
        nbr::write_whole_file(fs::path(temp) / nbr::kCapturePlacementFile, placement);
        for (int number = 0;; ++number) {
            char name[16];
            std::snprintf(name, sizeof name, "%06d", number);
            if (std::rename(temp.c_str(), (dir / name).c_str()) == 0) return dir / name;
            if (errno != EEXIST && errno != ENOTEMPTY) {
                throw nbr::FileError((dir / name).string() +
                                     ": cannot rename the capture into place: " + std::strerror(errno));
            }
        }
    } catch (...) {
        std::error_code ec;
        fs::remove_all(temp, ec);
        throw;
    }
}

/// What every rank sends rank 0: its degrees and location, then its lists.
struct Gathered {
    std::vector<int> header;  // per rank: indegree, outdegree, node, socket, numa, core
    std::vector<int> lists;   // per rank: in-list then out-list
    std::vector<char> hosts;  // per rank: 64 bytes
};

constexpr int kHeader = 6;
constexpr int kHost = 64;

Gathered gather(MPI_Comm comm, int rank, int size, const std::vector<int>& in, const std::vector<int>& out,
                const Location& where) {
    Gathered all;
    const int mine[kHeader] = {
        static_cast<int>(in.size()), static_cast<int>(out.size()), where.node, where.socket, where.numa, where.core};
    if (rank == 0) all.header.resize(static_cast<std::size_t>(size) * kHeader);
    PMPI_Gather(mine, kHeader, MPI_INT, all.header.data(), kHeader, MPI_INT, 0, comm);
    std::vector<int> lists(in);
    lists.insert(lists.end(), out.begin(), out.end());
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(counts.size());
    if (rank == 0) {
        for (int r = 0, offset = 0; r < size; ++r) {
            counts[static_cast<std::size_t>(r)] = all.header[r * kHeader] + all.header[r * kHeader + 1];
            displs[static_cast<std::size_t>(r)] = offset;
            offset += counts[static_cast<std::size_t>(r)];
        }
        all.lists.resize(static_cast<std::size_t>(displs.back() + counts.back()) + 1);
    }
    PMPI_Gatherv(lists.data(), static_cast<int>(lists.size()), MPI_INT, all.lists.data(), counts.data(), displs.data(),
                 MPI_INT, 0, comm);
    char host[kHost] = {};
    std::strncpy(host, nbr::host_name().c_str(), kHost - 1);
    if (rank == 0) all.hosts.resize(static_cast<std::size_t>(size) * kHost);
    PMPI_Gather(host, kHost, MPI_CHAR, all.hosts.data(), kHost, MPI_CHAR, 0, comm);
    return all;
}

/// Rank 0: the topology and placement file from what every rank sent.
fs::path write_capture(const fs::path& dir, const Gathered& all, int size, const char* function) {
    std::vector<std::vector<std::uint32_t>> in(static_cast<std::size_t>(size)), out(in.size());
    std::string placement = "# nbr placement: rank node socket numa core (libnbr-capture, hwloc logical indices)\n";
    placement += "# ranks " + std::to_string(size) + "\n";
    std::string hosts;
    for (int r = 0, offset = 0; r < size; ++r) {
        const int* h = &all.header[static_cast<std::size_t>(r) * kHeader];
        auto& rank_in = in[static_cast<std::size_t>(r)];
        auto& rank_out = out[static_cast<std::size_t>(r)];
        rank_in.assign(all.lists.begin() + offset, all.lists.begin() + offset + h[0]);
        rank_out.assign(all.lists.begin() + offset + h[0], all.lists.begin() + offset + h[0] + h[1]);
        offset += h[0] + h[1];
        char line[80];
        std::snprintf(line, sizeof line, "%d %d %d %d %d\n", r, h[2], h[3], h[4], h[5]);
        placement += line;
        if (h[2] == r) hosts.append(" ").append(&all.hosts[static_cast<std::size_t>(r) * kHost]);
    }
    const auto topology = nbr::Topology::from_adjacency(in, out);
    const std::string comment = std::string("nbr capture: ") + function + ", " + std::to_string(size) + " ranks, " +
                                std::to_string(topology.num_edges()) + " edges\nnodes:" + hosts;
    return publish(dir, topology, comment, placement);
}

/// The communicator's rank 0's NBR_CAPTURE, broadcast ("" when unset): a launcher may give
/// ranks different environments, and every rank must make the same collective calls.
std::string agreed_capture_dir(MPI_Comm comm, int rank) {
    const char* value = rank == 0 ? std::getenv("NBR_CAPTURE") : nullptr;
    return nbr::interpose::broadcast_text(value != nullptr ? value : "", comm);
}

/// Captures a new topology communicator (collective over it).
void capture_collectively(MPI_Comm comm, const char* function) {
    if (comm == MPI_COMM_NULL) return;
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    const auto [kind, in, out, slots] = nbr::internal::comm_neighbors(comm, rank);
    if (kind == nbr::internal::CommKind::plain) return;  // (every rank alike)
    const std::string dir = agreed_capture_dir(comm, rank);
    if (dir.empty()) return;
    const Gathered all = gather(comm, rank, size, in, out, locate(comm, rank));
    Tracked& t = captured.emplace_back();
    t.outdegree = out.size();
    t.out_slots = slots.out;
    PMPI_Comm_dup(comm, &t.own);  // before the attribute: not a handle of the application's
    if (keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(copy_tracked, MPI_COMM_NULL_DELETE_FN, &keyval, nullptr);
    PMPI_Comm_set_attr(comm, keyval, &t);
    tracked[comm] = &t;  // (a handle MPI reuses after a free it did not show us starts over)
    if (rank != 0) return;
    try {
        const auto path = write_capture(dir, all, size, function);
        t.dir = path.string();
        std::fprintf(stderr, "nbr-capture: %s: %d ranks -> %s\n", function, size, path.c_str());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr-capture: %s not captured: %s\n", function, error.what());
    }
}

/// Reduces a captured communicator's calls over its ranks (collective over it); rank 0 writes
/// them into its capture directory.
void write_calls(MPI_Comm comm, const Tracked& t) {
    constexpr std::size_t n = nbr::kCallKinds;
    std::array<double, 2 * n> low{};   // per kind: block_min, mean_min
    std::array<double, 3 * n> high{};  // per kind: calls, block_max, mean_max
    std::array<double, 2 * n> sum{};   // per kind: edges, bytes
    for (std::size_t k = 0; k < n; ++k) {
        const Seen& s = t.kinds[k];
        low[2 * k] = s.block_min;
        low[2 * k + 1] = s.mean_min;
        high[3 * k] = s.calls;
        high[3 * k + 1] = s.block_max;
        high[3 * k + 2] = s.mean_max;
        sum[2 * k] = s.edges;
        sum[2 * k + 1] = s.bytes;
    }
    PMPI_Allreduce(MPI_IN_PLACE, low.data(), static_cast<int>(low.size()), MPI_DOUBLE, MPI_MIN, comm);
    PMPI_Allreduce(MPI_IN_PLACE, high.data(), static_cast<int>(high.size()), MPI_DOUBLE, MPI_MAX, comm);
    PMPI_Allreduce(MPI_IN_PLACE, sum.data(), static_cast<int>(sum.size()), MPI_DOUBLE, MPI_SUM, comm);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank != 0 || t.dir.empty()) return;
    nbr::CapturedCalls calls;
    for (std::size_t k = 0; k < n; ++k) {
        auto& c = calls.kinds[k];
        c.calls = static_cast<std::uint64_t>(high[3 * k]);
        c.edges = static_cast<std::uint64_t>(sum[2 * k]);
        c.bytes = static_cast<std::uint64_t>(sum[2 * k + 1]);
        if (c.edges == 0) continue;  // (the minima are still infinite)
        c.block_min = static_cast<std::uint64_t>(low[2 * k]);
        c.block_max = static_cast<std::uint64_t>(high[3 * k + 1]);
        c.mean_min = static_cast<std::uint64_t>(std::floor(low[2 * k + 1]));
        c.mean_max = static_cast<std::uint64_t>(std::ceil(high[3 * k + 2]));
    }
    nbr::write_captured_calls(t.dir, calls);
}

/// Writes a captured communicator's calls (collective over it) and forgets it; never throws.
void write_and_forget(Tracked& t) {
    try {
        write_calls(t.own, t);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr-capture: calls of %s not recorded: %s\n", t.dir.c_str(), error.what());
    }
    PMPI_Comm_free(&t.own);
    captured.remove_if([&](const Tracked& c) { return &c == &t; });
}

/// A handle is freed (collective over it): the last handle of a captured communicator writes
/// its calls.
void finish(MPI_Comm comm) {
    Tracked* t = lookup(comm);
    tracked.erase(comm);
    if (t != nullptr && --t->handles == 0) write_and_forget(*t);
}

/// At MPI_Finalize: the calls of the captured communicators still alive, in creation order.
/// Skipped when no rank saw a call: under Open MPI's Fortran binding the wrappers see neither
/// the calls nor the frees, and the communicators may be gone.
void finish_all() {
    double seen = calls_recorded;  // (every rank, whatever its NBR_CAPTURE: collective)
    PMPI_Allreduce(MPI_IN_PLACE, &seen, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (seen == 0) return;
    tracked.clear();
    while (!captured.empty()) write_and_forget(captured.front());  // (in creation order)
}

/// Captures a new topology communicator; never lets an exception reach the application.
void capture(MPI_Comm comm, const char* function) {
    try {
        capture_collectively(comm, function);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr-capture: %s not captured: %s\n", function, error.what());
    } catch (...) {
        std::fprintf(stderr, "nbr-capture: %s not captured: unknown error\n", function);
    }
}

}  // namespace

void nbr::interpose::on_topology_created(MPI_Comm comm, const char* function) {
    capture(comm, function);
}

void nbr::interpose::on_comm_free(MPI_Comm comm) {
    finish(comm);
}

void nbr::interpose::on_finalize() {
    try {
        finish_all();
    } catch (...) {
        std::fprintf(stderr, "nbr-capture: calls not recorded at MPI_Finalize\n");
    }
}

namespace {

using nbr::interpose::kind_of;

// The C binding's arguments to the recorders.
void record_c_FIXED(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_FIXED) {
    (void)sendbuf, (void)recvbuf;
    nbr::interpose::record_fixed(comm, kind, sendcount, sendtype, recvcount, recvtype);
}
void record_c_ALLGATHERV(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_ALLGATHERV) {
    (void)sendbuf, (void)recvbuf, (void)recvcounts, (void)displs, (void)recvtype;
    nbr::interpose::record_allgatherv(comm, kind, sendcount, sendtype);
}
void record_c_ALLTOALLV(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_ALLTOALLV) {
    (void)sendbuf, (void)sdispls, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtype;
    nbr::interpose::record_alltoallv(comm, kind, sendcounts, sendtype);
}
void record_c_ALLTOALLW(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_ALLTOALLW) {
    (void)sendbuf, (void)sdispls, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtypes;
    nbr::interpose::record_alltoallw(comm, kind, sendcounts, sendtypes);
}

#if NBR_WRAP_LARGE_COUNT
void record_c_FIXED_C(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_FIXED_C) {
    (void)sendbuf, (void)recvbuf;
    nbr::interpose::record_fixed(comm, kind, sendcount, sendtype, recvcount, recvtype);
}
void record_c_ALLGATHERV_C(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_ALLGATHERV_C) {
    (void)sendbuf, (void)recvbuf, (void)recvcounts, (void)displs, (void)recvtype;
    nbr::interpose::record_allgatherv(comm, kind, sendcount, sendtype);
}
void record_c_ALLTOALLV_C(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_ALLTOALLV_C) {
    (void)sendbuf, (void)sdispls, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtype;
    nbr::interpose::record_alltoallv(comm, kind, sendcounts, sendtype);
}
void record_c_ALLTOALLW_C(MPI_Comm comm, CallKind kind, NBR_C_PARAMS_ALLTOALLW_C) {
    (void)sendbuf, (void)sdispls, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtypes;
    nbr::interpose::record_alltoallw(comm, kind, sendcounts, sendtypes);
}
#endif

}  // namespace

extern "C" {

// The 15 neighborhood collectives (collective_table.hpp): counted on captured communicators,
// then MPI's own entry with the arguments untouched.
#define NBR_CAPTURE_WRAPPER(mode, shape, Cname, fname)                                 \
    NBR_CAT(NBR_WHEN_, NBR_HAVE_##mode)                                                \
    (int NBR_C_NAME(mode, Cname)(NBR_C_PARAMS_##shape, NBR_C_TAIL_PARAMS_##mode) {     \
        record_c_##shape(comm, kind_of(NBR_STR(Cname)), NBR_C_ARGS_##shape);           \
        return NBR_PMPI_NAME(mode, Cname)(NBR_C_ARGS_##shape, NBR_C_TAIL_ARGS_##mode); \
    })

NBR_NEIGHBOR_COLLECTIVES(NBR_CAPTURE_WRAPPER)
#if NBR_WRAP_LARGE_COUNT
NBR_LARGE_COUNT_COLLECTIVES(NBR_CAPTURE_WRAPPER)
#endif

int MPI_Comm_free(MPI_Comm* comm) {
    if (comm != nullptr) nbr::interpose::on_comm_free(*comm);
    return PMPI_Comm_free(comm);
}

int MPI_Finalize(void) {
    nbr::interpose::on_finalize();
    return PMPI_Finalize();
}

}  // extern "C"

// The constructors, C and Fortran, are wrapped in constructors.cpp.
