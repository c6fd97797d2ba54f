// C boundary of libnbr: every entry point catches every C++ exception.
#include "nbr.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "execution.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "plan.hpp"

struct nbr_pattern_s {
    MPI_Comm comm = MPI_COMM_NULL;  // private duplicate for blocking calls
    int rank = 0;
    int size = 0;
    std::vector<int> in;
    std::vector<int> out;
    std::string algorithm;
    nbr::internal::Plan allgather;
    nbr::internal::Plan alltoall;
};

struct nbr_request_s {
    nbr_pattern_s* pattern = nullptr;
    MPI_Comm comm = MPI_COMM_NULL;  // private duplicate per request
    MPI_Datatype send_type = MPI_DATATYPE_NULL;
    MPI_Datatype recv_type = MPI_DATATYPE_NULL;
    std::unique_ptr<nbr::internal::Execution> execution;
};

namespace {

using nbr::internal::Collective;
using nbr::internal::NbrError;

thread_local std::string last_error;

int fail(int code, std::string message) {
    last_error = std::move(message);
    return code;
}

/// Runs `body`, turning every exception into an error code and a last_error message.
template <class Body>
int guarded(Body&& body) {
    try {
        return body();
    } catch (const NbrError& error) {
        return fail(error.code(), error.what());
    } catch (const nbr::internal::PlanError& error) {
        return fail(NBR_ERR_PATTERN, error.what());
    } catch (const nbr::PatternError& error) {
        return fail(NBR_ERR_CORRUPT, error.what());
    } catch (const std::bad_alloc&) {
        return fail(NBR_ERR_NOMEM, "out of memory");
    } catch (const std::exception& error) {
        return fail(NBR_ERR_INTERNAL, error.what());
    } catch (...) {
        return fail(NBR_ERR_INTERNAL, "unknown exception");
    }
}

int code_of(nbr::PatternErrorKind kind) {
    switch (kind) {
        case nbr::PatternErrorKind::io: return NBR_ERR_IO;
        case nbr::PatternErrorKind::corrupt: return NBR_ERR_CORRUPT;
        case nbr::PatternErrorKind::version: return NBR_ERR_VERSION;
        case nbr::PatternErrorKind::checksum: return NBR_ERR_CHECKSUM;
        case nbr::PatternErrorKind::rank: return NBR_ERR_RANK;
        case nbr::PatternErrorKind::size: return NBR_ERR_COMM_SIZE;
        case nbr::PatternErrorKind::topology_hash: return NBR_ERR_TOPOLOGY_HASH;
    }
    return NBR_ERR_INTERNAL;
}

void mpi_check(int code, const char* what) {
    if (code != MPI_SUCCESS) throw NbrError(NBR_ERR_MPI, std::string(what) + " failed");
}

std::string list_difference(const char* which, const std::vector<int>& comm_list,
                            const std::vector<int>& pattern_list) {
    if (comm_list.size() != pattern_list.size()) {
        return std::string("communicator has ") + std::to_string(comm_list.size()) + " " + which +
               "-neighbors, pattern has " + std::to_string(pattern_list.size());
    }
    for (std::size_t i = 0; i < comm_list.size(); ++i) {
        if (comm_list[i] != pattern_list[i]) {
            return std::string(which) + "-neighbor " + std::to_string(i) + " is rank " + std::to_string(comm_list[i]) +
                   " in the communicator, rank " + std::to_string(pattern_list[i]) + " in the pattern";
        }
    }
    return {};
}

/// Checks a dist-graph or graph communicator's neighbors against the pattern.
void check_neighbors(MPI_Comm comm, int rank, const std::vector<int>& in, const std::vector<int>& out) {
    int kind = MPI_UNDEFINED;
#if defined(NBR_SMPI)
    // SimGrid SMPI has no process topologies (MPI_Topo_test aborts): every communicator is plain.
    (void)comm;
#else
    mpi_check(MPI_Topo_test(comm, &kind), "MPI_Topo_test");
#endif
    std::vector<int> comm_in, comm_out;
    if (kind == MPI_DIST_GRAPH) {
        int indegree = 0, outdegree = 0, weighted = 0;
        mpi_check(MPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted),
                  "MPI_Dist_graph_neighbors_count");
        comm_in.resize(static_cast<std::size_t>(indegree));
        comm_out.resize(static_cast<std::size_t>(outdegree));
        std::vector<int> in_weights(comm_in.size() + 1), out_weights(comm_out.size() + 1);
        mpi_check(MPI_Dist_graph_neighbors(comm, indegree, comm_in.data(), in_weights.data(), outdegree,
                                           comm_out.data(), out_weights.data()),
                  "MPI_Dist_graph_neighbors");
    } else if (kind == MPI_GRAPH) {
        int count = 0;
        mpi_check(MPI_Graph_neighbors_count(comm, rank, &count), "MPI_Graph_neighbors_count");
        comm_in.resize(static_cast<std::size_t>(count));
        mpi_check(MPI_Graph_neighbors(comm, rank, count, comm_in.data()), "MPI_Graph_neighbors");
        comm_out = comm_in;
    } else if (kind == MPI_CART) {
        throw NbrError(NBR_ERR_UNSUPPORTED, "rank " + std::to_string(rank) +
                                                ": cartesian communicators are not supported; use a "
                                                "dist-graph or plain communicator");
    } else {
        return;  // plain communicator: the pattern defines the neighborhood
    }
    std::string difference = list_difference("in", comm_in, in);
    if (difference.empty()) difference = list_difference("out", comm_out, out);
    if (!difference.empty()) {
        throw NbrError(NBR_ERR_NEIGHBORS, "rank " + std::to_string(rank) + ": " + difference);
    }
}

/// A private communicator for nbr's traffic (collective over comm), so that nbr's messages never
/// match the application's. SimGrid SMPI 3.32 builds: creating a communicator costs host time
/// superlinear in its size there (about 2 s per MPI_Comm_dup at 1024 ranks, doubling a
/// simulation's host time), so nbr uses the communicator itself; its messages are then
/// isolated only by nbr's tags, which the simulated benchmarks suffice with.
void private_comm(MPI_Comm comm, MPI_Comm* out) {
#if defined(NBR_SMPI)
    *out = comm;
#else
    mpi_check(MPI_Comm_dup(comm, out), "MPI_Comm_dup");
    mpi_check(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
#endif
}

void release_comm(MPI_Comm* comm) {
#if defined(NBR_SMPI)
    *comm = MPI_COMM_NULL;
#else
    if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
#endif
}

/// Every rank learns whether any failed; the lowest failing rank's message is shared.
int agree(MPI_Comm comm, int rank, int size, int local_code) {
    int mine = local_code == NBR_SUCCESS ? size : rank;
    int first = size;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        return fail(NBR_ERR_MPI, "MPI_Allreduce failed while agreeing on the load result");
    }
    if (first == size) return NBR_SUCCESS;
    std::string message = last_error;
    int length = static_cast<int>(message.size());
    MPI_Bcast(&length, 1, MPI_INT, first, comm);
    message.resize(static_cast<std::size_t>(length));
    MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
    if (local_code != NBR_SUCCESS) return local_code;
    return fail(NBR_ERR_REMOTE, "rank " + std::to_string(first) + " failed: " + message);
}

std::unique_ptr<nbr_pattern_s> load_local(const char* dir, MPI_Comm comm, int rank, int size) {
    auto pattern = std::make_unique<nbr_pattern_s>();
    pattern->rank = rank;
    pattern->size = size;
    nbr::schema::RankPattern file;
    try {
        const auto manifest = nbr::read_manifest(dir);
        if (manifest.num_ranks() != static_cast<std::uint32_t>(size)) {
            throw NbrError(NBR_ERR_COMM_SIZE, std::string(dir) + ": pattern is for " +
                                                  std::to_string(manifest.num_ranks()) + " ranks, communicator has " +
                                                  std::to_string(size));
        }
        file = nbr::read_rank_pattern(dir, static_cast<std::uint32_t>(rank), manifest);
    } catch (const nbr::PatternError& error) {
        throw NbrError(code_of(error.kind()), error.what());
    }
    pattern->in.assign(file.in_neighbors().begin(), file.in_neighbors().end());
    pattern->out.assign(file.out_neighbors().begin(), file.out_neighbors().end());
    pattern->algorithm = file.algorithm();
    check_neighbors(comm, rank, pattern->in, pattern->out);
    const std::string where = std::string(dir) + "/" + nbr::rank_file_name(static_cast<std::uint32_t>(rank));
    try {
        pattern->allgather = nbr::internal::build_plan(file, Collective::allgather);
        pattern->alltoall = nbr::internal::build_plan(file, Collective::alltoall);
    } catch (const nbr::internal::PlanError& error) {
        throw NbrError(NBR_ERR_PATTERN, where + ": " + error.what());
    }
    int* tag_ub = nullptr;
    int flag = 0;
    mpi_check(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &flag), "MPI_Comm_get_attr");
    const int max_tag = std::max(pattern->allgather.max_tag, pattern->alltoall.max_tag);
    if (flag && max_tag > *tag_ub) {
        throw NbrError(NBR_ERR_PATTERN, where + ": needs " + std::to_string(max_tag + 1) +
                                            " messages between one pair of ranks, more than MPI_TAG_UB");
    }
    return pattern;
}

bool valid(nbr_pattern_t pattern) {
    return pattern != nullptr && pattern->comm != MPI_COMM_NULL;
}

int run_blocking(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, nbr_pattern_t pattern, Collective collective) {
    return guarded([&] {
        if (!valid(pattern)) return fail(NBR_ERR_ARG, "invalid pattern handle");
        if (sendcount < 0 || recvcount < 0) return fail(NBR_ERR_ARG, "negative count");
        const auto& plan = collective == Collective::allgather ? pattern->allgather : pattern->alltoall;
        nbr::internal::Execution execution(plan, pattern->comm,
                                           nbr::internal::describe_buffer(sendbuf, sendcount, sendtype),
                                           nbr::internal::describe_buffer(recvbuf, recvcount, recvtype));
        execution.start();
        execution.progress(true);
        return NBR_SUCCESS;
    });
}

int init_persistent(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request,
                    Collective collective) {
    return guarded([&] {
        if (request == nullptr) return fail(NBR_ERR_ARG, "request is NULL");
        *request = nullptr;
        if (!valid(pattern)) return fail(NBR_ERR_ARG, "invalid pattern handle");
        if (flags != 0) return fail(NBR_ERR_ARG, "flags must be 0");
        if (sendcount < 0 || recvcount < 0) return fail(NBR_ERR_ARG, "negative count");
        auto req = std::make_unique<nbr_request_s>();
        req->pattern = pattern;
        // Collective: every rank dups, so no rank may bail out before this point on its own.
        private_comm(pattern->comm, &req->comm);
        mpi_check(MPI_Type_dup(sendtype, &req->send_type), "MPI_Type_dup");
        mpi_check(MPI_Type_dup(recvtype, &req->recv_type), "MPI_Type_dup");
        const auto& plan = collective == Collective::allgather ? pattern->allgather : pattern->alltoall;
        try {
            req->execution = std::make_unique<nbr::internal::Execution>(
                plan, req->comm, nbr::internal::describe_buffer(sendbuf, sendcount, req->send_type),
                nbr::internal::describe_buffer(recvbuf, recvcount, req->recv_type));
        } catch (...) {
            MPI_Type_free(&req->send_type);
            MPI_Type_free(&req->recv_type);
            release_comm(&req->comm);
            throw;
        }
        *request = req.release();
        return NBR_SUCCESS;
    });
}

}  // namespace

extern "C" {

unsigned nbr_get_api_version(void) {
    return NBR_API_VERSION;
}

const char* nbr_strerror(int error) {
    switch (error) {
        case NBR_SUCCESS: return "success";
        case NBR_ERR_ARG: return "invalid argument";
        case NBR_ERR_IO: return "pattern file missing or unreadable";
        case NBR_ERR_CORRUPT: return "pattern file malformed or truncated";
        case NBR_ERR_VERSION: return "pattern format version missing or newer than this library";
        case NBR_ERR_CHECKSUM: return "rank file does not match the manifest checksum";
        case NBR_ERR_COMM_SIZE: return "communicator size differs from the pattern's number of ranks";
        case NBR_ERR_RANK: return "rank file holds another rank's pattern";
        case NBR_ERR_TOPOLOGY_HASH: return "rank file and manifest describe different topologies";
        case NBR_ERR_NEIGHBORS: return "communicator neighbors differ from the pattern's";
        case NBR_ERR_PATTERN: return "pattern schedule is inconsistent";
        case NBR_ERR_DATATYPE: return "send and receive block sizes differ";
        case NBR_ERR_MPI: return "MPI call failed";
        case NBR_ERR_NOMEM: return "out of memory";
        case NBR_ERR_REMOTE: return "another rank failed";
        case NBR_ERR_UNSUPPORTED: return "communicator kind not supported";
        case NBR_ERR_STATE: return "request in the wrong state";
        case NBR_ERR_INTERNAL: return "internal error";
        default: return "unknown error code";
    }
}

const char* nbr_last_error(void) {
    return last_error.c_str();
}

int nbr_load_pattern(const char* dir, MPI_Comm comm, nbr_pattern_t* out) {
    if (out == nullptr) return fail(NBR_ERR_ARG, "nbr_load_pattern: pattern pointer is NULL");
    *out = nullptr;
    if (comm == MPI_COMM_NULL) return fail(NBR_ERR_ARG, "nbr_load_pattern: communicator is MPI_COMM_NULL");
    int rank = 0, size = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        return fail(NBR_ERR_MPI, "nbr_load_pattern: cannot query the communicator");
    }
    std::unique_ptr<nbr_pattern_s> pattern;
    int code = guarded([&] {
        if (dir == nullptr) return fail(NBR_ERR_ARG, "nbr_load_pattern: directory is NULL");
        pattern = load_local(dir, comm, rank, size);
        return NBR_SUCCESS;
    });
    code = agree(comm, rank, size, code);
    if (code != NBR_SUCCESS) return code;
    return guarded([&] {
        private_comm(comm, &pattern->comm);
        *out = pattern.release();
        return NBR_SUCCESS;
    });
}

int nbr_pattern_free(nbr_pattern_t* pattern) {
    if (pattern == nullptr || *pattern == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_free: NULL pattern");
    release_comm(&(*pattern)->comm);
    delete *pattern;
    *pattern = nullptr;
    return NBR_SUCCESS;
}

int nbr_pattern_neighbors_count(nbr_pattern_t pattern, int* indegree, int* outdegree) {
    if (!valid(pattern) || indegree == nullptr || outdegree == nullptr) {
        return fail(NBR_ERR_ARG, "nbr_pattern_neighbors_count: invalid argument");
    }
    *indegree = static_cast<int>(pattern->in.size());
    *outdegree = static_cast<int>(pattern->out.size());
    return NBR_SUCCESS;
}

int nbr_pattern_neighbors(nbr_pattern_t pattern, int maxindegree, int sources[], int maxoutdegree, int destinations[]) {
    if (!valid(pattern) || maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && sources == nullptr) ||
        (maxoutdegree > 0 && destinations == nullptr)) {
        return fail(NBR_ERR_ARG, "nbr_pattern_neighbors: invalid argument");
    }
    std::copy_n(pattern->in.begin(), std::min<std::size_t>(pattern->in.size(), static_cast<std::size_t>(maxindegree)),
                sources);
    std::copy_n(pattern->out.begin(),
                std::min<std::size_t>(pattern->out.size(), static_cast<std::size_t>(maxoutdegree)), destinations);
    return NBR_SUCCESS;
}

int nbr_pattern_algorithm(nbr_pattern_t pattern, const char** name) {
    if (!valid(pattern) || name == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_algorithm: invalid argument");
    *name = pattern->algorithm.c_str();
    return NBR_SUCCESS;
}

int nbr_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, pattern, Collective::allgather);
}

int nbr_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, pattern, Collective::alltoall);
}

int nbr_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                                nbr_request_t* request) {
    return init_persistent(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, pattern, flags, request,
                           Collective::allgather);
}

int nbr_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                               nbr_request_t* request) {
    return init_persistent(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, pattern, flags, request,
                           Collective::alltoall);
}

int nbr_start(nbr_request_t request) {
    return guarded([&] {
        if (request == nullptr) return fail(NBR_ERR_ARG, "nbr_start: NULL request");
        request->execution->start();
        return NBR_SUCCESS;
    });
}

int nbr_wait(nbr_request_t request) {
    return guarded([&] {
        if (request == nullptr) return fail(NBR_ERR_ARG, "nbr_wait: NULL request");
        request->execution->progress(true);
        return NBR_SUCCESS;
    });
}

int nbr_test(nbr_request_t request, int* flag) {
    return guarded([&] {
        if (request == nullptr || flag == nullptr) return fail(NBR_ERR_ARG, "nbr_test: NULL argument");
        *flag = request->execution->progress(false) ? 1 : 0;
        return NBR_SUCCESS;
    });
}

int nbr_request_free(nbr_request_t* request) {
    return guarded([&] {
        if (request == nullptr || *request == nullptr) return fail(NBR_ERR_ARG, "nbr_request_free: NULL request");
        if ((*request)->execution && (*request)->execution->active()) {
            return fail(NBR_ERR_STATE, "nbr_request_free: request is still active (call nbr_wait first)");
        }
        MPI_Type_free(&(*request)->send_type);
        MPI_Type_free(&(*request)->recv_type);
        release_comm(&(*request)->comm);
        delete *request;
        *request = nullptr;
        return NBR_SUCCESS;
    });
}

}  // extern "C"
