#pragma once
// Adjacency files (every rank's ordered in- and out-lists) and capture directories.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "nbr/graphs/readers.hpp"
#include "nbr/graphs/topology.hpp"

namespace nbr {

/// @brief Parses an adjacency file: a `# ranks N` line, then one line per rank,
/// `RANK: IN-NEIGHBORS ; OUT-NEIGHBORS`, both lists in MPI order (docs/format.md). Unlike an
/// edge list it keeps the order of in-lists, which MPI lets differ from source order, so a
/// topology captured from an application comes back exactly.
/// @throws InputError naming `source` and line: a missing or too large rank count (checked
/// against `max_ranks` and against the lines the text can hold before allocating), a rank
/// listed twice or not at all, neighbors out of range, lists that do not pair up.
[[nodiscard]] Topology parse_adjacency(std::string_view text, const std::string& source,
                                       std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Reads an adjacency file (see parse_adjacency).
[[nodiscard]] Topology read_adjacency(const std::string& path, std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Writes an adjacency file that read_adjacency gives back exactly, after `comment`
/// lines. @throws FileError naming the file.
void write_adjacency(const std::filesystem::path& path, const Topology& topology, const std::string& comment = {});

/// @brief File names inside a capture directory (written by libnbr-capture).
inline constexpr const char* kCaptureTopologyFile = "neighbors.adj";
inline constexpr const char* kCapturePlacementFile = "placement.txt";

/// @brief Whether `path` is a capture directory (holds neighbors.adj).
[[nodiscard]] bool is_capture_dir(const std::filesystem::path& path);

/// @brief The capture directories directly inside `root` (what one run with NBR_CAPTURE=root
/// writes: root/000000, root/000001, ...), sorted by name; empty if `root` is not a directory,
/// is itself a capture directory, or holds none.
[[nodiscard]] std::vector<std::filesystem::path> list_capture_dirs(const std::filesystem::path& root);

}  // namespace nbr
