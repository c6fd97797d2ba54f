#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nbr/graphs/topology.hpp"

namespace nbr {

/// @brief Topology file formats.
enum class InputFormat {
    automatic,      ///< a capture directory, or by extension: .mtx, .adj, else an edge list
    edge_list,      ///< "src dst" per line, 0-based, '#' comments, extra columns ignored
    matrix_market,  ///< Matrix Market coordinate file, mapped to a process graph
    adjacency       ///< every rank's ordered in- and out-lists (adjacency.hpp)
};

/// @brief Default largest number of ranks a topology file may give (`nbrc --max-ranks`).
/// Files name rank counts in headers and directives; a reader checks them against this limit
/// and against the file's own size before it allocates, so a typo or a hostile header costs
/// an error message, not gigabytes. 2^24 ranks is beyond today's largest MPI jobs.
inline constexpr std::uint32_t kDefaultMaxRanks = 1u << 24;

/// @brief Parses "auto", "edgelist", "mtx" or "adj".
[[nodiscard]] std::optional<InputFormat> parse_input_format(std::string_view name);

/// @brief Reads an edge list.
///
/// The number of ranks is `ranks` if given, else the value of a `# ranks N` comment line,
/// else one more than the largest index. Duplicate edges and self-loops are kept.
/// @throws InputError naming file and line for malformed lines, out-of-range ranks and rank
/// counts above `max_ranks`.
[[nodiscard]] Topology read_edge_list(const std::string& path, std::optional<std::uint32_t> ranks = std::nullopt,
                                      std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Reads a Matrix Market coordinate file and maps it to the process graph of a
/// row-block SpMV: rows and columns are block-distributed over `ranks` processes
/// (default: one per row); the owner of column j sends to the owner of row i when A(i,j)
/// is stored (or implied by symmetry) and the owners differ. Each process pair appears
/// at most once; neighbor lists are sorted.
/// @throws InputError naming file and line, also when the size line declares more entries
/// than the rest of the file can hold or more ranks than `max_ranks`.
[[nodiscard]] Topology read_matrix_market(const std::string& path, std::optional<std::uint32_t> ranks = std::nullopt,
                                          std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Parses edge-list text as read_edge_list does; `source` names it in messages.
[[nodiscard]] Topology parse_edge_list(std::string_view text, const std::string& source,
                                       std::optional<std::uint32_t> ranks = std::nullopt,
                                       std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Parses Matrix Market text as read_matrix_market does; `source` names it in messages.
[[nodiscard]] Topology parse_matrix_market(std::string_view text, const std::string& source,
                                           std::optional<std::uint32_t> ranks = std::nullopt,
                                           std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Reads a topology in the given (or detected) format; a capture directory
/// (libnbr-capture) is read through its neighbors.adj.
[[nodiscard]] Topology read_topology(const std::string& path, InputFormat format,
                                     std::optional<std::uint32_t> ranks = std::nullopt,
                                     std::uint32_t max_ranks = kDefaultMaxRanks);

/// @brief Writes an edge list (grouped by source, in out-list order) after optional comment
/// lines and a `# ranks N` line. read_edge_list gives back the same out-lists; in-lists come
/// back ordered by source rank.
void write_edge_list(const std::string& path, const Topology& topology, const std::string& comment = {});

/// @brief Owner of `index` when `count` indices are block-distributed over `parts` parts
/// (the first count % parts parts get one index more).
[[nodiscard]] std::uint32_t block_owner(std::uint64_t index, std::uint64_t count, std::uint32_t parts);

}  // namespace nbr
