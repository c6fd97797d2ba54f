#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nbr::simulator {

/// @brief Parses a comma-separated list of byte counts with optional K, M, G suffixes
/// (powers of 1024), e.g. "4,1K,4M". @throws std::invalid_argument naming the bad item.
[[nodiscard]] std::vector<std::uint64_t> parse_sizes(const std::string& text);

}  // namespace nbr::simulator
