// One call's arguments: their checks, the buffers they describe, the variant the call runs
// (call_args.hpp).
#include "call_args.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nbr::internal {

namespace {

/// A NULL buffer that would carry data is an error, unless its datatype is derived: derived
/// types may address absolutely from MPI_BOTTOM (NULL in MPICH and Open MPI).
template <class Bad>
void check_buffers(const CallArgs& a, const PatternState& pattern, bool sends, bool receives, const Bad& bad) {
    if (a.sendbuf == nullptr && sends && !pattern.out.empty() && is_named_type(a.sendtype)) {
        bad("sendbuf is NULL but data is to be sent");
    }
    if (a.recvbuf == nullptr && receives && !pattern.in.empty() && is_named_type(a.recvtype)) {
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
    MPI_Datatype usable = MPI_DATATYPE_NULL;  // the last type found usable (most calls repeat one)
    for (std::size_t i = 0; i < neighbors; ++i) {
        const std::size_t at = slots.empty() ? i : slots[i];
        // The message is built only for a bad argument: these checks run at every call.
        const auto where = [&](const char* array) {
            return std::string(side) + array + "[" + std::to_string(at) + "]";
        };
        if (count_at(at) < 0) bad(where("counts") + " is negative");
        if (types[at] == MPI_DATATYPE_NULL) bad(where("types") + " is MPI_DATATYPE_NULL");
        if (types[at] != usable && !is_usable_type(types[at], comm)) {
            bad(where("types") + " is not committed (MPI_Type_commit)");
        }
        usable = types[at];
    }
}

/// Large-count calls: every block's bytes (count x type size) must be addressable, checked
/// before anything is sized by them. The arrays and types were checked already.
template <class Bad>
void check_large_blocks(const CallArgs& a, const PatternState& pattern, const Bad& bad) {
    const auto fits = [&](MPI_Count count, MPI_Datatype type, const std::string& what) {
        const auto size = static_cast<MPI_Count>(shape_of(type).size);
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
    if (!is_usable_type(a.sendtype, pattern.comm)) bad("sendtype is not committed (MPI_Type_commit)");
    if (!is_usable_type(a.recvtype, pattern.comm)) bad("recvtype is not committed (MPI_Type_commit)");
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

}  // namespace

const char* name_of(const CallArgs& a) {
    static const char* const names[2][5] = {
        {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"},
        {"allgather_c", "allgatherv_c", "alltoall_c", "alltoallv_c", "alltoallw_c"}};
    const int shape = a.collective == Collective::allgather ? (a.variable ? 1 : 0)
                      : a.per_block_types                   ? 4
                                                            : (a.variable ? 3 : 2);
    return names[a.large ? 1 : 0][shape];
}

void check_counts(const CallArgs& a, const PatternState& pattern) {
    check_counts_of(a, pattern);
    if (!a.large) return;
    check_large_blocks(a, pattern, [&](const std::string& what) {
        throw NbrError(NBR_ERR_ARG, std::string(name_of(a)) + " on rank " + std::to_string(pattern.rank) + ": " + what);
    });
}

void hold_types(CallArgs& a, const PatternState& pattern, BlockTypes& send, BlockTypes& recv, bool retain) {
    if (!a.per_block_types) return;
    const std::size_t in = pattern.in.empty() ? 0 : pattern.slots.in_blocks;
    const std::size_t out = pattern.out.empty() ? 0 : pattern.slots.out_blocks;
    recv.assign(a.recvtypes, in, pattern.slots.in, retain);
    send.assign(a.sendtypes, out, pattern.slots.out, retain);
    a.send_shapes = &send;
    a.recv_shapes = &recv;
}

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

std::uint32_t variant_of_call(const PatternState& pattern, const CallArgs& a, const BlockBuffer& send,
                              const BlockBuffer& recv) {
    if (a.variable) return pattern.variable_variant[index_of(a.collective)];
    return band_of(pattern, a.collective, std::max(send.bytes(0), recv.bytes(0)));
}

ShapeKey shape_key(const PatternState& pattern, Collective collective, bool variable, CallMode mode,
                   std::uint64_t bytes) {
    ShapeKey key;
    key.collective = index_of(collective);
    key.variable = variable;
    key.mode = mode;
    if (!variable || mode == CallMode::persistent) {
        key.band = band_index_of(pattern, collective, bytes);
        key.size_class = size_class_of(bytes);
    }
    return key;
}

void match_fixed_blocks(CallArgs& a, const PatternState& pattern, BlockBuffer& send, BlockBuffer& recv) {
    if (a.variable) return;
    switch (match_block_sizes(send, recv, !pattern.in.empty(), !pattern.out.empty())) {
        case Adopted::none: return;
        case Adopted::recv:
            a.recvcount = a.sendcount;
            a.recvtype = a.sendtype;
            return;
        case Adopted::send:
            a.sendcount = a.recvcount;
            a.sendtype = a.recvtype;
            return;
    }
}

std::uint64_t block_bytes(const CallArgs& a, const BlockBuffer& recv) {
    return a.variable ? 0 : recv.bytes(0);
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

}  // namespace nbr::internal
