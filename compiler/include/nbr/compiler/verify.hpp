#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "nbr/graphs/topology.hpp"
#include "nbr_pattern.pb.h"

namespace nbr::compiler {

/// @brief Outcome of a pattern verification.
struct VerifyReport {
    bool ok = false;
    std::string violation;  ///< first violation found (empty when ok)
    std::uint32_t ranks = 0;
    std::uint64_t edges = 0;
    std::uint64_t messages = 0;         ///< send operations over all ranks
    std::uint64_t items_moved = 0;      ///< items carried over all messages
    std::uint32_t steps = 0;            ///< longest schedule
    std::vector<std::string> variants;  ///< auto directories: the variants proven (figures summed over them)
    /// Patterns with a segment size: the segmented forms proven, one per power of two of blocks
    /// per segment below the longest staged message (the most over the variants).
    std::uint32_t segment_forms = 0;
};

/// @brief Proves a set of rank patterns correct by executing them symbolically:
///  - every rank's in/out lists and in_source_slots form one consistent topology whose
///    hash is `topology_hash` (and equal `expected` when given);
///  - the k-th send from a rank to a peer matches the k-th receive of that peer from the
///    rank: same step, same items in the same order; no send or receive is left unmatched;
///  - a rank sends an item only if it owns it or received it in an earlier step;
///  - every edge's item is received by the edge's destination exactly once.
/// One process's proof: verify_patterns over MPI_COMM_SELF.
[[nodiscard]] VerifyReport verify_patterns(const std::vector<schema::RankPattern>& patterns,
                                           std::uint64_t topology_hash, const Topology* expected = nullptr);

/// @brief The same proof spread over the processes of `comm`: each holds the patterns of its
/// block of ranks (verify_block) and exchanges with the others what its checks need (out-edges
/// for the in-lists' checks, sends for their receives' processes, the neighborhood hashes),
/// so that no process holds more than its block and its messages. Collective; every process
/// returns the same report, with the violation of the lowest process that found one.
[[nodiscard]] VerifyReport verify_patterns(MPI_Comm comm, const std::vector<schema::RankPattern>& local,
                                           std::uint32_t num_ranks, std::uint64_t topology_hash,
                                           const Topology* expected = nullptr);

/// @brief The ranks [begin, end) whose patterns this process holds in a verification over `comm`.
[[nodiscard]] std::pair<std::uint32_t, std::uint32_t> verify_block(MPI_Comm comm, std::uint32_t num_ranks);

/// @brief Reads a pattern directory (manifest, checksums, every rank file) and verifies it;
/// an auto directory's every variant. File problems are reported as violations naming the file.
[[nodiscard]] VerifyReport verify_directory(const std::filesystem::path& dir, const Topology* expected = nullptr);

/// @brief verify_directory over the processes of `comm`, each reading and checking its block of
/// ranks (verify_patterns above). Collective; the same report on every process.
[[nodiscard]] VerifyReport verify_directory(MPI_Comm comm, const std::filesystem::path& dir,
                                            const Topology* expected = nullptr);

/// @brief Reads every rank file of a directory (checked against the manifest).
/// @throws PatternError naming the file.
[[nodiscard]] std::vector<schema::RankPattern> read_all_rank_patterns(const std::filesystem::path& dir,
                                                                      const schema::Manifest& manifest);

}  // namespace nbr::compiler
