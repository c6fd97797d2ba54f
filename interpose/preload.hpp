#pragma once
// libnbr-preload's internals, shared by its C wrappers (preload.cpp) and, where the MPI
// library's Fortran binding bypasses the C wrappers, its Fortran wrappers (preload_fortran.cpp).
#include <utility>

#include "nbr.h"
#include "neighbors.hpp"

namespace nbr::interpose {

/// > 0 while a wrapper runs libnbr: every wrapper then passes straight to PMPI.
extern int inside_nbr;

/// Runs libnbr with the wrappers in pass-through mode.
class InsideNbr {
public:
    InsideNbr() { ++inside_nbr; }
    ~InsideNbr() { --inside_nbr; }
    InsideNbr(const InsideNbr&) = delete;
    InsideNbr& operator=(const InsideNbr&) = delete;
};

/// An nbr request behind an application-visible proxy request: a persistent zero-byte send to
/// MPI_PROC_NULL, the application's persistent request, or, for a nonblocking call, one from a
/// pool, never started (inactive: complete for MPI at once), back in the pool once a completion
/// call completed it.
struct Proxy {
    MPI_Request handle = MPI_REQUEST_NULL;  // what the application holds (its C handle)
    nbr_request_t request = nullptr;
    bool persistent = false;  // the application's persistent request; else a nonblocking call's
    bool pending = false;     // started and not yet complete in nbr
    bool in_use = true;       // held by the application (a pooled proxy between calls is not)
};

/// The pattern attached to `comm`, or nullptr (then the call runs natively). A non-null result
/// counts one replayed call.
nbr_pattern_t pattern_of(MPI_Comm comm);

/// MPI_SUCCESS for NBR_SUCCESS; otherwise says why on stderr and returns MPI_ERR_OTHER.
int mpi_result(int nbr_code, const char* call);

/// Hands the application a proxy for `request`: a new persistent MPI_PROC_NULL send for a
/// persistent one; for a nonblocking one a pooled one, never started (a generalized request
/// would cost about 100 ns more per call).
int make_proxy(nbr_request_t request, bool persistent, MPI_Request* out);

/// The proxy behind a C request handle the application holds, or nullptr.
Proxy* proxy_of(MPI_Request request);

/// Whether the application holds any proxy and the wrappers are not inside libnbr.
bool proxies_live();

/// Progresses a pending proxy's nbr request once (or to completion if `block`); returns whether
/// it is complete. A failure is reported and counts as completion.
bool progress(Proxy& proxy, bool block);

/// A nonblocking call's proxy that a completion call completed (MPI left it inactive): back to
/// the pool; the caller sets the application's handle to the null handle, as MPI would.
void release(Proxy& proxy);

/// Starts a persistent proxy's nbr request (MPI_Start on a proxy); an MPI error code.
int start_proxy(Proxy& proxy);

/// MPI_Request_free on a proxy: completes and frees its nbr request and forgets the proxy;
/// returns whether the caller still frees the MPI request (a persistent proxy) or only sets the
/// application's handle to the null handle (a nonblocking one, back in the pool).
bool free_proxy(Proxy& proxy);

/// At MPI_Finalize: warns about requests left behind, frees the pooled proxies and, with
/// NBR_REPORT=1, prints the report.
void finalize_report();

/// Runs a blocking replay inside libnbr; its result as an MPI error code.
template <class Replay>
int replay_blocking(const char* call, Replay&& run) {
    const InsideNbr guard;
    return mpi_result(std::forward<Replay>(run)(), call);
}

/// Runs `start(&nbr_request)` inside libnbr, then hands out a proxy for the nbr request.
template <class Start>
int start_with_proxy(Start&& start, bool persistent, const char* call, MPI_Request* proxy) {
    nbr_request_t request = nullptr;
    int code = NBR_SUCCESS;
    {
        const InsideNbr guard;
        code = std::forward<Start>(start)(&request);
    }
    if (code != NBR_SUCCESS) return mpi_result(code, call);
    return make_proxy(request, persistent, proxy);
}

}  // namespace nbr::interpose
