// libnbr-preload's Fortran wrappers, for MPI libraries whose Fortran binding calls PMPI_*
// directly and so bypasses the C wrappers (Open MPI 4.1: `use mpi`, mpif.h and `use mpi_f08`).
// MPICH's Fortran binding calls the C binding (MPI_*), so there the C wrappers serve Fortran
// programs as they are and this file adds nothing.
//
// Each wrapper takes the Fortran entry point (gfortran's names: lower case, one trailing
// underscore; `mpi_f08`'s `_f08_` names are aliases, since Open MPI 4.1's f08 procedures take
// the same arguments and call the same implementation). On a communicator with a pattern it
// converts the handles and replays the call in libnbr exactly as the C wrapper does; otherwise
// it calls the MPI library's own Fortran profiling entry (pmpi_..._) with the arguments
// untouched. Completion calls run Completion<> (completion.hpp) on Fortran handles, so MPI's
// own Fortran binding writes every status, index and flag. `ierror` may be absent (f08).
#include "preload.hpp"

#if defined(OPEN_MPI) && OPEN_MPI

#include <mpi-ext.h>

#include <type_traits>
#include <vector>

#include "collective_table.hpp"
#include "completion.hpp"

static_assert(std::is_same_v<MPI_Fint, int>, "Fortran INTEGER arrays are passed to libnbr as int arrays");

using F = MPI_Fint;
using Buffer = void*;

// The MPI library's own Fortran entry points (weak: absent in a program without Fortran) and
// its Fortran sentinels (addresses a Fortran program passes for MPI_BOTTOM and MPI_IN_PLACE).
extern "C" {
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
#define NBR_PF_DECLARATION(mode, shape, Cname, fname) \
    void NBR_PF_NAME(mode, fname)(NBR_F_PARAMS_##shape, NBR_F_TAIL_PARAMS_##mode) __attribute__((weak));
NBR_NEIGHBOR_COLLECTIVES(NBR_PF_DECLARATION)
void pmpi_wait_(F*, F*, F*) __attribute__((weak));
void pmpi_test_(F*, F*, F*, F*) __attribute__((weak));
void pmpi_request_get_status_(F*, F*, F*, F*) __attribute__((weak));
void pmpi_waitall_(F*, F*, F*, F*) __attribute__((weak));
void pmpi_testall_(F*, F*, F*, F*, F*) __attribute__((weak));
void pmpi_waitany_(F*, F*, F*, F*, F*) __attribute__((weak));
void pmpi_testany_(F*, F*, F*, F*, F*, F*) __attribute__((weak));
void pmpi_waitsome_(F*, F*, F*, F*, F*, F*) __attribute__((weak));
void pmpi_testsome_(F*, F*, F*, F*, F*, F*) __attribute__((weak));
void pmpi_start_(F*, F*) __attribute__((weak));
void pmpi_startall_(F*, F*, F*) __attribute__((weak));
void pmpi_request_free_(F*, F*) __attribute__((weak));
void pmpi_finalize_(F*) __attribute__((weak));
}

namespace {

using nbr::interpose::pattern_of;
using nbr::interpose::replay_blocking;
using nbr::interpose::start_with_proxy;

/// Runs a Fortran entry point with a local error code and returns it.
template <class Call>
int fortran(Call&& call) {
    F code = MPI_SUCCESS;
    call(&code);
    return code;
}

void set_error(F* ierr, int code) {
    if (ierr != nullptr) *ierr = code;
}

/// A Fortran buffer argument as libnbr takes it (MPI_BOTTOM and MPI_IN_PLACE translated).
void* buffer(Buffer fortran_buffer) {
    if (fortran_buffer == &mpi_fortran_bottom_) return MPI_BOTTOM;
    if (fortran_buffer == &mpi_fortran_in_place_) return MPI_IN_PLACE;
    return fortran_buffer;
}

MPI_Datatype type(const F* handle) {
    return PMPI_Type_f2c(*handle);
}

nbr_pattern_t pattern(const F* comm) {
    return pattern_of(PMPI_Comm_f2c(*comm));
}

enum class Side { send, recv };

/// The blocks of a topology communicator's receive (send) buffer: MPI's in-degree (out-degree),
/// MPI_PROC_NULL slots of a Cartesian one included.
int slot_count(MPI_Comm comm, Side side) {
    int kind = MPI_UNDEFINED;
    PMPI_Topo_test(comm, &kind);
    int in = 0, out = 0, weighted = 0;
    if (kind == MPI_CART) {
        PMPI_Cartdim_get(comm, &in);
        return 2 * in;
    }
    if (kind == MPI_GRAPH) {
        int rank = 0;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &in);
        return in;
    }
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    return side == Side::recv ? in : out;
}

/// alltoallw's Fortran datatype handles as C ones, in a per-thread array per side (libnbr
/// copies what it keeps); handles at MPI_PROC_NULL slots convert to what they convert to,
/// libnbr never reads them.
const MPI_Datatype* types(const F* comm, const F* handles, Side side) {
    thread_local std::vector<MPI_Datatype> converted[2];
    auto& out = converted[side == Side::send ? 0 : 1];
    out.resize(static_cast<std::size_t>(slot_count(PMPI_Comm_f2c(*comm), side)));
    if (handles == nullptr) return nullptr;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = PMPI_Type_f2c(handles[i]);
    return out.data();
}

/// A replayed blocking call: libnbr's result as the Fortran error code.
template <class Replay>
void replay(F* ierr, const char* call, Replay&& run) {
    set_error(ierr, replay_blocking(call, std::forward<Replay>(run)));
}

/// A replayed nonblocking or persistent call: a proxy's Fortran handle in `request`.
template <class Start>
void replay_request(F* request, F* ierr, bool persistent, const char* call, Start&& start) {
    MPI_Request proxy = MPI_REQUEST_NULL;
    const int code = start_with_proxy(std::forward<Start>(start), persistent, call, &proxy);
    if (code == MPI_SUCCESS) *request = PMPI_Request_c2f(proxy);
    set_error(ierr, code);
}

/// Fortran's MPI_STATUS_SIZE (MPI-4's MPI_F_STATUS_SIZE; Open MPI 4.1 lacks it): a Fortran
/// status holds a C one's words.
#ifdef MPI_F_STATUS_SIZE
constexpr int kStatusSize = MPI_F_STATUS_SIZE;
#else
constexpr int kStatusSize = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
#endif

/// The Fortran binding's completion calls, for Completion<>.
struct FortranBinding {
    using Handle = F;
    using Status = F;
    static constexpr int kFirstIndex = 1;  // Waitany's and Waitsome's indices
    static MPI_Request key(Handle handle) { return PMPI_Request_f2c(handle); }
    static Status* status_at(Status* statuses, int k) {
        return statuses == MPI_F_STATUSES_IGNORE ? MPI_F_STATUS_IGNORE : statuses + k * kStatusSize;
    }
    static Handle null() {
        static const F null_handle = PMPI_Request_c2f(MPI_REQUEST_NULL);
        return null_handle;
    }
    static int wait(F* r, F* s) {
        return fortran([&](F* e) { pmpi_wait_(r, s, e); });
    }
    static int test(F* r, int* flag, F* s) {
        return fortran([&](F* e) { pmpi_test_(r, flag, s, e); });
    }
    static int request_get_status(F r, int* flag, F* s) {
        return fortran([&](F* e) { pmpi_request_get_status_(&r, flag, s, e); });
    }
    static int waitall(int n, F* r, F* s) {
        return fortran([&](F* e) { pmpi_waitall_(&n, r, s, e); });
    }
    static int testall(int n, F* r, int* flag, F* s) {
        return fortran([&](F* e) { pmpi_testall_(&n, r, flag, s, e); });
    }
    static int waitany(int n, F* r, int* index, F* s) {
        return fortran([&](F* e) { pmpi_waitany_(&n, r, index, s, e); });
    }
    static int testany(int n, F* r, int* index, int* flag, F* s) {
        return fortran([&](F* e) { pmpi_testany_(&n, r, index, flag, s, e); });
    }
    static int waitsome(int n, F* r, int* outcount, int* indices, F* s) {
        return fortran([&](F* e) { pmpi_waitsome_(&n, r, outcount, indices, s, e); });
    }
    static int testsome(int n, F* r, int* outcount, int* indices, F* s) {
        return fortran([&](F* e) { pmpi_testsome_(&n, r, outcount, indices, s, e); });
    }
    static int start(F* r) {
        return fortran([&](F* e) { pmpi_start_(r, e); });
    }
    static int startall(int n, F* r) {
        return fortran([&](F* e) { pmpi_startall_(&n, r, e); });
    }
    static int request_free(F* r) {
        return fortran([&](F* e) { pmpi_request_free_(r, e); });
    }
};

using Fortran = nbr::interpose::Completion<FortranBinding>;

}  // namespace

/// The f08 entry point `name`_f08_ as an alias of the wrapper `name`_.
#define NBR_F08_ALIAS(name) __attribute__((alias(#name "_"))) void name##_f08_

extern "C" {

// The 15 neighborhood collectives, generated from collective_table.hpp: on a communicator with
// a pattern, the call is replayed in libnbr exactly as the C wrapper does; otherwise the MPI
// library's own Fortran entry runs with the arguments untouched.
#define NBR_F_REPLAY_BLOCKING(fname, call, ...) replay(ierr, call, [&] { return nbr_##fname(__VA_ARGS__, p); })
#define NBR_F_REPLAY_NONBLOCKING(fname, call, ...) \
    replay_request(request, ierr, false, call, [&](nbr_request_t* r) { return nbr_##fname(__VA_ARGS__, p, r); })
#define NBR_F_REPLAY_PERSISTENT(fname, call, ...) \
    replay_request(request, ierr, true, call, [&](nbr_request_t* r) { return nbr_##fname(__VA_ARGS__, p, 0, r); })
#define NBR_F_WRAPPER(mode, shape, Cname, fname)                                                         \
    void NBR_F_NAME(mode, fname)(NBR_F_PARAMS_##shape, NBR_F_TAIL_PARAMS_##mode) {                       \
        if (nbr_pattern_t p = pattern(comm)) {                                                           \
            return NBR_F_REPLAY_##mode(fname, NBR_STR(NBR_C_NAME(mode, Cname)), NBR_F_NBR_ARGS_##shape); \
        }                                                                                                \
        set_error(ierr, fortran([&](F* e) {                                                              \
                      NBR_PF_NAME(mode, fname)                                                           \
                      (NBR_F_ARGS_##shape, NBR_F_TAIL_ARGS_##mode, e);                                   \
                  }));                                                                                   \
    }

NBR_NEIGHBOR_COLLECTIVES(NBR_F_WRAPPER)

// Completion (completion.hpp).

void mpi_wait_(F* request, F* status, F* ierr) {
    set_error(ierr, Fortran::wait(request, status));
}
void mpi_test_(F* request, F* flag, F* status, F* ierr) {
    set_error(ierr, Fortran::test(request, flag, status));
}
void mpi_request_get_status_(F* request, F* flag, F* status, F* ierr) {
    set_error(ierr, Fortran::request_get_status(*request, flag, status));
}
void mpi_waitall_(F* count, F* requests, F* statuses, F* ierr) {
    set_error(ierr, Fortran::waitall(*count, requests, statuses));
}
void mpi_testall_(F* count, F* requests, F* flag, F* statuses, F* ierr) {
    set_error(ierr, Fortran::testall(*count, requests, flag, statuses));
}
void mpi_waitany_(F* count, F* requests, F* index, F* status, F* ierr) {
    set_error(ierr, Fortran::waitany(*count, requests, index, status));
}
void mpi_testany_(F* count, F* requests, F* index, F* flag, F* status, F* ierr) {
    set_error(ierr, Fortran::testany(*count, requests, index, flag, status));
}
void mpi_waitsome_(F* incount, F* requests, F* outcount, F* indices, F* statuses, F* ierr) {
    set_error(ierr, Fortran::waitsome(*incount, requests, outcount, indices, statuses));
}
void mpi_testsome_(F* incount, F* requests, F* outcount, F* indices, F* statuses, F* ierr) {
    set_error(ierr, Fortran::testsome(*incount, requests, outcount, indices, statuses));
}
void mpi_start_(F* request, F* ierr) {
    set_error(ierr, Fortran::start(request));
}
void mpi_startall_(F* count, F* requests, F* ierr) {
    set_error(ierr, Fortran::startall(*count, requests));
}
void mpi_request_free_(F* request, F* ierr) {
    set_error(ierr, Fortran::request_free(request));
}

void mpi_finalize_(F* ierr) {
    nbr::interpose::finalize_report();
    set_error(ierr, fortran([](F* e) { pmpi_finalize_(e); }));
}

// mpi_f08.
#define NBR_F08_COLLECTIVE_ALIAS(mode, shape, Cname, fname)                                                       \
    __attribute__((alias(NBR_STR(NBR_F_NAME(mode, fname))))) void NBR_F08_NAME(mode, fname)(NBR_F_PARAMS_##shape, \
                                                                                            NBR_F_TAIL_PARAMS_##mode);
NBR_NEIGHBOR_COLLECTIVES(NBR_F08_COLLECTIVE_ALIAS)
NBR_F08_ALIAS(mpi_wait)(F*, F*, F*);
NBR_F08_ALIAS(mpi_test)(F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_request_get_status)(F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_waitall)(F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_testall)(F*, F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_waitany)(F*, F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_testany)(F*, F*, F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_waitsome)(F*, F*, F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_testsome)(F*, F*, F*, F*, F*, F*);
NBR_F08_ALIAS(mpi_start)(F*, F*);
NBR_F08_ALIAS(mpi_startall)(F*, F*, F*);
NBR_F08_ALIAS(mpi_request_free)(F*, F*);
NBR_F08_ALIAS(mpi_finalize)(F*);

}  // extern "C"

#endif  // OPEN_MPI
