#pragma once

#include <cstddef>
#include <cstdint>

#include <mpi.h>

namespace nbr::internal {

/// @brief A buffer argument of a collective: where its blocks are and what they hold.
///
/// Fixed-size collectives give one count for every block (consecutive blocks, `count`
/// elements apart); the v-variants give per-block counts and displacements (in extents of
/// the type, MPI-4.1 §8.6). Blocks are numbered as the plan numbers them: `slots` maps them to
/// the buffer's where the communicator's layout has more or other slots.
struct BlockBuffer {
    char* base = nullptr;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0;
    std::size_t type_size = 0;
    bool contiguous_type = false;  ///< count elements are count * type_size contiguous bytes
    int count = 0;                 ///< per block, unless counts is set
    const int* counts = nullptr;   ///< per block (v-variants)
    const int* displs = nullptr;   ///< per block, in extents (v-variants)
    /// The buffer block of the plan's block b, where they differ (BufferSlots: a Cartesian
    /// communicator's MPI_PROC_NULL slots and crosswise directions); nullptr: the same.
    const std::uint32_t* slots = nullptr;

    [[nodiscard]] std::uint32_t slot(std::uint32_t block) const { return slots != nullptr ? slots[block] : block; }
    [[nodiscard]] int count_of(std::uint32_t block) const { return counts != nullptr ? counts[slot(block)] : count; }
    [[nodiscard]] std::size_t bytes(std::uint32_t block) const {
        return static_cast<std::size_t>(count_of(block)) * type_size;
    }
    [[nodiscard]] char* address(std::uint32_t block) const {
        const std::uint32_t at = slot(block);
        const MPI_Aint first = displs != nullptr ? displs[at] : static_cast<MPI_Aint>(at) * count;
        return base + first * extent;
    }
};

/// @brief Describes equal blocks of `count` elements of `type` at `base`. @throws NbrError on MPI failure.
[[nodiscard]] BlockBuffer describe_buffer(const void* base, int count, MPI_Datatype type);

/// @brief Describes blocks with their own counts and displacements (arrays used in place).
[[nodiscard]] BlockBuffer describe_buffer(const void* base, const int* counts, const int* displs, MPI_Datatype type);

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

}  // namespace nbr::internal
