#include "block_buffer.hpp"

#include <climits>
#include <cstring>
#include <string>

#include "error.hpp"
#include "nbr.h"

namespace nbr::internal {

void throw_mpi_error(int code, const char* what) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
    throw NbrError(NBR_ERR_MPI, std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

namespace {

/// A type's size in bytes, also where it exceeds an int (MPI_Type_size_x).
MPI_Count type_size(MPI_Datatype type) {
#if defined(NBR_SMPI)
    int size = 0;  // SMPI has no MPI_Type_size_x
    check_mpi(MPI_Type_size(type, &size), "MPI_Type_size");
#else
    MPI_Count size = 0;
    check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
#endif
    if (size < 0) throw NbrError(NBR_ERR_DATATYPE, "a datatype's size is undefined (MPI_UNDEFINED)");
    return size;
}

TypeShape query_shape(MPI_Datatype type) {
    const MPI_Count size = type_size(type);
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    check_mpi(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
    check_mpi(MPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
    return {extent, static_cast<std::size_t>(size), true_lb == 0 && lb == 0 && true_extent == size && extent == size};
}

}  // namespace

TypeShape shape_of(MPI_Datatype type) {
    if (const int size = predefined_size(type); size > 0) return {size, static_cast<std::size_t>(size), true};
    return query_shape(type);
}

void BlockTypes::assign(const MPI_Datatype* given, std::size_t count, const std::vector<std::uint32_t>& used,
                        bool retain) {
    release();
    if (types.size() != count) {  // blocking calls reuse one BlockTypes: sized once per layout
        types.assign(count, MPI_DATATYPE_NULL);
        shapes.assign(count, TypeShape{});
        owned.assign(count, 0);
    }
    const std::size_t n = used.empty() ? count : used.size();
    MPI_Datatype last = MPI_DATATYPE_NULL;  // the last type taken, and its shape: most calls repeat one
    TypeShape last_shape;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = used.empty() ? k : used[k];
        types[i] = given[i];
        if (k == 0 || given[i] != last) last_shape = shape_of(given[i]);
        last = given[i];
        shapes[i] = last_shape;
        if (!retain || is_named_type(given[i])) continue;
        check_mpi(MPI_Type_dup(given[i], &types[i]), "MPI_Type_dup");
        owned[i] = 1;
        any_owned = true;
    }
}

void BlockTypes::release() noexcept {
    if (!any_owned) return;
    for (std::size_t i = 0; i < owned.size(); ++i) {
        if (owned[i] != 0) MPI_Type_free(&types[i]);
        owned[i] = 0;
    }
    any_owned = false;
}

BlockBuffer describe_buffer(const void* base, MPI_Count count, MPI_Datatype type) {
    BlockBuffer buffer;
    buffer.base = static_cast<char*>(const_cast<void*>(base));
    buffer.count = count;
    buffer.type = type;
    const TypeShape shape = shape_of(type);
    buffer.extent = shape.extent;
    buffer.type_size = shape.size;
    buffer.contiguous_type = shape.contiguous;
    return buffer;
}

BlockBuffer describe_buffer(const void* base, const int* counts, const int* displs, MPI_Datatype type) {
    BlockBuffer buffer = describe_buffer(base, 0, type);
    buffer.counts = counts;
    buffer.displs = displs;
    return buffer;
}

BlockBuffer describe_buffer(const void* base, const int* counts, const MPI_Aint* byte_displs, const BlockTypes& types) {
    BlockBuffer buffer;
    buffer.base = static_cast<char*>(const_cast<void*>(base));
    buffer.counts = counts;
    buffer.byte_displs = byte_displs;
    buffer.types = types.types.data();
    buffer.shapes = types.shapes.data();
    return buffer;
}

BlockBuffer describe_buffer(const void* base, const MPI_Count* counts, const MPI_Aint* displs, MPI_Datatype type) {
    BlockBuffer buffer = describe_buffer(base, 0, type);
    buffer.counts_c = counts;
    buffer.displs_c = displs;
    return buffer;
}

BlockBuffer describe_buffer(const void* base, const MPI_Count* counts, const MPI_Aint* byte_displs,
                            const BlockTypes& types) {
    BlockBuffer buffer = describe_buffer(base, static_cast<const int*>(nullptr), byte_displs, types);
    buffer.counts_c = counts;
    return buffer;
}

namespace {

/// Above INT_MAX without MPI-4's large-count functions: nothing can move it.
void require_large(MPI_Count count, const char* what) {
    if (count <= INT_MAX || kLargeMessages) return;
    throw NbrError(NBR_ERR_ARG, std::string(what) + " of " + std::to_string(count) +
                                    " elements or bytes, more than an MPI count holds: this MPI library has no "
                                    "large-count functions (MPI-4)");
}

}  // namespace

void isend(const void* buffer, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
           MPI_Request* request) {
    require_large(count, "a message");
#if NBR_LARGE_MESSAGES
    if (count > INT_MAX) {
        check_mpi(MPI_Isend_c(buffer, count, type, peer, tag, comm, request), "MPI_Isend_c");
        return;
    }
#endif
    check_mpi(MPI_Isend(buffer, static_cast<int>(count), type, peer, tag, comm, request), "MPI_Isend");
}

void irecv(void* buffer, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request* request) {
    require_large(count, "a message");
#if NBR_LARGE_MESSAGES
    if (count > INT_MAX) {
        check_mpi(MPI_Irecv_c(buffer, count, type, peer, tag, comm, request), "MPI_Irecv_c");
        return;
    }
#endif
    check_mpi(MPI_Irecv(buffer, static_cast<int>(count), type, peer, tag, comm, request), "MPI_Irecv");
}

void pack_block(const BlockBuffer& buffer, std::uint32_t block, char* dst, MPI_Comm comm) {
    const std::size_t bytes = buffer.bytes(block);
    if (bytes == 0) return;  // zero counts: buffers may be NULL
    const char* src = buffer.address(block);
    if (buffer.contiguous(block)) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const MPI_Count count = buffer.count_of(block);
    MPI_Count position = 0;
    require_large(static_cast<MPI_Count>(bytes), "a packed block");
#if NBR_LARGE_MESSAGES
    if (bytes > INT_MAX || count > INT_MAX) {
        check_mpi(MPI_Pack_c(src, count, buffer.type_of(block), dst, static_cast<MPI_Count>(bytes), &position, comm),
                  "MPI_Pack_c");
    } else
#endif
    {
        int small = 0;
        check_mpi(
            MPI_Pack(src, static_cast<int>(count), buffer.type_of(block), dst, static_cast<int>(bytes), &small, comm),
            "MPI_Pack");
        position = small;
    }
    if (static_cast<std::size_t>(position) != bytes) {
        throw NbrError(NBR_ERR_DATATYPE,
                       "MPI_Pack produced a representation of another size than the type's; "
                       "heterogeneous packing is not supported");
    }
}

void unpack_block(const BlockBuffer& buffer, std::uint32_t block, const char* src, MPI_Comm comm) {
    const std::size_t bytes = buffer.bytes(block);
    if (bytes == 0) return;
    char* dst = buffer.address(block);
    if (buffer.contiguous(block)) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const MPI_Count count = buffer.count_of(block);
    require_large(static_cast<MPI_Count>(bytes), "a packed block");
#if NBR_LARGE_MESSAGES
    if (bytes > INT_MAX || count > INT_MAX) {
        MPI_Count position = 0;
        check_mpi(MPI_Unpack_c(src, static_cast<MPI_Count>(bytes), &position, dst, count, buffer.type_of(block), comm),
                  "MPI_Unpack_c");
        return;
    }
#endif
    int position = 0;
    check_mpi(
        MPI_Unpack(src, static_cast<int>(bytes), &position, dst, static_cast<int>(count), buffer.type_of(block), comm),
        "MPI_Unpack");
}

void check_block_sizes(const BlockBuffer& send, const BlockBuffer& recv) {
    if (send.bytes(0) == recv.bytes(0)) return;
    throw NbrError(NBR_ERR_DATATYPE, "send block has " + std::to_string(send.bytes(0)) + " bytes, receive block " +
                                         std::to_string(recv.bytes(0)) + ": type signatures must match");
}

namespace {

/// `to` describes blocks of `from`'s type and count (it has none: only its base stays).
void adopt_block_size(BlockBuffer& to, const BlockBuffer& from) {
    to.type = from.type;
    to.extent = from.extent;
    to.type_size = from.type_size;
    to.contiguous_type = from.contiguous_type;
    to.count = from.count;
}

}  // namespace

Adopted match_block_sizes(BlockBuffer& send, BlockBuffer& recv, bool receives, bool sends) {
    Adopted adopted = Adopted::none;
    if (!receives && (sends || send.bytes(0) >= recv.bytes(0))) {
        adopt_block_size(recv, send);
        adopted = Adopted::recv;
    } else if (!sends) {
        adopt_block_size(send, recv);
        adopted = Adopted::send;
    }
    check_block_sizes(send, recv);
    return adopted;
}

bool is_named_type(MPI_Datatype type) {
    int integers = 0, addresses = 0, types = 0, combiner = 0;
    check_mpi(MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner), "MPI_Type_get_envelope");
    return combiner == MPI_COMBINER_NAMED;
}

bool is_usable_type(MPI_Datatype type, MPI_Comm errors_return) {
    // The common predefined types without a query: this runs on every call.
    if (predefined_size(type) > 0 || is_named_type(type)) return true;
#if defined(NBR_SMPI)
    (void)errors_return;
    return true;  // SMPI's communicators abort on errors: no probe
#else
    // MPI has no query for the commit state. Packing zero elements succeeds for a committed
    // type and fails with MPI_ERR_TYPE for an uncommitted one, in Open MPI and MPICH alike.
    char unused = 0;
    int position = 0;
    return MPI_Pack(&unused, 0, type, &unused, 0, &position, errors_return) == MPI_SUCCESS;
#endif
}

}  // namespace nbr::internal
