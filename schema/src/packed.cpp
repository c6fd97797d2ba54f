#include "nbr/schema/packed.hpp"

#include <array>

#include "nbr/schema/file_io.hpp"
#include "nbr/schema/hash.hpp"

namespace nbr {

namespace {

constexpr char kMagic[] = "NBRPACK1";  // the header's first 8 bytes
constexpr std::uint64_t kHeaderWords = kPackedHeaderBytes / 8;

void put_word(std::string& out, std::uint64_t word) {
    for (int k = 0; k < 8; ++k) out += static_cast<char>((word >> (8 * k)) & 0xff);
}

std::uint64_t word_at(const std::string& bytes, std::size_t index) {
    std::uint64_t word = 0;
    for (std::size_t k = 0; k < 8; ++k) {
        word |= std::uint64_t{static_cast<unsigned char>(bytes[8 * index + k])} << (8 * k);
    }
    return word;
}

template <std::size_t N>
std::uint64_t check_word(const std::array<std::uint64_t, N>& words) {
    internal::Hasher hasher;
    for (auto w : words) hasher.update(w);
    return hasher.digest();
}

std::uint64_t magic_word() {
    return word_at(std::string(kMagic, 8), 0);
}

std::uint64_t record_check(std::uint64_t compile_id, std::uint64_t rank, const PackedRecord& r) {
    return check_word(std::array<std::uint64_t, 5>{compile_id, rank, r.offset, r.length, r.checksum});
}

[[noreturn]] void fail(PatternErrorKind kind, const std::string& file, const std::string& what) {
    throw PatternError(kind, file + ": " + what);
}

/// Header checks: magic, check word, ranks and compile as the manifest's, the size as written.
void check_header(const std::string& header, std::uint64_t file_size, const schema::Manifest& manifest,
                  const std::string& file) {
    if (header.size() < kPackedHeaderBytes) {
        fail(PatternErrorKind::checksum, file, "truncated (" + std::to_string(file_size) + " bytes, no header)");
    }
    std::array<std::uint64_t, kHeaderWords - 1> words{};
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = word_at(header, i);
    if (words[0] != magic_word()) fail(PatternErrorKind::corrupt, file, "not an nbr pack file");
    if (word_at(header, kHeaderWords - 1) != check_word(words)) {
        fail(PatternErrorKind::checksum, file, "header corrupted");
    }
    if (words[1] > kFormatVersion) {
        fail(PatternErrorKind::version, file,
             "format version " + std::to_string(words[1]) + " is newer than this build supports; upgrade nbr");
    }
    if (words[3] != manifest.compile_id() || words[2] != manifest.num_ranks()) {
        fail(PatternErrorKind::mixed, file,
             "pack file of another compile than the manifest's; recompile or copy "
             "the whole directory");
    }
    if (words[5] != kPackedRecordBytes) fail(PatternErrorKind::corrupt, file, "unknown index record size");
    if (file_size < words[4]) {
        fail(PatternErrorKind::checksum, file,
             "truncated (" + std::to_string(file_size) + " of " + std::to_string(words[4]) + " bytes)");
    }
    if (file_size > words[4]) {
        fail(PatternErrorKind::corrupt, file,
             std::to_string(file_size) + " bytes, its header says " + std::to_string(words[4]));
    }
}

/// Record checks: the check word, and a slice inside the data part of the file.
PackedRecord check_record(const std::string& bytes, std::uint32_t rank, std::uint64_t file_size,
                          const schema::Manifest& manifest, const std::string& file) {
    const std::string who = "index record of rank " + std::to_string(rank);
    if (bytes.size() < kPackedRecordBytes) fail(PatternErrorKind::checksum, file, who + " truncated");
    const PackedRecord record{word_at(bytes, 0), word_at(bytes, 1), word_at(bytes, 2)};
    if (word_at(bytes, 3) != record_check(manifest.compile_id(), rank, record)) {
        fail(PatternErrorKind::checksum, file, who + " corrupted");
    }
    const std::uint64_t data = packed_data_offset(manifest.num_ranks());
    if (record.offset < data || record.offset > file_size || record.length > file_size - record.offset) {
        fail(PatternErrorKind::corrupt, file, who + " points outside the file");
    }
    return record;
}

}  // namespace

std::string encode_packed_header(std::uint64_t num_ranks, std::uint64_t compile_id, std::uint64_t file_bytes) {
    const std::array<std::uint64_t, kHeaderWords - 1> words{magic_word(), kPackedFormatVersion, num_ranks, compile_id,
                                                            file_bytes,   kPackedRecordBytes,   0};
    std::string out;
    out.reserve(kPackedHeaderBytes);
    for (auto w : words) put_word(out, w);
    put_word(out, check_word(words));
    return out;
}

std::string encode_packed_record(std::uint64_t compile_id, std::uint64_t rank, const PackedRecord& record) {
    std::string out;
    out.reserve(kPackedRecordBytes);
    for (auto w : {record.offset, record.length, record.checksum}) put_word(out, w);
    put_word(out, record_check(compile_id, rank, record));
    return out;
}

PackedSlice read_packed_slice(const std::filesystem::path& dir, std::uint32_t rank, const schema::Manifest& manifest) {
    const auto path = dir / packed_file_name();
    const std::string file = path.string();
    try {
        const RegularFile pack(path);
        check_header(pack.read_at(0, kPackedHeaderBytes), pack.size(), manifest, file);
        const auto record = check_record(pack.read_at(packed_record_offset(rank), kPackedRecordBytes), rank,
                                         pack.size(), manifest, file);
        PackedSlice slice;
        slice.bytes = pack.read_at(record.offset, record.length);
        if (internal::checksum64(slice.bytes) != record.checksum) {
            fail(PatternErrorKind::checksum, file, "rank " + std::to_string(rank) + "'s pattern corrupted");
        }
        slice.bytes_read = pack.bytes_read();
        return slice;
    } catch (const FileError& error) {
        throw PatternError(PatternErrorKind::io, error.what());
    }
}

}  // namespace nbr
