#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <mpi.h>

namespace nbr::internal {

/// @brief Size, extent and contiguity of a datatype.
struct TypeShape {
    MPI_Aint extent = 0;
    std::size_t size = 0;
    bool contiguous = false;  ///< n elements are n * size contiguous bytes
};

/// @brief The shape of `type` (common predefined types without asking MPI). @throws NbrError.
[[nodiscard]] TypeShape shape_of(MPI_Datatype type);

/// @brief alltoallw's per-block datatypes of one buffer, with their shapes, indexed by the
/// communicator's slots. Derived types a pending request keeps are duplicates it owns.
struct BlockTypes {
    std::vector<MPI_Datatype> types;
    std::vector<TypeShape> shapes;
    std::vector<char> owned;  ///< per type: a duplicate to free (release)
    bool any_owned = false;   ///< whether any is

    /// Takes the types of `count` slots and their shapes, of the slots in `used` only (a
    /// BufferSlots map; empty: every slot; the others, MPI_PROC_NULL slots, are never looked
    /// at and may hold an earlier call's). `retain`: derived types are duplicated (pending
    /// requests).
    void assign(const MPI_Datatype* given, std::size_t count, const std::vector<std::uint32_t>& used, bool retain);
    /// Frees the owned duplicates.
    void release() noexcept;
};

/// @brief A buffer argument of a collective: where its blocks are and what they hold.
///
/// Fixed-size collectives give one count for every block (consecutive blocks, `count`
/// elements apart); the v-variants give per-block counts and displacements (in extents of
/// the type, MPI-4.1 §8.6); alltoallw gives per-block counts, datatypes and byte
/// displacements. Blocks are numbered as the plan numbers them: `slots` maps them to the
/// buffer's where the communicator's layout has more or other slots.
struct BlockBuffer {
    char* base = nullptr;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0;
    std::size_t type_size = 0;
    bool contiguous_type = false;  ///< count elements are count * type_size contiguous bytes
    MPI_Count count = 0;           ///< per block, unless counts is set
    const int* counts = nullptr;   ///< per block (v-variants)
    const int* displs = nullptr;   ///< per block, in extents (v-variants)
    /// Large-count calls (MPI-4's _c forms): the same arrays as MPI_Count and MPI_Aint.
    const MPI_Count* counts_c = nullptr;
    const MPI_Aint* displs_c = nullptr;
    /// The buffer block of the plan's block b, where they differ (BufferSlots: a Cartesian
    /// communicator's MPI_PROC_NULL slots and crosswise directions); nullptr: the same.
    const std::uint32_t* slots = nullptr;
    /// alltoallw: per buffer slot, the datatype and its shape (then `type` is unused) ...
    const MPI_Datatype* types = nullptr;
    const TypeShape* shapes = nullptr;
    /// ... and the displacement in bytes.
    const MPI_Aint* byte_displs = nullptr;

    [[nodiscard]] std::uint32_t slot(std::uint32_t block) const { return slots != nullptr ? slots[block] : block; }
    [[nodiscard]] MPI_Count count_of(std::uint32_t block) const {
        if (counts_c != nullptr) return counts_c[slot(block)];
        return counts != nullptr ? counts[slot(block)] : count;
    }
    [[nodiscard]] MPI_Datatype type_of(std::uint32_t block) const {
        return types != nullptr ? types[slot(block)] : type;
    }
    [[nodiscard]] bool contiguous(std::uint32_t block) const {
        return shapes != nullptr ? shapes[slot(block)].contiguous : contiguous_type;
    }
    [[nodiscard]] std::size_t bytes(std::uint32_t block) const {
        const std::size_t size = shapes != nullptr ? shapes[slot(block)].size : type_size;
        return static_cast<std::size_t>(count_of(block)) * size;
    }
    [[nodiscard]] char* address(std::uint32_t block) const {
        const std::uint32_t at = slot(block);
        if (byte_displs != nullptr) return base + byte_displs[at];
        const MPI_Aint first = displs_c != nullptr ? displs_c[at]
                               : displs != nullptr ? displs[at]
                                                   : static_cast<MPI_Aint>(at) * static_cast<MPI_Aint>(count);
        return base + first * extent;
    }
};

/// @brief Describes equal blocks of `count` elements of `type` at `base`. @throws NbrError on MPI failure.
[[nodiscard]] BlockBuffer describe_buffer(const void* base, MPI_Count count, MPI_Datatype type);

/// @brief Describes blocks with their own counts and displacements (arrays used in place).
[[nodiscard]] BlockBuffer describe_buffer(const void* base, const int* counts, const int* displs, MPI_Datatype type);

/// @brief Describes alltoallw's blocks: per slot a count, a byte displacement and a datatype.
[[nodiscard]] BlockBuffer describe_buffer(const void* base, const int* counts, const MPI_Aint* byte_displs,
                                          const BlockTypes& types);

/// @brief The same with large-count arrays.
[[nodiscard]] BlockBuffer describe_buffer(const void* base, const MPI_Count* counts, const MPI_Aint* displs,
                                          MPI_Datatype type);

/// @brief alltoallw's large-count form.
[[nodiscard]] BlockBuffer describe_buffer(const void* base, const MPI_Count* counts, const MPI_Aint* byte_displs,
                                          const BlockTypes& types);

/// Whether this build can move messages of more than INT_MAX elements or bytes (MPI-4's
/// large-count point-to-point, packing and collective functions; SMPI has none).
#if MPI_VERSION >= 4 && !defined(NBR_SMPI)
#define NBR_LARGE_MESSAGES 1
#else
#define NBR_LARGE_MESSAGES 0
#endif
inline constexpr bool kLargeMessages = NBR_LARGE_MESSAGES != 0;

/// @brief MPI_Isend and MPI_Irecv of any count (the large-count forms above INT_MAX).
/// @throws NbrError(NBR_ERR_ARG) above INT_MAX without them, NBR_ERR_MPI on MPI failure.
void isend(const void* buffer, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
           MPI_Request* request);
void irecv(void* buffer, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request* request);

/// @brief Packs block `block` of `buffer` into `dst` (exactly buffer.bytes(block) bytes).
void pack_block(const BlockBuffer& buffer, std::uint32_t block, char* dst, MPI_Comm comm);

/// @brief Unpacks buffer.bytes(block) bytes from `src` into block `block` of `buffer`.
void unpack_block(const BlockBuffer& buffer, std::uint32_t block, const char* src, MPI_Comm comm);

/// @brief The size of a common predefined datatype, without asking MPI (0 for any other
/// type): these handles never change meaning, their sizes are C's, and each is contiguous
/// with extent equal to its size.
inline int predefined_size(MPI_Datatype type) {
    if (type == MPI_BYTE || type == MPI_CHAR || type == MPI_SIGNED_CHAR || type == MPI_UNSIGNED_CHAR) return 1;
    if (type == MPI_INT || type == MPI_UNSIGNED) return sizeof(int);
    if (type == MPI_DOUBLE) return sizeof(double);
    if (type == MPI_FLOAT) return sizeof(float);
    if (type == MPI_LONG || type == MPI_UNSIGNED_LONG) return sizeof(long);
    if (type == MPI_LONG_LONG) return sizeof(long long);
    if (type == MPI_SHORT) return sizeof(short);
    if (type == MPI_INT32_T || type == MPI_UINT32_T) return 4;
    if (type == MPI_INT64_T || type == MPI_UINT64_T) return 8;
    return 0;
}

/// @brief True for predefined (named) datatypes, which need no reference while an operation is pending.
[[nodiscard]] bool is_named_type(MPI_Datatype type);

/// @brief Whether `type` may carry data: predefined, or derived and committed. Probes with
/// `errors_return`, a communicator whose error handler returns (MPI_ERRORS_RETURN).
[[nodiscard]] bool is_usable_type(MPI_Datatype type, MPI_Comm errors_return);

/// @brief Fixed-size collectives: send and receive blocks must have the same byte size.
/// @throws NbrError(NBR_ERR_DATATYPE) otherwise.
void check_block_sizes(const BlockBuffer& send, const BlockBuffer& recv);

/// @brief A fixed-size call's block size on a rank that may lack neighbors on one side. MPI
/// matches a rank's send blocks with its out-neighbors' receive blocks and its receive blocks
/// with its in-neighbors' send blocks, so the count of a side without neighbors is free (mpi4py
/// passes 0 there, its buffer being empty): that buffer takes the other's block size, having
/// no block to move (`receives`, `sends`: whether the rank has in- and out-neighbors); with
/// neither, the smaller takes the larger. Then check_block_sizes. Returns the side that took
/// the other's size. @throws NbrError as check_block_sizes does.
enum class Adopted { none, recv, send };
Adopted match_block_sizes(BlockBuffer& send, BlockBuffer& recv, bool receives, bool sends);

}  // namespace nbr::internal
