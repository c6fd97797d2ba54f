#pragma once
// What rank 0 of a new topology communicator decides for every rank under libnbr-preload: a
// launcher may give ranks different environments, and every rank must make the same collective
// calls, so rank 0's NBR_PATTERNS, NBR_CACHE and NBR_CACHE_* settings hold for all. Rank 0 encodes
// its decision (`encode_agreed`), broadcasts the text, and every rank decodes it
// (`decode_agreed`); the two stay side by side here.
#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

namespace nbr::interpose {

/// @brief The in-job build's options: the environment variables (docs/environment.md) and the
/// nbr_pattern_build info keys they set.
inline constexpr std::pair<const char*, const char*> kCacheKeys[] = {
    {"NBR_CACHE_ALGO", "nbr_algo"},
    {"NBR_CACHE_MACHINE", "nbr_machine"},
    {"NBR_CACHE_BUDGET", "nbr_budget"},
    {"NBR_CACHE_LIMIT", "nbr_cache_limit"},
    {"NBR_CACHE_KEEP", "nbr_keep"},
    {"NBR_CACHE_RANKS_PER_NODE", "nbr_ranks_per_node"},
    {"NBR_CACHE_RANKS_PER_SOCKET", "nbr_ranks_per_socket"}};
inline constexpr std::size_t kCacheOptions = std::size(kCacheKeys);

/// @brief Rank 0's decision for a new topology communicator.
struct Agreed {
    std::string id;                                  ///< the communicator's name in the report
    std::string cache;                               ///< NBR_CACHE, or ""
    std::array<std::string, kCacheOptions> options;  ///< NBR_CACHE_* (kCacheKeys order), "" where unset
    std::string dir;                                 ///< a pattern directory of NBR_PATTERNS for it, or ""

    bool operator==(const Agreed&) const = default;
};

/// @brief The decision as text: each field as its length, ':', then its bytes (any bytes,
/// newlines included), in the order id, cache, options, dir.
std::string encode_agreed(const Agreed& agreed);

/// @brief The decision `encode_agreed` wrote; std::nullopt for text it did not write (a field
/// cut short, a bad length, bytes left over).
std::optional<Agreed> decode_agreed(const std::string& text);

}  // namespace nbr::interpose
