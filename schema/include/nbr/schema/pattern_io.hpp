#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbr_pattern.pb.h"

namespace nbr {

/// @brief Newest pattern format this build reads.
inline constexpr std::uint32_t kFormatVersion = 5;
/// @brief Format of rank files and single-algorithm manifests (what readers since 0.1 read).
inline constexpr std::uint32_t kSingleFormatVersion = 1;
/// @brief Format of multi-variant (auto) manifests: older readers reject them.
inline constexpr std::uint32_t kMultiVariantFormatVersion = 2;
/// @brief Format of packed single-algorithm manifests and their ranks.pack (older readers
/// reject them; rank patterns inside stay format 1).
inline constexpr std::uint32_t kPackedFormatVersion = 3;
/// @brief Format of multi-variant manifests that keep candidates beside each band's winner
/// (Band.alternatives, for measured selection): older readers reject them.
inline constexpr std::uint32_t kCandidatesFormatVersion = 4;
/// @brief Format of multi-variant manifests whose variants may share another subdirectory's
/// pattern files (Variant.files: the same schedules in segments): older readers reject them.
inline constexpr std::uint32_t kSharedFilesFormatVersion = 5;
/// @brief Newest wisdom format this build reads and the one it writes.
inline constexpr std::uint32_t kWisdomFormatVersion = 1;

/// @brief What went wrong while reading a pattern directory.
enum class PatternErrorKind {
    io,             ///< file missing or unreadable
    corrupt,        ///< not a valid protobuf message, or inconsistent content
    version,        ///< format version missing or newer than this build
    checksum,       ///< rank file does not match the checksum in the manifest
    rank,           ///< rank file holds another rank than its name says
    size,           ///< rank file and manifest disagree on the number of ranks
    topology_hash,  ///< rank file and manifest describe different topologies
    mixed           ///< a valid rank file of another compile (other algorithm, options or topology)
};

/// @brief Error while reading or checking pattern files; what() names the file.
class PatternError : public std::runtime_error {
public:
    PatternError(PatternErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    [[nodiscard]] PatternErrorKind kind() const noexcept { return kind_; }

private:
    PatternErrorKind kind_;
};

/// @brief File name of a rank's pattern inside a pattern directory (rank-000042.pb).
[[nodiscard]] std::string rank_file_name(std::uint32_t rank);

/// @brief File name of the manifest inside a pattern directory.
[[nodiscard]] inline std::string manifest_file_name() {
    return "manifest.pb";
}

/// @brief Serializes a message deterministically (same message, same bytes).
[[nodiscard]] std::string serialize_deterministic(const google::protobuf::MessageLite& message);

/// @brief Reads and checks DIR/manifest.pb (format version, internal consistency). Every
/// variant of an auto directory is a pattern directory of its own, AUTO/NAME, also one that
/// shares another variant's files (Variant.files) and so has no directory: for that path the
/// variant's manifest (read_variant_manifest), whose rank files pattern_files() finds.
[[nodiscard]] schema::Manifest read_manifest(const std::filesystem::path& dir);

/// @brief Where the rank files of the pattern at `dir` are: `dir`, or for AUTO/NAME naming a
/// variant that shares another's files, that variant's directory (AUTO/FILES). The readers
/// below resolve it themselves.
[[nodiscard]] std::filesystem::path pattern_files(const std::filesystem::path& dir);

/// @brief Reads rank `rank`'s pattern (DIR/rank-NNNNNN.pb, or its slice of DIR/ranks.pack in a
/// packed directory) and checks it against the manifest: checksum, format version, rank,
/// number of ranks, topology hash, compile and structural validity. If `bytes_read` is given,
/// adds the bytes read from the directory's files other than the manifest.
[[nodiscard]] schema::RankPattern read_rank_pattern(const std::filesystem::path& dir, std::uint32_t rank,
                                                    const schema::Manifest& manifest,
                                                    std::uint64_t* bytes_read = nullptr);

/// @brief Bytes a RankPatternReader reads at once from a packed directory.
inline constexpr std::uint64_t kReadBlockBytes = std::uint64_t{8} << 20;

class PackedReader;

/// @brief Reads ranks [begin, end) of a single-algorithm directory in rank order, for tools that
/// read many ranks (verify, simulate, inspect). A packed directory's ranks.pack is opened and
/// its header checked once, and its index and patterns are read in blocks of kReadBlockBytes
/// instead of three small reads per rank. Every pattern passes read_rank_pattern's checks, with
/// the same errors. `manifest` must outlive the reader.
class RankPatternReader {
public:
    RankPatternReader(const std::filesystem::path& dir, const schema::Manifest& manifest, std::uint32_t begin,
                      std::uint32_t end);
    RankPatternReader(const RankPatternReader&) = delete;
    RankPatternReader& operator=(const RankPatternReader&) = delete;
    ~RankPatternReader();
    /// @brief Reads the next rank's pattern into `pattern`, reusing its storage; false after the
    /// last. @throws PatternError naming the file (and rank).
    bool next(schema::RankPattern& pattern);
    /// @brief The rank that next() read last.
    [[nodiscard]] std::uint32_t rank() const noexcept;
    /// @brief Bytes read from the directory's files other than the manifest.
    [[nodiscard]] std::uint64_t bytes_read() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

/// @brief Where rank `rank`'s pattern is, for messages: the rank file, or "DIR/ranks.pack
/// (rank R)".
[[nodiscard]] std::string rank_pattern_source(const std::filesystem::path& dir, std::uint32_t rank,
                                              const schema::Manifest& manifest);

/// @brief Whether a single-algorithm manifest describes a packed directory.
[[nodiscard]] inline bool is_packed(const schema::Manifest& manifest) {
    return manifest.layout() == schema::PACKED;
}

/// @brief Parses and checks manifest bytes as read_manifest does; `source` names them in messages.
[[nodiscard]] schema::Manifest parse_manifest(const std::string& bytes, const std::string& source);

/// @brief Parses and checks rank-file bytes as read_rank_pattern does; `source` names them.
[[nodiscard]] schema::RankPattern parse_rank_pattern(const std::string& bytes, const std::string& source,
                                                     std::uint32_t rank, const schema::Manifest& manifest);

/// @brief Whether a manifest describes a multi-variant (auto) directory.
[[nodiscard]] inline bool is_multi_variant(const schema::Manifest& manifest) {
    return manifest.variants_size() > 0;
}

/// @brief The subdirectory holding the pattern files of variant `index` of a multi-variant
/// directory: its own (dir/NAME), or the one whose schedules it forwards in other segments
/// (dir/FILES, Variant.files).
[[nodiscard]] std::filesystem::path variant_directory(const std::filesystem::path& dir,
                                                      const schema::Manifest& manifest, int index);

/// @brief Reads and checks the manifest of variant `index` of a multi-variant directory: a
/// single-algorithm manifest of the same ranks and topology whose compile id is the one the
/// top manifest records, in variant_directory(); a variant sharing another's files gets its
/// own segment size. Throws PatternError naming the file.
[[nodiscard]] schema::Manifest read_variant_manifest(const std::filesystem::path& dir, const schema::Manifest& manifest,
                                                     int index);

/// @brief One variant of a rank's slice: its name, its single-algorithm manifest, the rank's
/// pattern and where it was read (for messages).
struct VariantSlice {
    std::string name;
    schema::Manifest manifest;
    schema::RankPattern pattern;
    std::string source;
};

/// @brief What one rank needs of a pattern directory, read and checked in one call: the
/// directory's manifest and, per variant (one for a single-algorithm directory, every variant
/// of an auto directory in manifest order), the variant's manifest and the rank's pattern.
/// `ranks`: the communicator's size, checked against the manifest before any rank file is read
/// (PatternError size, "pattern is for N ranks, communicator has M"). Throws PatternError
/// naming the file.
struct RankSlice {
    schema::Manifest manifest;
    std::vector<VariantSlice> variants;
};
[[nodiscard]] RankSlice read_rank_slice(const std::filesystem::path& dir, std::uint32_t rank, std::uint32_t ranks);

/// @brief The variant index the bands of a multi-variant manifest choose for blocks of
/// `bytes` bytes of `collective`.
[[nodiscard]] std::uint32_t band_variant(const schema::Manifest& manifest, schema::Collective collective,
                                         std::uint64_t bytes);

/// @brief The candidates of a band (its variant first, then its alternatives).
[[nodiscard]] std::vector<std::uint32_t> band_candidates(const schema::Band& band);

/// @brief Parses and checks a wisdom file's bytes (format version, every entry's shapes
/// well-formed); `source` names them. @throws PatternError (io, corrupt, version)
[[nodiscard]] schema::Wisdom parse_wisdom(const std::string& bytes, const std::string& source);

/// @brief Reads and checks a wisdom file (parse_wisdom).
[[nodiscard]] schema::Wisdom read_wisdom(const std::filesystem::path& path);

/// @brief Writes a wisdom file atomically: a temporary file beside it, renamed over it, so a
/// reader (another job sharing the file) sees the old file or the new one, never a part.
void write_wisdom(const std::filesystem::path& path, const schema::Wisdom& wisdom);

/// @brief Checks a rank pattern's structure: list lengths, ranks and slots in range.
/// Throws PatternError(corrupt) naming `source` on the first violation.
void validate_rank_pattern(const schema::RankPattern& pattern, const std::string& source);

/// @brief Writes bytes to a file, throwing FileError (a std::runtime_error) naming the file and
/// the system's reason on failure.
void write_file(const std::filesystem::path& path, const std::string& bytes);

/// @brief Reads a whole regular file, throwing PatternError(io) naming the file and the system's
/// reason on failure (missing, unreadable, not a regular file).
[[nodiscard]] std::string read_file(const std::filesystem::path& path);

}  // namespace nbr
