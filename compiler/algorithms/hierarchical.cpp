// Node-aware aggregation, written per virtual rank (docs/algorithms.md, "hierarchical").
//
// Every edge o → d between two nodes (N = node(o) ≠ M = node(d)) travels at most three hops:
//   step 0  o hands the item to f, the forwarder of its lane of the node pair (N, M), a rank
//           of N (no hop when o = f);
//   step 1  f sends everything it holds for the lane's receiver g, a rank of M, in one
//           message (an allgather message carries each origin's block once);
//   step 2  g delivers to d, one message per destination with every block for it (no hop
//           when d = g).
// Edges inside a node go directly in step 0, one message per destination.
//
// A node pair's traffic is split into lanes when the node has more ranks than its share of
// node pairs: the pair gets as many lanes as its share of the node's items is of the node's
// ranks (at least 1, at most one per sender), the senders split into contiguous groups, one
// per lane. Each node's lowest rank (its coordinator) assigns the lanes to its ranks by load,
// heaviest lane first onto the least-loaded rank (LPT), forwarding lanes first, then the
// receiving lanes on top, so that no single rank carries the node's inter-node traffic.
// Supersteps:
//   report    - every rank posts its coordinator its items per other node, out and in;
//   forwarders- coordinators split each destination node's traffic into lanes, assign their
//               forwarders and tell the destination node's coordinator the lanes' items;
//   receivers - coordinators assign a receiver to every arriving lane and tell the source
//               node's coordinator;
//   inform    - coordinators tell each rank its lane and forwarder for every node it sends
//               to, and each forwarder the receivers of its lanes;
//   hand off  - every rank adds its step-0 sends and tells each forwarder the items it gets;
//   forward   - forwarders add their step-1 sends and tell each receiver the items it gets;
//   deliver   - receivers add their step-2 sends.
//
// Across nodes along a virtual k-ary n-cube (--across-nodes cube) there are no lanes and no
// coordinators: the node indices 0..m−1 (nodes with ranks, in node order) are routed by
// Bruck's index scheme in base k, ⌈log_k m⌉ rounds; in round t a rank sends every item it
// holds whose node distance has digit t = j ≠ 0 to the rank of its own node index on the node
// j·k^t further (modulo that node's size), one message per j. Items start at their origin, so
// no hand-off precedes the rounds; the destination node then delivers (directly, or in Bruck
// rounds inside it).
// Every decision depends on inboxes (ordered by source) and sorted containers only, so the
// output is the same for every compiler process count.
#include "hierarchical.hpp"

#include "hierarchical_messages.hpp"
#include "nbr/compiler/longest_first.hpp"
#include "nbr/compiler/radix_model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace nbr::compiler::internal {

namespace {

std::vector<Item> items_of(const std::vector<Routed>& routed) {
    std::vector<Item> items;
    items.reserve(routed.size());
    for (const Routed& r : routed) items.push_back({r.origin, r.slot});
    return items;
}

/// What a coordinator learns and decides for its node.
struct Coordinator {
    std::map<std::uint32_t, std::uint64_t> out_load;  // destination node -> items
    // destination node -> (rank of this node, its items there), by rank
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> senders;
    std::map<std::uint32_t, std::vector<std::uint32_t>> forwarders;  // destination node -> per lane
    std::map<std::uint32_t, std::vector<std::uint32_t>> receivers;   // source node -> per lane
    std::vector<std::uint64_t> load;                                 // items per rank of the node, both roles
    std::uint64_t in_total = 0;                                      // items the node receives
};

struct RankState {
    std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> forwarder_for;  // node -> (lane, forwarder)
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> receiver_for;   // (node, lane) -> receiver
    std::vector<Routed> held;  // items here on their way (to forward myself, or between intra-node rounds)
    std::uint32_t lanes_forwarded = 0;
    std::uint32_t lanes_received = 0;
    std::uint64_t items_forwarded = 0;
};

/// Lane of the sender at `position` among `senders` ranks when a node pair has `lanes`
/// lanes: contiguous groups of senders.
std::uint32_t lane_of(std::size_t position, std::size_t senders, std::uint32_t lanes) {
    return static_cast<std::uint32_t>(position * lanes / senders);
}

/// Takes from `held` the items whose cyclic distance (`distance(item)`) has base-`radix` digit
/// j ≠ 0 at `place` = radix^t, grouped by j; the others stay. Distances lose that digit
/// without borrowing, since the lower digits are already 0.
template <class Distance>
std::map<std::size_t, std::vector<Routed>> take_digit(std::vector<Routed>& held, std::size_t place, std::size_t radix,
                                                      Distance distance) {
    std::map<std::size_t, std::vector<Routed>> moving;
    std::vector<Routed> staying;
    for (const Routed& r : held) {
        const std::size_t j = distance(r) / place % radix;
        (j != 0 ? moving[j] : staying).push_back(r);
    }
    held = std::move(staying);
    return moving;
}

/// radix^digit.
std::size_t power(std::size_t radix, std::uint32_t digit) {
    std::size_t place = 1;
    for (std::uint32_t k = 0; k < digit; ++k) place *= radix;
    return place;
}

/// What lanes and the cube of nodes share: the nodes (the placement's groups) and their ranks,
/// every local rank's state, the Bruck rounds inside a node, the direct delivery and the
/// statistics.
class NodeRouting {
protected:
    /// `placement`: the groups the pattern aggregates by (nodes, or sockets as nodes); `where`:
    /// where the ranks run, for the statistics.
    NodeRouting(Engine& engine, const Topology& topology, PatternBuilder& out, const Placement& placement,
                const Placement& where, const HierarchicalShape& shape)
        : engine_(engine),
          topology_(topology),
          out_(out),
          placement_(placement),
          where_(where),
          intra_(shape.intra),
          radix_(shape.radix),
          first_(engine.local_begin()),
          states_(engine.local_count()),
          members_(placement.num_nodes()),
          index_(topology.num_ranks()),
          node_index_(placement.num_nodes(), 0) {
        for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) {
            index_[r] = static_cast<std::uint32_t>(members_[placement.node(r)].size());
            members_[placement.node(r)].push_back(r);
        }
        std::size_t largest = 1;
        for (std::uint32_t node = 0; node < members_.size(); ++node) {
            largest = std::max(largest, members_[node].size());
            if (members_[node].empty()) continue;
            node_index_[node] = static_cast<std::uint32_t>(nodes_.size());
            nodes_.push_back(node);
        }
        rounds_ = bruck_rounds(largest, radix_);
    }

    RankState& state(std::uint32_t v) { return states_[v - first_]; }

    /// Sorts `items`, adds v's send of them to `peer` in `step` and tells `peer` what it gets.
    void send_held(std::uint32_t v, std::uint32_t step, std::uint32_t peer, std::vector<Routed>& items,
                   Engine::Outbox& outbox) {
        std::sort(items.begin(), items.end());
        out_.add_send(v, step, peer, items_of(items));
        outbox.post(peer, RoutedItems::encode(items));
    }

    /// Direct delivery in `step` (lanes: step 2, by the receivers; cube: after the rounds): one
    /// message per destination with every item for it held here (items for v have arrived).
    void deliver_held(std::uint32_t step) {
        engine_.superstep([&, step](std::uint32_t v, std::span<const Message> inbox, auto&) {
            std::vector<Routed> held = std::move(state(v).held);
            for (const Message& m : inbox) RoutedItems::decode_into(m.payload, held);
            std::map<std::uint32_t, std::vector<Routed>> per_target;
            for (const Routed& r : held) {
                if (r.target != v) per_target[r.target].push_back(r);
            }
            for (auto& [d, items] : per_target) {
                std::sort(items.begin(), items.end());
                out_.add_send(v, step, d, items_of(items));
            }
        });
    }

    /// One round of Bruck's index scheme inside every node, radix r: a rank sends the items
    /// whose distance to their next stop (in node indices, cyclically) has digit `digit` = j ≠ 0
    /// in base r to the rank j·r^digit indices after it, one message per j; the others stay.
    void bruck_round(std::uint32_t step, std::uint32_t digit) {
        const std::size_t place = power(radix_, digit);
        engine_.superstep([&, step, place](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            auto& held = state(v).held;
            for (const Message& m : inbox) RoutedItems::decode_into(m.payload, held);
            const auto& ranks = members_[placement_.node(v)];
            const std::size_t n = ranks.size();
            auto moving =
                take_digit(held, place, radix_, [&](const Routed& r) { return (index_[r.via] + n - index_[v]) % n; });
            for (auto& [j, items] : moving) send_held(v, step, ranks[(index_[v] + j * place) % n], items, outbox);
        });
    }

    /// How many nodes (with ranks, cyclically in node order) w's node lies after v's.
    [[nodiscard]] std::uint32_t node_distance(std::uint32_t v, std::uint32_t w) const {
        const auto m = static_cast<std::uint32_t>(nodes_.size());
        return (node_index_[placement_.node(w)] + m - node_index_[placement_.node(v)]) % m;
    }

    /// Per rank: messages by distance class, the items it puts on the network, its roles.
    void record_metrics() {
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            const RankState& s = state(v);
            double off_node = 0, on_node = 0, on_socket = 0, items_off_node = 0;
            for (const auto& op : out_.sends(v)) {
                if (!where_.same_node(v, op.peer)) {
                    ++off_node;
                    items_off_node += static_cast<double>(op.items.size());
                } else {
                    ++(where_.same_socket(v, op.peer) ? on_socket : on_node);
                }
            }
            out_.add_metric(v, "sends_off_node", off_node);
            out_.add_metric(v, "sends_other_socket", on_node);
            out_.add_metric(v, "sends_same_socket", on_socket);
            out_.add_metric(v, "items_off_node", items_off_node);
            out_.add_metric(v, "lanes_forwarded", s.lanes_forwarded);
            out_.add_metric(v, "lanes_received", s.lanes_received);
            out_.add_metric(v, "items_forwarded", static_cast<double>(s.items_forwarded));
        }
    }

    Engine& engine_;
    const Topology& topology_;
    PatternBuilder& out_;
    const Placement& placement_;  // the groups aggregated by
    const Placement& where_;      // where the ranks run
    IntraNode intra_;
    std::size_t radix_;  // of the Bruck rounds
    std::uint32_t first_;
    std::vector<RankState> states_;
    std::vector<std::vector<std::uint32_t>> members_;  // node -> its ranks, increasing
    std::vector<std::uint32_t> index_;                 // rank -> its index among its node's ranks
    std::uint32_t rounds_ = 0;                         // Bruck rounds: ⌈log_r(largest node)⌉
    std::vector<std::uint32_t> node_index_;            // node -> its index among the nodes with ranks
    std::vector<std::uint32_t> nodes_;                 // the nodes with ranks, increasing
};

/// Across nodes in lanes: coordinators split every node pair's traffic into lanes and assign
/// their forwarders and receivers (report, forwarders, receivers, inform), then the items go
/// hand-off, forward, deliver (the file's comment).
class LanesRun : public NodeRouting {
public:
    LanesRun(Engine& engine, const Topology& topology, PatternBuilder& out, const Placement& placement,
             const Placement& where, const HierarchicalShape& shape)
        : NodeRouting(engine, topology, out, placement, where, shape), lane_ranks_(members_.size()) {
        for (std::uint32_t node = 0; node < members_.size(); ++node) lane_ranks_[node] = lane_ranks(members_[node]);
    }

    /// Direct: steps 0 (hand off), 1 (forward), 2 (deliver). Bruck: steps 0..R-1 (hand-off
    /// rounds), R (forward), R+1..2R (delivery rounds), R = ⌈log_r(largest node)⌉.
    void execute() {
        report();
        plan_forwarders();
        plan_receivers();
        inform();
        if (intra_ == IntraNode::direct) {
            hand_off();
            forward(1);
            deliver_held(2);
        } else {
            hand_off_held();
            for (std::uint32_t k = 0; k < rounds_; ++k) bruck_round(k, k);
            forward(rounds_);
            for (std::uint32_t k = 0; k < rounds_; ++k) bruck_round(rounds_ + 1 + k, k);
        }
        record_metrics();
    }

private:
    [[nodiscard]] std::uint32_t coordinator(std::uint32_t node) const { return members_[node].front(); }

    /// The ranks of a node that forward and receive its lanes: those with neighbors (all of them
    /// if none has). A rank without neighbors may pass any counts to a fixed-size call, so it
    /// cannot tell the block size a forwarder needs (docs/algorithms.md, "Hierarchical").
    [[nodiscard]] std::vector<std::uint32_t> lane_ranks(const std::vector<std::uint32_t>& ranks) const {
        std::vector<std::uint32_t> with;
        for (const auto r : ranks) {
            if (!topology_.in_neighbors(r).empty() || !topology_.out_neighbors(r).empty()) with.push_back(r);
        }
        return with.empty() ? ranks : with;
    }

    /// What v sends to and receives from other nodes, by node.
    [[nodiscard]] TrafficReport traffic(std::uint32_t v) const {
        std::map<std::uint32_t, std::uint32_t> out, in;
        const std::uint32_t home = placement_.node(v);
        for (const auto d : topology_.out_neighbors(v)) {
            if (placement_.node(d) != home) ++out[placement_.node(d)];
        }
        for (const auto o : topology_.in_neighbors(v)) {
            if (placement_.node(o) != home) ++in[placement_.node(o)];
        }
        TrafficReport report;
        for (const auto& [node, items] : out) report.out.push_back({node, items});
        for (const auto& [node, items] : in) report.in.push_back({node, items});
        return report;
    }

    void report() {
        engine_.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) {
            const TrafficReport report = traffic(v);
            if (!report.empty()) outbox.post(coordinator(placement_.node(v)), report.encode());
        });
    }

    /// Lanes of a node pair with `items` of the node's `total` items: a share of the node's
    /// ranks as large as the pair's share of its items, at least 1, at most one per sender.
    [[nodiscard]] std::uint32_t lanes_for(std::uint64_t items, std::uint64_t total, std::size_t node_ranks,
                                          std::size_t senders) const {
        const auto share = static_cast<std::uint64_t>(node_ranks) * items / std::max<std::uint64_t>(total, 1);
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(share, 1, senders));
    }

    /// Reads the reports, splits every destination node's traffic into lanes, assigns each
    /// lane a forwarder (LPT) and tells the destination node's coordinator the items of each
    /// lane (LaneItems).
    void plan_forwarders() {
        const auto active = engine_.receivers();
        engine_.superstep(active, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            Coordinator& c = coordinators_[v];
            read_reports(c, inbox);
            const std::uint32_t node = placement_.node(v);
            const auto lane_items = split_lanes(c, lane_ranks_[node].size());
            assign_forwarders(c, lane_ranks_[node], lane_items);
            for (const auto& [m, items] : lane_items) {
                LaneItems lanes{node, {}};
                for (const auto i : items) lanes.items.push_back(static_cast<std::uint32_t>(i));
                outbox.post(coordinator(m), lanes.encode());
            }
        });
    }

    /// The coordinator's view of its node's reports: items per destination node and sender,
    /// and the items the node receives.
    static void read_reports(Coordinator& c, std::span<const Message> inbox) {
        for (const Message& m : inbox) {
            const TrafficReport report = TrafficReport::decode(m.payload);
            for (const NodeItems& to : report.out) {
                c.out_load[to.node] += to.items;
                c.senders[to.node].emplace_back(m.source, to.items);
            }
            for (const NodeItems& from : report.in) c.in_total += from.items;
        }
    }

    /// Per destination node: the items of each of its lanes (lanes_for; senders in rank order,
    /// contiguous groups per lane).
    [[nodiscard]] std::map<std::uint32_t, std::vector<std::uint64_t>> split_lanes(const Coordinator& c,
                                                                                  std::size_t node_ranks) const {
        std::uint64_t total = c.in_total;
        for (const auto& [m, items] : c.out_load) total += items;
        std::map<std::uint32_t, std::vector<std::uint64_t>> lane_items;
        for (const auto& [m, senders] : c.senders) {
            const std::uint32_t lanes = lanes_for(c.out_load.at(m), total, node_ranks, senders.size());
            auto& items = lane_items[m];
            items.assign(lanes, 0);
            for (std::size_t i = 0; i < senders.size(); ++i)
                items[lane_of(i, senders.size(), lanes)] += senders[i].second;
        }
        return lane_items;
    }

    /// Every lane's forwarder among the node's `ranks`, longest processing time first.
    static void assign_forwarders(Coordinator& c, const std::vector<std::uint32_t>& ranks,
                                  const std::map<std::uint32_t, std::vector<std::uint64_t>>& lane_items) {
        std::vector<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>> jobs;  // (items, (node, lane))
        for (const auto& [m, items] : lane_items) {
            for (std::uint32_t l = 0; l < items.size(); ++l) jobs.push_back({items[l], {m, l}});
        }
        c.load.assign(ranks.size(), 0);
        const auto chosen = internal::longest_first(jobs, c.load);
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            const auto [m, l] = jobs[j].second;
            auto& f = c.forwarders[m];
            f.resize(lane_items.at(m).size());
            f[l] = ranks[chosen[j]];
        }
    }

    /// Assigns a receiver to every lane arriving at the node (LPT, on top of the forwarding
    /// load) and tells each source node's coordinator the receiver of each lane (LaneReceivers).
    void plan_receivers() {
        std::vector<std::uint32_t> active;
        for (const auto& [v, c] : coordinators_) active.push_back(v);
        engine_.superstep(active, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            Coordinator& c = coordinators_[v];
            const auto& ranks = lane_ranks_[placement_.node(v)];
            if (c.load.empty()) c.load.assign(ranks.size(), 0);
            std::vector<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>>
                jobs;  // (items, (node, lane))
            for (const Message& m : inbox) {
                const LaneItems lanes = LaneItems::decode(m.payload);
                for (std::uint32_t l = 0; l < lanes.items.size(); ++l)
                    jobs.push_back({lanes.items[l], {lanes.node, l}});
                c.receivers[lanes.node].resize(lanes.items.size());
            }
            const auto chosen = internal::longest_first(jobs, c.load);
            for (std::size_t j = 0; j < jobs.size(); ++j) {
                c.receivers[jobs[j].second.first][jobs[j].second.second] = ranks[chosen[j]];
            }
            const std::uint32_t node = placement_.node(v);
            for (const auto& [n, g] : c.receivers) outbox.post(coordinator(n), LaneReceivers{node, g}.encode());
        });
    }

    void inform() {
        std::vector<std::uint32_t> active;
        for (const auto& [v, c] : coordinators_) active.push_back(v);
        engine_.superstep(active, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            Coordinator& c = coordinators_[v];
            std::map<std::uint32_t, std::vector<std::uint32_t>> receivers_of;  // destination node -> per lane
            for (const Message& m : inbox) {
                LaneReceivers lanes = LaneReceivers::decode(m.payload);
                receivers_of[lanes.node] = std::move(lanes.receivers);
            }
            std::map<std::uint32_t, Roles> told;  // per rank of the node
            for (const auto& [m, senders] : c.senders) {
                const auto& f = c.forwarders.at(m);
                for (std::size_t i = 0; i < senders.size(); ++i) {
                    const std::uint32_t lane = lane_of(i, senders.size(), static_cast<std::uint32_t>(f.size()));
                    told[senders[i].first].forwarders.push_back({m, lane, f[lane]});
                }
                for (std::uint32_t lane = 0; lane < f.size(); ++lane) {
                    told[f[lane]].receivers.push_back({m, lane, receivers_of.at(m).at(lane)});
                }
            }
            for (const auto& [n, g] : c.receivers) {
                for (const auto r : g) ++told[r].receiving;
            }
            for (const auto& [r, roles] : told) outbox.post(r, roles.encode());
        });
    }

    /// What the coordinator told v: its forwarder per node, its lanes' receivers.
    static void learn_roles(RankState& s, std::span<const Message> inbox) {
        for (const Message& m : inbox) {
            const Roles roles = Roles::decode(m.payload);
            for (const LaneRank& f : roles.forwarders) s.forwarder_for[f.node] = {f.lane, f.rank};
            for (const LaneRank& g : roles.receivers) s.receiver_for[{g.node, g.lane}] = g.rank;
            s.lanes_received = roles.receiving;
        }
    }

    /// Step 0: edges inside the node directly, the others to their lane's forwarder.
    void hand_off() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            learn_roles(s, inbox);
            std::map<std::uint32_t, std::vector<Routed>> direct, handed;
            const auto targets = topology_.out_neighbors(v);
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const std::uint32_t m = placement_.node(targets[slot]);
                if (m == placement_.node(v)) {
                    direct[targets[slot]].push_back({targets[slot], v, slot, 0, targets[slot]});
                    continue;
                }
                const auto [lane, f] = s.forwarder_for.at(m);
                (f == v ? s.held : handed[f]).push_back({targets[slot], v, slot, lane, f});
            }
            for (auto& [d, items] : direct) out_.add_send(v, 0, d, items_of(items));
            for (auto& [f, items] : handed) {
                out_.add_send(v, 0, f, items_of(items));
                outbox.post(f, RoutedItems::encode(items));
            }
        });
    }

    /// Bruck: every item starts held at its origin, its next stop its destination (inside the
    /// node) or its lane's forwarder; self-loops are sent at once, in step 0.
    void hand_off_held() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, auto&) {
            RankState& s = state(v);
            learn_roles(s, inbox);
            std::vector<Routed> self;
            const auto targets = topology_.out_neighbors(v);
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const std::uint32_t d = targets[slot];
                const std::uint32_t m = placement_.node(d);
                const auto [lane, via] = m == placement_.node(v) ? std::pair{0U, d} : s.forwarder_for.at(m);
                (d == v ? self : s.held).push_back({d, v, slot, lane, via});
            }
            if (!self.empty()) out_.add_send(v, 0, v, items_of(self));
        });
    }

    /// One message per receiver of the lanes a forwarder serves, in `step`, in the order of
    /// their nodes' distance after the forwarder's (a shifted schedule, as the cube rounds'):
    /// in receiver order every node's NIC would send to the low nodes first and the high ones
    /// last, and the receiving NICs of the last nodes would get their whole traffic at once.
    /// (Items of edges inside the node that the Bruck rounds brought here have arrived: they
    /// stop here.)
    void forward(std::uint32_t step) {
        engine_.superstep([&, step](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            std::vector<Routed> held = std::move(s.held);
            s.held.clear();
            for (const Message& m : inbox) RoutedItems::decode_into(m.payload, held);
            std::erase_if(held, [&](const Routed& r) { return placement_.same_node(r.target, v); });
            // (node distance, receiver) -> items: the nearest node after v's first (see above).
            std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Routed>> per_receiver;
            std::set<std::pair<std::uint32_t, std::uint32_t>> lanes;
            for (const Routed& r : held) {
                const std::pair lane{placement_.node(r.target), r.lane};
                const std::uint32_t g = s.receiver_for.at(lane);
                per_receiver[{node_distance(v, g), g}].push_back(r);
                lanes.insert(lane);
            }
            for (auto& [key, items] : per_receiver) {
                const std::uint32_t g = key.second;
                std::sort(items.begin(), items.end());
                out_.add_send(v, step, g, items_of(items));
                std::vector<Routed> onward;
                for (const Routed& r : items) {
                    if (r.target != g) onward.push_back({r.target, r.origin, r.slot, r.lane, r.target});
                }
                if (!onward.empty()) outbox.post(g, RoutedItems::encode(onward));
                s.items_forwarded += items.size();
            }
            s.lanes_forwarded = static_cast<std::uint32_t>(lanes.size());
        });
    }

    std::map<std::uint32_t, Coordinator> coordinators_;   // local coordinators that heard from their node
    std::vector<std::vector<std::uint32_t>> lane_ranks_;  // node -> lane_ranks of its members
};

/// Across nodes along a virtual k-ary n-cube of the nodes (the file's comment): no lanes and
/// no coordinators.
class CubeRun : public NodeRouting {
public:
    CubeRun(Engine& engine, const Topology& topology, PatternBuilder& out, const Placement& placement,
            const Placement& where, const HierarchicalShape& shape)
        : NodeRouting(engine, topology, out, placement, where, shape),
          node_radix_(shape.node_radix == 0 ? std::max<std::size_t>(nodes_.size(), 2) : shape.node_radix),
          node_rounds_(bruck_rounds(nodes_.size(), node_radix_)) {}

    /// Cube: steps 0..D−1 across nodes (D = ⌈log_k m⌉), then the delivery: direct in step D
    /// (edges inside the node directly in step 0), or Bruck rounds in steps D..D+R−1.
    void execute() {
        start_cube();
        for (std::uint32_t t = 0; t < node_rounds_; ++t) cube_round(t);
        if (intra_ == IntraNode::direct) {
            deliver_held(node_rounds_);
        } else {
            for (std::uint32_t k = 0; k < rounds_; ++k) bruck_round(node_rounds_ + k, k);
        }
        record_metrics();
    }

private:
    /// Cube: every item starts held at its origin, its next stop inside a node its destination.
    /// Self-loops are sent at once, in step 0; with direct delivery so are the edges inside the
    /// node.
    void start_cube() {
        engine_.superstep([&](std::uint32_t v, auto, auto&) {
            RankState& s = state(v);
            std::vector<Routed> self;
            std::map<std::uint32_t, std::vector<Routed>> direct;
            const auto targets = topology_.out_neighbors(v);
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const std::uint32_t d = targets[slot];
                const Routed item{d, v, slot, 0, d};
                if (d == v) {
                    self.push_back(item);
                } else if (intra_ == IntraNode::direct && placement_.same_node(d, v)) {
                    direct[d].push_back(item);
                } else {
                    s.held.push_back(item);
                }
            }
            if (!self.empty()) out_.add_send(v, 0, v, items_of(self));
            for (auto& [d, items] : direct) out_.add_send(v, 0, d, items_of(items));
        });
    }

    /// Cube round t (step t): items whose node distance has base-k digit t = j ≠ 0 go to the
    /// rank of v's node index on the node j·k^t further, one message per j.
    void cube_round(std::uint32_t t) {
        const std::size_t place = power(node_radix_, t);
        engine_.superstep([&, t, place](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            for (const Message& m : inbox) RoutedItems::decode_into(m.payload, s.held);
            const std::size_t m = nodes_.size();
            const std::size_t here = node_index_[placement_.node(v)];
            auto moving =
                take_digit(s.held, place, node_radix_, [&](const Routed& r) { return node_distance(v, r.target); });
            for (auto& [j, items] : moving) {
                const auto& ranks = members_[nodes_[(here + j * place) % m]];
                const std::uint32_t partner = ranks[index_[v] % ranks.size()];
                for (const Routed& r : items) s.items_forwarded += r.origin != v ? 1 : 0;
                send_held(v, t, partner, items, outbox);
            }
        });
    }

    std::size_t node_radix_;     // k (the node count for one round)
    std::uint32_t node_rounds_;  // ⌈log_k(nodes)⌉
};

}  // namespace

HierarchicalAlgorithm::HierarchicalAlgorithm(Placement placement, HierarchicalShape shape)
    : placement_(std::move(placement)), shape_(shape) {
    if (shape_.intra == IntraNode::bruck && shape_.radix < 2)
        throw std::invalid_argument("hierarchical: --radix must be at least 2");
    if (shape_.across == AcrossNodes::cube && shape_.node_radix == 1)
        throw std::invalid_argument("hierarchical: --node-radix must be 0 or at least 2");
}

std::vector<std::pair<std::string, std::string>> HierarchicalAlgorithm::parameters() const {
    std::vector<std::pair<std::string, std::string>> out{
        {"placement", placement_.description()},
        {"ranks_per_node", std::to_string(placement_.max_ranks_per_node())},
        {"aggregate_by", to_string(shape_.aggregate_by)},
        {"intra_node", to_string(shape_.intra)}};
    if (shape_.intra == IntraNode::bruck) out.emplace_back("radix", std::to_string(shape_.radix));
    out.emplace_back("across_nodes", to_string(shape_.across));
    if (shape_.across == AcrossNodes::cube) out.emplace_back("node_radix", std::to_string(shape_.node_radix));
    return out;
}

void HierarchicalAlgorithm::build(Engine& engine, const Topology& topology, PatternBuilder& out) {
    placement_.require_ranks(topology.num_ranks(), "hierarchical");
    const auto run = [&](const Placement& groups) {
        if (shape_.across == AcrossNodes::cube) {
            CubeRun(engine, topology, out, groups, placement_, shape_).execute();
        } else {
            LanesRun(engine, topology, out, groups, placement_, shape_).execute();
        }
    };
    if (shape_.aggregate_by == AggregateBy::socket) {
        run(placement_.socket_groups());
    } else {
        run(placement_);
    }
}

}  // namespace nbr::compiler::internal
