#pragma once
// The packed layout of a single-algorithm pattern directory: every rank's pattern in one file,
// ranks.pack, behind an index of fixed-size records, so that a rank finds, reads and checks
// its own bytes with three reads and nothing of any other rank (docs/format.md, "Packed
// layout").

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "nbr/schema/pattern_io.hpp"

namespace nbr {

/// @brief Rank count from which `nbrc compile` writes the packed layout unless told otherwise.
inline constexpr std::uint32_t kPackedFromRanks = 4096;
/// @brief Bytes of the header at the start of ranks.pack.
inline constexpr std::uint64_t kPackedHeaderBytes = 64;
/// @brief Bytes of one index record.
inline constexpr std::uint64_t kPackedRecordBytes = 32;

/// @brief File name of the packed rank patterns inside a pattern directory.
[[nodiscard]] inline std::string packed_file_name() {
    return "ranks.pack";
}

/// @brief Where one rank's pattern lies in ranks.pack.
struct PackedRecord {
    std::uint64_t offset = 0;    ///< from the start of the file
    std::uint64_t length = 0;    ///< bytes of the serialized RankPattern
    std::uint64_t checksum = 0;  ///< checksum64 of those bytes
};

/// @brief Offset of rank `rank`'s index record.
[[nodiscard]] constexpr std::uint64_t packed_record_offset(std::uint64_t rank) noexcept {
    return kPackedHeaderBytes + rank * kPackedRecordBytes;
}

/// @brief Offset of the first rank pattern: after the header and all `num_ranks` records.
[[nodiscard]] constexpr std::uint64_t packed_data_offset(std::uint64_t num_ranks) noexcept {
    return packed_record_offset(num_ranks);
}

/// @brief The header of a ranks.pack of `file_bytes` bytes in all.
[[nodiscard]] std::string encode_packed_header(std::uint64_t num_ranks, std::uint64_t compile_id,
                                               std::uint64_t file_bytes);

/// @brief Rank `rank`'s index record (its check word binds it to the rank and the compile).
[[nodiscard]] std::string encode_packed_record(std::uint64_t compile_id, std::uint64_t rank,
                                               const PackedRecord& record);

/// @brief One rank's pattern bytes, checked against their index record.
struct PackedSlice {
    std::string bytes;
    std::uint64_t bytes_read = 0;  ///< of ranks.pack: header, record and slice
};

/// @brief Reads rank `rank`'s pattern bytes from DIR/ranks.pack with three reads (header,
/// index record, slice) and checks header, record and slice checksum against `manifest`.
/// Throws PatternError naming the file: io, corrupt, checksum (corrupted or truncated) or
/// mixed (a file of another compile).
[[nodiscard]] PackedSlice read_packed_slice(const std::filesystem::path& dir, std::uint32_t rank,
                                            const schema::Manifest& manifest);

/// @brief DIR/ranks.pack open for many ranks' slices: the header is read and checked once, and
/// with `block_bytes` > 0 the index and the patterns are read in blocks of about that size,
/// so that reading ranks in ascending order takes few large reads (the slices lie in rank
/// order) instead of three small ones per rank. Every slice passes read_packed_slice's checks.
class PackedReader {
public:
    /// @throws PatternError as read_packed_slice does.
    PackedReader(const std::filesystem::path& dir, const schema::Manifest& manifest, std::uint64_t block_bytes);
    PackedReader(const PackedReader&) = delete;
    PackedReader& operator=(const PackedReader&) = delete;
    ~PackedReader();
    /// @brief Rank `rank`'s checked pattern bytes, valid until the next call.
    /// @throws PatternError as read_packed_slice does.
    [[nodiscard]] std::string_view slice(std::uint32_t rank);
    /// @brief Bytes read from ranks.pack so far.
    [[nodiscard]] std::uint64_t bytes_read() const noexcept;

private:
    struct State;
    [[nodiscard]] PackedRecord record(std::uint32_t rank);
    [[nodiscard]] std::string_view bytes_of(const PackedRecord& record);
    std::unique_ptr<State> state_;
};

}  // namespace nbr
