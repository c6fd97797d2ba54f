#pragma once
// The opaque handles of nbr.h and the C boundary's error handling, shared by the files of libnbr.

#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <mpi.h>

#include "execution.hpp"
#include "nbr.h"
#include "nbr/schema/pattern_io.hpp"
#include "nbr/plan/plan.hpp"

struct nbr_pattern_s {
    /// Private duplicate of the user's communicator. Blocking calls use tags [0, tag_window);
    /// nonblocking call c uses window 1 + c mod (windows - 1).
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    int size = 0;
    std::vector<int> in;
    std::vector<int> out;
    std::string algorithm;
    nbr::internal::Plan plans[2];                           // indexed by Collective: allgather, alltoall
    std::int64_t tag_window = 1;                            // tags one call needs (largest plan tag of any rank + 1)
    std::int64_t tag_ub = 32767;                            // MPI_TAG_UB of the communicator
    std::int64_t windows = 1;                               // tag windows below MPI_TAG_UB
    std::unique_ptr<nbr::internal::Execution> blocking[2];  // reused by blocking calls
    std::vector<std::unique_ptr<nbr::internal::Execution>> idle[2];  // for nonblocking calls
    std::uint64_t calls = 0;                                         // nonblocking calls started
    std::map<std::uint64_t, nbr_request_s*> in_flight;               // nonblocking, by call number
    int requests = 0;                 // live requests (persistent or nonblocking) that use this pattern
    bool topology_comm = false;       // comm (so also `comm`) has the pattern's (dist-)graph topology
    bool native[2] = {false, false};  // blocking calls use the native collective (see nbr.cpp)
};

struct nbr_request_s {
    enum class Kind { persistent, nonblocking };
    Kind kind = Kind::persistent;
    nbr_pattern_s* pattern = nullptr;
    nbr::internal::Collective collective = nbr::internal::Collective::allgather;
    MPI_Comm comm = MPI_COMM_NULL;  // persistent: private duplicate per request
    MPI_Datatype send_type = MPI_DATATYPE_NULL;
    MPI_Datatype recv_type = MPI_DATATYPE_NULL;
    bool own_send_type = false;  // duplicated (derived types), freed with the request
    bool own_recv_type = false;
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;  // v-variants: copies
    std::unique_ptr<nbr::internal::Execution> execution;
    std::uint64_t call = 0;  // nonblocking: call number on the pattern
};

namespace nbr::internal {

/// The calling thread's last failure (nbr_last_error).
std::string& last_error();

/// Records `message` as the last error and returns `code`.
inline int fail(int code, std::string message) {
    last_error() = std::move(message);
    return code;
}

/// Runs `body`, turning every exception into an error code and a last_error message.
template <class Body>
int guarded(Body&& body) {
    try {
        return body();
    } catch (const NbrError& error) {
        return fail(error.code(), error.what());
    } catch (const PlanError& error) {
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

/// A private communicator for nbr's traffic (collective over comm), see nbr.cpp.
void private_comm(MPI_Comm comm, MPI_Comm* out);
void release_comm(MPI_Comm* comm);

/// Every rank of comm learns whether any failed; the lowest failing rank's message is shared
/// (NBR_ERR_REMOTE on the others).
int agree(MPI_Comm comm, int local_code);

/// Live handles: every pattern and request from creation to release, so that a freed, foreign
/// or garbage handle is an argument error rather than a read of freed memory.
void register_handle(const void* handle);
void unregister_handle(const void* handle);
[[nodiscard]] bool is_live(const void* handle);

inline bool valid(nbr_pattern_t pattern) {
    return pattern != nullptr && is_live(pattern);
}
inline bool valid(nbr_request_t request) {
    return request != nullptr && is_live(request);
}

inline const Plan& plan_of(const nbr_pattern_s& pattern, Collective collective) {
    return pattern.plans[collective == Collective::allgather ? 0 : 1];
}

}  // namespace nbr::internal
