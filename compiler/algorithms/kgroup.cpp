// Groups of k friends (Ghazimirsaeed, Mirsadeghi, Afsahi), written per virtual rank.
//
// Setup (Alg. 2):
//   rows      - every rank sends its in-neighbors to its in-neighbors (matrix M, shared with
//               common-neighbor); each rank builds matrix A over its distinct out-neighbors
//               (topology-aware: rows only for ranks on its node) and searches its best
//               candidate groups (friend_groups.cpp)
//   share     - every rank sends each group it kept to the group's other members, so that
//               every member of a group holds it even where the cap kept different groups
//               on different members (the friendship hypergraph stays symmetric); M is
//               dropped afterwards
// Per iteration of Alg. 1, all ranks in lock step:
//   matching rounds (Alg. 3), two supersteps each:
//     request - a rank whose best available group changed posts WITHDRAW to the members it
//               leaves and REQUEST(group) to the new group's other members
//     check   - a rank whose every fellow member requests its own choice is matched and
//               publishes MATCHED, which drops every group containing it from everyone's
//               choices (the paper's drop messages)
//   combine   - matched ranks split their sorted common neighbors into k parts by member
//               rank, post EXCHANGE (the slots another member sends for them) and REMOVED to
//               every common neighbor
//   onload    - combined sends; common neighbors post DELTA (who left their active in-set)
//   update    - rows of A lose the ranks that left, weights are recomputed, groups at or below
//               Θ are dropped
// Every decision depends only on a rank's inbox and published facts, so the output is the
// same for every compiler process count.
#include "kgroup.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "friend_groups.hpp"
#include "kgroup_messages.hpp"
#include "neighbor_rows.hpp"

namespace nbr::compiler::internal {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

enum Tag : std::uint32_t { kRequest = 1, kWithdraw, kMatched, kExchange, kRemoved, kDelta, kShare };

/// A rank's candidate groups (its part of the friendship hypergraph), best first.
struct Groups {
    std::uint32_t k = 0;
    std::vector<std::uint32_t> weight;
    std::vector<std::uint32_t> members;  // k sorted ranks per group, the rank itself included
    std::vector<std::uint32_t> rows;     // k - 1 row indices of A per group

    [[nodiscard]] std::size_t size() const { return weight.size(); }
    [[nodiscard]] std::span<const std::uint32_t> members_of(std::size_t g) const { return {members.data() + g * k, k}; }
    [[nodiscard]] std::span<const std::uint32_t> rows_of(std::size_t g) const {
        return {rows.data() + g * (k - 1), k - 1};
    }
    /// Index of the group with this weight and these members, or kNone.
    [[nodiscard]] std::uint32_t find(std::uint32_t w, std::span<const std::uint32_t> m) const {
        std::size_t lo = 0, hi = size();
        while (lo < hi) {
            const std::size_t mid = (lo + hi) / 2;
            if (group_before(weight[mid], members_of(mid), w, m)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo == size() || weight[lo] != w || !std::equal(m.begin(), m.end(), members_of(lo).begin())) return kNone;
        return static_cast<std::uint32_t>(lo);
    }
};

/// Requests received, one per requester: [source, weight, k members], sorted by source.
struct Requests {
    std::uint32_t k = 0;
    std::vector<std::uint32_t> words;

    [[nodiscard]] std::size_t stride() const { return k + 2; }
    [[nodiscard]] std::size_t position(std::uint32_t source) const {
        std::size_t lo = 0, hi = words.size() / stride();
        while (lo < hi) {
            const std::size_t mid = (lo + hi) / 2;
            if (words[mid * stride()] < source) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
    [[nodiscard]] bool has(std::size_t i, std::uint32_t source) const {
        return i * stride() < words.size() && words[i * stride()] == source;
    }
    /// Records `group` = [weight, members] as the current request of `source`.
    void set(std::uint32_t source, std::span<const std::uint32_t> group) {
        const std::size_t i = position(source);
        const auto at = words.begin() + static_cast<std::ptrdiff_t>(i * stride());
        if (has(i, source)) {
            std::copy(group.begin(), group.end(), at + 1);
            return;
        }
        std::vector<std::uint32_t> entry{source};
        entry.insert(entry.end(), group.begin(), group.end());
        words.insert(at, entry.begin(), entry.end());
    }
    void erase(std::uint32_t source) {
        const std::size_t i = position(source);
        if (!has(i, source)) return;
        const auto at = words.begin() + static_cast<std::ptrdiff_t>(i * stride());
        words.erase(at, at + static_cast<std::ptrdiff_t>(stride()));
    }
    /// True if `source` currently requests the group (weight, members).
    [[nodiscard]] bool requests(std::uint32_t source, std::uint32_t weight, std::span<const std::uint32_t> m) const {
        const std::size_t i = position(source);
        if (!has(i, source)) return false;
        const auto* entry = words.data() + i * stride();
        return entry[1] == weight && std::equal(m.begin(), m.end(), entry + 2);
    }
};

struct RankState {
    std::vector<std::uint32_t> cols;       // distinct out-neighbors but itself: A's columns
    BitRows active;                        // one row: O_a over cols
    std::vector<std::uint32_t> in_active;  // distinct active in-neighbors but itself
    std::vector<std::uint32_t> friends;    // ranks of A's rows kept (those in some group), sorted
    BitRows rows;                          // A: their rows
    Groups groups;
    // Alg. 3 state of the current iteration.
    std::size_t cursor = 0;  // groups before it are unavailable (only grows in a matching)
    std::uint32_t choice = kNone;
    bool matched = false;
    Requests requests;
    // Alg. 1 state of the current iteration.
    std::vector<std::uint32_t> onloaded;  // CN_on
    // Statistics.
    std::uint32_t friends_found = 0;
    std::uint64_t hyperedges = 0;       // candidate groups found (a lower bound if truncated)
    std::uint32_t hyperedges_held = 0;  // own kept groups and those members shared
    bool capped = false;
    bool truncated = false;
    std::uint32_t groups_joined = 0;
};

class KGroupRun {
public:
    using Settings = KGroupAlgorithm::Settings;

    KGroupRun(Engine& engine, const Topology& topology, PatternBuilder& out, const Settings& settings,
              const Placement* placement)
        : engine_(engine),
          topology_(topology),
          out_(out),
          settings_(settings),
          placement_(placement),
          k_(settings.k),
          first_(engine.local_begin()),
          states_(engine.local_count()),
          matched_(topology.num_ranks(), 0),
          local_choosers_(topology.num_ranks()),
          index_(topology.num_ranks(), kNone) {}

    std::vector<std::string> execute() {
        search_groups();
        std::uint32_t iterations = 0;
        std::uint64_t rounds = 0;
        while (engine_.any(any_local_groups())) {
            rounds += match();
            combine();
            onload();
            update();
            ++iterations;
        }
        finish(iterations, rounds);
        return notes();
    }

private:
    RankState& state(std::uint32_t v) { return states_[v - first_]; }

    [[nodiscard]] bool any_local_groups() const {
        return std::any_of(states_.begin(), states_.end(), [](const RankState& s) { return s.groups.size() > 0; });
    }

    [[nodiscard]] bool may_befriend(std::uint32_t v, std::uint32_t q) const {
        return q != v && (!settings_.topology_aware || placement_->same_node(v, q));
    }

    /// Alg. 2: matrix A from the rows of M, the candidate groups of every rank, shared with
    /// their members; then every rank holds its own and its members' groups.
    void search_groups() {
        NeighborRows m(topology_.num_ranks());
        m.exchange(engine_, topology_);
        std::vector<std::vector<std::uint32_t>> kept(states_.size());  // [weight, k members] per group
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            s.cols = distinct_without(topology_.out_neighbors(v), v);
            s.in_active = distinct_without(topology_.in_neighbors(v), v);
            s.active = BitRows(1, s.cols.size());
            for (std::size_t j = 0; j < s.cols.size(); ++j) s.active.set(0, j);
            s.groups.k = k_;
            s.requests.k = k_;
            kept[v - first_] = search(v, s, m);
        }
        engine_.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) { share(v, kept[v - first_], outbox); });
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            auto& groups = kept[v - first_];
            for (const Message& msg : engine_.inbox(v)) GroupShare::decode(k_, msg.payload, groups);
            hold(v, state(v), groups, m);
        }
    }

    /// Matrix A of rank v (rows: ranks sharing an out-neighbor with it, on its node if
    /// topology-aware) and the search; returns the kept groups as [weight, k members] each.
    std::vector<std::uint32_t> search(std::uint32_t v, RankState& s, const NeighborRows& m) {
        std::vector<std::uint32_t> friends;
        for (const auto w : s.cols) {
            for (const auto q : m[w]) {
                if (may_befriend(v, q) && index_[q] == kNone) {
                    index_[q] = 0;
                    friends.push_back(q);
                }
            }
        }
        std::sort(friends.begin(), friends.end());
        for (std::uint32_t i = 0; i < friends.size(); ++i) index_[friends[i]] = i;
        BitRows a(friends.size(), s.cols.size());
        for (std::size_t j = 0; j < s.cols.size(); ++j) {
            for (const auto q : m[s.cols[j]]) {
                if (may_befriend(v, q)) a.set(index_[q], j);
            }
        }
        for (const auto q : friends) index_[q] = kNone;
        const GroupSearchLimits limits{settings_.max_hyperedges, settings_.max_combinations};
        const auto found = find_friend_groups(a, friends, s.active.row(0), v, k_, settings_.threshold, limits);
        s.friends_found = static_cast<std::uint32_t>(friends.size());
        s.hyperedges = found.found;
        s.capped = found.capped;
        s.truncated = found.truncated;
        std::vector<std::uint32_t> groups;
        for (const auto& g : found.groups) {
            groups.push_back(g.weight);
            const auto members = group_members(g, friends, v);
            groups.insert(groups.end(), members.begin(), members.end());
        }
        return groups;
    }

    /// Sends each kept group to its other members, one message per member.
    void share(std::uint32_t v, const std::vector<std::uint32_t>& groups, Engine::Outbox& outbox) const {
        std::vector<std::pair<std::uint32_t, std::size_t>> to;  // (member, group offset)
        for (std::size_t g = 0; g < groups.size(); g += k_ + 1) {
            for (std::size_t i = 1; i <= k_; ++i) {
                if (groups[g + i] != v) to.emplace_back(groups[g + i], g);
            }
        }
        std::sort(to.begin(), to.end());
        std::vector<std::size_t> offsets;
        for (std::size_t i = 0; i < to.size();) {
            const std::uint32_t member = to[i].first;
            offsets.clear();
            for (; i < to.size() && to[i].first == member; ++i) offsets.push_back(to[i].second);
            outbox.post(member, GroupShare::encode(kShare, k_, groups, offsets));
        }
    }

    /// Holds the distinct groups of `groups` ([weight, k members] each), best first, with the
    /// rows of A their members need, built from M.
    void hold(std::uint32_t v, RankState& s, const std::vector<std::uint32_t>& groups, const NeighborRows& m) const {
        std::vector<std::size_t> order;
        for (std::size_t g = 0; g < groups.size(); g += k_ + 1) order.push_back(g);
        const auto key = [&](std::size_t g) { return std::span(groups).subspan(g + 1, k_); };
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return group_before(groups[a], key(a), groups[b], key(b)); });
        order.erase(std::unique(order.begin(), order.end(),
                                [&](std::size_t a, std::size_t b) {
                                    return groups[a] == groups[b] && std::ranges::equal(key(a), key(b));
                                }),
                    order.end());
        for (const auto g : order) {
            for (const auto u : key(g)) {
                if (u != v) s.friends.push_back(u);
            }
        }
        std::sort(s.friends.begin(), s.friends.end());
        s.friends.erase(std::unique(s.friends.begin(), s.friends.end()), s.friends.end());
        s.rows = BitRows(s.friends.size(), s.cols.size());
        for (std::size_t j = 0; j < s.cols.size(); ++j) {
            const auto& row = m[s.cols[j]];  // sorted
            for (std::size_t f = 0; f < s.friends.size(); ++f) {
                if (std::binary_search(row.begin(), row.end(), s.friends[f])) s.rows.set(f, j);
            }
        }
        for (const auto g : order) {
            s.groups.weight.push_back(groups[g]);
            for (const auto u : key(g)) {
                s.groups.members.push_back(u);
                if (u == v) continue;
                const auto row = std::lower_bound(s.friends.begin(), s.friends.end(), u) - s.friends.begin();
                s.groups.rows.push_back(static_cast<std::uint32_t>(row));
            }
        }
        s.hyperedges_held = static_cast<std::uint32_t>(s.groups.size());
    }

    // ---- Alg. 3: matching on the friendship hypergraph -------------------------------------

    /// First group still available: no member matched in this iteration.
    std::uint32_t best_available(RankState& s) const {
        for (; s.cursor < s.groups.size(); ++s.cursor) {
            const auto members = s.groups.members_of(s.cursor);
            if (std::none_of(members.begin(), members.end(), [&](std::uint32_t u) { return matched_[u] != 0; })) {
                return static_cast<std::uint32_t>(s.cursor);
            }
        }
        return kNone;
    }

    /// Returns the number of rounds.
    std::uint64_t match() {
        std::vector<std::uint32_t> dirty;  // local ranks to evaluate in the next round
        std::uint64_t total_groups = 0;
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            s.cursor = 0;
            s.choice = kNone;
            s.matched = false;
            s.requests.words.clear();
            s.onloaded.clear();
            total_groups += s.groups.size();
            if (s.groups.size() > 0) dirty.push_back(v);
        }
        std::fill(matched_.begin(), matched_.end(), 0);
        for (auto& choosers : local_choosers_) choosers.clear();
        // Every round with work advances some rank's cursor or matches a group (see
        // docs/algorithms.md), so the rounds are bounded. Exceeding the bound is a bug.
        const std::uint64_t max_rounds = engine_.sum(total_groups) + topology_.num_ranks() + 8;
        std::uint64_t round = 0;
        std::vector<std::uint32_t> active, evaluate;
        while (engine_.any(!dirty.empty())) {
            if (round++ >= max_rounds) throw std::runtime_error("kgroup: group matching did not converge");
            std::sort(dirty.begin(), dirty.end());
            dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
            active.clear();
            for (auto v : dirty) {
                if (!state(v).matched) active.push_back(v);
            }
            dirty.clear();
            engine_.superstep(active, [&](std::uint32_t v, auto, Engine::Outbox& outbox) { request(v, outbox); });
            const auto receivers = engine_.receivers();
            evaluate.clear();
            std::set_union(active.begin(), active.end(), receivers.begin(), receivers.end(),
                           std::back_inserter(evaluate));
            engine_.superstep(evaluate, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
                check(v, inbox, outbox);
            });
            for (const Message& m : engine_.published()) {
                matched_[m.source] = 1;
                dirty.insert(dirty.end(), local_choosers_[m.source].begin(), local_choosers_[m.source].end());
            }
        }
        return round;
    }

    /// Alg. 3 lines 4-7 and 19-27: request the best available group when it changed.
    void request(std::uint32_t v, Engine::Outbox& outbox) {
        RankState& s = state(v);
        const std::uint32_t next = best_available(s);
        if (next == s.choice) return;
        const auto others = [&](std::uint32_t g) {
            std::vector<std::uint32_t> result;
            if (g == kNone) return result;
            for (auto u : s.groups.members_of(g)) {
                if (u != v) result.push_back(u);
            }
            return result;
        };
        const auto before = others(s.choice), after = others(next);
        std::vector<std::uint32_t> left;
        std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(left));
        const std::uint32_t withdraw[] = {kWithdraw};
        if (!left.empty()) outbox.multicast(left, withdraw);
        for (auto u : before) std::erase(local_choosers_[u], v);
        s.choice = next;
        if (next == kNone) return;
        outbox.multicast(after, GroupRequest::encode(kRequest, s.groups.weight[next], s.groups.members_of(next)));
        for (auto u : after) local_choosers_[u].push_back(v);
    }

    /// Alg. 3 lines 9-18 and 29-40: record requests, then match if every fellow member
    /// requests this rank's choice.
    void check(std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
        RankState& s = state(v);
        for (const Message& m : inbox) {
            if (m.payload[0] == kWithdraw) {
                s.requests.erase(m.source);
                continue;
            }
            const auto group = GroupRequest::decode(k_, m.payload);  // [weight, members]
            if (s.groups.find(group[0], std::span(group).subspan(1)) == kNone) {
                throw std::logic_error("kgroup: rank " + std::to_string(v) + " was asked for a group it does not hold");
            }
            s.requests.set(m.source, group);
        }
        if (s.matched || s.choice == kNone) return;
        const auto members = s.groups.members_of(s.choice);
        const std::uint32_t weight = s.groups.weight[s.choice];
        const bool mutual = std::all_of(members.begin(), members.end(), [&](std::uint32_t u) {
            return u == v || s.requests.requests(u, weight, members);
        });
        if (!mutual) return;
        s.matched = true;
        const std::uint32_t fact[] = {kMatched};
        outbox.publish(fact);
    }

    // ---- Alg. 1: combine, notify, update -----------------------------------------------------

    /// Active columns common to the rank and every other member of group g, as bits.
    static std::vector<std::uint64_t> common_bits(const RankState& s, std::uint32_t g) {
        std::vector<std::uint64_t> bits(s.active.row(0).begin(), s.active.row(0).end());
        for (const auto r : s.groups.rows_of(g)) {
            const auto row = s.rows.row(r);
            for (std::size_t w = 0; w < bits.size(); ++w) bits[w] &= row[w];
        }
        return bits;
    }

    /// The same as column indices, increasing.
    static std::vector<std::uint32_t> common_columns(const RankState& s, std::uint32_t g) {
        const auto bits = common_bits(s, g);
        std::vector<std::uint32_t> columns;
        for (std::uint32_t j = 0; j < s.cols.size(); ++j) {
            if ((bits[j / 64] >> (j % 64)) & 1U) columns.push_back(j);
        }
        return columns;
    }

    /// Alg. 1 lines 7-19: split the common neighbors in k parts by member rank (the first
    /// m mod k members take one more), send each member the slots of its part, notify the
    /// common neighbors.
    void combine() {
        engine_.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) {
            RankState& s = state(v);
            if (!s.matched) return;
            const auto members = s.groups.members_of(s.choice);
            const auto columns = common_columns(s, s.choice);
            std::vector<std::uint32_t> common;
            for (const auto j : columns) common.push_back(s.cols[j]);
            const SlotPairs own = slot_pairs(topology_.out_neighbors(v));
            const std::size_t base = common.size() / k_, extra = common.size() % k_;
            for (std::size_t i = 0, begin = 0; i < k_; ++i) {
                const std::size_t end = begin + base + (i < extra ? 1 : 0);
                const std::span<const std::uint32_t> part(common.data() + begin, end - begin);
                begin = end;
                if (members[i] == v) {
                    s.onloaded.assign(part.begin(), part.end());
                    continue;
                }
                std::vector<Item> items;
                SlotPairs exchange;
                for (const auto w : part) {
                    const std::size_t first = items.size();
                    append_items(own, w, v, items);
                    for (std::size_t t = first; t < items.size(); ++t) exchange.emplace_back(w, items[t].slot);
                }
                if (items.empty()) continue;
                out_.add_send(v, 0, members[i], std::move(items));
                outbox.post(members[i], SlotExchange::encode(kExchange, exchange));
            }
            const std::uint32_t removed[] = {kRemoved};
            outbox.multicast(common, removed);
            for (const auto j : columns) s.active.clear(0, j);
            ++s.groups_joined;
        });
    }

    /// Alg. 1 line 18 (combined sends: every member's items for each own common neighbor, in
    /// member order) and lines 21-22 (the common neighbors' active in-sets shrink; they tell
    /// their old in-set who left).
    void onload() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            std::vector<std::uint32_t> left;
            std::vector<std::pair<std::uint32_t, SlotPairs>> exchanged;  // by member, sorted
            for (const Message& m : inbox) {
                if (m.payload[0] == kRemoved) {
                    left.push_back(m.source);
                    continue;
                }
                exchanged.emplace_back(m.source, SlotExchange::decode(m.payload));
            }
            if (!s.onloaded.empty()) {
                const SlotPairs own = slot_pairs(topology_.out_neighbors(v));
                for (const auto w : s.onloaded) {
                    std::vector<Item> items;
                    for (const auto u : s.groups.members_of(s.choice)) {
                        if (u == v) {
                            append_items(own, w, v, items);
                            continue;
                        }
                        for (const auto& [source, pairs] : exchanged) {
                            if (source == u) append_items(pairs, w, u, items);
                        }
                    }
                    out_.add_send(v, 1, w, std::move(items));
                }
            }
            announce_departures(outbox, kDelta, left, s.in_active);  // left is sorted: inbox is by source
        });
    }

    /// Alg. 1 line 24: A's rows lose the ranks that left an out-neighbor's active in-set;
    /// groups are re-weighed, those at or below Θ dropped.
    void update() {
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            for (const Message& m : engine_.inbox(v)) {
                const auto col = std::lower_bound(s.cols.begin(), s.cols.end(), m.source);
                if (col == s.cols.end() || *col != m.source) continue;
                const auto j = static_cast<std::size_t>(col - s.cols.begin());
                for (const auto f : Departures::decode(m.payload)) {
                    const auto row = std::lower_bound(s.friends.begin(), s.friends.end(), f);
                    if (row != s.friends.end() && *row == f) {
                        s.rows.clear(static_cast<std::size_t>(row - s.friends.begin()), j);
                    }
                }
            }
            reweigh(s);
        }
    }

    void reweigh(RankState& s) const {
        Groups& old = s.groups;
        std::vector<std::uint32_t> weight(old.size(), 0), kept;
        for (std::uint32_t g = 0; g < old.size(); ++g) {
            for (const auto word : common_bits(s, g)) weight[g] += static_cast<std::uint32_t>(std::popcount(word));
            if (weight[g] > settings_.threshold) kept.push_back(g);
        }
        std::stable_sort(kept.begin(), kept.end(), [&](std::uint32_t a, std::uint32_t b) {
            return group_before(weight[a], old.members_of(a), weight[b], old.members_of(b));
        });
        Groups next;
        next.k = old.k;
        for (const auto g : kept) {
            next.weight.push_back(weight[g]);
            const auto members = old.members_of(g);
            const auto rows = old.rows_of(g);
            next.members.insert(next.members.end(), members.begin(), members.end());
            next.rows.insert(next.rows.end(), rows.begin(), rows.end());
        }
        s.groups = std::move(next);
    }

    /// Alg. 1 lines 27-31 / Alg. 4 lines 25-34: what no group combined goes directly.
    void finish(std::uint32_t iterations, std::uint64_t rounds) {
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            const auto targets = topology_.out_neighbors(v);
            std::uint32_t combined = 0;
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const std::uint32_t w = targets[slot];
                if (w != v) {
                    const auto j =
                        static_cast<std::size_t>(std::lower_bound(s.cols.begin(), s.cols.end(), w) - s.cols.begin());
                    if (!s.active.test(0, j)) {
                        ++combined;
                        continue;
                    }
                }
                out_.add_send(v, 0, w, {Item{v, slot}});
            }
            out_.add_metric(v, "friends", s.friends_found);
            out_.add_metric(v, "hyperedges", static_cast<double>(s.hyperedges));
            out_.add_metric(v, "hyperedges_held", s.hyperedges_held);
            out_.add_metric(v, "hyperedge_cap_reached", s.capped ? 1 : 0);
            out_.add_metric(v, "search_truncated", s.truncated ? 1 : 0);
            out_.add_metric(v, "groups_joined", s.groups_joined);
            out_.add_metric(v, "group_size", s.groups_joined > 0 ? k_ : 0);
            out_.add_metric(
                v, "combined_edge_share",
                targets.empty() ? 0.0 : static_cast<double>(combined) / static_cast<double>(targets.size()));
            out_.add_metric(v, "iterations", iterations);
            out_.add_metric(v, "matching_rounds", static_cast<double>(rounds));
        }
    }

    /// What the compiler says when a limit bound (collective).
    std::vector<std::string> notes() const {
        std::uint64_t capped = 0, truncated = 0;
        for (const auto& s : states_) {
            capped += s.capped ? 1 : 0;
            truncated += s.truncated ? 1 : 0;
        }
        capped = engine_.sum(capped);
        truncated = engine_.sum(truncated);
        std::vector<std::string> notes;
        const std::string of = " of " + std::to_string(topology_.num_ranks()) + " ranks";
        if (capped > 0) {
            notes.push_back("kgroup: the hyperedge cap (--max-hyperedges " + std::to_string(settings_.max_hyperedges) +
                            ") bound on " + std::to_string(capped) + of +
                            "; groups were chosen among the best kept, the pattern is exact");
        }
        if (truncated > 0) {
            notes.push_back("kgroup: the search budget (--max-combinations " +
                            std::to_string(settings_.max_combinations) + ") ran out on " + std::to_string(truncated) +
                            of + "; groups were chosen among those found, the pattern is exact");
        }
        return notes;
    }

    Engine& engine_;
    const Topology& topology_;
    PatternBuilder& out_;
    const Settings& settings_;
    const Placement* placement_;
    std::uint32_t k_;
    std::uint32_t first_;
    std::vector<RankState> states_;
    std::vector<std::uint8_t> matched_;                       // published: matched in this iteration
    std::vector<std::vector<std::uint32_t>> local_choosers_;  // per rank: local ranks whose choice has it
    std::vector<std::uint32_t> index_;                        // scratch: row of a friend in A
};

}  // namespace

KGroupAlgorithm::KGroupAlgorithm(const AlgorithmOptions& options) : placement_(options.placement) {
    settings_.k = options.group_size;
    settings_.threshold = options.threshold.value_or(options.group_size);
    settings_.topology_aware = options.topology_aware;
    settings_.max_hyperedges = options.max_hyperedges;
    settings_.max_combinations = options.max_combinations;
    if (settings_.k < 2) throw std::invalid_argument("kgroup: --k must be at least 2");
    if (settings_.max_hyperedges == 0) throw std::invalid_argument("kgroup: --max-hyperedges must be at least 1");
    if (settings_.max_combinations == 0) throw std::invalid_argument("kgroup: --max-combinations must be at least 1");
    if (settings_.topology_aware && !placement_) {
        throw std::invalid_argument(
            "kgroup --topology-aware needs a placement (--ranks-per-node, or --placement FILE)");
    }
}

std::vector<std::pair<std::string, std::string>> KGroupAlgorithm::parameters() const {
    std::vector<std::pair<std::string, std::string>> result{
        {"k", std::to_string(settings_.k)},
        {"threshold", std::to_string(settings_.threshold)},
        {"topology_aware", settings_.topology_aware ? "1" : "0"},
        {"max_hyperedges", std::to_string(settings_.max_hyperedges)},
        {"max_combinations", std::to_string(settings_.max_combinations)},
    };
    if (settings_.topology_aware) {
        result.emplace_back("placement", placement_->description());
        result.emplace_back("ranks_per_node", std::to_string(placement_->max_ranks_per_node()));
    }
    return result;
}

void KGroupAlgorithm::build(Engine& engine, const Topology& topology, PatternBuilder& out) {
    if (settings_.topology_aware) placement_->require_ranks(topology.num_ranks(), "kgroup");
    notes_ = KGroupRun(engine, topology, out, settings_, settings_.topology_aware ? &*placement_ : nullptr).execute();
}

}  // namespace nbr::compiler::internal
