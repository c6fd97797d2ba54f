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
#include <unistd.h>

#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "nbr/graphs/adjacency.hpp"
#include "nbr/schema/file_io.hpp"
#include "neighbors.hpp"

namespace {

namespace fs = std::filesystem;

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

/// Captures a new topology communicator (collective over it).
void capture_collectively(MPI_Comm comm, const char* function) {
    const char* dir = std::getenv("NBR_CAPTURE");
    if (dir == nullptr || *dir == '\0' || comm == MPI_COMM_NULL) return;
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    const auto [kind, in, out, why] = nbr::internal::comm_neighbors(comm, rank);
    // Every rank decides alike (the Cartesian rules depend on the dimensions), but agree anyway.
    int capturable = kind != nbr::internal::CommKind::plain && why.empty() ? 1 : 0;
    PMPI_Allreduce(MPI_IN_PLACE, &capturable, 1, MPI_INT, MPI_MIN, comm);
    if (capturable == 0) {
        if (rank == 0) std::fprintf(stderr, "nbr-capture: %s not captured: %s\n", function, why.c_str());
        return;
    }
    const Gathered all = gather(comm, rank, size, in, out, locate(comm, rank));
    if (rank != 0) return;
    try {
        const auto path = write_capture(dir, all, size, function);
        std::fprintf(stderr, "nbr-capture: %s: %d ranks -> %s\n", function, size, path.c_str());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr-capture: %s not captured: %s\n", function, error.what());
    }
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

// The constructors, C and Fortran, are wrapped in constructors.cpp.
