#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace nbr::compiler::internal {

/// @brief Graham's longest-processing-time rule: each job (cost, key), costliest first (ties:
/// the lower key), goes to the bin with the least load so far (ties: the lower bin), whose
/// load grows by the job's cost. `load` holds the bins' loads before (and after) the deal.
/// The costliest bin then carries at most 4/3 of the best possible deal's. Deterministic.
/// @return the bin chosen per job, in the jobs' order
template <class Cost, class Key>
std::vector<std::size_t> longest_first(const std::vector<std::pair<Cost, Key>>& jobs, std::vector<Cost>& load) {
    std::vector<std::size_t> order(jobs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::pair(jobs[b].first, jobs[a].second) < std::pair(jobs[a].first, jobs[b].second);
    });
    std::vector<std::size_t> chosen(jobs.size());
    for (const std::size_t j : order) {
        const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[least] += jobs[j].first;
        chosen[j] = least;
    }
    return chosen;
}

}  // namespace nbr::compiler::internal
