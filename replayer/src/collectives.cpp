// The collectives of nbr.h: the blocking calls' path (straight to MPI's collective where the
// pattern's hand-off record allows it, else the pattern's plans) and every collective's entry
// point; nonblocking and persistent calls start requests (requests.cpp). Every entry point
// catches every C++ exception (guarded).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>

#include "call_args.hpp"
#include "hand_off.hpp"
#include "handles.hpp"
#include "progress.hpp"
#include "requests.hpp"

/// that share a core every page it touches is cold at each call.
#define NBR_HOT [[gnu::hot, gnu::section(".text.nbr_hot")]]

namespace {

using nbr::internal::allgatherv;
using nbr::internal::alltoallv;
using nbr::internal::alltoallw;
using nbr::internal::block_bytes;
using nbr::internal::BlockBuffer;
using nbr::internal::BlockTypes;
using nbr::internal::CallArgs;
using nbr::internal::CallMode;
using nbr::internal::check_counts;
using nbr::internal::Collective;
using nbr::internal::describe_buffer;
using nbr::internal::Execution;
using nbr::internal::fail;
using nbr::internal::fixed;
using nbr::internal::guarded;
using nbr::internal::hold_types;
using nbr::internal::index_of;
using nbr::internal::init_persistent;
using nbr::internal::name_of;
using nbr::internal::NbrError;
using nbr::internal::PatternState;
using nbr::internal::Pick;
using nbr::internal::pick_for;
using nbr::internal::plan_use;
using nbr::internal::PlanUse;
using nbr::internal::recv_buffer;
using nbr::internal::RequestState;
using nbr::internal::resolve;
using nbr::internal::send_buffer;
using nbr::internal::start_nonblocking;
using nbr::internal::Variant;
using nbr::internal::variant_of_call;
#if NBR_HAVE_LARGE_COUNT
using nbr::internal::allgatherv_c;
using nbr::internal::alltoallv_c;
using nbr::internal::alltoallw_c;
using nbr::internal::fixed_c;
#endif

Execution& blocking_execution(PatternState& pattern, const PlanUse& use) {
    if (!use.blocking) use.blocking = std::make_unique<Execution>(use.plan, pattern.comm, pattern.step_synchronized);
    return *use.blocking;
}

/// The native collective on the pattern's private communicator `c` (same topology as the
/// user's); MPI's error code.
[[gnu::cold]] int call_native_large(MPI_Comm c, const CallArgs& a) {
#if NBR_LARGE_MESSAGES
    if (a.collective == Collective::allgather && !a.variable) {
        return MPI_Neighbor_allgather_c(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, c);
    }
    if (a.collective == Collective::alltoall && !a.variable) {
        return MPI_Neighbor_alltoall_c(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, c);
    }
    if (a.collective == Collective::allgather) {
        return MPI_Neighbor_allgatherv_c(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts_c, a.rdispls_c,
                                         a.recvtype, c);
    }
    if (a.per_block_types) {
        return MPI_Neighbor_alltoallw_c(a.sendbuf, a.sendcounts_c, a.sbyte_displs, a.sendtypes, a.recvbuf,
                                        a.recvcounts_c, a.rbyte_displs, a.recvtypes, c);
    }
    return MPI_Neighbor_alltoallv_c(a.sendbuf, a.sendcounts_c, a.sdispls_c, a.sendtype, a.recvbuf, a.recvcounts_c,
                                    a.rdispls_c, a.recvtype, c);
#else
    (void)c, (void)a;
    return MPI_ERR_INTERN;  // no large-count entry points call this
#endif
}

/// MPI's fixed-size collective `C` on the communicator `comm`.
template <Collective C>
[[gnu::always_inline]] inline int native_fixed(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    if constexpr (C == Collective::allgather) {
        return MPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    } else {
        return MPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
}

[[gnu::always_inline]] inline int call_native(MPI_Comm c, const CallArgs& a) {
    if (a.large) return call_native_large(c, a);
    const auto send_count = static_cast<int>(a.sendcount);  // int unless large
    const auto recv_count = static_cast<int>(a.recvcount);
    if (a.collective == Collective::allgather && !a.variable) {
        return native_fixed<Collective::allgather>(a.sendbuf, send_count, a.sendtype, a.recvbuf, recv_count, a.recvtype,
                                                   c);
    }
    if (a.collective == Collective::alltoall && !a.variable) {
        return native_fixed<Collective::alltoall>(a.sendbuf, send_count, a.sendtype, a.recvbuf, recv_count, a.recvtype,
                                                  c);
    }
    if (a.collective == Collective::allgather) {
        return MPI_Neighbor_allgatherv(a.sendbuf, send_count, a.sendtype, a.recvbuf, a.recvcounts, a.rdispls,
                                       a.recvtype, c);
    }
    if (a.per_block_types) {
        return MPI_Neighbor_alltoallw(a.sendbuf, a.sendcounts, a.sbyte_displs, a.sendtypes, a.recvbuf, a.recvcounts,
                                      a.rbyte_displs, a.recvtypes, c);
    }
    return MPI_Neighbor_alltoallv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf, a.recvcounts, a.rdispls,
                                  a.recvtype, c);
}

int run_native(MPI_Comm c, const CallArgs& a) {
    nbr::internal::check_mpi(call_native(c, a), name_of(a));
    return NBR_SUCCESS;
}

bool usable_buffer(const void* buffer) {
    return buffer != nullptr && buffer != MPI_IN_PLACE;
}

/// Whether `n` blocks' counts and displacements (int or byte) exist where the rank has
/// neighbors and hold no negative count.
template <class Displacement>
bool usable_arrays(const int* counts, const Displacement* displs, int n) {
    if (n == 0) return true;
    return counts != nullptr && displs != nullptr && std::all_of(counts, counts + n, [](int c) { return c >= 0; });
}

/// Whether a v-variant call's arrays exist where the rank has neighbors and hold no negative count.
bool usable_counts(const CallArgs& a, const nbr::internal::HandOff& record) {
    if (!usable_arrays(a.recvcounts, a.rdispls, record.indegree)) return false;
    if (a.collective == Collective::allgather) return a.sendcount >= 0;
    return usable_arrays(a.sendcounts, a.sdispls, record.outdegree);
}

/// Whether every type in [first, last) is a common predefined one.
[[gnu::noinline]] bool all_predefined(const MPI_Datatype* first, const MPI_Datatype* last) {
    return std::all_of(first, last, [](MPI_Datatype type) { return nbr::internal::predefined_size(type) != 0; });
}

/// Whether alltoallw's arrays for `n` blocks exist where the rank has neighbors and hold no
/// negative count and only common predefined types. Most calls repeat one type: its blocks
/// after the first cost a comparison each.
bool usable_typed_blocks(const int* counts, const MPI_Aint* displs, const MPI_Datatype* types, int n) {
    if (n == 0) return true;
    if (types == nullptr || !usable_arrays(counts, displs, n)) return false;
    const MPI_Datatype first = types[0];
    const MPI_Datatype* other =
        std::find_if(types + 1, types + n, [first](MPI_Datatype type) { return type != first; });
    return nbr::internal::predefined_size(first) != 0 && (other == types + n || all_predefined(other, types + n));
}

/// variable_hand_off for alltoallw: well-formed calls whose every block has a common predefined
/// type, where the pattern hands alltoallw to MPI. Out of the hot section: few applications
/// call alltoallw, and its checks are one pass over its arrays.
[[gnu::noinline]] MPI_Comm direct_alltoallw(const nbr::internal::HandOff& record, const CallArgs& a,
                                            nbr::internal::HandOffTiming& timing) {
    if (!record.alltoallw_native || !usable_typed_blocks(a.recvcounts, a.rbyte_displs, a.recvtypes, record.indegree) ||
        !usable_typed_blocks(a.sendcounts, a.sbyte_displs, a.sendtypes, record.outdegree)) {
        return MPI_COMM_NULL;
    }
    if (record.counted) {
        const int c = nbr::internal::index_of(Collective::alltoall);
        nbr::internal::count_hand_off(&record, c, nbr::internal::HandOffCounts::kVariableClass, timing);
    }
    return record.comm;
}

/// The pattern's hand-off record (hand_off.hpp) if this blocking fixed-size call of collective
/// `c` goes straight to MPI's collective, else nullptr. Reads the entry point's own arguments,
/// inline, so that the common call runs one straight stretch of code and reads two lines of the
/// hand-off page: between processes that share a core every line it touches is cold at each
/// call (bench/measure_real/README.md). Only well-formed calls on the common predefined types
/// qualify, the same calls the full path would hand over; any other call, and so every error,
/// takes the full path and its checks and messages.
[[gnu::always_inline]] inline const nbr::internal::HandOff* fixed_hand_off(nbr_pattern_t handle, int c,
                                                                           const void* sendbuf, int sendcount,
                                                                           MPI_Datatype sendtype, const void* recvbuf,
                                                                           int recvcount, MPI_Datatype recvtype,
                                                                           nbr::internal::HandOffTiming& timing) {
    const nbr::internal::HandOff* record = nbr::internal::hand_off_of(reinterpret_cast<std::uintptr_t>(handle));
    if (record == nullptr || !nbr::internal::progress::none_registered()) [[unlikely]]
        return nullptr;
    if (!usable_buffer(sendbuf) || !usable_buffer(recvbuf) || (sendcount | recvcount) < 0) [[unlikely]]
        return nullptr;
    const int send_size = nbr::internal::hand_off_type_size(sendtype);
    const int recv_size = nbr::internal::hand_off_type_size(recvtype);
    const auto bytes = static_cast<std::uint64_t>(sendcount) * static_cast<std::uint64_t>(send_size);
    if (send_size == 0 || recv_size == 0 ||
        bytes != static_cast<std::uint64_t>(recvcount) * static_cast<std::uint64_t>(recv_size)) [[unlikely]] {
        return nullptr;  // a type not predefined, or blocks of two sizes (a free side, or an error)
    }
    if (bytes >= record->native_from[c]) [[likely]]
        return record;
    const auto size_class = static_cast<std::size_t>(std::bit_width(bytes));  // tuner.hpp's size_class_of
    if (size_class >= 64 || ((record->native_classes[c] >> size_class) & 1U) == 0) return nullptr;
    nbr::internal::count_hand_off(record, c, size_class, timing);
    return record;
}

/// The communicator on which this blocking v-call or alltoallw call goes straight to MPI's
/// collective, from the pattern's hand-off record, or MPI_COMM_NULL (the same rules as
/// fixed_hand_off).
MPI_Comm variable_hand_off(nbr_pattern_t handle, const CallArgs& a, nbr::internal::HandOffTiming& timing) {
    if (a.large) return MPI_COMM_NULL;  // checked on the full path
    const nbr::internal::HandOff* record = nbr::internal::hand_off_of(reinterpret_cast<std::uintptr_t>(handle));
    if (record == nullptr || !nbr::internal::progress::none_registered()) return MPI_COMM_NULL;
    if (!usable_buffer(a.sendbuf) || !usable_buffer(a.recvbuf)) return MPI_COMM_NULL;
    if (a.per_block_types) return direct_alltoallw(*record, a, timing);
    const int c = nbr::internal::index_of(a.collective);
    if (nbr::internal::predefined_size(a.sendtype) == 0 || nbr::internal::predefined_size(a.recvtype) == 0 ||
        !record->variable_native[c] || !usable_counts(a, *record)) {
        return MPI_COMM_NULL;
    }
    if (record->counted) {
        nbr::internal::count_hand_off(record, c, nbr::internal::HandOffCounts::kVariableClass, timing);
    }
    return record->comm;
}

/// Runs a blocking call on one variant. All-direct plans on a topology communicator: the native
/// collective is the same schedule (see settle_collectively in nbr.cpp). The choice depends only
/// on the pattern and the block size (or measured selection's agreed pick), so every rank makes
/// the same one; since the native collective progresses none of nbr's requests, those this
/// process has started are completed first (a peer may wait for data this rank forwards).
void run_variant(PatternState& pattern, Variant& variant, const CallArgs& a, const BlockBuffer& send,
                 const BlockBuffer& recv) {
    const int c = index_of(a.collective);
    if (a.per_block_types ? variant.native_alltoallw
                          : (a.variable ? variant.native[c] : nbr::internal::fixed_native(pattern, variant, c))) {
        nbr::internal::progress::complete_registered();
        run_native(pattern.comm, a);
        return;
    }
    Execution& execution =
        blocking_execution(pattern, plan_use(variant, a.collective, a.variable, a.variable ? 0 : recv.bytes(0)));
    if (a.variable) {
        execution.bind_in_band(send, recv);
    } else {
        execution.bind(send, recv);
    }
    execution.start();
    nbr::internal::progress::run_blocking(execution);
}

/// A blocking call the hand-off record does not take: the pattern's state, checks and plans.
[[gnu::noinline]] int run_blocking_fully(nbr_pattern_t handle, CallArgs a) {
    return guarded([&] {
        PatternState* pattern = resolve(handle);
        if (pattern == nullptr) return fail(NBR_ERR_ARG, std::string(name_of(a)) + ": invalid pattern handle");
        check_counts(a, *pattern);
        hold_types(a, *pattern, pattern->call_types[0], pattern->call_types[1], false);
        BlockBuffer send = send_buffer(a, a.sendtype, *pattern);
        BlockBuffer recv = recv_buffer(a, a.recvtype, *pattern);
        nbr::internal::match_fixed_blocks(a, *pattern, send, recv);
        const Pick pick = pick_for(*pattern, a.collective, a.variable, CallMode::blocking, block_bytes(a, recv),
                                   [&] { return variant_of_call(*pattern, a, send, recv); });
        const double started = pick.timed ? MPI_Wtime() : 0.0;
        run_variant(*pattern, pattern->variants[pick.variant], a, send, recv);
        if (pick.timed) {
            pattern->tuner->record(*pattern, pick, (MPI_Wtime() - started) * 1e6);
            nbr::internal::hand_off_shape(*pattern, pick.shape);
        }
        return NBR_SUCCESS;
    });
}

[[gnu::cold, gnu::noinline]] int native_failure(int code, const CallArgs& a) {
    return guarded([&] {
        nbr::internal::check_mpi(code, name_of(a));
        return NBR_SUCCESS;
    });
}

/// A blocking v-call or alltoallw call: straight to MPI's collective where the pattern's
/// hand-off record allows it, else the full path.
NBR_HOT int run_blocking(nbr_pattern_t handle, const CallArgs& a) {
    nbr::internal::HandOffTiming timing;
    const MPI_Comm direct = variable_hand_off(handle, a, timing);
    if (direct == MPI_COMM_NULL) return run_blocking_fully(handle, a);
    const double started = timing.calls != nullptr ? MPI_Wtime() : 0.0;
    const int code = call_native(direct, a);
    if (timing.calls != nullptr) nbr::internal::add_hand_off_time(timing, (MPI_Wtime() - started) * 1e6);
    return code == MPI_SUCCESS ? NBR_SUCCESS : native_failure(code, a);
}

/// run_fixed's other ways, out of line so that the common call's code stays one stretch: the
/// full path (the record does not take the call), ...
template <Collective C>
[[gnu::noinline]] int fixed_fully(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, nbr_pattern_t handle) {
    return run_blocking_fully(handle, fixed(C, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

/// ... MPI's failure, reported as the full path reports it ...
template <Collective C>
[[gnu::cold, gnu::noinline]] int fixed_failure(int code, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                               void* recvbuf, int recvcount, MPI_Datatype recvtype) {
    return native_failure(code, fixed(C, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

/// ... and a handed-off call of a measured pattern that is timed for the report.
template <Collective C>
[[gnu::noinline]] int fixed_timed(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                  const nbr::internal::HandOffTiming& timing) {
    const double started = MPI_Wtime();
    const int code = native_fixed<C>(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    nbr::internal::add_hand_off_time(timing, (MPI_Wtime() - started) * 1e6);
    return code == MPI_SUCCESS ? NBR_SUCCESS
                               : fixed_failure<C>(code, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

/// A blocking fixed-size call: straight to MPI's collective where the pattern's hand-off record
/// allows it (fixed_hand_off), else the full path. Inlined into its entry point.
template <Collective C>
[[gnu::always_inline]] inline int run_fixed(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                            int recvcount, MPI_Datatype recvtype, nbr_pattern_t handle) {
    nbr::internal::HandOffTiming timing;
    const nbr::internal::HandOff* record =
        fixed_hand_off(handle, index_of(C), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, timing);
    if (record == nullptr) [[unlikely]] {
        return fixed_fully<C>(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, handle);
    }
    if (timing.calls != nullptr) [[unlikely]] {
        return fixed_timed<C>(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, record->comm, timing);
    }
    const int code = native_fixed<C>(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, record->comm);
    if (code == MPI_SUCCESS) [[likely]]
        return NBR_SUCCESS;
    return fixed_failure<C>(code, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

}  // namespace

extern "C" {

/// The blocking entry points come first in the hot section, with run_blocking (about 3.5 KiB
/// optimized), and this one aligns it to a page: a blocking call's code lies on one page.
NBR_HOT [[gnu::aligned(4096)]] int nbr_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                                          void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                                          nbr_pattern_t pattern) {
    return run_fixed<Collective::allgather>(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, pattern);
}

NBR_HOT int nbr_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_fixed<Collective::alltoall>(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, pattern);
}

NBR_HOT int nbr_neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                    nbr_pattern_t pattern) {
    return run_blocking(pattern, allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

NBR_HOT int nbr_neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking(pattern,
                        alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype));
}

int nbr_neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern) {
    return run_blocking(pattern,
                        alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes));
}

int nbr_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                                nbr_request_t* request) {
    return init_persistent(pattern,
                           fixed(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype),
                           flags, request);
}

int nbr_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                               nbr_request_t* request) {
    return init_persistent(pattern,
                           fixed(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype),
                           flags, request);
}

int nbr_neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                 nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request) {
    return init_persistent(pattern, allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype),
                           flags, request);
}

int nbr_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request) {
    return init_persistent(pattern,
                           alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype),
                           flags, request);
}

int nbr_neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                                unsigned long flags, nbr_request_t* request) {
    return init_persistent(pattern,
                           alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes),
                           flags, request);
}

int nbr_ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, nbr_pattern_t pattern, nbr_request_t* request) {
    return start_nonblocking(
        pattern, fixed(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype), request);
}

int nbr_ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, nbr_pattern_t pattern, nbr_request_t* request) {
    return start_nonblocking(
        pattern, fixed(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype), request);
}

int nbr_ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, nbr_pattern_t pattern,
                             nbr_request_t* request) {
    return start_nonblocking(pattern, allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype),
                             request);
}

int nbr_ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            nbr_pattern_t pattern, nbr_request_t* request) {
    return start_nonblocking(
        pattern, alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype), request);
}

int nbr_ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                            nbr_request_t* request) {
    return start_nonblocking(
        pattern, alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes), request);
}

#if NBR_HAVE_LARGE_COUNT

// ---- large-count forms ------------------------------------------------------------------------

int nbr_neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking_fully(
        pattern, fixed_c(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int nbr_neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking_fully(
        pattern, fixed_c(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int nbr_neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                              nbr_pattern_t pattern) {
    return run_blocking_fully(pattern,
                              allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int nbr_neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking_fully(
        pattern, alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype));
}

int nbr_neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern) {
    return run_blocking_fully(
        pattern, alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes));
}

int nbr_ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern,
                              nbr_request_t* request) {
    return start_nonblocking(
        pattern, fixed_c(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype), request);
}

int nbr_ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern,
                             nbr_request_t* request) {
    return start_nonblocking(
        pattern, fixed_c(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype), request);
}

int nbr_ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               nbr_pattern_t pattern, nbr_request_t* request) {
    return start_nonblocking(pattern, allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype),
                             request);
}

int nbr_ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, nbr_pattern_t pattern,
                              nbr_request_t* request) {
    return start_nonblocking(
        pattern, alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype), request);
}

int nbr_ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                              nbr_request_t* request) {
    return start_nonblocking(
        pattern, alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes),
        request);
}

int nbr_neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern,
                                  unsigned long flags, nbr_request_t* request) {
    return init_persistent(pattern,
                           fixed_c(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype),
                           flags, request);
}

int nbr_neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern, unsigned long flags,
                                 nbr_request_t* request) {
    return init_persistent(pattern,
                           fixed_c(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype),
                           flags, request);
}

int nbr_neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                   nbr_pattern_t pattern, unsigned long flags, nbr_request_t* request) {
    return init_persistent(pattern, allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype),
                           flags, request);
}

int nbr_neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], MPI_Datatype recvtype, nbr_pattern_t pattern,
                                  unsigned long flags, nbr_request_t* request) {
    return init_persistent(pattern,
                           alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype),
                           flags, request);
}

int nbr_neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], nbr_pattern_t pattern,
                                  unsigned long flags, nbr_request_t* request) {
    return init_persistent(
        pattern, alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes), flags,
        request);
}

#endif  // NBR_HAVE_LARGE_COUNT

}  // extern "C"
