// libnbr-preload: replays compiled patterns under an unmodified application.
//
// Preloaded (LD_PRELOAD) into the application's processes with NBR_PATTERNS=DIR[:DIR...],
// it wraps the topology constructors through the MPI profiling interface (constructors.cpp). After each
// creation the new communicator's ranks compute its topology hash from what MPI reports;
// rank 0 looks for a pattern directory of that hash and size (each DIR is a pattern
// directory or holds pattern directories; the first match in NBR_PATTERNS order wins); the
// ranks load it collectively (nbr_load_pattern checks every rank's neighbors) and attach it
// to the communicator as an attribute whose delete callback frees it. On such communicators
// the neighborhood collectives — blocking, nonblocking, persistent, fixed-size and v — are
// replayed by libnbr; every other call passes through. When no pattern matches or a load
// fails, rank 0 prints one line saying why and the communicator runs natively.
//
// Requests. The application gets, for each nonblocking or persistent nbr request, a proxy:
// a real MPI request. For a nonblocking call it is a generalized request (MPI_Grequest_start),
// marked complete when the nbr request completes; for a persistent one, a persistent
// zero-byte send to MPI_PROC_NULL (MPI_Send_init: a distinct handle each, which MPI completes
// at once when started). The completion calls are wrapped: while the nbr request behind a
// proxy is incomplete, the proxy is hidden from MPI (passed as MPI_REQUEST_NULL) and the nbr
// request is progressed; once it is complete, the proxy is handed to MPI, which completes,
// releases or deactivates it as it would any request. So
// proxies mix with the application's own requests in every completion call, and MPI_Start,
// MPI_Startall and MPI_Request_free act on both. Single-threaded use (MPI_THREAD_SINGLE or
// FUNNELED).
//
// libnbr itself calls MPI: while a wrapper is inside libnbr, every wrapper passes straight to
// PMPI, so nbr's own traffic never meets the proxy logic.
//
// NBR_REPORT=1: rank 0 prints at MPI_Finalize "nbr: replayed <calls> calls on <communicators>
// communicators" (calls counted once per collective call, on each communicator's rank 0).
#include "neighbors.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "nbr.h"
#include "nbr/graphs/topology.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace {

namespace fs = std::filesystem;

// ---- state ---------------------------------------------------------------------------------

int keyval = MPI_KEYVAL_INVALID;
unsigned long long replayed_calls = 0;  // on communicators' rank 0
unsigned long long attached = 0;        // communicators, on their rank 0
int inside_nbr = 0;                     // > 0 while a wrapper runs libnbr

/// Runs libnbr with the wrappers in pass-through mode.
class InsideNbr {
public:
    InsideNbr() { ++inside_nbr; }
    ~InsideNbr() { --inside_nbr; }
    InsideNbr(const InsideNbr&) = delete;
    InsideNbr& operator=(const InsideNbr&) = delete;
};

/// An nbr request behind an application-visible proxy request.
struct Proxy {
    MPI_Request handle = MPI_REQUEST_NULL;  // what the application holds
    nbr_request_t request = nullptr;
    bool persistent = false;
    bool pending = false;  // started and not yet complete in nbr
};

std::unordered_map<MPI_Request, Proxy>& proxies() {
    static std::unordered_map<MPI_Request, Proxy> map;
    return map;
}

/// An MPI error code for a failed nbr call, after saying why on stderr.
int mpi_error(int code, const char* call) {
    std::fprintf(stderr, "nbr: %s: %s: %s\n", call, nbr_strerror(code), nbr_last_error());
    return MPI_ERR_OTHER;
}

// ---- attaching patterns ----------------------------------------------------------------------

int delete_pattern(MPI_Comm, int, void* value, void*) {
    auto pattern = static_cast<nbr_pattern_t>(value);
    const InsideNbr guard;
    const int code = nbr_pattern_free(&pattern);
    if (code != NBR_SUCCESS) (void)mpi_error(code, "MPI_Comm_free");
    return MPI_SUCCESS;
}

nbr_pattern_t pattern_of(MPI_Comm comm) {
    if (keyval == MPI_KEYVAL_INVALID || inside_nbr > 0 || comm == MPI_COMM_NULL) return nullptr;
    void* value = nullptr;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &flag) != MPI_SUCCESS || flag == 0) return nullptr;
    if (PMPI_Comm_rank(comm, &flag) == MPI_SUCCESS && flag == 0) ++replayed_calls;
    return static_cast<nbr_pattern_t>(value);
}

/// Pattern directories named by NBR_PATTERNS: each entry itself, or its subdirectories (sorted).
std::vector<fs::path> pattern_dirs(const char* list) {
    std::vector<fs::path> dirs;
    std::string entries(list);
    for (std::size_t start = 0; start <= entries.size();) {
        const auto end = std::min(entries.find(':', start), entries.size());
        const fs::path entry = entries.substr(start, end - start);
        start = end + 1;
        std::error_code ec;
        if (entry.empty() || !fs::is_directory(entry, ec)) continue;
        if (fs::exists(entry / nbr::manifest_file_name(), ec)) {
            dirs.push_back(entry);
            continue;
        }
        std::vector<fs::path> inside;
        for (const auto& sub : fs::directory_iterator(entry, ec)) {
            if (fs::exists(sub.path() / nbr::manifest_file_name(), ec)) inside.push_back(sub.path());
        }
        std::sort(inside.begin(), inside.end());
        dirs.insert(dirs.end(), inside.begin(), inside.end());
    }
    return dirs;
}

/// Rank 0: the first pattern directory for `size` ranks and topology `hash`, or "".
std::string find_pattern(const char* list, int size, std::uint64_t hash) {
    for (const auto& dir : pattern_dirs(list)) {
        try {
            const auto manifest = nbr::read_manifest(dir);
            if (manifest.num_ranks() == static_cast<std::uint32_t>(size) && manifest.topology_hash() == hash) {
                return dir.string();
            }
        } catch (const std::exception&) {
            // unreadable or foreign: not a candidate
        }
    }
    return {};
}

/// The communicator's topology hash, from every rank's lists (collective).
std::uint64_t topology_hash(MPI_Comm comm, int rank, int size, const std::vector<int>& in,
                            const std::vector<int>& out) {
    const std::vector<std::uint32_t> in_list(in.begin(), in.end()), out_list(out.begin(), out.end());
    std::uint64_t mine = nbr::rank_neighborhood_hash(static_cast<std::uint32_t>(rank), in_list, out_list);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
    PMPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
    return nbr::topology_hash_of(all);
}

/// Rank 0's choice, broadcast: a pattern directory, or "" with `why` said on rank 0.
std::string agree_on_pattern(MPI_Comm comm, int rank, int size, const std::vector<int>& in, const std::vector<int>& out,
                             const char* function) {
    const std::uint64_t hash = topology_hash(comm, rank, size, in, out);
    std::string dir;
    if (rank == 0) {
        dir = find_pattern(std::getenv("NBR_PATTERNS"), size, hash);
        if (dir.empty()) {
            std::fprintf(stderr,
                         "nbr: %s: no pattern in NBR_PATTERNS for this communicator (%d ranks, topology hash "
                         "%016llx); it runs natively\n",
                         function, size, static_cast<unsigned long long>(hash));
        }
    }
    int length = static_cast<int>(dir.size());
    PMPI_Bcast(&length, 1, MPI_INT, 0, comm);
    dir.resize(static_cast<std::size_t>(length));
    PMPI_Bcast(dir.data(), length, MPI_CHAR, 0, comm);
    return dir;
}

/// After a topology communicator's creation: finds, loads and attaches its pattern.
void attach(MPI_Comm comm, const char* function) {
    const char* list = std::getenv("NBR_PATTERNS");
    if (list == nullptr || *list == '\0' || comm == MPI_COMM_NULL || inside_nbr > 0) return;
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    std::vector<int> in, out;
    const std::string why = nbr::interpose::neighbor_lists(comm, rank, in, out);
    int expressible = why.empty() ? 1 : 0;
    PMPI_Allreduce(MPI_IN_PLACE, &expressible, 1, MPI_INT, MPI_MIN, comm);
    if (expressible == 0) {
        if (rank == 0) std::fprintf(stderr, "nbr: %s: %s; it runs natively\n", function, why.c_str());
        return;
    }
    const std::string dir = agree_on_pattern(comm, rank, size, in, out, function);
    if (dir.empty()) return;
    nbr_pattern_t pattern = nullptr;
    const InsideNbr guard;
    const int code = nbr_load_pattern(dir.c_str(), comm, &pattern);
    if (code != NBR_SUCCESS) {
        if (rank == 0) {
            std::fprintf(stderr, "nbr: %s: pattern %s not loaded (%s: %s); it runs natively\n", function, dir.c_str(),
                         nbr_strerror(code), nbr_last_error());
        }
        return;
    }
    if (keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_pattern, &keyval, nullptr);
    PMPI_Comm_set_attr(comm, keyval, pattern);
    if (rank == 0) ++attached;
}

// ---- requests --------------------------------------------------------------------------------

// A generalized request's status: empty, as for a collective.
int query_proxy(void*, MPI_Status* status) {
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
int free_proxy(void*) {
    return MPI_SUCCESS;
}
int cancel_proxy(void*, int) {
    return MPI_SUCCESS;
}

/// Hands the application a proxy for `request`.
int make_proxy(nbr_request_t request, bool persistent, MPI_Request* out) {
    const int code = persistent ? PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, out)
                                : PMPI_Grequest_start(query_proxy, free_proxy, cancel_proxy, nullptr, out);
    if (code == MPI_SUCCESS) proxies()[*out] = Proxy{*out, request, persistent, !persistent};
    return code;
}

Proxy* proxy_of(MPI_Request request) {
    if (inside_nbr > 0 || proxies().empty() || request == MPI_REQUEST_NULL) return nullptr;
    const auto it = proxies().find(request);
    return it == proxies().end() ? nullptr : &it->second;
}

/// Progresses a pending proxy's nbr request once (or to completion if `block`); returns
/// whether it is complete. A failure is reported and counts as completion.
bool progress(Proxy& proxy, bool block) {
    if (!proxy.pending) return true;
    const InsideNbr guard;
    int done = 0;
    const int code = block ? nbr_wait(proxy.request) : nbr_test(proxy.request, &done);
    if (code != NBR_SUCCESS) (void)mpi_error(code, block ? "MPI_Wait" : "MPI_Test");
    if (block || done != 0 || code != NBR_SUCCESS) {
        proxy.pending = false;
        if (!proxy.persistent) {
            proxy.request = nullptr;  // nbr released it at completion
            PMPI_Grequest_complete(proxy.handle);
        }
    }
    return !proxy.pending;
}

/// After MPI completed proxies: forgets those MPI released (nonblocking ones).
void forget_released(int count, const MPI_Request before[], const MPI_Request after[]) {
    for (int i = 0; i < count; ++i) {
        if (before[i] != after[i] && before[i] != MPI_REQUEST_NULL) proxies().erase(before[i]);
    }
}

/// A copy of `requests` in which the proxies of incomplete nbr requests are MPI_REQUEST_NULL,
/// after progressing every proxy once; `pending` tells whether any was hidden.
std::vector<MPI_Request> visible(int count, const MPI_Request requests[], bool* pending) {
    std::vector<MPI_Request> copy(requests, requests + count);
    *pending = false;
    for (auto& request : copy) {
        Proxy* proxy = proxy_of(request);
        if (proxy != nullptr && !progress(*proxy, false)) {
            request = MPI_REQUEST_NULL;
            *pending = true;
        }
    }
    return copy;
}

/// Whether any of the requests is a proxy.
bool any_proxy(int count, const MPI_Request requests[]) {
    if (inside_nbr > 0 || proxies().empty()) return false;
    for (int i = 0; i < count; ++i) {
        if (proxy_of(requests[i]) != nullptr) return true;
    }
    return false;
}

/// Copies back what MPI did to the visible requests.
void write_back(int count, MPI_Request requests[], const std::vector<MPI_Request>& before,
                const std::vector<MPI_Request>& after) {
    forget_released(count, before.data(), after.data());
    for (int i = 0; i < count; ++i) {
        if (before[static_cast<std::size_t>(i)] != MPI_REQUEST_NULL) requests[i] = after[static_cast<std::size_t>(i)];
    }
}

/// Testany/Testsome-style one pass: progress proxies, test the visible ones.
int test_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], bool* pending) {
    const auto before = visible(count, requests, pending);
    auto after = before;
    const int code = PMPI_Testsome(count, after.data(), outcount, indices, statuses);
    write_back(count, requests, before, after);
    return code;
}

}  // namespace

void nbr::interpose::on_topology_created(MPI_Comm comm, const char* function) {
    attach(comm, function);
}

// ---- wrapped MPI functions -------------------------------------------------------------------

extern "C" {


// Blocking collectives.

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        const InsideNbr guard;
        const int code = nbr_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, p);
        return code == NBR_SUCCESS ? MPI_SUCCESS : mpi_error(code, "MPI_Neighbor_allgather");
    }
    return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        const InsideNbr guard;
        const int code = nbr_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, p);
        return code == NBR_SUCCESS ? MPI_SUCCESS : mpi_error(code, "MPI_Neighbor_alltoall");
    }
    return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        const InsideNbr guard;
        const int code =
            nbr_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, p);
        return code == NBR_SUCCESS ? MPI_SUCCESS : mpi_error(code, "MPI_Neighbor_allgatherv");
    }
    return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        const InsideNbr guard;
        const int code =
            nbr_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, p);
        return code == NBR_SUCCESS ? MPI_SUCCESS : mpi_error(code, "MPI_Neighbor_alltoallv");
    }
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                   comm);
}

// Nonblocking collectives: an nbr request behind a proxy.

#define NBR_NONBLOCKING(call, name, ...)                       \
    do {                                                       \
        nbr_request_t nbr_request = nullptr;                   \
        int code = NBR_SUCCESS;                                \
        {                                                      \
            const InsideNbr guard;                             \
            code = call(__VA_ARGS__, &nbr_request);            \
        }                                                      \
        if (code != NBR_SUCCESS) return mpi_error(code, name); \
        return make_proxy(nbr_request, false, request);        \
    } while (0)

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_NONBLOCKING(nbr_ineighbor_allgather, "MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, p);
    }
    return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_NONBLOCKING(nbr_ineighbor_alltoall, "MPI_Ineighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, p);
    }
    return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_NONBLOCKING(nbr_ineighbor_allgatherv, "MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                        recvcounts, displs, recvtype, p);
    }
    return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                     request);
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_NONBLOCKING(nbr_ineighbor_alltoallv, "MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype,
                        recvbuf, recvcounts, rdispls, recvtype, p);
    }
    return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, request);
}

#undef NBR_NONBLOCKING

// Persistent collectives: MPI-4's MPI_Neighbor_*_init (MPICH 4), or Open MPI 4.1's MPIX_
// extension. An nbr persistent request behind a persistent proxy.
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_INIT(name) MPIX_Neighbor_##name##_init
#define NBR_PINIT(name) PMPIX_Neighbor_##name##_init
#elif MPI_VERSION >= 4
#define NBR_INIT(name) MPI_Neighbor_##name##_init
#define NBR_PINIT(name) PMPI_Neighbor_##name##_init
#endif

#if defined(NBR_INIT)
#define NBR_PERSISTENT(call, name, ...)                        \
    do {                                                       \
        nbr_request_t nbr_request = nullptr;                   \
        int code = NBR_SUCCESS;                                \
        {                                                      \
            const InsideNbr guard;                             \
            code = call(__VA_ARGS__, 0, &nbr_request);         \
        }                                                      \
        if (code != NBR_SUCCESS) return mpi_error(code, name); \
        return make_proxy(nbr_request, true, request);         \
    } while (0)

int NBR_INIT(allgather)(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_PERSISTENT(nbr_neighbor_allgather_init, "neighbor allgather init", sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, p);
    }
    return NBR_PINIT(allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

int NBR_INIT(alltoall)(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_PERSISTENT(nbr_neighbor_alltoall_init, "neighbor alltoall init", sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, p);
    }
    return NBR_PINIT(alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

int NBR_INIT(allgatherv)(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_PERSISTENT(nbr_neighbor_allgatherv_init, "neighbor allgatherv init", sendbuf, sendcount, sendtype, recvbuf,
                       recvcounts, displs, recvtype, p);
    }
    return NBR_PINIT(allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                 request);
}

int NBR_INIT(alltoallv)(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    if (nbr_pattern_t p = pattern_of(comm)) {
        NBR_PERSISTENT(nbr_neighbor_alltoallv_init, "neighbor alltoallv init", sendbuf, sendcounts, sdispls, sendtype,
                       recvbuf, recvcounts, rdispls, recvtype, p);
    }
    return NBR_PINIT(alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                info, request);
}

#undef NBR_PERSISTENT
#endif

// Completion.

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
    if (Proxy* proxy = proxy_of(*request)) {
        progress(*proxy, true);
        const MPI_Request before = *request;
        const int code = PMPI_Wait(request, status);
        forget_released(1, &before, request);
        return code;
    }
    return PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
    if (Proxy* proxy = proxy_of(*request)) {
        if (!progress(*proxy, false)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        const MPI_Request before = *request;
        const int code = PMPI_Test(request, flag, status);
        forget_released(1, &before, request);
        return code;
    }
    return PMPI_Test(request, flag, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (!any_proxy(count, requests)) return PMPI_Waitall(count, requests, statuses);
    for (int i = 0; i < count; ++i) {
        if (Proxy* proxy = proxy_of(requests[i])) progress(*proxy, true);
    }
    const std::vector<MPI_Request> before(requests, requests + count);
    const int code = PMPI_Waitall(count, requests, statuses);
    forget_released(count, before.data(), requests);
    return code;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
    if (!any_proxy(count, requests)) return PMPI_Testall(count, requests, flag, statuses);
    bool pending = false;
    (void)visible(count, requests, &pending);
    if (pending) {  // MPI_Testall completes all or none
        *flag = 0;
        return MPI_SUCCESS;
    }
    const std::vector<MPI_Request> before(requests, requests + count);
    const int code = PMPI_Testall(count, requests, flag, statuses);
    forget_released(count, before.data(), requests);
    return code;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
    if (!any_proxy(count, requests)) return PMPI_Testany(count, requests, index, flag, status);
    bool pending = false;
    const auto before = visible(count, requests, &pending);
    auto after = before;
    const int code = PMPI_Testany(count, after.data(), index, flag, status);
    write_back(count, requests, before, after);
    if (code == MPI_SUCCESS && *flag != 0 && *index == MPI_UNDEFINED && pending) *flag = 0;  // not all inactive
    return code;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
    if (!any_proxy(count, requests)) return PMPI_Waitany(count, requests, index, status);
    for (;;) {
        int flag = 0;
        const int code = MPI_Testany(count, requests, index, &flag, status);
        if (code != MPI_SUCCESS || flag != 0) return code;
    }
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    if (!any_proxy(incount, requests)) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    bool pending = false;
    const int code = test_some(incount, requests, outcount, indices, statuses, &pending);
    if (code == MPI_SUCCESS && *outcount == MPI_UNDEFINED && pending) *outcount = 0;  // not all inactive
    return code;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    if (!any_proxy(incount, requests)) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    for (;;) {
        const int code = MPI_Testsome(incount, requests, outcount, indices, statuses);
        if (code != MPI_SUCCESS || *outcount != 0) return code;
    }
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
    if (Proxy* proxy = proxy_of(request)) {
        if (!progress(*proxy, false)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    return PMPI_Request_get_status(request, flag, status);
}

int MPI_Start(MPI_Request* request) {
    if (Proxy* proxy = proxy_of(*request)) {
        if (!proxy->persistent) return PMPI_Start(request);  // MPI reports the error
        {
            const InsideNbr guard;
            const int code = nbr_start(proxy->request);
            if (code != NBR_SUCCESS) return mpi_error(code, "MPI_Start");
        }
        proxy->pending = true;
    }
    return PMPI_Start(request);
}

int MPI_Startall(int count, MPI_Request requests[]) {
    if (!any_proxy(count, requests)) return PMPI_Startall(count, requests);
    for (int i = 0; i < count; ++i) {
        const int code = MPI_Start(&requests[i]);
        if (code != MPI_SUCCESS) return code;
    }
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request* request) {
    if (Proxy* proxy = proxy_of(*request)) {
        // MPI lets an active request be freed and complete on its own; nbr completes it here.
        progress(*proxy, true);
        if (proxy->persistent) {
            const InsideNbr guard;
            const int code = nbr_request_free(&proxy->request);
            if (code != NBR_SUCCESS) (void)mpi_error(code, "MPI_Request_free");
        }
        proxies().erase(*request);
    }
    return PMPI_Request_free(request);
}

int MPI_Finalize(void) {
    if (!proxies().empty()) {
        std::fprintf(stderr, "nbr: %zu nonblocking or persistent requests were not completed or freed\n",
                     proxies().size());
    }
    const char* report = std::getenv("NBR_REPORT");
    if (report != nullptr && std::strcmp(report, "1") == 0) {
        unsigned long long mine[2] = {replayed_calls, attached}, total[2] = {0, 0};
        PMPI_Reduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) std::printf("nbr: replayed %llu calls on %llu communicators\n", total[0], total[1]);
        std::fflush(stdout);
    }
    return PMPI_Finalize();
}

}  // extern "C"
