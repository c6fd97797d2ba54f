#include "nbr/compiler/rank_blocks.hpp"

#include <algorithm>

namespace nbr::compiler {

RankBlocks::RankBlocks(std::uint32_t num_ranks, int parts) : begin_(static_cast<std::size_t>(parts) + 1, 0) {
    const std::uint64_t base = num_ranks / static_cast<std::uint64_t>(parts);
    const std::uint64_t extra = num_ranks % static_cast<std::uint64_t>(parts);
    std::uint64_t next = 0;
    for (int q = 0; q < parts; ++q) {
        begin_[static_cast<std::size_t>(q)] = static_cast<std::uint32_t>(next);
        next += base + (static_cast<std::uint64_t>(q) < extra ? 1 : 0);
    }
    begin_.back() = num_ranks;
}

int RankBlocks::owner(std::uint32_t rank) const {
    return static_cast<int>(std::upper_bound(begin_.begin(), begin_.end(), rank) - begin_.begin()) - 1;
}

std::pair<std::vector<int>, std::vector<int>> RankBlocks::gather_layout() const {
    std::vector<int> counts, displs;
    for (int q = 0; q < parts(); ++q) {
        counts.push_back(static_cast<int>(end(q) - begin(q)));
        displs.push_back(static_cast<int>(begin(q)));
    }
    return {counts, displs};
}

}  // namespace nbr::compiler
