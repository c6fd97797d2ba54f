#pragma once

#include <cstdint>
#include <string_view>

namespace nbr::internal {

/// @brief Incremental 64-bit hash (FNV-1a over 64-bit words with a final avalanche).
///
/// Used for topology hashes and file checksums (specified in docs/format.md, "Checksums and
/// hashes"). The value depends only on the words fed in; bytes are read as little-endian
/// words whatever the host's byte order, so every host computes the same value.
class Hasher {
public:
    /// @brief Feeds one 64-bit word.
    void update(std::uint64_t word) noexcept {
        state_ ^= word;
        state_ *= 0x100000001b3ULL;
        state_ ^= state_ >> 29;
    }

    /// @brief Feeds raw bytes: 8 at a time as a little-endian word, then the tail (0 to 7
    /// bytes) zero-padded to a word, then the length in bytes.
    void update_bytes(std::string_view bytes) noexcept {
        std::size_t i = 0;
        for (; i + 8 <= bytes.size(); i += 8) update(little_endian(bytes.data() + i, 8));
        update(little_endian(bytes.data() + i, bytes.size() - i));
        update(bytes.size());
    }

    /// @brief Returns the hash of everything fed so far.
    [[nodiscard]] std::uint64_t digest() const noexcept {
        std::uint64_t x = state_;
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        x ^= x >> 33;
        return x;
    }

private:
    /// The word whose byte k (k < n) is p[k] and whose other bytes are 0.
    static std::uint64_t little_endian(const char* p, std::size_t n) noexcept {
        std::uint64_t word = 0;
        for (std::size_t k = 0; k < n; ++k) word |= std::uint64_t{static_cast<unsigned char>(p[k])} << (8 * k);
        return word;
    }

    std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

/// @brief Checksum of a byte string, as stored in the manifest for every rank file.
[[nodiscard]] inline std::uint64_t checksum64(std::string_view bytes) noexcept {
    Hasher hasher;
    hasher.update_bytes(bytes);
    return hasher.digest();
}

}  // namespace nbr::internal
