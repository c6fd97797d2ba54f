// Candidate friend groups of one rank (Ghazimirsaeed et al., Alg. 2 lines 14-19): the
// (k-1)-combinations of rows of matrix A whose AND has more than Θ bits, found by a bounded
// depth-first search over bitsets.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nbr::compiler::internal {

/// @brief Rows of equal length over a rank's columns (its distinct out-neighbors), packed
/// 64 to a word.
class BitRows {
public:
    BitRows() = default;
    BitRows(std::size_t rows, std::size_t columns) : words_((columns + 63) / 64), bits_(rows * words_, 0) {}

    [[nodiscard]] std::size_t words() const noexcept { return words_; }
    [[nodiscard]] std::size_t rows() const noexcept { return words_ == 0 ? 0 : bits_.size() / words_; }
    [[nodiscard]] std::span<std::uint64_t> row(std::size_t r) { return {bits_.data() + r * words_, words_}; }
    [[nodiscard]] std::span<const std::uint64_t> row(std::size_t r) const {
        return {bits_.data() + r * words_, words_};
    }
    void set(std::size_t r, std::size_t column) { bits_[r * words_ + column / 64] |= bit(column); }
    void clear(std::size_t r, std::size_t column) { bits_[r * words_ + column / 64] &= ~bit(column); }
    [[nodiscard]] bool test(std::size_t r, std::size_t column) const {
        return (bits_[r * words_ + column / 64] & bit(column)) != 0;
    }
    /// @brief Appends a copy of row `r` of `other` (same width).
    void append(const BitRows& other, std::size_t r);

private:
    static std::uint64_t bit(std::size_t column) { return std::uint64_t{1} << (column % 64); }
    std::size_t words_ = 0;
    std::vector<std::uint64_t> bits_;
};

/// @brief Number of set bits of a AND b.
[[nodiscard]] std::uint32_t count_and(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b);

/// @brief One candidate group: `friends` are row indices (k-1 of them, in increasing rank
/// order), `weight` the number of columns common to the rank and all of them.
struct FriendGroup {
    std::uint32_t weight = 0;
    std::vector<std::uint32_t> friends;
};

/// @brief What the search may spend per rank.
struct GroupSearchLimits {
    std::uint32_t max_groups = 256;            ///< groups kept (the best ones)
    std::uint64_t max_combinations = 100'000;  ///< partial intersections computed
};

/// @brief The search's outcome: the kept groups, best first.
struct GroupSearchResult {
    std::vector<FriendGroup> groups;
    std::uint64_t found = 0;         ///< qualifying groups the search met (kept or not)
    std::uint64_t combinations = 0;  ///< partial intersections computed
    bool capped = false;             ///< more groups qualified than max_groups
    bool truncated = false;          ///< the budget ran out before the search finished
};

/// @brief Finds the groups of `k - 1` rows of `rows` (friend ranks `ranks`, sorted
/// increasingly, none equal to `self`) whose AND with `active` has more than `threshold` bits.
///
/// Groups are ordered by weight (descending), then by their member ranks with `self`
/// included, as sorted tuples (ascending): the one total order every member of a group
/// computes alike. Every qualifying group is counted and the best `max_groups` are kept.
/// Partial intersections at or below the threshold are pruned (ANDs only shrink). Friends are
/// tried most-shared first, so a truncated search keeps heavy groups. Deterministic.
[[nodiscard]] GroupSearchResult find_friend_groups(const BitRows& rows, std::span<const std::uint32_t> ranks,
                                                   std::span<const std::uint64_t> active, std::uint32_t self,
                                                   std::uint32_t k, std::uint32_t threshold,
                                                   const GroupSearchLimits& limits);

/// @brief The sorted member ranks of a group: `self` and the ranks of its friend rows.
[[nodiscard]] std::vector<std::uint32_t> group_members(const FriendGroup& group, std::span<const std::uint32_t> ranks,
                                                       std::uint32_t self);

/// @brief True if group a (weight, sorted members) precedes group b in the search order.
[[nodiscard]] bool group_before(std::uint32_t weight_a, std::span<const std::uint32_t> members_a,
                                std::uint32_t weight_b, std::span<const std::uint32_t> members_b);

}  // namespace nbr::compiler::internal
