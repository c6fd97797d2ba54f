#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nbr::simulator {

/// @brief Parses a comma-separated list of byte counts with optional K, M, G suffixes
/// (powers of 1024), e.g. "4,1K,4M". @throws std::invalid_argument naming the bad item.
[[nodiscard]] std::vector<std::uint64_t> parse_sizes(const std::string& text);

/// @brief `parse_sizes`, every size in 1 B .. `max` bytes (a power of 1024, as nbr-calibrate's
/// limits are). @throws std::invalid_argument naming the bad item, or "sizes must lie in 1 B ..
/// 1 GiB" (for max 2^30) where one is out of range.
[[nodiscard]] std::vector<std::uint64_t> parse_sizes_up_to(const std::string& text, std::uint64_t max);

}  // namespace nbr::simulator
