// Pairwise common-neighbor message combining, written per virtual rank.
//
// Per iteration of Alg. 1 (all virtual ranks in lock step):
//   matching rounds (Alg. 2), two supersteps each:
//     choose   - searching ranks pick a friend and post CHOOSE to it; ranks that run out of
//                friends publish TERMINAL
//     match    - a rank whose choice chose it back is paired and publishes PAIRED
//   combine    - paired ranks split their sorted common neighbors, post EXCHANGE (the slots
//                they offload) to the partner and REMOVED to every common neighbor
//   onload     - partners add the combined sends; common neighbors post DELTA (who left their
//                active in-set) to their old active in-set and shrink it
//   update     - ranks update their common-neighbor counts from the DELTAs (Sec. IV-B3)
// Rows of the common-neighborhood matrix (an out-neighbor's active in-set) are identical for
// all ranks that hold them, so each process stores each row once.
#include "common_neighbor.hpp"

#include "neighbor_rows.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace nbr::compiler::internal {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

enum Tag : std::uint32_t { kChoose = 1, kWithdraw, kPaired, kTerminal, kExchange, kRemoved, kDelta };

enum class Match : std::uint8_t { searching, paired, terminal };

/// State of one virtual rank.
struct RankState {
    std::vector<std::uint32_t> out_active;  // distinct active out-neighbors (sorted, no self)
    std::vector<std::uint32_t> in_active;   // distinct active in-neighbors (sorted, no self)
    std::vector<std::uint32_t> friends;     // candidates with count >= Θ (sorted)
    std::vector<std::uint32_t> count;       // common active out-neighbors with friends[i]
    // Alg. 2 state of the current iteration.
    Match match = Match::terminal;
    std::uint32_t choice = kNone;
    std::vector<std::uint8_t> dropped;     // friends removed by line 13 (F = F - p'_old)
    std::vector<std::uint32_t> chosen_by;  // ranks whose CHOOSE arrived in the last round
    // Alg. 1 state of the current iteration.
    std::vector<std::uint32_t> onloaded;  // CN_on
    // Statistics.
    std::uint32_t initial_friends = 0;
    std::uint32_t pairings = 0;
};

bool contains(const std::vector<std::uint32_t>& sorted, std::uint32_t value) {
    return std::binary_search(sorted.begin(), sorted.end(), value);
}

class CommonNeighborRun {
public:
    CommonNeighborRun(Engine& engine, const Topology& topology, PatternBuilder& out, std::uint32_t threshold)
        : engine_(engine),
          topology_(topology),
          out_(out),
          threshold_(threshold),
          first_(engine.local_begin()),
          states_(engine.local_count()),
          rows_(topology.num_ranks()),
          status_(topology.num_ranks(), Match::terminal),
          local_choosers_(topology.num_ranks()),
          pos_(topology.num_ranks(), -1),
          tally_(topology.num_ranks(), 0) {}

    void execute() {
        build_matrix();
        std::uint32_t iterations = 0;
        std::uint64_t rounds = 0;
        while (engine_.any(any_local_friends())) {
            rounds += match();
            combine();
            onload();
            update();
            ++iterations;
        }
        finish(iterations, rounds);
    }

private:
    RankState& state(std::uint32_t v) { return states_[v - first_]; }

    bool any_local_friends() const {
        return std::any_of(states_.begin(), states_.end(), [](const RankState& s) { return !s.friends.empty(); });
    }

    /// Sec. IV-B1: every rank sends its in-neighbors to its in-neighbors; each rank counts,
    /// over its out-neighbors' rows, how often every other rank appears.
    void build_matrix() {
        rows_.exchange(engine_, topology_);  // the row of M of every out-neighbor
        const std::uint32_t n = topology_.num_ranks();
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            s.out_active = distinct_without(topology_.out_neighbors(v), v);
            s.in_active = distinct_without(topology_.in_neighbors(v), v);
            std::size_t work = 0;
            for (auto w : s.out_active) work += rows_[w].size();
            const bool dense = work * 4 >= n;
            std::vector<std::uint32_t> touched;
            for (auto w : s.out_active) {
                for (auto q : rows_[w]) {
                    if (!dense && tally_[q] == 0) touched.push_back(q);
                    ++tally_[q];
                }
            }
            tally_[v] = 0;
            auto keep = [&](std::uint32_t q) {
                if (tally_[q] >= threshold_) {
                    s.friends.push_back(q);
                    s.count.push_back(tally_[q]);
                }
                tally_[q] = 0;
            };
            if (dense) {
                for (std::uint32_t q = 0; q < n; ++q) {
                    if (tally_[q] != 0) keep(q);
                }
            } else {
                std::sort(touched.begin(), touched.end());
                for (auto q : touched) keep(q);
            }
            s.initial_friends = static_cast<std::uint32_t>(s.friends.size());
        }
    }

    /// Best available friend: most common neighbors, ties to the lower rank.
    std::uint32_t best_friend(const RankState& s) const {
        std::uint32_t best = kNone, best_count = 0;
        for (std::size_t i = 0; i < s.friends.size(); ++i) {
            const std::uint32_t q = s.friends[i];
            if (s.dropped[i] || status_[q] != Match::searching) continue;
            if (s.count[i] > best_count) {  // friends are sorted: the first maximum is the lowest rank
                best = q;
                best_count = s.count[i];
            }
        }
        return best;
    }

    std::size_t friend_index(const RankState& s, std::uint32_t q) const {
        return static_cast<std::size_t>(std::lower_bound(s.friends.begin(), s.friends.end(), q) - s.friends.begin());
    }

    /// Records PAIRED / TERMINAL facts; each ends one rank's search. Local ranks whose
    /// current choice just stopped searching must re-evaluate (their retry rule changed).
    void apply_published(std::vector<std::uint32_t>& dirty) {
        for (const Message& m : engine_.published()) {
            if (status_[m.source] == Match::searching) --searching_total_;
            status_[m.source] = m.payload[0] == kPaired ? Match::paired : Match::terminal;
            for (auto v : local_choosers_[m.source]) dirty.push_back(v);
        }
    }

    void set_choice(std::uint32_t v, RankState& s, std::uint32_t next, Engine::Outbox& outbox) {
        if (next == s.choice) return;
        if (s.choice != kNone) {
            const std::uint32_t withdraw[] = {kWithdraw};
            outbox.post(s.choice, withdraw);
            std::erase(local_choosers_[s.choice], v);
        }
        s.choice = next;
        if (next != kNone) {
            const std::uint32_t choose[] = {kChoose};
            outbox.post(next, choose);
            local_choosers_[next].push_back(v);
        }
    }

    /// Alg. 2, simulated event by event: a rank's choice persists until its rules give a
    /// different answer, so CHOOSE (line 23) travels only when a choice changes (WITHDRAW
    /// cancels the previous one) and only ranks whose inputs changed are evaluated. Every
    /// round yields the same choices and pairings as re-sending every choice every round.
    /// Returns the number of rounds.
    std::uint64_t match() {
        std::vector<std::uint32_t> dirty;  // local ranks to evaluate in the next round
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            s.match = s.friends.empty() ? Match::terminal : Match::searching;
            s.choice = kNone;
            s.dropped.assign(s.friends.size(), 0);
            s.chosen_by.clear();
            s.onloaded.clear();
            if (s.match == Match::searching) dirty.push_back(v);
        }
        for (auto& choosers : local_choosers_) choosers.clear();
        publish_searching();
        std::uint64_t round = 0;
        // Every round some rank pairs, gives up, or drops a friend for good (line 13), so the
        // rounds are bounded by the friend entries plus the ranks. Exceeding it is a bug.
        std::uint64_t friend_entries = 0;
        for (const auto& s : states_) friend_entries += s.friends.size();
        const std::uint64_t max_rounds = engine_.sum(friend_entries) + topology_.num_ranks() + 8;
        std::vector<std::uint32_t> active, evaluate;
        while (searching_total_ > 0) {
            if (round >= max_rounds) throw std::runtime_error("common-neighbor: friend matching did not converge");
            // Lines 3-23: ranks whose rules may give a new answer choose.
            std::sort(dirty.begin(), dirty.end());
            dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
            active.clear();
            for (auto v : dirty) {
                if (state(v).match == Match::searching) active.push_back(v);
            }
            dirty.clear();
            engine_.superstep(active, [&](std::uint32_t v, auto, Engine::Outbox& outbox) { choose(v, round, outbox); });
            apply_published(dirty);
            // Lines 24-27: a rank pairs when its choice chose it back; only ranks that chose
            // or were chosen this round can have become mutual.
            const auto receivers = engine_.receivers();
            evaluate.clear();
            std::set_union(active.begin(), active.end(), receivers.begin(), receivers.end(),
                           std::back_inserter(evaluate));
            engine_.superstep(evaluate, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
                RankState& s = state(v);
                for (const Message& m : inbox) {
                    if (m.payload[0] == kChoose) {
                        s.chosen_by.insert(std::lower_bound(s.chosen_by.begin(), s.chosen_by.end(), m.source),
                                           m.source);
                    } else {
                        std::erase(s.chosen_by, m.source);
                    }
                }
                if (s.match == Match::searching && s.choice != kNone && contains(s.chosen_by, s.choice)) {
                    s.match = Match::paired;
                    const std::uint32_t fact[] = {kPaired};
                    outbox.publish(fact);  // line 27: friends drop us from F
                }
            });
            apply_published(dirty);
            // Who must re-evaluate next round: ranks that chose a lower rank cannot retry it
            // (line 7), so they apply lines 10-21 again. Ranks that chose a higher rank retry
            // it unchanged until its status changes (added by apply_published).
            for (auto v : active) {
                const RankState& s = state(v);
                if (s.match == Match::searching && s.choice < v) dirty.push_back(v);
            }
            ++round;
        }
        return round;
    }

    /// Marks every rank with friends as searching on every process. (Friendship is
    /// symmetric, so ranks only ever look at the status of ranks that have friends.)
    void publish_searching() {
        std::vector<std::uint8_t> mine(topology_.num_ranks(), 0), all(topology_.num_ranks(), 0);
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            mine[v] = state(v).match == Match::searching ? 1 : 0;
        }
        MPI_Allreduce(mine.data(), all.data(), static_cast<int>(all.size()), MPI_UINT8_T, MPI_MAX, engine_.comm());
        searching_total_ = 0;
        for (std::size_t q = 0; q < all.size(); ++q) {
            status_[q] = all[q] ? Match::searching : Match::terminal;
            searching_total_ += all[q];
        }
    }

    /// Lines 3-22 of Alg. 2 for one rank, then line 23 (notify the chosen friend).
    void choose(std::uint32_t v, std::uint64_t round, Engine::Outbox& outbox) {
        RankState& s = state(v);
        if (s.match != Match::searching) return;
        const std::uint32_t old = s.choice;  // p'_old
        std::uint32_t next = kNone;
        if (round == 0) {
            next = best_friend(s);
        } else if (old != kNone && status_[old] == Match::searching && v < old) {
            next = old;  // retry: the previous choice is still free and has the higher rank
        } else {
            // A lower-ranked friend that chose us will choose us again: take the best of them.
            std::uint32_t best_count = 0;
            for (auto g : s.chosen_by) {
                if (g >= v || status_[g] != Match::searching) continue;
                const std::size_t i = friend_index(s, g);
                if (i < s.friends.size() && s.friends[i] == g && !s.dropped[i] && s.count[i] > best_count) {
                    next = g;
                    best_count = s.count[i];
                }
            }
            if (next == kNone) {
                if (old != kNone) s.dropped[friend_index(s, old)] = 1;  // F = F - p'_old
                next = best_friend(s);
            }
        }
        if (next == kNone) {
            s.match = Match::terminal;  // no friend left to try
            set_choice(v, s, kNone, outbox);
            const std::uint32_t fact[] = {kTerminal};
            outbox.publish(fact);
            return;
        }
        set_choice(v, s, next, outbox);
    }

    /// Alg. 1 lines 7-19 and 20: split the common neighbors, offload, notify.
    void combine() {
        engine_.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) {
            RankState& s = state(v);
            if (s.match != Match::paired) return;
            const std::uint32_t partner = s.choice;
            std::vector<std::uint32_t> common;  // sorted, since out_active is
            for (auto w : s.out_active) {
                if (contains(rows_[w], partner)) common.push_back(w);
            }
            const std::size_t k = common.size();
            const std::size_t half = (k + 1) / 2;  // the lower rank keeps the first ceil(k/2)
            const bool lower = v < partner;
            const auto on_begin = lower ? common.begin() : common.begin() + static_cast<std::ptrdiff_t>(half);
            const auto on_end = lower ? common.begin() + static_cast<std::ptrdiff_t>(half) : common.end();
            s.onloaded.assign(on_begin, on_end);
            std::vector<Item> items;
            SlotPairs exchange;
            const auto targets = topology_.out_neighbors(v);
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const std::uint32_t w = targets[slot];
                if (w == v || !contains(common, w) || contains(s.onloaded, w)) continue;
                items.push_back({v, slot});
                exchange.emplace_back(w, slot);
            }
            if (!items.empty()) {
                out_.add_send(v, 0, partner, std::move(items));
                outbox.post(partner, SlotExchange::encode(kExchange, exchange));
            }
            const std::uint32_t removed[] = {kRemoved};
            for (auto w : common) outbox.post(w, removed);
            std::vector<std::uint32_t> remaining;
            std::set_difference(s.out_active.begin(), s.out_active.end(), common.begin(), common.end(),
                                std::back_inserter(remaining));
            s.out_active.swap(remaining);
            ++s.pairings;
        });
    }

    /// Alg. 1 line 18 (combined sends) and line 21 (update I_a), then the matrix update of
    /// Sec. IV-B3: every rank that lost in-neighbors tells its old active in-set who left.
    void onload() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            std::vector<std::uint32_t> left;
            SlotPairs partner;  // (neighbor, slot) pairs from the partner
            for (const Message& m : inbox) {
                if (m.payload[0] == kRemoved) {
                    left.push_back(m.source);
                } else if (m.payload[0] == kExchange) {
                    partner = SlotExchange::decode(m.payload);
                }
            }
            if (!s.onloaded.empty()) {
                const SlotPairs own = slot_pairs(topology_.out_neighbors(v));
                for (auto w : s.onloaded) {
                    std::vector<Item> items;
                    append_items(own, w, v, items);
                    append_items(partner, w, s.choice, items);
                    out_.add_send(v, 1, w, std::move(items));
                }
            }
            announce_departures(outbox, kDelta, left, s.in_active);  // left is sorted: inbox is by source
        });
    }

    /// Sec. IV-B3 and Alg. 1 lines 23-24: update the counts, drop ranks below Θ for good
    /// (counts only decrease).
    void update() {
        // The DELTAs were delivered by the onload superstep; nothing is posted here.
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            for (std::size_t i = 0; i < s.friends.size(); ++i) pos_[s.friends[i]] = static_cast<std::int64_t>(i);
            auto decrement = [&](std::uint32_t q) {
                const std::int64_t i = pos_[q];
                if (i >= 0) --s.count[static_cast<std::size_t>(i)];
            };
            for (const Message& m : engine_.inbox(v)) {
                const auto left = Departures::decode(m.payload);
                if (std::binary_search(left.begin(), left.end(), v)) {
                    // Our edge to m.source left: its whole (old) row leaves our counts.
                    for (auto q : rows_[m.source]) {
                        if (q != v) decrement(q);
                    }
                } else {
                    for (auto q : left) decrement(q);
                }
            }
            std::size_t kept = 0;
            for (std::size_t i = 0; i < s.friends.size(); ++i) {
                pos_[s.friends[i]] = -1;
                if (s.count[i] >= threshold_) {
                    s.friends[kept] = s.friends[i];
                    s.count[kept] = s.count[i];
                    ++kept;
                }
            }
            s.friends.resize(kept);
            s.count.resize(kept);
        }
        // Then the rows this process stores lose the ranks that left, once per row: every local
        // receiver of a row's DELTA got the same payload.
        std::vector<Message> deltas;
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            const auto inbox = engine_.inbox(v);
            deltas.insert(deltas.end(), inbox.begin(), inbox.end());
        }
        std::stable_sort(deltas.begin(), deltas.end(),
                         [](const Message& a, const Message& b) { return a.source < b.source; });
        deltas.erase(std::unique(deltas.begin(), deltas.end(),
                                 [](const Message& a, const Message& b) { return a.source == b.source; }),
                     deltas.end());
        for (const Message& m : deltas) {
            auto& row = rows_[m.source];
            const auto left = Departures::decode(m.payload);
            std::vector<std::uint32_t> remaining;
            remaining.reserve(row.size());
            std::set_difference(row.begin(), row.end(), left.begin(), left.end(), std::back_inserter(remaining));
            row.swap(remaining);
        }
    }

    /// Alg. 1 lines 26-27: what was not combined goes directly; statistics.
    void finish(std::uint32_t iterations, std::uint64_t rounds) {
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            const auto targets = topology_.out_neighbors(v);
            std::uint32_t combined = 0;
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const std::uint32_t w = targets[slot];
                if (w != v && !contains(s.out_active, w)) {
                    ++combined;
                    continue;
                }
                out_.add_send(v, 0, w, {Item{v, slot}});
            }
            out_.add_metric(v, "friends", s.initial_friends);
            out_.add_metric(v, "pairings", s.pairings);
            out_.add_metric(
                v, "combined_edge_share",
                targets.empty() ? 0.0 : static_cast<double>(combined) / static_cast<double>(targets.size()));
            out_.add_metric(v, "iterations", iterations);
            out_.add_metric(v, "matching_rounds", static_cast<double>(rounds));
        }
    }

    Engine& engine_;
    const Topology& topology_;
    PatternBuilder& out_;
    std::uint32_t threshold_;
    std::uint32_t first_;
    std::vector<RankState> states_;
    // Per process: matrix rows (active in-sets of out-neighbors of local ranks), stored once.
    NeighborRows rows_;
    std::vector<Match> status_;                               // published matching status of every rank
    std::uint64_t searching_total_ = 0;                       // ranks still searching, over all processes
    std::vector<std::vector<std::uint32_t>> local_choosers_;  // per rank: local ranks choosing it
    std::vector<std::int64_t> pos_;                           // scratch: friend index of a rank, -1 if none
    std::vector<std::uint32_t> tally_;
};

}  // namespace

CommonNeighborAlgorithm::CommonNeighborAlgorithm(std::uint32_t threshold) : threshold_(threshold) {
    if (threshold == 0) throw std::invalid_argument("common-neighbor: --threshold must be at least 1");
}

std::vector<std::pair<std::string, std::string>> CommonNeighborAlgorithm::parameters() const {
    return {{"threshold", std::to_string(threshold_)}};
}

void CommonNeighborAlgorithm::build(Engine& engine, const Topology& topology, PatternBuilder& out) {
    CommonNeighborRun(engine, topology, out, threshold_).execute();
}

}  // namespace nbr::compiler::internal
