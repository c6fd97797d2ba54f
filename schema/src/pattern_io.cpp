#include "nbr/schema/pattern_io.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include "nbr/schema/file_io.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/packed.hpp"

namespace nbr {

namespace {

/// Parses `bytes` into `message` without protobuf's own log lines: a corrupted string field
/// makes protobuf print "contains invalid UTF-8" on stderr before the parse fails, and the
/// caller's error, which names the file, is the one message a user should see.
bool parse_quietly(google::protobuf::MessageLite& message, std::string_view bytes) {
    const google::protobuf::LogSilencer quiet;
    return bytes.size() <= static_cast<std::size_t>(INT_MAX) &&
           message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

void check_version(std::uint32_t version, const std::string& file) {
    if (version == 0) {
        throw PatternError(PatternErrorKind::version, file + ": format version missing (not an nbr pattern file?)");
    }
    if (version > kFormatVersion) {
        throw PatternError(PatternErrorKind::version, file + ": format version " + std::to_string(version) +
                                                          " is newer than this build supports (" +
                                                          std::to_string(kFormatVersion) + "); upgrade nbr");
    }
}

/// A rank file whose checksum differs from the manifest's but that names another compile than
/// the manifest's (a directory assembled from two, or a file replaced after the manifest was
/// written): says what differs. Returns if the bytes are no such file (then they are corrupt).
void check_same_compile(const std::string& bytes, std::uint32_t rank, const schema::Manifest& manifest,
                        const std::string& file) {
    schema::RankPattern other;
    if (!parse_quietly(other, bytes) || other.rank() != rank || other.compile_id() == 0 || manifest.compile_id() == 0 ||
        other.compile_id() == manifest.compile_id()) {
        return;
    }
    std::string what;
    if (other.topology_hash() != manifest.topology_hash() || other.num_ranks() != manifest.num_ranks()) {
        what = "another topology";
    } else if (other.algorithm() != manifest.algorithm()) {
        what = "algorithm '" + internal::excerpt(other.algorithm()) + "', the manifest's is '" +
               internal::excerpt(manifest.algorithm()) + "'";
    } else {
        what = "other options of '" + internal::excerpt(manifest.algorithm()) + "'";
    }
    throw PatternError(PatternErrorKind::mixed, file + ": rank file of another compile (" + what +
                                                    ") than the manifest's; recompile or copy the whole directory");
}

bool is_safe_name(const std::string& name) {
    if (name.empty() || name.size() > 64 || name[0] == '.') return false;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                        c == '_' || c == '.';
        if (!ok) return false;
    }
    return true;
}

/// The bands of one collective: start at 0, increase strictly, name existing variants.
void check_bands(const schema::Manifest& manifest, schema::Collective collective, const std::string& what,
                 const std::string& source) {
    auto fail = [&](const std::string& why) {
        throw PatternError(PatternErrorKind::corrupt, source + ": " + what + " bands: " + why);
    };
    bool first = true;
    std::uint64_t last = 0;
    for (const auto& band : manifest.bands()) {
        if (band.collective() != collective) continue;
        if (band.variant() >= static_cast<std::uint32_t>(manifest.variants_size())) {
            fail("variant " + std::to_string(band.variant()) + " does not exist");
        }
        if (first && band.from_bytes() != 0) fail("the first band starts at " + std::to_string(band.from_bytes()));
        if (!first && band.from_bytes() <= last) fail("from_bytes do not increase");
        first = false;
        last = band.from_bytes();
    }
    if (first) fail("none");
}

/// Alternatives: in range, distinct, never the winner they stand beside.
void check_alternatives(const schema::Manifest& manifest, const std::string& source) {
    auto fail = [&](const std::string& why) { throw PatternError(PatternErrorKind::corrupt, source + ": " + why); };
    const auto variants = static_cast<std::uint32_t>(manifest.variants_size());
    const auto check = [&](std::uint32_t winner, const auto& alternatives, const std::string& where) {
        if (alternatives.empty()) return;
        if (manifest.format_version() < kCandidatesFormatVersion) {
            fail(where + " lists alternatives in a format-" + std::to_string(manifest.format_version()) + " manifest");
        }
        std::vector<std::uint32_t> seen{winner};
        for (const auto v : alternatives) {
            if (v >= variants) fail(where + ": alternative variant " + std::to_string(v) + " does not exist");
            if (std::find(seen.begin(), seen.end(), v) != seen.end()) {
                fail(where + ": variant " + std::to_string(v) + " listed twice");
            }
            seen.push_back(v);
        }
    };
    for (int b = 0; b < manifest.bands_size(); ++b) {
        check(manifest.bands(b).variant(), manifest.bands(b).alternatives(), "band " + std::to_string(b));
    }
    check(manifest.allgatherv_variant(), manifest.allgatherv_alternatives(), "allgatherv");
    check(manifest.alltoallv_variant(), manifest.alltoallv_alternatives(), "alltoallv");
}

/// A variant that forwards another subdirectory's schedules in its own segments: format 5, a
/// usable subdirectory name other than its own, a segment size (and none without `files`).
void check_shared_files(const schema::Manifest& manifest, const schema::Variant& variant, const std::string& source) {
    auto fail = [&](const std::string& why) {
        throw PatternError(PatternErrorKind::corrupt, source + ": variant '" + variant.name() + "' " + why);
    };
    if (variant.files().empty()) {
        if (variant.segment_bytes() != 0) fail("has a segment size but no files of another variant");
        return;
    }
    if (manifest.format_version() < kSharedFilesFormatVersion) {
        fail("shares another's files in a format-" + std::to_string(manifest.format_version()) + " manifest");
    }
    if (!is_safe_name(variant.files()) || variant.files() == variant.name()) fail("names no usable files");
    if (variant.segment_bytes() == 0) fail("shares another's files without a segment size");
}

/// A multi-variant manifest: format 2, no rank checksums, variants with distinct safe names,
/// bands for both collectives, v-variant choices in range.
void check_multi_variant(const schema::Manifest& manifest, const std::string& source) {
    auto fail = [&](const std::string& why) { throw PatternError(PatternErrorKind::corrupt, source + ": " + why); };
    if (manifest.format_version() < kMultiVariantFormatVersion) fail("variants in a format-1 manifest");
    if (manifest.rank_checksums_size() != 0) fail("a multi-variant manifest lists rank checksums");
    if (manifest.num_ranks() == 0) fail("no ranks");
    const auto variants = static_cast<std::uint32_t>(manifest.variants_size());
    for (std::uint32_t i = 0; i < variants; ++i) {
        const auto& name = manifest.variants(static_cast<int>(i)).name();
        if (!is_safe_name(name)) fail("variant " + std::to_string(i) + " has no usable name");
        for (std::uint32_t j = 0; j < i; ++j) {
            if (manifest.variants(static_cast<int>(j)).name() == name) fail("variant '" + name + "' listed twice");
        }
        check_shared_files(manifest, manifest.variants(static_cast<int>(i)), source);
    }
    for (const auto& band : manifest.bands()) {
        if (band.collective() != schema::ALLGATHER && band.collective() != schema::ALLTOALL) {
            fail("a band of unknown collective " + std::to_string(band.collective()));
        }
    }
    check_bands(manifest, schema::ALLGATHER, "allgather", source);
    check_bands(manifest, schema::ALLTOALL, "alltoall", source);
    if (manifest.allgatherv_variant() >= variants || manifest.alltoallv_variant() >= variants) {
        fail("the v-variants' variant does not exist");
    }
    check_alternatives(manifest, source);
}

/// A packed single-algorithm manifest: format 3, ranks and a compile id (what binds ranks.pack
/// to it), no rank checksums (the index records hold them).
void check_packed_manifest(const schema::Manifest& manifest, const std::string& source) {
    auto fail = [&](const std::string& why) { throw PatternError(PatternErrorKind::corrupt, source + ": " + why); };
    if (manifest.format_version() < kPackedFormatVersion)
        fail("a packed layout in a format-" + std::to_string(manifest.format_version()) + " manifest");
    if (manifest.rank_checksums_size() != 0) fail("a packed manifest lists rank checksums");
    if (manifest.num_ranks() == 0) fail("no ranks");
    if (manifest.compile_id() == 0) fail("a packed manifest without a compile id");
}

}  // namespace

namespace {

/// A variant of an auto directory that shares another variant's files: the directory, its
/// manifest and the variant's index.
struct SharedVariant {
    std::filesystem::path auto_dir;
    schema::Manifest top;
    int index = 0;
};

/// DIR/NAME, when it has no manifest of its own and names a variant of the auto directory DIR
/// that shares another variant's files.
std::optional<SharedVariant> shared_variant_of(const std::filesystem::path& path) {
    auto normal = path.lexically_normal();
    if (!normal.has_filename()) normal = normal.parent_path();
    auto parent = normal.parent_path();
    std::error_code ec;
    if (std::filesystem::exists(normal / manifest_file_name(), ec) ||
        !std::filesystem::is_regular_file(parent / manifest_file_name(), ec)) {
        return std::nullopt;
    }
    schema::Manifest top;
    try {
        top = read_manifest(parent);
    } catch (const PatternError&) {
        return std::nullopt;  // the error names DIR/NAME/manifest.pb, which was asked for
    }
    if (!is_multi_variant(top)) return std::nullopt;
    for (int i = 0; i < top.variants_size(); ++i) {
        if (top.variants(i).name() == normal.filename().string() && !top.variants(i).files().empty()) {
            return SharedVariant{std::move(parent), std::move(top), i};
        }
    }
    return std::nullopt;
}

/// read_manifest and pattern_files of one resolution: the manifest and where the rank files are.
schema::Manifest manifest_at(const std::filesystem::path& dir, std::filesystem::path* files) {
    if (auto shared = shared_variant_of(dir)) {
        if (files != nullptr) *files = variant_directory(shared->auto_dir, shared->top, shared->index);
        return read_variant_manifest(shared->auto_dir, shared->top, shared->index);
    }
    if (files != nullptr) *files = dir;
    const auto path = dir / manifest_file_name();
    std::string bytes;
    try {
        bytes = read_file(path);
    } catch (const PatternError&) {
        // Only on failure (every rank reads a manifest at load): a directory without one is named so.
        std::error_code ec;
        if (std::filesystem::is_directory(dir, ec) && !std::filesystem::exists(path, ec)) {
            throw PatternError(PatternErrorKind::io,
                               dir.string() + ": not a pattern directory (it has no " + manifest_file_name() + ")");
        }
        throw;
    }
    return parse_manifest(bytes, path.string());
}

// rank_pattern_source and read_rank_pattern in `dir` as it is (pattern_files resolved).
std::string source_in(const std::filesystem::path& dir, std::uint32_t rank, const schema::Manifest& manifest);
schema::RankPattern read_rank_pattern_in(const std::filesystem::path& dir, std::uint32_t rank,
                                         const schema::Manifest& manifest, std::uint64_t* bytes_read);

}  // namespace

std::filesystem::path pattern_files(const std::filesystem::path& dir) {
    const auto shared = shared_variant_of(dir);
    if (!shared) return dir;
    return variant_directory(shared->auto_dir, shared->top, shared->index);
}

std::filesystem::path variant_directory(const std::filesystem::path& dir, const schema::Manifest& manifest, int index) {
    const auto& variant = manifest.variants(index);
    return dir / (variant.files().empty() ? variant.name() : variant.files());
}

schema::Manifest read_variant_manifest(const std::filesystem::path& dir, const schema::Manifest& manifest, int index) {
    const auto& variant = manifest.variants(index);
    const auto sub = variant_directory(dir, manifest, index);
    auto inner = read_manifest(sub);
    const std::string source = (sub / manifest_file_name()).string();
    if (is_multi_variant(inner)) {
        throw PatternError(PatternErrorKind::corrupt, source + ": a variant may not itself hold variants");
    }
    if (inner.num_ranks() != manifest.num_ranks()) {
        throw PatternError(PatternErrorKind::size, source + ": written for " + std::to_string(inner.num_ranks()) +
                                                       " ranks, the directory's manifest says " +
                                                       std::to_string(manifest.num_ranks()));
    }
    if (inner.topology_hash() != manifest.topology_hash()) {
        throw PatternError(PatternErrorKind::topology_hash,
                           source + ": topology hash differs from the directory's manifest");
    }
    if (inner.compile_id() != variant.compile_id()) {
        throw PatternError(PatternErrorKind::mixed, source + ": variant '" + variant.name() +
                                                        "' of another compile than the directory's manifest; "
                                                        "recompile or copy the whole directory");
    }
    if (!variant.files().empty()) inner.set_segment_bytes(variant.segment_bytes());
    return inner;
}

RankSlice read_rank_slice(const std::filesystem::path& dir, std::uint32_t rank, std::uint32_t ranks) {
    RankSlice slice;
    std::filesystem::path files;
    slice.manifest = manifest_at(dir, &files);
    if (slice.manifest.num_ranks() != ranks) {
        throw PatternError(PatternErrorKind::size, dir.string() + ": pattern is for " +
                                                       std::to_string(slice.manifest.num_ranks()) +
                                                       " ranks, communicator has " + std::to_string(ranks));
    }
    std::vector<std::filesystem::path> read_from;  // per variant: where its pattern was read
    const auto add = [&](const std::filesystem::path& sub, schema::Manifest manifest, const std::string& name) {
        VariantSlice variant;
        variant.name = name;
        // A segmented copy and its base share their files: the rank's pattern is read once.
        const auto same = std::find(read_from.begin(), read_from.end(), sub);
        variant.pattern = same != read_from.end() ? slice.variants[same - read_from.begin()].pattern
                                                  : read_rank_pattern_in(sub, rank, manifest, nullptr);
        variant.source = source_in(sub, rank, manifest);
        variant.manifest = std::move(manifest);
        read_from.push_back(sub);
        slice.variants.push_back(std::move(variant));
    };
    if (!is_multi_variant(slice.manifest)) {
        add(files, slice.manifest, slice.manifest.algorithm());
        return slice;
    }
    for (int i = 0; i < slice.manifest.variants_size(); ++i) {
        add(variant_directory(dir, slice.manifest, i), read_variant_manifest(dir, slice.manifest, i),
            slice.manifest.variants(i).name());
    }
    return slice;
}

std::uint32_t band_variant(const schema::Manifest& manifest, schema::Collective collective, std::uint64_t bytes) {
    std::uint32_t chosen = 0;
    for (const auto& band : manifest.bands()) {
        if (band.collective() == collective && band.from_bytes() <= bytes) chosen = band.variant();
    }
    return chosen;
}

std::vector<std::uint32_t> band_candidates(const schema::Band& band) {
    std::vector<std::uint32_t> out{band.variant()};
    out.insert(out.end(), band.alternatives().begin(), band.alternatives().end());
    return out;
}

schema::Wisdom parse_wisdom(const std::string& bytes, const std::string& source) {
    schema::Wisdom wisdom;
    if (!parse_quietly(wisdom, bytes)) {
        throw PatternError(PatternErrorKind::corrupt, source + ": not a valid wisdom file (truncated or corrupted)");
    }
    if (wisdom.format_version() == 0) {
        throw PatternError(PatternErrorKind::version,
                           source + ": wisdom format version missing (not an nbr wisdom file?)");
    }
    if (wisdom.format_version() > kWisdomFormatVersion) {
        throw PatternError(PatternErrorKind::version, source + ": wisdom format version " +
                                                          std::to_string(wisdom.format_version()) +
                                                          " is newer than this build reads (" +
                                                          std::to_string(kWisdomFormatVersion) + "); upgrade nbr");
    }
    for (int e = 0; e < wisdom.entries_size(); ++e) {
        const auto& entry = wisdom.entries(e);
        const auto fail = [&](const std::string& why) {
            throw PatternError(PatternErrorKind::corrupt, source + ": entry " + std::to_string(e) + ": " + why);
        };
        if (entry.num_ranks() == 0) fail("no ranks");
        for (const auto& shape : entry.shapes()) {
            if (shape.collective() != schema::ALLGATHER && shape.collective() != schema::ALLTOALL) {
                fail("a shape of unknown collective " + std::to_string(shape.collective()));
            }
            if (shape.mode() < schema::BLOCKING || shape.mode() > schema::PERSISTENT) {
                fail("a shape of unknown mode " + std::to_string(shape.mode()));
            }
            if (shape.size_class() > 64) fail("size class " + std::to_string(shape.size_class()) + " out of range");
            bool named = false;
            for (const auto& candidate : shape.candidates()) named = named || candidate.name() == shape.winner();
            if (!named) fail("winner '" + shape.winner() + "' is not among the shape's candidates");
        }
    }
    return wisdom;
}

schema::Wisdom read_wisdom(const std::filesystem::path& path) {
    return parse_wisdom(read_file(path), path.string());
}

void write_wisdom(const std::filesystem::path& path, const schema::Wisdom& wisdom) {
    replace_whole_file(path, serialize_deterministic(wisdom));
}

std::string rank_file_name(std::uint32_t rank) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "rank-%06u.pb", rank);
    return buffer;
}

std::string serialize_deterministic(const google::protobuf::MessageLite& message) {
    std::string bytes;
    {
        google::protobuf::io::StringOutputStream stream(&bytes);
        google::protobuf::io::CodedOutputStream coded(&stream);
        coded.SetSerializationDeterministic(true);
        (void)message.ByteSizeLong();  // caches the sizes SerializeWithCachedSizes relies on
        message.SerializeWithCachedSizes(&coded);
    }
    return bytes;
}

std::string read_file(const std::filesystem::path& path) {
    try {
        return read_regular_file(path);
    } catch (const FileError& error) {
        throw PatternError(PatternErrorKind::io, error.what());
    }
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
    write_whole_file(path, bytes);
}

schema::Manifest read_manifest(const std::filesystem::path& dir) {
    return manifest_at(dir, nullptr);
}

schema::Manifest parse_manifest(const std::string& bytes, const std::string& source) {
    schema::Manifest manifest;
    if (!parse_quietly(manifest, bytes)) {
        throw PatternError(PatternErrorKind::corrupt, source + ": not a valid manifest (truncated or corrupted)");
    }
    check_version(manifest.format_version(), source);
    if (is_multi_variant(manifest)) {
        check_multi_variant(manifest, source);
        return manifest;
    }
    if (manifest.layout() == schema::PACKED) {
        check_packed_manifest(manifest, source);
        return manifest;
    }
    if (manifest.layout() != schema::PER_RANK) {
        throw PatternError(PatternErrorKind::corrupt, source + ": unknown layout " + std::to_string(manifest.layout()));
    }
    if (manifest.format_version() >= kMultiVariantFormatVersion) {
        throw PatternError(PatternErrorKind::corrupt, source + ": a format-" +
                                                          std::to_string(manifest.format_version()) +
                                                          " manifest that lists neither variants nor a packed layout");
    }
    if (static_cast<std::uint64_t>(manifest.rank_checksums_size()) != manifest.num_ranks()) {
        throw PatternError(PatternErrorKind::corrupt,
                           source + ": lists " + std::to_string(manifest.rank_checksums_size()) +
                               " rank checksums for " + std::to_string(manifest.num_ranks()) + " ranks");
    }
    return manifest;
}

void validate_rank_pattern(const schema::RankPattern& pattern, const std::string& source) {
    const std::uint32_t n = pattern.num_ranks();
    auto fail = [&](const std::string& what) { throw PatternError(PatternErrorKind::corrupt, source + ": " + what); };
    if (pattern.rank() >= n) {
        fail("rank " + std::to_string(pattern.rank()) + " out of range for " + std::to_string(n) + " ranks");
    }
    if (pattern.in_source_slots_size() != pattern.in_neighbors_size()) {
        fail("in_source_slots has " + std::to_string(pattern.in_source_slots_size()) + " entries for " +
             std::to_string(pattern.in_neighbors_size()) + " in-neighbors");
    }
    for (auto r : pattern.in_neighbors()) {
        if (r >= n) fail("in-neighbor " + std::to_string(r) + " out of range");
    }
    for (auto r : pattern.out_neighbors()) {
        if (r >= n) fail("out-neighbor " + std::to_string(r) + " out of range");
    }
    for (int s = 0; s < pattern.steps_size(); ++s) {
        const auto& step = pattern.steps(s);
        for (int o = 0; o < step.operations_size(); ++o) {
            const auto& op = step.operations(o);
            const std::string where = "step " + std::to_string(s) + " operation " + std::to_string(o) + ": ";
            if (op.kind() != schema::Operation::SEND && op.kind() != schema::Operation::RECV) {
                fail(where + "unknown operation kind " + std::to_string(op.kind()));
            }
            if (op.peer() >= n) fail(where + "peer " + std::to_string(op.peer()) + " out of range");
            if (op.origins_size() != op.slots_size()) {
                fail(where + "origins and slots differ in length");
            }
            if (op.origins_size() == 0) fail(where + "carries no item");
            for (auto origin : op.origins()) {
                if (origin >= n) fail(where + "item origin " + std::to_string(origin) + " out of range");
            }
        }
    }
}

namespace {

/// Checks bytes whose checksum matched (or, with `checksum_ok` false, did not): rank file of
/// another compile or corrupted; then version, rank, size, topology, compile and structure.
void parse_checked(std::string_view bytes, const std::string& file, std::uint32_t rank,
                   const schema::Manifest& manifest, bool checksum_ok, schema::RankPattern& pattern) {
    if (!checksum_ok) {
        check_same_compile(std::string(bytes), rank, manifest, file);
        throw PatternError(PatternErrorKind::checksum,
                           file + ": checksum does not match the manifest (file truncated or corrupted)");
    }
    if (!parse_quietly(pattern, bytes)) {
        throw PatternError(PatternErrorKind::corrupt, file + ": not a valid rank pattern");
    }
    check_version(pattern.format_version(), file);
    if (pattern.rank() != rank) {
        throw PatternError(PatternErrorKind::rank,
                           file + ": holds the pattern of rank " + std::to_string(pattern.rank()));
    }
    if (pattern.num_ranks() != manifest.num_ranks()) {
        throw PatternError(PatternErrorKind::size, file + ": written for " + std::to_string(pattern.num_ranks()) +
                                                       " ranks, manifest says " + std::to_string(manifest.num_ranks()));
    }
    if (pattern.topology_hash() != manifest.topology_hash()) {
        throw PatternError(PatternErrorKind::topology_hash, file + ": topology hash differs from the manifest's");
    }
    if (pattern.compile_id() != manifest.compile_id() && pattern.compile_id() != 0 && manifest.compile_id() != 0) {
        throw PatternError(PatternErrorKind::mixed, file +
                                                        ": rank pattern of another compile than the manifest's; "
                                                        "recompile or copy the whole directory");
    }
    validate_rank_pattern(pattern, file);
}

void check_rank_in_range(std::uint32_t rank, const schema::Manifest& manifest, const std::string& file) {
    if (rank >= manifest.num_ranks()) {
        throw PatternError(PatternErrorKind::size, file + ": rank " + std::to_string(rank) + " but the manifest " +
                                                       "describes " + std::to_string(manifest.num_ranks()) + " ranks");
    }
}

std::string source_in(const std::filesystem::path& dir, std::uint32_t rank, const schema::Manifest& manifest) {
    if (!is_packed(manifest)) return (dir / rank_file_name(rank)).string();
    return (dir / packed_file_name()).string() + " (rank " + std::to_string(rank) + ")";
}

schema::RankPattern read_rank_pattern_in(const std::filesystem::path& dir, std::uint32_t rank,
                                         const schema::Manifest& manifest, std::uint64_t* bytes_read) {
    const std::string source = source_in(dir, rank, manifest);
    check_rank_in_range(rank, manifest, source);
    if (is_packed(manifest)) {
        const auto slice = read_packed_slice(dir, rank, manifest);
        if (bytes_read != nullptr) *bytes_read += slice.bytes_read;
        schema::RankPattern pattern;
        parse_checked(slice.bytes, source, rank, manifest, true, pattern);
        return pattern;
    }
    const auto bytes = read_file(dir / rank_file_name(rank));
    if (bytes_read != nullptr) *bytes_read += bytes.size();
    return parse_rank_pattern(bytes, source, rank, manifest);
}

}  // namespace

std::string rank_pattern_source(const std::filesystem::path& dir, std::uint32_t rank,
                                const schema::Manifest& manifest) {
    return source_in(pattern_files(dir), rank, manifest);
}

schema::RankPattern read_rank_pattern(const std::filesystem::path& dir, std::uint32_t rank,
                                      const schema::Manifest& manifest, std::uint64_t* bytes_read) {
    return read_rank_pattern_in(pattern_files(dir), rank, manifest, bytes_read);
}

schema::RankPattern parse_rank_pattern(const std::string& bytes, const std::string& file, std::uint32_t rank,
                                       const schema::Manifest& manifest) {
    check_rank_in_range(rank, manifest, file);
    if (static_cast<std::uint64_t>(manifest.rank_checksums_size()) != manifest.num_ranks()) {
        throw PatternError(PatternErrorKind::corrupt,
                           file + ": the manifest lists no rank checksums (a packed or multi-variant directory)");
    }
    const bool ok = internal::checksum64(bytes) == manifest.rank_checksums(static_cast<int>(rank));
    schema::RankPattern pattern;
    parse_checked(bytes, file, rank, manifest, ok, pattern);
    return pattern;
}

struct RankPatternReader::State {
    std::filesystem::path dir;
    const schema::Manifest& manifest;
    std::uint32_t next, end;
    std::unique_ptr<PackedReader> packed;
    std::uint64_t file_bytes = 0;  ///< read from rank files
};

RankPatternReader::RankPatternReader(const std::filesystem::path& dir, const schema::Manifest& manifest,
                                     std::uint32_t begin, std::uint32_t end)
    : state_(std::make_unique<State>(
          State{pattern_files(dir), manifest, begin, std::min(end, manifest.num_ranks()), nullptr})) {
    if (is_packed(manifest) && state_->next < state_->end) {
        state_->packed = std::make_unique<PackedReader>(state_->dir, manifest, kReadBlockBytes);
    }
}

RankPatternReader::~RankPatternReader() = default;

bool RankPatternReader::next(schema::RankPattern& pattern) {
    State& s = *state_;
    if (s.next >= s.end) return false;
    const std::uint32_t rank = s.next;
    const std::string source = source_in(s.dir, rank, s.manifest);
    if (s.packed) {
        parse_checked(s.packed->slice(rank), source, rank, s.manifest, true, pattern);
    } else {
        const auto bytes = read_file(s.dir / rank_file_name(rank));
        s.file_bytes += bytes.size();
        pattern = parse_rank_pattern(bytes, source, rank, s.manifest);
    }
    ++s.next;
    return true;
}

std::uint32_t RankPatternReader::rank() const noexcept {
    return state_->next - 1;
}

std::uint64_t RankPatternReader::bytes_read() const noexcept {
    return state_->file_bytes + (state_->packed ? state_->packed->bytes_read() : 0);
}

}  // namespace nbr
