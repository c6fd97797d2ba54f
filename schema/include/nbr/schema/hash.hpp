#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace nbr::internal {

/// @brief Incremental 64-bit hash (FNV-1a over 64-bit words with a final avalanche).
///
/// Used for topology hashes and file checksums. The value only depends on the sequence of
/// words fed in, never on the platform's byte order of the host files.
class Hasher {
public:
    /// @brief Feeds one 64-bit word.
    void update(std::uint64_t word) noexcept {
        state_ ^= word;
        state_ *= 0x100000001b3ULL;
        state_ ^= state_ >> 29;
    }

    /// @brief Feeds raw bytes (8 at a time, the tail zero-padded, then the length).
    void update_bytes(std::string_view bytes) noexcept {
        std::size_t i = 0;
        for (; i + 8 <= bytes.size(); i += 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, bytes.data() + i, 8);
            update(word);
        }
        std::uint64_t tail = 0;
        if (i < bytes.size()) std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
        update(tail);
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
    std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

/// @brief Checksum of a byte string, as stored in the manifest for every rank file.
[[nodiscard]] inline std::uint64_t checksum64(std::string_view bytes) noexcept {
    Hasher hasher;
    hasher.update_bytes(bytes);
    return hasher.digest();
}

}  // namespace nbr::internal
