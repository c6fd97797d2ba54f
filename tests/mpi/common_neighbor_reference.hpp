#pragma once

// An independent, centralized reference of the common-neighbor pattern: it recomputes the
// common-neighbor counts from scratch every iteration and runs Alg. 2 literally, round by
// round, every searching rank re-deciding and re-sending its choice every round. The
// compiler's distributed, event-driven implementation must produce the same sends.
#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "nbr/graphs/topology.hpp"

namespace nbr::test {

struct ReferenceSend {
    std::uint32_t step;
    std::uint32_t peer;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> items;
    friend bool operator==(const ReferenceSend&, const ReferenceSend&) = default;
};

struct ReferencePattern {
    std::vector<std::vector<ReferenceSend>> sends;  // per rank, step 0 then step 1, in order
    std::uint64_t rounds = 0;
    std::uint32_t iterations = 0;
};

inline ReferencePattern reference_common_neighbor(const Topology& t, std::uint32_t threshold) {
    const std::uint32_t n = t.num_ranks();
    constexpr std::uint32_t kNone = UINT32_MAX;
    std::vector<std::set<std::uint32_t>> active(n);  // distinct active out-neighbors, no self
    for (std::uint32_t v = 0; v < n; ++v) {
        for (auto w : t.out_neighbors(v)) {
            if (w != v) active[v].insert(w);
        }
    }
    std::vector<std::set<std::uint32_t>> combined(n);  // neighbors handled by combining
    std::vector<std::vector<ReferenceSend>> step0(n), step1(n);
    auto slots_to = [&](std::uint32_t v, std::uint32_t w) {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> items;
        const auto out = t.out_neighbors(v);
        for (std::uint32_t s = 0; s < out.size(); ++s) {
            if (out[s] == w) items.emplace_back(v, s);
        }
        return items;
    };
    // Friends never come back once below Θ (counts only decrease): track the ever-friends.
    std::vector<std::vector<std::uint8_t>> was_friend(n, std::vector<std::uint8_t>(n, 1));
    ReferencePattern result;
    while (true) {
        std::vector<std::vector<std::uint32_t>> count(n, std::vector<std::uint32_t>(n, 0));
        bool any = false;
        for (std::uint32_t p = 0; p < n; ++p) {
            for (std::uint32_t q = 0; q < n; ++q) {
                if (p == q) continue;
                for (auto w : active[p]) count[p][q] += active[q].count(w);
                if (count[p][q] < threshold) was_friend[p][q] = 0;
                any = any || (was_friend[p][q] && count[p][q] >= threshold);
            }
        }
        if (!any) break;
        auto is_friend = [&](std::uint32_t p, std::uint32_t q) {
            return p != q && was_friend[p][q] && count[p][q] >= threshold;
        };
        enum { searching, paired, terminal };
        std::vector<int> status(n, terminal);
        std::vector<std::uint32_t> choice(n, kNone);
        std::vector<std::set<std::uint32_t>> dropped(n), chose_me(n);
        for (std::uint32_t p = 0; p < n; ++p) {
            for (std::uint32_t q = 0; q < n; ++q) {
                if (is_friend(p, q)) status[p] = searching;
            }
        }
        auto best = [&](std::uint32_t p, const std::vector<int>& st) {
            std::uint32_t b = kNone, bc = 0;
            for (std::uint32_t q = 0; q < n; ++q) {
                if (is_friend(p, q) && !dropped[p].count(q) && st[q] == searching && count[p][q] > bc) {
                    b = q;
                    bc = count[p][q];
                }
            }
            return b;
        };
        for (std::uint64_t round = 0;; ++round) {
            if (std::none_of(status.begin(), status.end(), [&](int s) { return s == searching; })) {
                result.rounds += round;
                break;
            }
            const std::vector<int> before = status;
            std::vector<std::set<std::uint32_t>> chose_now(n);
            for (std::uint32_t p = 0; p < n; ++p) {
                if (before[p] != searching) continue;
                const std::uint32_t old = choice[p];
                std::uint32_t next = kNone;
                if (round == 0) {
                    next = best(p, before);
                } else if (old != kNone && before[old] == searching && p < old) {
                    next = old;
                } else {
                    std::uint32_t bc = 0;
                    for (auto g : chose_me[p]) {
                        if (g < p && before[g] == searching && is_friend(p, g) && !dropped[p].count(g) &&
                            count[p][g] > bc) {
                            next = g;
                            bc = count[p][g];
                        }
                    }
                    if (next == kNone) {
                        if (old != kNone) dropped[p].insert(old);
                        next = best(p, before);
                    }
                }
                if (next == kNone) {
                    status[p] = terminal;
                    choice[p] = kNone;
                } else {
                    choice[p] = next;
                    chose_now[next].insert(p);
                }
            }
            for (std::uint32_t p = 0; p < n; ++p) {
                if (status[p] == searching && chose_now[p].count(choice[p])) status[p] = paired;
            }
            chose_me = chose_now;
        }
        // Combine.
        std::vector<std::set<std::uint32_t>> next_active = active;
        for (std::uint32_t p = 0; p < n; ++p) {
            if (status[p] != paired) continue;
            const std::uint32_t q = choice[p];
            std::vector<std::uint32_t> common;
            for (auto w : active[p]) {
                if (active[q].count(w)) common.push_back(w);
            }
            const std::size_t half = (common.size() + 1) / 2;
            std::set<std::uint32_t> on = p < q ? std::set<std::uint32_t>(common.begin(), common.begin() + half)
                                               : std::set<std::uint32_t>(common.begin() + half, common.end());
            std::vector<std::pair<std::uint32_t, std::uint32_t>> offloaded;
            const auto out = t.out_neighbors(p);
            for (std::uint32_t s = 0; s < out.size(); ++s) {
                if (std::count(common.begin(), common.end(), out[s]) && !on.count(out[s])) offloaded.emplace_back(p, s);
            }
            if (!offloaded.empty()) step0[p].push_back({0, q, offloaded});
            for (auto w : on) {
                auto items = slots_to(p, w);
                const auto theirs = slots_to(q, w);
                items.insert(items.end(), theirs.begin(), theirs.end());
                step1[p].push_back({1, w, items});
            }
            for (auto w : common) {
                next_active[p].erase(w);
                combined[p].insert(w);
            }
        }
        active = next_active;
        ++result.iterations;
    }
    result.sends.resize(n);
    for (std::uint32_t v = 0; v < n; ++v) {
        const auto out = t.out_neighbors(v);
        for (std::uint32_t s = 0; s < out.size(); ++s) {
            if (!combined[v].count(out[s])) step0[v].push_back({0, out[s], {{v, s}}});
        }
        result.sends[v] = step0[v];
        result.sends[v].insert(result.sends[v].end(), step1[v].begin(), step1[v].end());
    }
    return result;
}

}  // namespace nbr::test
