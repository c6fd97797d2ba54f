// Distance halving (Sharifian, Sojoodi, Afsahi), written per virtual rank.
//
// Ranks are ordered by placement (node, socket, rank); every rank starts with the whole
// order as its range. Per halving step, for all ranges of more than L ranks at once:
//   matching, twice (lower halves seek agents in the upper halves, then the reverse), in
//   rounds of two supersteps (Alg. 2/3 as a locally dominant matching):
//     request  - every seeker without an agent posts REQ to its best candidate still free
//     accept   - an acceptor whose best free seeker asked it accepts it and publishes the
//                pair; everyone drops both from their candidates (ACCEPT, DROP, EXIT)
//   offload    - a rank with an agent sends it every item it holds whose destination lies
//                in the opposite half (its own and its origins', the descriptor D); the
//                agent holds them from now on (Alg. 1 lines 25-49)
// After the last step every rank sends what it holds to the destinations, one message per
// destination (Alg. 4's intra-socket phase; items whose holder found no agent go there
// directly). Every decision depends only on the rank's inbox and published facts, so the
// output is the same for every compiler process count.
#include "distance_halving.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "distance_halving_messages.hpp"
#include "neighbor_rows.hpp"

namespace nbr::compiler::internal {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

/// A range of positions in placement order, [lo, hi].
struct Range {
    std::uint32_t lo = 0;
    std::uint32_t hi = 0;
    [[nodiscard]] std::uint32_t size() const { return hi - lo + 1; }
    [[nodiscard]] bool contains(std::uint32_t p) const { return lo <= p && p <= hi; }
};

struct RankState {
    Range range;                     // current range (positions)
    std::vector<std::uint32_t> out;  // distinct out-neighbors but itself (matrix A's columns)
    std::vector<Held> held;          // responsibilities, in the order received
    std::uint32_t agent = kNone;
    std::uint32_t origin = kNone;
    // (rank, shared out-neighbors), best first: most shared, then the lower rank
    std::vector<std::pair<std::uint32_t, std::uint32_t>> candidates;
    std::size_t next = 0;  // candidates before this one are taken (taken only grows in a matching)
    std::uint32_t steps = 0;
    std::uint32_t agents_found = 0;
    std::uint32_t origins_served = 0;
};

class DistanceHalvingRun {
public:
    DistanceHalvingRun(Engine& engine, const Topology& topology, PatternBuilder& out, const Placement& placement)
        : engine_(engine),
          topology_(topology),
          out_(out),
          placement_(placement),
          first_(engine.local_begin()),
          states_(engine.local_count()),
          rows_(topology.num_ranks()),
          position_(topology.num_ranks()),
          taken_(topology.num_ranks(), 0),
          tally_(topology.num_ranks(), 0),
          limit_(placement.max_ranks_per_socket()) {
        std::vector<std::uint32_t> order(topology.num_ranks());
        for (std::uint32_t r = 0; r < order.size(); ++r) order[r] = r;
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            return std::pair(placement.node(a), placement.socket(a)) <
                   std::pair(placement.node(b), placement.socket(b));
        });
        for (std::uint32_t p = 0; p < order.size(); ++p) position_[order[p]] = p;
    }

    void execute() {
        rows_.exchange(engine_, topology_);
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) start(v);
        std::uint32_t step = 0;
        std::uint64_t rounds = 0;
        while (engine_.any(any_local_halving())) {
            rounds += match(true);
            rounds += match(false);
            offload(step);
            ++step;
        }
        deliver(step, rounds);
    }

private:
    RankState& state(std::uint32_t v) { return states_[v - first_]; }

    void start(std::uint32_t v) {
        RankState& s = state(v);
        s.range = Range{0, topology_.num_ranks() - 1};
        const auto targets = topology_.out_neighbors(v);
        for (std::uint32_t slot = 0; slot < targets.size(); ++slot) s.held.push_back({v, slot, targets[slot]});
        s.out = distinct_without(targets, v);
    }

    [[nodiscard]] bool halving(const RankState& s) const { return s.range.size() > limit_; }

    [[nodiscard]] bool any_local_halving() const {
        return std::any_of(states_.begin(), states_.end(), [&](const RankState& s) { return halving(s); });
    }

    /// Alg. 1 lines 13-23: the lower half [lo, mid] and the upper half of a range.
    static std::pair<Range, Range> halves(const Range& r) {
        const std::uint32_t mid = r.lo + (r.hi - r.lo) / 2;
        return {Range{r.lo, mid}, Range{mid + 1, r.hi}};
    }

    [[nodiscard]] bool in_lower(std::uint32_t v, const RankState& s) const {
        return halves(s.range).first.contains(position_[v]);
    }

    /// The candidates of v in the other half with the number of v's out-neighbors they
    /// share that lie in `shared_in` (matrix A restricted to one half).
    void find_candidates(std::uint32_t v, RankState& s, const Range& other, const Range& shared_in) {
        s.candidates.clear();
        std::vector<std::uint32_t> touched;
        for (const auto w : s.out) {
            if (!shared_in.contains(position_[w])) continue;
            for (const auto c : rows_[w]) {
                if (c == v || !other.contains(position_[c])) continue;
                if (tally_[c]++ == 0) touched.push_back(c);
            }
        }
        for (const auto c : touched) {
            s.candidates.emplace_back(c, tally_[c]);
            tally_[c] = 0;
        }
        std::sort(s.candidates.begin(), s.candidates.end(), [](const auto& a, const auto& b) {
            return std::pair(b.second, a.first) < std::pair(a.second, b.first);
        });
        s.next = 0;
    }

    /// Most shared out-neighbors among the free candidates, ties to the lower rank.
    [[nodiscard]] std::uint32_t best_free(RankState& s) const {
        while (s.next < s.candidates.size() && taken_[s.candidates[s.next].first]) ++s.next;
        return s.next < s.candidates.size() ? s.candidates[s.next].first : kNone;
    }

    /// Seekers (lower halves if `lower_seeks`) find agents among the other halves, each
    /// acceptor taking at most one origin. Returns the rounds used.
    std::uint64_t match(bool lower_seeks) {
        std::vector<std::uint32_t> seekers;
        std::fill(taken_.begin(), taken_.end(), 0);
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            s.candidates.clear();
            if (!halving(s)) continue;
            const auto [lower, upper] = halves(s.range);
            const bool seeker = in_lower(v, s) == lower_seeks;
            const Range& mine = in_lower(v, s) ? lower : upper;
            const Range& other = in_lower(v, s) ? upper : lower;
            // The weight of a pair is what the seeker shares with its agent in the agent's half.
            find_candidates(v, s, other, seeker ? other : mine);
            if (seeker) seekers.push_back(v);
        }
        std::uint64_t rounds = 0;
        while (engine_.any(std::any_of(seekers.begin(), seekers.end(), [&](std::uint32_t v) { return seeking(v); }))) {
            request(seekers);
            accept();
            ++rounds;
        }
        return rounds;
    }

    [[nodiscard]] bool seeking(std::uint32_t v) {
        RankState& s = state(v);
        return s.agent == kNone && !taken_[v] && best_free(s) != kNone;
    }

    /// Alg. 2 lines 13-18: REQ to the best candidate.
    void request(const std::vector<std::uint32_t>& seekers) {
        std::vector<std::uint32_t> active;
        for (const auto v : seekers) {
            if (seeking(v)) active.push_back(v);
        }
        engine_.superstep(active, [&](std::uint32_t v, auto, Engine::Outbox& outbox) {
            const std::uint32_t req = 1;
            outbox.post(best_free(state(v)), std::span(&req, 1));
        });
    }

    /// Alg. 3: accept the best free origin once it has asked; publish the pair.
    void accept() {
        const auto receivers = engine_.receivers();
        engine_.superstep(receivers, [&](std::uint32_t c, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(c);
            if (taken_[c]) return;
            const std::uint32_t best = best_free(s);
            const bool asked =
                std::any_of(inbox.begin(), inbox.end(), [&](const Message& m) { return m.source == best; });
            if (best == kNone || !asked) return;
            outbox.publish(AgentPair{c, best}.encode());
        });
        for (const Message& m : engine_.published()) {
            const auto [agent, origin] = AgentPair::decode(m.payload);
            taken_[agent] = taken_[origin] = 1;
            if (engine_.owner(agent) == engine_.process()) {
                state(agent).origin = origin;
                ++state(agent).origins_served;
            }
            if (engine_.owner(origin) == engine_.process()) {
                state(origin).agent = agent;
                ++state(origin).agents_found;
            }
        }
    }

    /// Alg. 1 lines 25-49: items for the opposite half go to the agent, which holds them
    /// from now on; then every rank continues in its own half.
    void offload(std::uint32_t step) {
        engine_.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) {
            RankState& s = state(v);
            if (!halving(s)) return;
            ++s.steps;
            if (s.agent == kNone) return;
            const auto [lower, upper] = halves(s.range);
            const Range& other = in_lower(v, s) ? upper : lower;
            std::vector<Held> keep, handed;
            std::vector<Item> items;
            for (const Held& h : s.held) {
                if (!other.contains(position_[h.target])) {
                    keep.push_back(h);
                    continue;
                }
                items.push_back({h.origin, h.slot});
                handed.push_back(h);
            }
            s.held.swap(keep);
            if (items.empty()) return;
            out_.add_send(v, step, s.agent, std::move(items));
            outbox.post(s.agent, HeldItems::encode(handed));
        });
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            for (const Message& m : engine_.inbox(v)) {
                for (const Held& h : HeldItems::decode(m.payload)) {
                    if (h.target != v) s.held.push_back(h);  // arrived at its destination otherwise
                }
            }
            if (halving(s)) s.range = in_lower(v, s) ? halves(s.range).first : halves(s.range).second;
            s.agent = s.origin = kNone;
        }
    }

    /// Alg. 4 lines 19-33: one message per destination with everything held for it.
    void deliver(std::uint32_t last_step, std::uint64_t rounds) {
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            RankState& s = state(v);
            std::stable_sort(s.held.begin(), s.held.end(), [](const Held& a, const Held& b) {
                return std::tie(a.target, a.origin, a.slot) < std::tie(b.target, b.origin, b.slot);
            });
            std::uint32_t off_socket = 0, on_socket = 0;
            for (std::size_t i = 0; i < s.held.size();) {
                const std::uint32_t w = s.held[i].target;
                std::vector<Item> items;
                for (; i < s.held.size() && s.held[i].target == w; ++i)
                    items.push_back({s.held[i].origin, s.held[i].slot});
                out_.add_send(v, last_step, w, std::move(items));
                ++(placement_.same_socket(v, w) ? on_socket : off_socket);
            }
            for (const auto& op : out_.sends(v)) {
                if (op.step < last_step) ++(placement_.same_socket(v, op.peer) ? on_socket : off_socket);
            }
            out_.add_metric(v, "halving_steps", s.steps);
            out_.add_metric(v, "agent_found_share",
                            s.steps == 0 ? 0.0 : static_cast<double>(s.agents_found) / static_cast<double>(s.steps));
            out_.add_metric(v, "origins_served", s.origins_served);
            out_.add_metric(v, "sends_off_socket", off_socket);
            out_.add_metric(v, "sends_intra_socket", on_socket);
            out_.add_metric(v, "matching_rounds", static_cast<double>(rounds));
        }
    }

    Engine& engine_;
    const Topology& topology_;
    PatternBuilder& out_;
    const Placement& placement_;
    std::uint32_t first_;
    std::vector<RankState> states_;
    NeighborRows rows_;
    std::vector<std::uint32_t> position_;  // rank -> position in placement order
    std::vector<std::uint8_t> taken_;      // matched in the current matching (published pairs)
    std::vector<std::uint32_t> tally_;     // scratch
    std::uint32_t limit_;                  // L: halving stops at ranges of at most L ranks
};

}  // namespace

DistanceHalvingAlgorithm::DistanceHalvingAlgorithm(Placement placement) : placement_(std::move(placement)) {}

std::vector<std::pair<std::string, std::string>> DistanceHalvingAlgorithm::parameters() const {
    return {{"placement", placement_.description()},
            {"ranks_per_socket", std::to_string(placement_.max_ranks_per_socket())}};
}

void DistanceHalvingAlgorithm::build(Engine& engine, const Topology& topology, PatternBuilder& out) {
    placement_.require_ranks(topology.num_ranks(), "distance-halving");
    DistanceHalvingRun(engine, topology, out, placement_).execute();
}

}  // namespace nbr::compiler::internal
