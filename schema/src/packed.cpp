#include "nbr/schema/packed.hpp"

#include <algorithm>
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

struct PackedReader::State {
    State(const std::filesystem::path& dir, const schema::Manifest& manifest_in, std::uint64_t block)
        : file((dir / packed_file_name()).string()),
          pack(dir / packed_file_name()),
          manifest(manifest_in),
          block_bytes(block) {}
    std::string file;
    RegularFile pack;
    const schema::Manifest& manifest;
    std::uint64_t block_bytes;
    std::string index;  ///< records of ranks [index_first, index_first + index.size() / 32)
    std::uint64_t index_first = 0;
    std::string data;  ///< the file's bytes from data_offset
    std::uint64_t data_offset = 0;
};

PackedReader::PackedReader(const std::filesystem::path& dir, const schema::Manifest& manifest,
                           std::uint64_t block_bytes) {
    try {
        state_ = std::make_unique<State>(dir, manifest, block_bytes);
        check_header(state_->pack.read_at(0, kPackedHeaderBytes), state_->pack.size(), manifest, state_->file);
    } catch (const FileError& error) {
        throw PatternError(PatternErrorKind::io, error.what());
    }
}

PackedReader::~PackedReader() = default;

std::uint64_t PackedReader::bytes_read() const noexcept {
    return state_->pack.bytes_read();
}

PackedRecord PackedReader::record(std::uint32_t rank) {
    State& s = *state_;
    if (rank >= s.manifest.num_ranks()) {
        fail(PatternErrorKind::size, s.file,
             "rank " + std::to_string(rank) + " but the manifest describes " + std::to_string(s.manifest.num_ranks()) +
                 " ranks");
    }
    const std::uint64_t held = s.index.size() / kPackedRecordBytes;
    if (rank < s.index_first || rank >= s.index_first + held) {
        const std::uint64_t count = std::clamp<std::uint64_t>(s.block_bytes / kPackedRecordBytes, 1,
                                                              s.manifest.num_ranks() - std::uint64_t{rank});
        s.index = s.pack.read_at(packed_record_offset(rank), count * kPackedRecordBytes);
        s.index_first = rank;
    }
    const std::uint64_t at = (rank - s.index_first) * kPackedRecordBytes;
    const std::string bytes = at < s.index.size() ? s.index.substr(at, kPackedRecordBytes) : std::string();
    return check_record(bytes, rank, s.pack.size(), s.manifest, s.file);
}

std::string_view PackedReader::bytes_of(const PackedRecord& record) {
    State& s = *state_;
    const bool held = record.offset >= s.data_offset && record.offset - s.data_offset <= s.data.size() &&
                      record.length <= s.data.size() - (record.offset - s.data_offset);
    if (!held) {
        // check_record bounded the slice by the file's size, so the read allocates no more.
        s.data = s.pack.read_at(record.offset, std::max(record.length, s.block_bytes));
        s.data_offset = record.offset;
        if (s.data.size() < record.length) fail(PatternErrorKind::checksum, s.file, "truncated while being read");
    }
    return std::string_view(s.data).substr(record.offset - s.data_offset, record.length);
}

std::string_view PackedReader::slice(std::uint32_t rank) {
    try {
        const auto checked = record(rank);
        const auto bytes = bytes_of(checked);
        if (internal::checksum64(bytes) != checked.checksum) {
            fail(PatternErrorKind::checksum, state_->file, "rank " + std::to_string(rank) + "'s pattern corrupted");
        }
        return bytes;
    } catch (const FileError& error) {
        throw PatternError(PatternErrorKind::io, error.what());
    }
}

PackedSlice read_packed_slice(const std::filesystem::path& dir, std::uint32_t rank, const schema::Manifest& manifest) {
    PackedReader reader(dir, manifest, 0);
    PackedSlice slice;
    slice.bytes = std::string(reader.slice(rank));
    slice.bytes_read = reader.bytes_read();
    return slice;
}

}  // namespace nbr
