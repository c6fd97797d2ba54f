#pragma once
// N virtual ranks in P contiguous blocks: how the compiler's engine hosts them and how
// `nbrc verify` splits a pattern directory among its processes.

#include <cstdint>
#include <utility>
#include <vector>

namespace nbr::compiler {

/// @brief N ranks split into P contiguous blocks in process order, the first N mod P blocks
/// one rank longer (blocks are empty when P > N).
class RankBlocks {
public:
    RankBlocks(std::uint32_t num_ranks, int parts);
    [[nodiscard]] std::uint32_t num_ranks() const noexcept { return begin_.back(); }
    [[nodiscard]] int parts() const noexcept { return static_cast<int>(begin_.size()) - 1; }
    /// @brief First rank of block q (q = parts() gives num_ranks()).
    [[nodiscard]] std::uint32_t begin(int q) const noexcept { return begin_[static_cast<std::size_t>(q)]; }
    /// @brief One past the last rank of block q.
    [[nodiscard]] std::uint32_t end(int q) const noexcept { return begin(q + 1); }
    /// @brief The block holding `rank`.
    [[nodiscard]] int owner(std::uint32_t rank) const;
    /// @brief Counts and displacements of the blocks, for an MPI_Gatherv of one value per rank.
    [[nodiscard]] std::pair<std::vector<int>, std::vector<int>> gather_layout() const;

private:
    std::vector<std::uint32_t> begin_;  // parts + 1 entries
};

}  // namespace nbr::compiler
