#include "friend_groups.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <queue>

namespace nbr::compiler::internal {

void BitRows::append(const BitRows& other, std::size_t r) {
    const auto source = other.row(r);
    bits_.insert(bits_.end(), source.begin(), source.end());
}

std::uint32_t count_and(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < a.size(); ++i) count += static_cast<std::uint32_t>(std::popcount(a[i] & b[i]));
    return count;
}

std::vector<std::uint32_t> group_members(const FriendGroup& group, std::span<const std::uint32_t> ranks,
                                         std::uint32_t self) {
    std::vector<std::uint32_t> members{self};
    for (auto f : group.friends) members.push_back(ranks[f]);
    std::sort(members.begin(), members.end());
    return members;
}

bool group_before(std::uint32_t weight_a, std::span<const std::uint32_t> members_a, std::uint32_t weight_b,
                  std::span<const std::uint32_t> members_b) {
    if (weight_a != weight_b) return weight_a > weight_b;
    return std::lexicographical_compare(members_a.begin(), members_a.end(), members_b.begin(), members_b.end());
}

namespace {

struct Candidate {
    std::uint32_t weight = 0;
    std::vector<std::uint32_t> members;  // sorted ranks, self included
    std::vector<std::uint32_t> friends;  // row indices, increasing
};

/// Heap order: the worst kept candidate on top.
struct Better {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return group_before(a.weight, a.members, b.weight, b.members);
    }
};

class Search {
public:
    Search(const BitRows& rows, std::span<const std::uint32_t> ranks, std::span<const std::uint64_t> active,
           std::uint32_t self, std::uint32_t k, std::uint32_t threshold, const GroupSearchLimits& limits)
        : rows_(rows),
          ranks_(ranks),
          self_(self),
          depth_(k - 1),
          threshold_(threshold),
          limits_(limits),
          levels_(depth_ * rows.words()),
          chosen_(depth_) {
        // Only friends that share more than Θ columns with the rank can be in a group; most
        // shared first (ties: lower rank), so that good groups fill the heap early.
        pairwise_.resize(rows.rows());
        for (std::uint32_t f = 0; f < rows.rows(); ++f) {
            pairwise_[f] = count_and(rows.row(f), active);
            if (pairwise_[f] > threshold) order_.push_back(f);
        }
        std::stable_sort(order_.begin(), order_.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return pairwise_[a] > pairwise_[b]; });
        if (depth_ > 0) descend(0, 0, active);
    }

    GroupSearchResult result() {
        GroupSearchResult result;
        result.combinations = combinations_;
        result.found = found_;
        result.capped = found_ > limits_.max_groups;
        result.truncated = truncated_;
        std::vector<Candidate> kept;
        while (!heap_.empty()) {
            kept.push_back(heap_.top());
            heap_.pop();
        }
        for (auto it = kept.rbegin(); it != kept.rend(); ++it) result.groups.push_back({it->weight, it->friends});
        return result;
    }

private:
    [[nodiscard]] bool full() const { return heap_.size() >= limits_.max_groups; }

    void descend(std::uint32_t depth, std::size_t start, std::span<const std::uint64_t> common) {
        const std::size_t still_needed = depth_ - depth - 1;  // rows to add after this one
        const std::span<std::uint64_t> next(levels_.data() + depth * rows_.words(), rows_.words());
        for (std::size_t i = start; i + still_needed < order_.size(); ++i) {
            const std::uint32_t f = order_[i];
            if (combinations_ >= limits_.max_combinations) {
                truncated_ = true;
                return;
            }
            ++combinations_;
            const auto row = rows_.row(f);
            std::uint32_t weight = 0;
            for (std::size_t w = 0; w < next.size(); ++w) {
                next[w] = common[w] & row[w];
                weight += static_cast<std::uint32_t>(std::popcount(next[w]));
            }
            if (weight <= threshold_) continue;  // ANDs only shrink: no group below this one
            chosen_[depth] = f;
            if (still_needed == 0) {
                offer(weight);
            } else {
                descend(depth + 1, i + 1, next);
                if (truncated_) return;
            }
        }
    }

    void offer(std::uint32_t weight) {
        ++found_;
        if (full() && weight < heap_.top().weight) return;
        Candidate c;
        c.weight = weight;
        c.friends = chosen_;
        std::sort(c.friends.begin(), c.friends.end());  // ranks are sorted like their rows
        c.members.push_back(self_);
        for (auto f : c.friends) c.members.push_back(ranks_[f]);
        std::sort(c.members.begin(), c.members.end());
        if (!full()) {
            heap_.push(std::move(c));
            return;
        }
        if (Better{}(c, heap_.top())) {
            heap_.pop();
            heap_.push(std::move(c));
        }
    }

    const BitRows& rows_;
    std::span<const std::uint32_t> ranks_;
    std::uint32_t self_;
    std::uint32_t depth_;  // k - 1 rows per group
    std::uint32_t threshold_;
    GroupSearchLimits limits_;
    std::vector<std::uint32_t> pairwise_;  // columns shared with each row
    std::vector<std::uint32_t> order_;     // rows that can be in a group, most shared first
    std::vector<std::uint64_t> levels_;    // partial intersections, one per depth
    std::vector<std::uint32_t> chosen_;    // rows of the current partial group
    std::priority_queue<Candidate, std::vector<Candidate>, Better> heap_;
    std::uint64_t combinations_ = 0;
    std::uint64_t found_ = 0;
    bool truncated_ = false;
};

}  // namespace

GroupSearchResult find_friend_groups(const BitRows& rows, std::span<const std::uint32_t> ranks,
                                     std::span<const std::uint64_t> active, std::uint32_t self, std::uint32_t k,
                                     std::uint32_t threshold, const GroupSearchLimits& limits) {
    if (k < 2 || limits.max_groups == 0) return {};
    return Search(rows, ranks, active, self, k, threshold, limits).result();
}

}  // namespace nbr::compiler::internal
