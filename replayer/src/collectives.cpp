// The collectives of nbr.h: blocking, persistent and nonblocking, fixed-size and v-variants,
// and the request functions. Every entry point catches every C++ exception (guarded).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hand_off.hpp"
#include "handles.hpp"
#include "progress.hpp"

// Native persistent neighborhood collectives: MPI-4 (MPICH 4), or Open MPI 4.1's MPIX extension.
#if !defined(NBR_SMPI) && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if !defined(NBR_SMPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_NATIVE_INIT(name) MPIX_Neighbor_##name##_init
#elif !defined(NBR_SMPI) && MPI_VERSION >= 4
#define NBR_NATIVE_INIT(name) MPI_Neighbor_##name##_init
#endif

/// The blocking calls' way to MPI's collective, kept together in one section: between processes
/// that share a core every page it touches is cold at each call.
#define NBR_HOT [[gnu::hot, gnu::section(".text.nbr_hot")]]

namespace {

using nbr::internal::BlockBuffer;
using nbr::internal::BlockTypes;
using nbr::internal::Collective;
using nbr::internal::describe_buffer;
using nbr::internal::Execution;
using nbr::internal::fail;
using nbr::internal::guarded;
using nbr::internal::NbrError;
using nbr::internal::PatternState;
using nbr::internal::RequestState;
using nbr::internal::resolve;

/// The buffer arguments of one call, as given (arrays not copied).
struct CallArgs {
    Collective collective = Collective::allgather;
    bool variable = false;  // a v-variant
    const void* sendbuf = nullptr;
    MPI_Count sendcount = 0;  // an int unless `large`
    const int* sendcounts = nullptr;
    const int* sdispls = nullptr;
    MPI_Datatype sendtype = MPI_DATATYPE_NULL;
    void* recvbuf = nullptr;
    MPI_Count recvcount = 0;
    const int* recvcounts = nullptr;
    const int* rdispls = nullptr;
    MPI_Datatype recvtype = MPI_DATATYPE_NULL;
    // alltoallw (a v-variant of alltoall): per-block datatypes and byte displacements; sendtype
    // and recvtype are then MPI_BYTE, unused. The types' shapes are looked up once per call.
    bool per_block_types = false;
    const MPI_Aint* sbyte_displs = nullptr;
    const MPI_Aint* rbyte_displs = nullptr;
    const MPI_Datatype* sendtypes = nullptr;
    const MPI_Datatype* recvtypes = nullptr;
    const BlockTypes* send_shapes = nullptr;  // set by hold_types
    const BlockTypes* recv_shapes = nullptr;
    // Large-count forms (MPI-4's _c): counts as MPI_Count, displacements as MPI_Aint, in these
    // arrays instead of the int ones (alltoallw_c: its byte displacements stay where they are).
    bool large = false;
    const MPI_Count* sendcounts_c = nullptr;
    const MPI_Aint* sdispls_c = nullptr;
    const MPI_Count* recvcounts_c = nullptr;
    const MPI_Aint* rdispls_c = nullptr;

    /// Counts of the v-variants' block `slot`, whichever array holds them.
    [[nodiscard]] MPI_Count send_count_at(std::size_t slot) const {
        return large ? sendcounts_c[slot] : sendcounts[slot];
    }
    [[nodiscard]] MPI_Count recv_count_at(std::size_t slot) const {
        return large ? recvcounts_c[slot] : recvcounts[slot];
    }
    [[nodiscard]] bool has_send_arrays() const {
        const bool counts = large ? sendcounts_c != nullptr : sendcounts != nullptr;
        if (per_block_types) return counts && sbyte_displs != nullptr && sendtypes != nullptr;
        return counts && (large ? sdispls_c != nullptr : sdispls != nullptr);
    }
    [[nodiscard]] bool has_recv_arrays() const {
        const bool counts = large ? recvcounts_c != nullptr : recvcounts != nullptr;
        if (per_block_types) return counts && rbyte_displs != nullptr && recvtypes != nullptr;
        return counts && (large ? rdispls_c != nullptr : rdispls != nullptr);
    }
};

const char* name_of(const CallArgs& a) {
    static const char* const names[2][5] = {
        {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"},
        {"allgather_c", "allgatherv_c", "alltoall_c", "alltoallv_c", "alltoallw_c"}};
    const int shape = a.collective == Collective::allgather ? (a.variable ? 1 : 0)
                      : a.per_block_types                   ? 4
                                                            : (a.variable ? 3 : 2);
    return names[a.large ? 1 : 0][shape];
}

/// A NULL buffer that would carry data is an error, unless its datatype is derived: derived
/// types may address absolutely from MPI_BOTTOM (NULL in MPICH and Open MPI).
template <class Bad>
void check_buffers(const CallArgs& a, const PatternState& pattern, bool sends, bool receives, const Bad& bad) {
    if (a.sendbuf == nullptr && sends && !pattern.out.empty() && nbr::internal::is_named_type(a.sendtype)) {
        bad("sendbuf is NULL but data is to be sent");
    }
    if (a.recvbuf == nullptr && receives && !pattern.in.empty() && nbr::internal::is_named_type(a.recvtype)) {
        bad("recvbuf is NULL but data is to be received");
    }
}

/// alltoallw's arrays of one direction: present where the rank has neighbors, counts not
/// negative, datatypes usable, at the slots of real neighbors. No buffer check: with byte
/// displacements, MPI_BOTTOM (NULL) and absolute addresses are common with any datatype.
template <class Count, class Bad>
void check_per_block(const char* side, std::size_t neighbors, const std::vector<std::uint32_t>& slots, bool arrays,
                     const Count& count_at, const MPI_Datatype* types, MPI_Comm comm, const Bad& bad) {
    if (neighbors == 0) return;
    if (!arrays) bad(std::string(side) + "counts, " + side + "displs or " + side + "types is NULL");
    for (std::size_t i = 0; i < neighbors; ++i) {
        const std::size_t at = slots.empty() ? i : slots[i];
        const std::string where = "[" + std::to_string(at) + "]";
        if (count_at(at) < 0) bad(std::string(side) + "counts" + where + " is negative");
        if (types[at] == MPI_DATATYPE_NULL) bad(std::string(side) + "types" + where + " is MPI_DATATYPE_NULL");
        if (!nbr::internal::is_usable_type(types[at], comm)) {
            bad(std::string(side) + "types" + where + " is not committed (MPI_Type_commit)");
        }
    }
}

/// Large-count calls: every block's bytes (count x type size) must be addressable, checked
/// before anything is sized by them. The arrays and types were checked already.
template <class Bad>
void check_large_blocks(const CallArgs& a, const PatternState& pattern, const Bad& bad) {
    const auto fits = [&](MPI_Count count, MPI_Datatype type, const std::string& what) {
        const auto size = static_cast<MPI_Count>(nbr::internal::shape_of(type).size);
        MPI_Count bytes = 0;
        if (__builtin_mul_overflow(count, size, &bytes) || bytes > PTRDIFF_MAX) {
            bad(what + " would hold more bytes than memory can address");
        }
    };
    const auto each = [&](const std::vector<int>& neighbors, const std::vector<std::uint32_t>& slots, bool send) {
        for (std::size_t i = 0; i < neighbors.size(); ++i) {
            const std::size_t at = slots.empty() ? i : slots[i];
            const MPI_Datatype type =
                a.per_block_types ? (send ? a.sendtypes[at] : a.recvtypes[at]) : (send ? a.sendtype : a.recvtype);
            fits(send ? a.send_count_at(at) : a.recv_count_at(at), type,
                 std::string(send ? "send" : "receive") + " block " + std::to_string(at));
        }
    };
    if (a.variable) each(pattern.in, pattern.slots.in, false);
    if (!a.variable) fits(a.recvcount, a.recvtype, "a receive block");
    if (a.collective == Collective::allgather || !a.variable) {
        fits(a.sendcount, a.sendtype, "the send block");
    } else {
        each(pattern.out, pattern.slots.out, true);
    }
}

void check_counts_of(const CallArgs& a, const PatternState& pattern);

/// Checks counts (and that the arrays exist where the rank has neighbors); throws NBR_ERR_ARG.
void check_counts(const CallArgs& a, const PatternState& pattern) {
    check_counts_of(a, pattern);
    if (!a.large) return;
    check_large_blocks(a, pattern, [&](const std::string& what) {
        throw NbrError(NBR_ERR_ARG, std::string(name_of(a)) + " on rank " + std::to_string(pattern.rank) + ": " + what);
    });
}

void check_counts_of(const CallArgs& a, const PatternState& pattern) {
    const auto bad = [&](const std::string& what) {
        throw NbrError(NBR_ERR_ARG, std::string(name_of(a)) + " on rank " + std::to_string(pattern.rank) + ": " + what);
    };
    if (a.per_block_types) {
        if (a.sendbuf == MPI_IN_PLACE || a.recvbuf == MPI_IN_PLACE) {
            bad("MPI_IN_PLACE is not allowed in neighborhood collectives");
        }
        check_per_block(
            "recv", pattern.in.size(), pattern.slots.in, a.has_recv_arrays(),
            [&](std::size_t at) { return a.recv_count_at(at); }, a.recvtypes, pattern.comm, bad);
        check_per_block(
            "send", pattern.out.size(), pattern.slots.out, a.has_send_arrays(),
            [&](std::size_t at) { return a.send_count_at(at); }, a.sendtypes, pattern.comm, bad);
        return;
    }
    if (a.sendtype == MPI_DATATYPE_NULL || a.recvtype == MPI_DATATYPE_NULL) bad("datatype is MPI_DATATYPE_NULL");
    if (!nbr::internal::is_usable_type(a.sendtype, pattern.comm)) bad("sendtype is not committed (MPI_Type_commit)");
    if (!nbr::internal::is_usable_type(a.recvtype, pattern.comm)) bad("recvtype is not committed (MPI_Type_commit)");
    if (a.sendbuf == MPI_IN_PLACE || a.recvbuf == MPI_IN_PLACE) {
        bad("MPI_IN_PLACE is not allowed in neighborhood collectives");
    }
    if (!a.variable) {
        if (a.sendcount < 0 || a.recvcount < 0) bad("negative count");
        check_buffers(a, pattern, a.sendcount > 0, a.recvcount > 0, bad);
        return;
    }
    const auto& slots = pattern.slots;
    const auto slot_in = [&](std::size_t i) { return slots.in.empty() ? i : std::size_t{slots.in[i]}; };
    const auto slot_out = [&](std::size_t j) { return slots.out.empty() ? j : std::size_t{slots.out[j]}; };
    const auto in = pattern.in.size();
    const auto out = pattern.out.size();
    if (in > 0 && !a.has_recv_arrays()) bad("recvcounts or displs is NULL");
    bool receives = false;
    for (std::size_t i = 0; i < in; ++i) {
        const MPI_Count count = a.recv_count_at(slot_in(i));
        if (count < 0) bad("recvcounts[" + std::to_string(slot_in(i)) + "] is negative");
        receives = receives || count > 0;
    }
    if (a.collective == Collective::allgather) {
        if (a.sendcount < 0) bad("negative sendcount");
        check_buffers(a, pattern, a.sendcount > 0, receives, bad);
        return;
    }
    if (out > 0 && !a.has_send_arrays()) bad("sendcounts or sdispls is NULL");
    bool sends = false;
    for (std::size_t j = 0; j < out; ++j) {
        const MPI_Count count = a.send_count_at(slot_out(j));
        if (count < 0) bad("sendcounts[" + std::to_string(slot_out(j)) + "] is negative");
        sends = sends || count > 0;
    }
    check_buffers(a, pattern, sends, receives, bad);
}

/// alltoallw: the datatypes' shapes of a checked call in `send` and `recv` (`retain`: derived
/// ones duplicated, for a request), and `a` pointed at them.
void hold_types(CallArgs& a, const PatternState& pattern, BlockTypes& send, BlockTypes& recv, bool retain) {
    if (!a.per_block_types) return;
    const std::size_t in = pattern.in.empty() ? 0 : pattern.slots.in_blocks;
    const std::size_t out = pattern.out.empty() ? 0 : pattern.slots.out_blocks;
    recv.assign(a.recvtypes, in, pattern.slots.in, retain);
    send.assign(a.sendtypes, out, pattern.slots.out, retain);
    a.send_shapes = &send;
    a.recv_shapes = &recv;
}

/// The send buffer of a call, its blocks numbered as the pattern's out-neighbors.
BlockBuffer send_buffer(const CallArgs& a, MPI_Datatype type, const PatternState& pattern) {
    if (a.collective == Collective::allgather) return describe_buffer(a.sendbuf, a.sendcount, type);
    BlockBuffer buffer;
    if (a.per_block_types) {
        buffer = a.large ? describe_buffer(a.sendbuf, a.sendcounts_c, a.sbyte_displs, *a.send_shapes)
                         : describe_buffer(a.sendbuf, a.sendcounts, a.sbyte_displs, *a.send_shapes);
    } else if (a.variable) {
        buffer = a.large ? describe_buffer(a.sendbuf, a.sendcounts_c, a.sdispls_c, type)
                         : describe_buffer(a.sendbuf, a.sendcounts, a.sdispls, type);
    } else {
        buffer = describe_buffer(a.sendbuf, a.sendcount, type);
    }
    if (!pattern.slots.out.empty()) buffer.slots = pattern.slots.out.data();
    return buffer;
}

/// The receive buffer of a call, its blocks numbered as the pattern's in-neighbors.
BlockBuffer recv_buffer(const CallArgs& a, MPI_Datatype type, const PatternState& pattern) {
    BlockBuffer buffer;
    if (a.per_block_types) {
        buffer = a.large ? describe_buffer(a.recvbuf, a.recvcounts_c, a.rbyte_displs, *a.recv_shapes)
                         : describe_buffer(a.recvbuf, a.recvcounts, a.rbyte_displs, *a.recv_shapes);
    } else if (a.variable) {
        buffer = a.large ? describe_buffer(a.recvbuf, a.recvcounts_c, a.rdispls_c, type)
                         : describe_buffer(a.recvbuf, a.recvcounts, a.rdispls, type);
    } else {
        buffer = describe_buffer(a.recvbuf, a.recvcount, type);
    }
    if (!pattern.slots.in.empty()) buffer.slots = pattern.slots.in.data();
    return buffer;
}

using nbr::internal::index_of;
using nbr::internal::Plan;
using nbr::internal::plan_use;
using nbr::internal::PlanUse;
using nbr::internal::Variant;

/// The variant a call runs: fixed-size calls by their block size (every rank passes the same,
/// so every rank picks alike; a rank without neighbors passes it too), v-variants the one the
/// compiler chose for them (ranks could not agree on a size without communicating).
std::uint32_t variant_of_call(const PatternState& pattern, const CallArgs& a, const BlockBuffer& send,
                              const BlockBuffer& recv) {
    if (a.variable) return pattern.variable_variant[index_of(a.collective)];
    return nbr::internal::band_of(pattern, a.collective, std::max(send.bytes(0), recv.bytes(0)));
}

using nbr::internal::CallMode;
using nbr::internal::Pick;

/// The shape key of a call: fixed-size calls (and persistent v-calls, by their mean bytes per
/// edge) by band and size class; blocking and nonblocking v-calls by collective and mode only.
nbr::internal::ShapeKey shape_key(const PatternState& pattern, Collective collective, bool variable, CallMode mode,
                                  std::uint64_t bytes) {
    nbr::internal::ShapeKey key;
    key.collective = index_of(collective);
    key.variable = variable;
    key.mode = mode;
    if (!variable || mode == CallMode::persistent) {
        key.band = nbr::internal::band_index_of(pattern, collective, bytes);
        key.size_class = nbr::internal::size_class_of(bytes);
    }
    return key;
}

/// Measured selection's pick for a call (patterns loaded with NBR_LOAD_MEASURE), else the
/// model's variant untimed (`model_variant()`, not computed when measured).
template <typename ModelVariant>
Pick pick_for(PatternState& pattern, Collective collective, bool variable, CallMode mode, std::uint64_t bytes,
              ModelVariant model_variant) {
    if (!pattern.tuner) {
        Pick pick;
        pick.variant = model_variant();
        return pick;
    }
    const int shape = pattern.tuner->shape_for(pattern, index_of(collective), variable, mode, bytes,
                                               [&] { return shape_key(pattern, collective, variable, mode, bytes); });
    return pattern.tuner->next(pattern, shape);
}

/// A fixed-size call's block size (v-calls: 0, their blocks differ; counts may be NULL).
std::uint64_t block_bytes(const CallArgs& a, const BlockBuffer& send, const BlockBuffer& recv) {
    if (a.variable) return 0;
    return std::max(send.bytes(0), recv.bytes(0));
}

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

[[gnu::always_inline]] inline int call_native(MPI_Comm c, const CallArgs& a) {
    if (a.large) return call_native_large(c, a);
    const auto send_count = static_cast<int>(a.sendcount);  // int unless large
    const auto recv_count = static_cast<int>(a.recvcount);
    if (a.collective == Collective::allgather && !a.variable) {
        return MPI_Neighbor_allgather(a.sendbuf, send_count, a.sendtype, a.recvbuf, recv_count, a.recvtype, c);
    }
    if (a.collective == Collective::alltoall && !a.variable) {
        return MPI_Neighbor_alltoall(a.sendbuf, send_count, a.sendtype, a.recvbuf, recv_count, a.recvtype, c);
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

/// Whether a v-variant call's arrays exist where the rank has neighbors and hold no negative count.
bool usable_counts(const CallArgs& a, const nbr::internal::HandOff& record) {
    const auto usable = [](const int* counts, const int* displs, int n) {
        if (n == 0) return true;
        return counts != nullptr && displs != nullptr && std::all_of(counts, counts + n, [](int c) { return c >= 0; });
    };
    if (!usable(a.recvcounts, a.rdispls, record.indegree)) return false;
    if (a.collective == Collective::allgather) return a.sendcount >= 0;
    return usable(a.sendcounts, a.sdispls, record.outdegree);
}

/// The communicator on which this blocking call goes straight to MPI's collective, from the
/// pattern's hand-off record (hand_off.hpp), or MPI_COMM_NULL. Only well-formed calls on the
/// common predefined types qualify, the same calls the full path would hand over; any other
/// call, and so every error, takes the full path and its checks and messages.
MPI_Comm direct_hand_off(nbr_pattern_t handle, const CallArgs& a) {
    if (a.per_block_types || a.large) return MPI_COMM_NULL;  // checked on the full path
    const nbr::internal::HandOff* record = nbr::internal::hand_off_of(reinterpret_cast<std::uintptr_t>(handle));
    if (record == nullptr || !nbr::internal::progress::none_registered()) return MPI_COMM_NULL;
    const int send_size = nbr::internal::predefined_size(a.sendtype);
    const int recv_size = nbr::internal::predefined_size(a.recvtype);
    if (send_size == 0 || recv_size == 0 || !usable_buffer(a.sendbuf) || !usable_buffer(a.recvbuf)) {
        return MPI_COMM_NULL;
    }
    const int c = nbr::internal::index_of(a.collective);
    if (a.variable) {
        if (!record->variable_native[c] || !usable_counts(a, *record)) return MPI_COMM_NULL;
        if (record->counted) nbr::internal::count_hand_off(record, c, nbr::internal::HandOffCounts::kVariableClass);
        return record->comm;
    }
    if (a.sendcount < 0 || a.recvcount < 0) return MPI_COMM_NULL;
    const auto bytes = static_cast<std::uint64_t>(a.sendcount) * static_cast<std::uint64_t>(send_size);
    if (bytes != static_cast<std::uint64_t>(a.recvcount) * static_cast<std::uint64_t>(recv_size)) return MPI_COMM_NULL;
    if (bytes >= record->native_from[c]) return record->comm;
    const auto size_class = static_cast<std::size_t>(std::bit_width(bytes));  // tuner.hpp's size_class_of
    if (size_class >= 64 || ((record->native_classes[c] >> size_class) & 1U) == 0) return MPI_COMM_NULL;
    nbr::internal::count_hand_off(record, c, size_class);
    return record->comm;
}

/// Runs a blocking call on one variant. All-direct plans on a topology communicator: the native
/// collective is the same schedule (see settle_collectively in nbr.cpp). The choice depends only
/// on the pattern and the block size (or measured selection's agreed pick), so every rank makes
/// the same one; since the native collective progresses none of nbr's requests, those this
/// process has started are completed first (a peer may wait for data this rank forwards).
void run_variant(PatternState& pattern, Variant& variant, const CallArgs& a, const BlockBuffer& send,
                 const BlockBuffer& recv) {
    if (a.per_block_types ? variant.native_alltoallw : variant.native[index_of(a.collective)]) {
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
        const BlockBuffer send = send_buffer(a, a.sendtype, *pattern);
        const BlockBuffer recv = recv_buffer(a, a.recvtype, *pattern);
        if (!a.variable) nbr::internal::check_block_sizes(send, recv);
        const Pick pick = pick_for(*pattern, a.collective, a.variable, CallMode::blocking, block_bytes(a, send, recv),
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

/// A blocking call: straight to MPI's collective where the pattern's hand-off record allows it,
/// else the full path. Kept small, with what it reads inline, and first in the hot section, at
/// a page boundary: the section (about 2 KiB, this and the blocking entry points) is one page.
NBR_HOT [[gnu::aligned(4096)]] int run_blocking(nbr_pattern_t handle, const CallArgs& a) {
    const MPI_Comm direct = direct_hand_off(handle, a);
    if (direct == MPI_COMM_NULL) return run_blocking_fully(handle, a);
    const int code = call_native(direct, a);
    return code == MPI_SUCCESS ? NBR_SUCCESS : native_failure(code, a);
}

// ---- requests -------------------------------------------------------------------------------

/// Keeps a datatype alive for a pending operation: derived types are duplicated (the caller
/// may free theirs), predefined ones used as they are.
MPI_Datatype retain_type(MPI_Datatype type, bool* owned) {
    *owned = !nbr::internal::is_named_type(type);
    if (!*owned) return type;
    MPI_Datatype copy = MPI_DATATYPE_NULL;
    nbr::internal::check_mpi(MPI_Type_dup(type, &copy), "MPI_Type_dup");
    return copy;
}

/// keep_arrays for the large-count forms.
void keep_large_arrays(RequestState& request, CallArgs& a, const PatternState& pattern, std::size_t in,
                       std::size_t out) {
    request.recv_counts_c.assign(a.recvcounts_c, a.recvcounts_c + in);
    a.recvcounts_c = request.recv_counts_c.data();
    const bool sends = a.collective == Collective::alltoall;
    if (sends) {
        request.send_counts_c.assign(a.sendcounts_c, a.sendcounts_c + out);
        a.sendcounts_c = request.send_counts_c.data();
    }
    if (!a.per_block_types) {
        request.recv_displs_c.assign(a.rdispls_c, a.rdispls_c + in);
        a.rdispls_c = request.recv_displs_c.data();
        if (sends) {
            request.send_displs_c.assign(a.sdispls_c, a.sdispls_c + out);
            a.sdispls_c = request.send_displs_c.data();
        }
        return;
    }
    request.recv_byte_displs.assign(a.rbyte_displs, a.rbyte_displs + in);
    request.send_byte_displs.assign(a.sbyte_displs, a.sbyte_displs + out);
    a.rbyte_displs = request.recv_byte_displs.data();
    a.sbyte_displs = request.send_byte_displs.data();
    hold_types(a, pattern, request.send_types, request.recv_types, true);
    a.sendtypes = request.send_types.types.data();
    a.recvtypes = request.recv_types.types.data();
}

/// Copies the v-variants' arrays into the request and points `a` at the copies.
void keep_arrays(RequestState& request, CallArgs& a, const PatternState& pattern) {
    if (!a.variable) return;
    // The communicator's arrays, every slot; none where the pattern has no neighbor that way
    // (arrays may then be NULL: check_counts requires them only for real neighbors).
    const auto in = pattern.in.empty() ? 0 : pattern.slots.in_blocks;
    const auto out = pattern.out.empty() ? 0 : pattern.slots.out_blocks;
    if (a.large) {
        keep_large_arrays(request, a, pattern, in, out);
        return;
    }
    if (a.per_block_types) {
        request.recv_counts.assign(a.recvcounts, a.recvcounts + in);
        request.recv_byte_displs.assign(a.rbyte_displs, a.rbyte_displs + in);
        request.send_counts.assign(a.sendcounts, a.sendcounts + out);
        request.send_byte_displs.assign(a.sbyte_displs, a.sbyte_displs + out);
        a.recvcounts = request.recv_counts.data();
        a.rbyte_displs = request.recv_byte_displs.data();
        a.sendcounts = request.send_counts.data();
        a.sbyte_displs = request.send_byte_displs.data();
        hold_types(a, pattern, request.send_types, request.recv_types, true);
        a.sendtypes = request.send_types.types.data();
        a.recvtypes = request.recv_types.types.data();
        return;
    }
    request.recv_counts.assign(a.recvcounts, a.recvcounts + in);
    request.recv_displs.assign(a.rdispls, a.rdispls + in);
    a.recvcounts = request.recv_counts.data();
    a.rdispls = request.recv_displs.data();
    if (a.collective == Collective::alltoall) {
        request.send_counts.assign(a.sendcounts, a.sendcounts + out);
        request.send_displs.assign(a.sdispls, a.sdispls + out);
        a.sendcounts = request.send_counts.data();
        a.sdispls = request.send_displs.data();
    }
}

/// Frees what a request holds except its execution and its place on the pattern.
void release_resources(RequestState& request) {
    if (request.own_send_type) MPI_Type_free(&request.send_type);
    if (request.own_recv_type) MPI_Type_free(&request.recv_type);
    request.send_types.release();
    request.recv_types.release();
    request.own_send_type = request.own_recv_type = false;
    if (request.kind == RequestState::Kind::persistent) nbr::internal::release_comm(&request.comm);
}

/// Releases a request: a nonblocking request's execution goes back to the pattern for reuse,
/// and the request object stays in its handle slot for the next request.
void destroy(RequestState* request) {
    PatternState& pattern = *request->pattern;
    release_resources(*request);
    if (request->kind == RequestState::Kind::nonblocking) {
        auto& flight = pattern.in_flight;
        flight.erase(std::remove(flight.begin(), flight.end(), request), flight.end());
        if (request->execution && !request->execution->active()) {
            nbr::internal::idle_of(pattern.variants[request->variant], request->collective, *request->execution)
                .push_back(std::move(request->execution));
        }
    }
    request->execution.reset();
    request->candidate_executions.clear();
    request->pick = Pick{};
    request->pattern = nullptr;
    --pattern.requests;
    nbr::internal::request_table().release(request->handle, true);
}

using RequestPtr = std::unique_ptr<RequestState, void (*)(RequestState*)>;

/// A new request with its datatypes retained and arrays copied; `a` is updated to the copies.
/// The object comes from the handle table (a released one when there is one: no allocation).
RequestPtr make_request(PatternState& pattern, CallArgs& a, RequestState::Kind kind) {
    auto [object, handle] = nbr::internal::request_table().acquire();
    RequestPtr request(object, destroy);
    request->handle = handle;
    request->kind = kind;
    request->pattern = &pattern;
    request->collective = a.collective;
    request->comm = MPI_COMM_NULL;
    request->call = 0;
    request->variant = 0;
    ++pattern.requests;
    request->send_type = retain_type(a.sendtype, &request->own_send_type);
    request->recv_type = retain_type(a.recvtype, &request->own_recv_type);
    a.sendtype = request->send_type;
    a.recvtype = request->recv_type;
    keep_arrays(*request, a, pattern);
    return request;
}

// ---- persistent -----------------------------------------------------------------------------

/// Persistent v-variants learn every unit's byte size once: the fixed-size collective of the
/// same plan replays the origins' block sizes (one uint64 per block) through the pattern.
std::vector<std::uint64_t> exchange_sizes(const PatternState& pattern, const RequestState& request, const CallArgs& a,
                                          const BlockBuffer& send, std::uint32_t variant) {
    const auto& plan = pattern.variants[variant].plans[index_of(a.collective)];
    const MPI_Comm comm = request.comm;
    const std::size_t blocks = a.collective == Collective::allgather ? 1 : pattern.out.size();
    std::vector<std::uint64_t> own(blocks + 1), got(pattern.in.size() + 1);
    for (std::uint32_t b = 0; b < blocks; ++b) own[b] = send.bytes(b);
    Execution sizes(plan, comm);
    sizes.bind(describe_buffer(own.data(), 1, MPI_UINT64_T), describe_buffer(got.data(), 1, MPI_UINT64_T));
    sizes.start();
    nbr::internal::progress::run_blocking(sizes);
    std::vector<std::uint64_t> table(plan.homes.size());
    for (std::uint32_t u = 0; u < table.size(); ++u)
        std::memcpy(&table[u], sizes.unit_address(u), sizeof(std::uint64_t));
    return table;
}

/// Smallest block for which persistent fixed-size calls of an all-direct plan go to the native
/// persistent collective. Below it nbr's engine is 1.2-1.4x faster than Open MPI 4.1's
/// libnbc, from it libnbc is a few percent ahead (bench/overhead/README.md, measured side by side).
constexpr std::size_t kNativePersistentMinBytes = 512;

/// Whether a persistent request goes to the native persistent collective: when blocking calls
/// of its collective do (all-direct everywhere, on the pattern's topology communicator; see
/// nbr.cpp), for fixed-size calls whose blocks are at least kNativePersistentMinBytes. Every
/// rank decides alike: matching calls have blocks of one size on all ranks.
bool native_persistent(const Variant& variant, const CallArgs& a, const BlockBuffer& recv) {
#if defined(NBR_NATIVE_INIT)
    return !a.variable && !a.large && variant.native[index_of(a.collective)] &&
           recv.bytes(0) >= kNativePersistentMinBytes;
#else
    (void)variant, (void)a, (void)recv;
    return false;
#endif
}

MPI_Request native_persistent_init(const CallArgs& a, MPI_Comm comm) {
    MPI_Request request = MPI_REQUEST_NULL;
#if defined(NBR_NATIVE_INIT)
    const int code =
        a.collective == Collective::allgather
            ? NBR_NATIVE_INIT(allgather)(a.sendbuf, static_cast<int>(a.sendcount), a.sendtype, a.recvbuf,
                                         static_cast<int>(a.recvcount), a.recvtype, comm, MPI_INFO_NULL, &request)
            : NBR_NATIVE_INIT(alltoall)(a.sendbuf, static_cast<int>(a.sendcount), a.sendtype, a.recvbuf,
                                        static_cast<int>(a.recvcount), a.recvtype, comm, MPI_INFO_NULL, &request);
    nbr::internal::check_mpi(code, "native persistent collective init");
#else
    (void)a, (void)comm;
#endif
    return request;
}

/// Persistent v-variants choose their variant once, at init, by the fixed-size bands, from the
/// mean bytes per edge over all ranks (one MPI_Allreduce on the request's communicator), which
/// this returns (0 for a single-variant pattern that is not measured: nothing to choose).
std::uint64_t persistent_mean_bytes(const PatternState& pattern, const RequestState& request, const CallArgs& a,
                                    const BlockBuffer& send) {
    if (pattern.variants.size() == 1 && !pattern.tuner) return 0;
    const auto out = static_cast<std::uint32_t>(pattern.out.size());
    double totals[2] = {0, static_cast<double>(out)};  // bytes, edges
    for (std::uint32_t j = 0; j < out; ++j) {
        totals[0] += static_cast<double>(send.bytes(a.collective == Collective::allgather ? 0 : j));
    }
    nbr::internal::check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_DOUBLE, MPI_SUM, request.comm),
                             "MPI_Allreduce");
    return totals[1] > 0 ? static_cast<std::uint64_t>(totals[0] / totals[1]) : 0;
}

/// Binds one variant's execution of a persistent request (collective for v-variants: their
/// block sizes travel once); failures are agreed by the caller.
std::unique_ptr<Execution> persistent_execution(PatternState& pattern, RequestState& request, const CallArgs& a,
                                                const BlockBuffer& send, const BlockBuffer& recv, std::uint32_t v) {
    Variant& variant = pattern.variants[v];
    const Plan& plan = plan_use(variant, a.collective, a.variable, a.variable ? 0 : recv.bytes(0)).plan;
    auto execution = std::make_unique<Execution>(plan, request.comm, pattern.step_synchronized);
    if (!a.variable) {
        execution->bind(send, recv);
        if (native_persistent(variant, a, recv)) execution->bind_native(native_persistent_init(a, request.comm));
    } else {
        execution->bind_sized(send, recv, exchange_sizes(pattern, request, a, send, v));
    }
    return execution;
}

/// The executions of a persistent request: the variant's; for a measured shape still in its
/// trials one per candidate (each start then runs the tuner's pick).
void bind_persistent(PatternState& pattern, RequestState& request, const CallArgs& a, const BlockBuffer& send,
                     const BlockBuffer& recv, std::uint64_t bytes) {
    const std::uint32_t model =
        a.variable ? nbr::internal::band_of(pattern, a.collective, bytes) : variant_of_call(pattern, a, send, recv);
    request.variant = model;
    request.pick = Pick{};
    if (pattern.tuner) {
        const auto key = shape_key(pattern, a.collective, a.variable, CallMode::persistent, bytes);
        request.pick.shape = pattern.tuner->shape_of(pattern, key);
        const auto& shape = pattern.tuner->shapes[static_cast<std::size_t>(request.pick.shape)];
        if (shape.state == nbr::internal::Shape::State::trial) {
            for (const auto& candidate : shape.candidates) {
                request.candidate_executions.push_back(
                    persistent_execution(pattern, request, a, send, recv, candidate.variant));
            }
            request.current_candidate = 0;
            request.execution = std::move(request.candidate_executions[0]);
            request.variant = shape.candidates[0].variant;
            return;
        }
        request.variant = shape.candidates[shape.chosen].variant;
    }
    request.execution = persistent_execution(pattern, request, a, send, recv, request.variant);
}

/// A persistent start of a measured shape: the tuner's pick, its execution swapped in.
void pick_persistent(RequestState& request) {
    PatternState& pattern = *request.pattern;
    const int shape = request.pick.shape;
    request.pick = pattern.tuner->next(pattern, shape);
    if (!request.candidate_executions.empty() && request.pick.candidate != request.current_candidate) {
        std::swap(request.candidate_executions[request.current_candidate], request.execution);
        std::swap(request.candidate_executions[request.pick.candidate], request.execution);
        request.current_candidate = request.pick.candidate;
    }
    request.variant = request.pick.variant;
    request.execution->set_timed(request.pick.timed);
}

int init_persistent(nbr_pattern_t handle, CallArgs a, unsigned long flags, nbr_request_t* out) {
    return guarded([&] {
        const std::string what = std::string("nbr_neighbor_") + name_of(a) + "_init";
        if (out == nullptr) return fail(NBR_ERR_ARG, what + ": request is NULL");
        *out = NBR_REQUEST_NULL;
        PatternState* pattern = resolve(handle);
        if (pattern == nullptr) return fail(NBR_ERR_ARG, what + ": invalid pattern handle");
        if (flags != 0) return fail(NBR_ERR_ARG, what + ": flags must be 0");
        check_counts(a, *pattern);
        auto request = make_request(*pattern, a, RequestState::Kind::persistent);
        // Collective from here: every rank dups, so no rank may bail out before this point on its own.
        nbr::internal::private_comm(pattern->comm, &request->comm);
        const BlockBuffer send = send_buffer(a, request->send_type, *pattern);
        const BlockBuffer recv = recv_buffer(a, request->recv_type, *pattern);
        const std::uint64_t bytes =
            a.variable ? persistent_mean_bytes(*pattern, *request, a, send) : block_bytes(a, send, recv);
        if (!a.variable) {
            bind_persistent(*pattern, *request, a, send, recv, bytes);
            *out = nbr::internal::handle_of(*request.release());
            return NBR_SUCCESS;
        }
        int code = guarded([&] {
            bind_persistent(*pattern, *request, a, send, recv, bytes);
            return NBR_SUCCESS;
        });
        code = nbr::internal::agree(request->comm, code);
        if (code != NBR_SUCCESS) return code;
        *out = nbr::internal::handle_of(*request.release());
        return NBR_SUCCESS;
    });
}

// ---- nonblocking ----------------------------------------------------------------------------

/// Before call `call` reuses a tag window, the call that last used it must be complete here.
void reserve_window(PatternState& pattern, std::uint64_t call) {
    if (pattern.windows < 2) {
        throw NbrError(NBR_ERR_PATTERN, "the pattern needs " + std::to_string(pattern.tag_window) +
                                            " tags per call: MPI_TAG_UB leaves none for nonblocking calls");
    }
    const auto reuse = static_cast<std::uint64_t>(pattern.windows - 1);
    auto& flight = pattern.in_flight;  // in call order
    while (!flight.empty()) {
        RequestState* oldest = flight.front();
        if (!oldest->execution->active()) {
            flight.erase(flight.begin());
        } else if (call - oldest->call >= reuse) {
            Execution* execution = oldest->execution.get();
            nbr::internal::progress::wait_all({&execution, 1});
        } else {
            break;
        }
    }
}

/// Names a nonblocking call in messages (built only when there is something to say).
std::string nonblocking_name(const CallArgs& a) {
    return std::string("nbr_ineighbor_") + name_of(a);
}

int start_nonblocking(nbr_pattern_t handle, CallArgs a, nbr_request_t* out) {
    return guarded([&] {
        if (out == nullptr) return fail(NBR_ERR_ARG, nonblocking_name(a) + ": request is NULL");
        *out = NBR_REQUEST_NULL;
        PatternState* pattern = resolve(handle);
        if (pattern == nullptr) return fail(NBR_ERR_ARG, nonblocking_name(a) + ": invalid pattern handle");
        check_counts(a, *pattern);
        const std::uint64_t call = pattern->calls++;
        reserve_window(*pattern, call);
        auto request = make_request(*pattern, a, RequestState::Kind::nonblocking);
        request->call = call;
        const BlockBuffer send = send_buffer(a, request->send_type, *pattern);
        const BlockBuffer recv = recv_buffer(a, request->recv_type, *pattern);
        if (!a.variable) nbr::internal::check_block_sizes(send, recv);
        request->pick = pick_for(*pattern, a.collective, a.variable, CallMode::nonblocking, block_bytes(a, send, recv),
                                 [&] { return variant_of_call(*pattern, a, send, recv); });
        request->variant = request->pick.variant;
        const PlanUse use =
            plan_use(pattern->variants[request->variant], a.collective, a.variable, a.variable ? 0 : recv.bytes(0));
        if (!use.idle.empty()) {
            request->execution = std::move(use.idle.back());
            use.idle.pop_back();
        } else {
            request->execution = std::make_unique<Execution>(use.plan, pattern->comm, pattern->step_synchronized);
        }
        Execution& execution = *request->execution;
        if (a.variable) {
            execution.bind_in_band(send, recv);
        } else {
            execution.bind(send, recv);
        }
        const auto window = 1 + static_cast<std::int64_t>(call % static_cast<std::uint64_t>(pattern->windows - 1));
        execution.set_tag_offset(static_cast<int>(window * pattern->tag_window));
        execution.set_timed(request->pick.timed);
        execution.start();
        nbr::internal::progress::add(execution);
        pattern->in_flight.push_back(request.get());
        *out = nbr::internal::handle_of(*request.release());
        return NBR_SUCCESS;
    });
}

/// After completion: nonblocking requests are released (MPI semantics), persistent ones stay.
void finish(RequestState* request, nbr_request_t* handle) {
    if (request->kind == RequestState::Kind::nonblocking) {
        destroy(request);
        *handle = NBR_REQUEST_NULL;
    }
}

CallArgs fixed(Collective c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype) {
    CallArgs a;
    a.collective = c;
    a.sendbuf = sendbuf;
    a.sendcount = sendcount;
    a.sendtype = sendtype;
    a.recvbuf = recvbuf;
    a.recvcount = recvcount;
    a.recvtype = recvtype;
    return a;
}

CallArgs allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype) {
    CallArgs a = fixed(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype);
    a.variable = true;
    a.recvcounts = recvcounts;
    a.rdispls = displs;
    return a;
}

CallArgs alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) {
    CallArgs a = fixed(Collective::alltoall, sendbuf, 0, sendtype, recvbuf, 0, recvtype);
    a.variable = true;
    a.sendcounts = sendcounts;
    a.sdispls = sdispls;
    a.recvcounts = recvcounts;
    a.rdispls = rdispls;
    return a;
}

CallArgs alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                   const MPI_Datatype recvtypes[]) {
    CallArgs a = fixed(Collective::alltoall, sendbuf, 0, MPI_BYTE, recvbuf, 0, MPI_BYTE);
    a.variable = true;
    a.per_block_types = true;
    a.sendcounts = sendcounts;
    a.sbyte_displs = sdispls;
    a.sendtypes = sendtypes;
    a.recvcounts = recvcounts;
    a.rbyte_displs = rdispls;
    a.recvtypes = recvtypes;
    return a;
}

#if NBR_HAVE_LARGE_COUNT
CallArgs fixed_c(Collective c, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype) {
    CallArgs a = fixed(c, sendbuf, 0, sendtype, recvbuf, 0, recvtype);
    a.large = true;
    a.sendcount = sendcount;
    a.recvcount = recvcount;
    return a;
}

CallArgs allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype) {
    CallArgs a = fixed_c(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype);
    a.variable = true;
    a.recvcounts_c = recvcounts;
    a.rdispls_c = displs;
    return a;
}

CallArgs alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype) {
    CallArgs a = fixed_c(Collective::alltoall, sendbuf, 0, sendtype, recvbuf, 0, recvtype);
    a.variable = true;
    a.sendcounts_c = sendcounts;
    a.sdispls_c = sdispls;
    a.recvcounts_c = recvcounts;
    a.rdispls_c = rdispls;
    return a;
}

CallArgs alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) {
    CallArgs a = alltoallw(sendbuf, nullptr, sdispls, sendtypes, recvbuf, nullptr, rdispls, recvtypes);
    a.large = true;
    a.sendcounts_c = sendcounts;
    a.recvcounts_c = recvcounts;
    return a;
}
#endif

/// The requests behind `handles` (nullptr for NBR_REQUEST_NULL), in `states`.
/// @throws NbrError(NBR_ERR_ARG) naming the index of a handle that is not live.
void resolve_all(int count, const nbr_request_t handles[], RequestState* states[], const char* what) {
    for (int i = 0; i < count; ++i) {
        states[i] = handles[i] == NBR_REQUEST_NULL ? nullptr : resolve(handles[i]);
        if (handles[i] != NBR_REQUEST_NULL && states[i] == nullptr) {
            throw NbrError(NBR_ERR_ARG, std::string(what) + ": requests[" + std::to_string(i) +
                                            "] is not a live request (released already, or a stale copy?)");
        }
    }
}

/// Gives measured selection the time of a completed nonblocking call or persistent start (once).
void record_completion(RequestState& request) {
    Pick& pick = request.pick;
    if (!pick.timed || request.pattern == nullptr || !request.pattern->tuner) return;
    if (request.execution->error_code() == 0) {
        request.pattern->tuner->record(*request.pattern, pick, request.execution->elapsed_us());
    }
    pick.timed = false;
}

/// Completes every request of `states` (nullptr entries and inactive persistent ones are
/// skipped; released ones get NBR_REQUEST_NULL in `handles`); the first failure is returned,
/// naming its index.
int complete_all(int count, RequestState* const states[], nbr_request_t handles[], const char* what) {
    int first_error = NBR_SUCCESS;
    std::string message;
    for (int i = 0; i < count; ++i) {
        if (states[i] == nullptr) continue;
        Execution& execution = *states[i]->execution;
        record_completion(*states[i]);
        if (execution.error_code() != 0 && first_error == NBR_SUCCESS) {
            first_error = execution.error_code();
            message = std::string(what) + ": request " + std::to_string(i) + ": " + execution.error_message();
        }
        execution.clear_error();
        finish(states[i], &handles[i]);
    }
    if (first_error != NBR_SUCCESS) return fail(first_error, message);
    return NBR_SUCCESS;
}

/// Whether every request of `states` is complete (none active).
bool all_complete(int count, RequestState* const states[]) {
    return std::none_of(states, states + count, [](const RequestState* r) { return r && r->execution->active(); });
}

/// The calling thread's scratch space for one waitall or testall: reused, so a repeated call
/// allocates nothing.
struct Scratch {
    std::vector<RequestState*> states;
    std::vector<Execution*> active;

    static Scratch& of_thread(int count) {
        thread_local Scratch scratch;
        scratch.states.assign(static_cast<std::size_t>(count), nullptr);
        scratch.active.clear();
        return scratch;
    }
    /// The executions still active among the states.
    std::span<Execution* const> active_executions() {
        for (RequestState* r : states) {
            if (r != nullptr && r->execution->active()) active.push_back(r->execution.get());
        }
        return active;
    }
};

}  // namespace

extern "C" {

NBR_HOT int nbr_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   int recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking(pattern,
                        fixed(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

NBR_HOT int nbr_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, nbr_pattern_t pattern) {
    return run_blocking(pattern,
                        fixed(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
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
    return run_blocking_fully(
        pattern, alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes));
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

int nbr_start(nbr_request_t* handle) {
    return guarded([&] {
        RequestState* request = handle == nullptr ? nullptr : resolve(*handle);
        if (request == nullptr) return fail(NBR_ERR_ARG, "nbr_start: request is NULL or not live");
        if (request->kind != RequestState::Kind::persistent) {
            return fail(NBR_ERR_STATE, "nbr_start: not a persistent request");
        }
        if (request->execution->active()) return fail(NBR_ERR_STATE, "nbr_start: request is already active");
        if (request->pick.shape >= 0) pick_persistent(*request);
        request->execution->start();
        nbr::internal::progress::add(*request->execution);
        return NBR_SUCCESS;
    });
}

int nbr_wait(nbr_request_t* handle) {
    return guarded([&] {
        if (handle == nullptr) return fail(NBR_ERR_ARG, "nbr_wait: request pointer is NULL");
        if (*handle == NBR_REQUEST_NULL) return NBR_SUCCESS;
        RequestState* request = resolve(*handle);
        if (request == nullptr) {
            return fail(NBR_ERR_ARG, "nbr_wait: request is not live (released already, or a stale copy?)");
        }
        Execution* execution = request->execution.get();
        nbr::internal::progress::wait_all({&execution, 1});
        return complete_all(1, &request, handle, "nbr_wait");
    });
}

int nbr_test(nbr_request_t* handle, int* flag) {
    return guarded([&] {
        if (handle == nullptr || flag == nullptr) return fail(NBR_ERR_ARG, "nbr_test: request or flag pointer is NULL");
        *flag = 0;
        if (*handle == NBR_REQUEST_NULL) {
            *flag = 1;
            return NBR_SUCCESS;
        }
        RequestState* request = resolve(*handle);
        if (request == nullptr) {
            return fail(NBR_ERR_ARG, "nbr_test: request is not live (released already, or a stale copy?)");
        }
        nbr::internal::progress::poll();
        *flag = request->execution->active() ? 0 : 1;
        return *flag ? complete_all(1, &request, handle, "nbr_test") : NBR_SUCCESS;
    });
}

int nbr_waitall(int count, nbr_request_t requests[]) {
    return guarded([&] {
        if (count < 0 || (count > 0 && requests == nullptr)) return fail(NBR_ERR_ARG, "nbr_waitall: invalid argument");
        Scratch& scratch = Scratch::of_thread(count);
        resolve_all(count, requests, scratch.states.data(), "nbr_waitall");
        nbr::internal::progress::wait_all(scratch.active_executions());
        return complete_all(count, scratch.states.data(), requests, "nbr_waitall");
    });
}

int nbr_testall(int count, nbr_request_t requests[], int* flag) {
    return guarded([&] {
        if (count < 0 || (count > 0 && requests == nullptr) || flag == nullptr) {
            return fail(NBR_ERR_ARG, "nbr_testall: invalid argument");
        }
        Scratch& scratch = Scratch::of_thread(count);
        resolve_all(count, requests, scratch.states.data(), "nbr_testall");
        nbr::internal::progress::poll();
        *flag = all_complete(count, scratch.states.data()) ? 1 : 0;
        return *flag ? complete_all(count, scratch.states.data(), requests, "nbr_testall") : NBR_SUCCESS;
    });
}

int nbr_request_free(nbr_request_t* handle) {
    return guarded([&] {
        RequestState* request = handle == nullptr ? nullptr : resolve(*handle);
        if (request == nullptr) return fail(NBR_ERR_ARG, "nbr_request_free: request is NULL or not live");
        if (request->execution->active()) {
            return fail(NBR_ERR_STATE, "nbr_request_free: request is still active (complete it first)");
        }
        destroy(request);
        *handle = NBR_REQUEST_NULL;
        return NBR_SUCCESS;
    });
}

}  // extern "C"
