#pragma once
// One neighborhood call's arguments as the application passed them, their checks, the buffers
// they describe and the variant the call runs: what the blocking calls (collectives.cpp) and
// the nonblocking and persistent requests (requests.cpp) share.
#include <cstdint>

#include <mpi.h>

#include "handles.hpp"

namespace nbr::internal {

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

/// The call's name in messages: allgather, alltoallv_c, ...
[[nodiscard]] const char* name_of(const CallArgs& a);

/// Checks counts, datatypes, buffers (and that the arrays exist where the rank has neighbors;
/// large-count calls: that every block's bytes are addressable). @throws NbrError(NBR_ERR_ARG)
/// naming the call and the rank.
void check_counts(const CallArgs& a, const PatternState& pattern);

/// alltoallw: the datatypes' shapes of a checked call in `send` and `recv` (`retain`: derived
/// ones duplicated, for a request), and `a` pointed at them.
void hold_types(CallArgs& a, const PatternState& pattern, BlockTypes& send, BlockTypes& recv, bool retain);

/// The send buffer of a call, its blocks numbered as the pattern's out-neighbors.
[[nodiscard]] BlockBuffer send_buffer(const CallArgs& a, MPI_Datatype type, const PatternState& pattern);
/// The receive buffer of a call, its blocks numbered as the pattern's in-neighbors.
[[nodiscard]] BlockBuffer recv_buffer(const CallArgs& a, MPI_Datatype type, const PatternState& pattern);

/// The variant a call runs: fixed-size calls by their block size (every rank with neighbors
/// passes the same, so they pick alike; a rank without neighbors may pick another band, whose
/// plan holds no message for it: settle_collectively), v-variants the one the compiler chose for
/// them (ranks could not agree on a size without communicating).
[[nodiscard]] std::uint32_t variant_of_call(const PatternState& pattern, const CallArgs& a, const BlockBuffer& send,
                                            const BlockBuffer& recv);

/// The shape key of a call: fixed-size calls (and persistent v-calls, by their mean bytes per
/// edge) by band and size class; blocking and nonblocking v-calls by collective and mode only.
[[nodiscard]] ShapeKey shape_key(const PatternState& pattern, Collective collective, bool variable, CallMode mode,
                                 std::uint64_t bytes);

/// Whether a call's shape goes through the pattern's tuner: where one is kept, except for a
/// rank without neighbors' fixed-size calls under measurement, whose shape (by block size) it
/// cannot tell; its plans hold no message and it takes no part in those shapes' agreements
/// (Tuner::fixed_comm). Statistics alone (model_only) agree on nothing: it counts them by the
/// sizes it passes.
inline bool measures(const PatternState& pattern, bool variable) {
    return pattern.tuner && (variable || !pattern.isolated || pattern.tuner->model_only);
}

/// Measured selection's pick for a call (patterns loaded with NBR_LOAD_MEASURE), else the
/// model's variant untimed (`model_variant()`, not computed when measured).
template <typename ModelVariant>
Pick pick_for(PatternState& pattern, Collective collective, bool variable, CallMode mode, std::uint64_t bytes,
              ModelVariant model_variant) {
    if (!measures(pattern, variable)) {
        Pick pick;
        pick.variant = model_variant();
        return pick;
    }
    const int shape = pattern.tuner->shape_for(pattern, index_of(collective), variable, mode, bytes,
                                               [&] { return shape_key(pattern, collective, variable, mode, bytes); });
    return pattern.tuner->next(pattern, shape);
}

/// A fixed-size call's send and receive blocks made one size (match_block_sizes with the
/// pattern's neighbors), and the free side's count and type in `a` with them, so that MPI's own
/// collective, where a call goes to it, sees them too (Open MPI 4.1's MPI_Neighbor_allgather
/// returns at once on a receive count of 0, sending nothing); v-calls: nothing to do.
/// @throws NbrError(NBR_ERR_DATATYPE).
void match_fixed_blocks(CallArgs& a, const PatternState& pattern, BlockBuffer& send, BlockBuffer& recv);

/// A fixed-size call's block size, once match_fixed_blocks has made its send and receive blocks
/// one size (v-calls: 0, their blocks differ; counts may be NULL).
[[nodiscard]] std::uint64_t block_bytes(const CallArgs& a, const BlockBuffer& recv);

/// The arguments of each collective's call, as nbr.h takes them.
[[nodiscard]] CallArgs fixed(Collective c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype);
[[nodiscard]] CallArgs allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype);
[[nodiscard]] CallArgs alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype);
[[nodiscard]] CallArgs alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]);
#if NBR_HAVE_LARGE_COUNT
[[nodiscard]] CallArgs fixed_c(Collective c, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype);
[[nodiscard]] CallArgs allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype);
[[nodiscard]] CallArgs alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], MPI_Datatype recvtype);
[[nodiscard]] CallArgs alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]);
#endif

}  // namespace nbr::internal
