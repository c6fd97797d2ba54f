// The candidate-group search of kgroup (Alg. 2 lines 14-19) against brute-force enumeration.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "friend_groups.hpp"

namespace {

using nbr::compiler::internal::BitRows;
using nbr::compiler::internal::find_friend_groups;
using nbr::compiler::internal::FriendGroup;
using nbr::compiler::internal::group_before;
using nbr::compiler::internal::group_members;
using nbr::compiler::internal::GroupSearchLimits;

struct Case {
    BitRows rows;
    BitRows active;
    std::vector<std::uint32_t> ranks;
    std::uint32_t self = 0;
};

/// `friends` rows over `columns` columns, each bit set with probability `density`; the rank
/// itself sits between the friends' ranks.
Case random_case(std::mt19937_64& rng, std::size_t friends, std::size_t columns, double density) {
    Case c{BitRows(friends, columns), BitRows(1, columns), {}, 0};
    std::bernoulli_distribution bit(density), on(0.9);
    for (std::size_t f = 0; f < friends; ++f) {
        for (std::size_t j = 0; j < columns; ++j) {
            if (bit(rng)) c.rows.set(f, j);
        }
    }
    for (std::size_t j = 0; j < columns; ++j) {
        if (on(rng)) c.active.set(0, j);
    }
    c.self = static_cast<std::uint32_t>(2 * (friends / 2) + 1);
    for (std::uint32_t f = 0; f < friends; ++f) c.ranks.push_back(2 * f);  // even; self is odd
    return c;
}

struct Expected {
    std::uint32_t weight;
    std::vector<std::uint32_t> members;
};

/// Every (k-1)-subset of rows whose AND with active has more than `threshold` bits, best first.
std::vector<Expected> brute_force(const Case& c, std::uint32_t k, std::uint32_t threshold) {
    std::vector<Expected> all;
    const std::size_t n = c.rows.rows();
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(k - 1, n)), true);
    if (k - 1 > n) return all;
    do {
        FriendGroup g;
        std::vector<std::uint64_t> bits(c.active.row(0).begin(), c.active.row(0).end());
        for (std::uint32_t f = 0; f < n; ++f) {
            if (!pick[f]) continue;
            g.friends.push_back(f);
            for (std::size_t w = 0; w < bits.size(); ++w) bits[w] &= c.rows.row(f)[w];
        }
        std::uint32_t weight = 0;
        for (auto w : bits) weight += static_cast<std::uint32_t>(__builtin_popcountll(w));
        if (weight > threshold) all.push_back({weight, group_members(g, c.ranks, c.self)});
    } while (std::prev_permutation(pick.begin(), pick.end()));
    std::sort(all.begin(), all.end(), [](const Expected& a, const Expected& b) {
        return group_before(a.weight, a.members, b.weight, b.members);
    });
    return all;
}

TEST(FriendGroups, MatchBruteForceForEveryKAndThreshold) {
    std::mt19937_64 rng(11);
    int nonempty = 0;
    for (int trial = 0; trial < 40; ++trial) {
        const auto c = random_case(rng, 3 + trial % 10, 20 + 13 * (trial % 11), 0.2 + 0.05 * (trial % 9));
        for (std::uint32_t k = 2; k <= 5; ++k) {
            for (std::uint32_t threshold : {0U, 2U, 5U}) {
                SCOPED_TRACE("trial " + std::to_string(trial) + " k " + std::to_string(k) + " threshold " +
                             std::to_string(threshold));
                const auto expected = brute_force(c, k, threshold);
                const auto result = find_friend_groups(c.rows, c.ranks, c.active.row(0), c.self, k, threshold,
                                                       GroupSearchLimits{1'000'000, 10'000'000});
                EXPECT_FALSE(result.truncated);
                EXPECT_FALSE(result.capped);
                EXPECT_EQ(result.found, expected.size());
                ASSERT_EQ(result.groups.size(), expected.size());
                for (std::size_t i = 0; i < expected.size(); ++i) {
                    EXPECT_EQ(result.groups[i].weight, expected[i].weight);
                    EXPECT_EQ(group_members(result.groups[i], c.ranks, c.self), expected[i].members);
                }
                nonempty += expected.empty() ? 0 : 1;
            }
        }
    }
    EXPECT_GT(nonempty, 200);  // the cases exercise the search, not only empty answers
}

TEST(FriendGroups, CapKeepsTheBestAndSaysSo) {
    std::mt19937_64 rng(5);
    const auto c = random_case(rng, 12, 150, 0.5);
    const auto expected = brute_force(c, 3, 10);
    ASSERT_GT(expected.size(), 20U);
    const auto result =
        find_friend_groups(c.rows, c.ranks, c.active.row(0), c.self, 3, 10, GroupSearchLimits{7, 10'000'000});
    EXPECT_TRUE(result.capped);
    EXPECT_EQ(result.found, expected.size());
    ASSERT_EQ(result.groups.size(), 7U);
    for (std::size_t i = 0; i < 7; ++i) {
        EXPECT_EQ(group_members(result.groups[i], c.ranks, c.self), expected[i].members);
    }
}

TEST(FriendGroups, BudgetStopsTheSearchWithValidGroups) {
    std::mt19937_64 rng(9);
    const auto c = random_case(rng, 12, 150, 0.6);
    const auto expected = brute_force(c, 4, 8);
    const auto result = find_friend_groups(c.rows, c.ranks, c.active.row(0), c.self, 4, 8, GroupSearchLimits{1000, 40});
    EXPECT_TRUE(result.truncated);
    EXPECT_EQ(result.combinations, 40U);
    EXPECT_LT(result.found, expected.size());
    EXPECT_GT(result.found, 0U);
    for (const auto& g : result.groups) {
        const auto members = group_members(g, c.ranks, c.self);
        const auto it =
            std::find_if(expected.begin(), expected.end(), [&](const Expected& e) { return e.members == members; });
        ASSERT_NE(it, expected.end());
        EXPECT_EQ(it->weight, g.weight);
    }
}

TEST(FriendGroups, NothingForTooFewFriendsOrColumns) {
    BitRows rows(2, 0), active(1, 0);
    const std::vector<std::uint32_t> ranks{1, 2};
    EXPECT_TRUE(find_friend_groups(rows, ranks, active.row(0), 0, 2, 0, {}).groups.empty());
    BitRows one(1, 10), all(1, 10);
    for (int j = 0; j < 10; ++j) one.set(0, j), all.set(0, j);
    const std::vector<std::uint32_t> rank{3};
    EXPECT_EQ(find_friend_groups(one, rank, all.row(0), 0, 2, 9, {}).groups.size(), 1U);
    EXPECT_TRUE(find_friend_groups(one, rank, all.row(0), 0, 2, 10, {}).groups.empty());  // 10 does not exceed 10
    EXPECT_TRUE(find_friend_groups(one, rank, all.row(0), 0, 3, 0, {}).groups.empty());   // k - 1 > friends
}

}  // namespace
