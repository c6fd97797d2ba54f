// Node-aware aggregation, written per virtual rank (docs/algorithms.md, "hierarchical").
//
// Every edge o → d between two nodes (N = node(o) ≠ M = node(d)) travels at most three hops:
//   step 0  o hands the item to f = forwarder(N, M), a rank of N (no hop when o = f);
//   step 1  f sends everything node N has for node M to g = receiver(M, N), a rank of M, in
//           one message (an allgather message carries each origin's block once);
//   step 2  g delivers to d, one message per destination with every block for it from every
//           node g receives for (no hop when d = g).
// Edges inside a node go directly in step 0, one message per destination.
//
// Each node's lowest rank (its coordinator) assigns its ranks' roles from their reported item
// counts: the node pairs (as forwarder per destination node, as receiver per source node) in
// decreasing order of items, each to the least-loaded rank of the node so far (LPT), so that
// no single rank carries the node's inter-node traffic. Supersteps:
//   report   - every rank posts its coordinator its items per other node, out and in;
//   assign   - coordinators assign the roles and tell each source node's coordinator the
//              receiver of its traffic;
//   inform   - coordinators tell each rank the forwarder for every node it sends to, and each
//              forwarder the receiver for every node it forwards to;
//   hand off - every rank adds its step-0 sends and tells each forwarder the items it gets;
//   forward  - forwarders add their step-1 sends and tell each receiver the items it gets;
//   deliver  - receivers add their step-2 sends.
// Every decision depends on inboxes (ordered by source) and sorted containers only, so the
// output is the same for every compiler process count.
#include "hierarchical.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace nbr::compiler::internal {

namespace {

/// An item on its way: the edge (origin, slot) and its destination.
struct Routed {
    std::uint32_t target = 0;
    std::uint32_t origin = 0;
    std::uint32_t slot = 0;
    friend bool operator<(const Routed& a, const Routed& b) {
        return std::tie(a.origin, a.slot) < std::tie(b.origin, b.slot);
    }
};

/// Flat words [target, origin, slot, ...].
std::vector<std::uint32_t> to_words(const std::vector<Routed>& items) {
    std::vector<std::uint32_t> words;
    words.reserve(3 * items.size());
    for (const Routed& r : items) words.insert(words.end(), {r.target, r.origin, r.slot});
    return words;
}

void append_routed(std::span<const std::uint32_t> words, std::vector<Routed>& out) {
    for (std::size_t i = 0; i + 3 <= words.size(); i += 3) out.push_back({words[i], words[i + 1], words[i + 2]});
}

std::vector<Item> items_of(const std::vector<Routed>& routed) {
    std::vector<Item> items;
    items.reserve(routed.size());
    for (const Routed& r : routed) items.push_back({r.origin, r.slot});
    return items;
}

/// What a coordinator learns and decides for its node.
struct Coordinator {
    std::map<std::uint32_t, std::uint64_t> out_load;              // destination node -> items
    std::map<std::uint32_t, std::uint64_t> in_load;               // source node -> items
    std::map<std::uint32_t, std::vector<std::uint32_t>> senders;  // destination node -> ranks sending
    std::map<std::uint32_t, std::uint32_t> forwarder;             // destination node -> rank of this node
    std::map<std::uint32_t, std::uint32_t> receiver;              // source node -> rank of this node
};

struct RankState {
    std::map<std::uint32_t, std::uint32_t> forwarder_for;  // destination node -> forwarder
    std::map<std::uint32_t, std::uint32_t> receiver_for;   // destination node -> receiver (I forward)
    std::vector<Routed> own_forwarded;                     // my items I forward myself
    std::uint32_t node_pairs_forwarded = 0;
    std::uint32_t node_pairs_received = 0;
    std::uint64_t items_forwarded = 0;
};

class Run {
public:
    Run(Engine& engine, const Topology& topology, PatternBuilder& out, const Placement& placement)
        : engine_(engine),
          topology_(topology),
          out_(out),
          placement_(placement),
          first_(engine.local_begin()),
          states_(engine.local_count()),
          members_(placement.num_nodes()) {
        for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) members_[placement.node(r)].push_back(r);
    }

    void execute() {
        report();
        assign();
        inform();
        hand_off();
        forward();
        deliver();
        record_metrics();
    }

private:
    RankState& state(std::uint32_t v) { return states_[v - first_]; }
    [[nodiscard]] std::uint32_t coordinator(std::uint32_t node) const { return members_[node].front(); }
    [[nodiscard]] bool is_coordinator(std::uint32_t v) const { return coordinator(placement_.node(v)) == v; }

    /// [n, (node, items)*] per direction: what v sends to and receives from other nodes.
    [[nodiscard]] std::vector<std::uint32_t> report_words(std::uint32_t v) const {
        std::map<std::uint32_t, std::uint32_t> out, in;
        const std::uint32_t home = placement_.node(v);
        for (const auto d : topology_.out_neighbors(v)) {
            if (placement_.node(d) != home) ++out[placement_.node(d)];
        }
        for (const auto o : topology_.in_neighbors(v)) {
            if (placement_.node(o) != home) ++in[placement_.node(o)];
        }
        std::vector<std::uint32_t> words;
        for (const auto* counts : {&out, &in}) {
            words.push_back(static_cast<std::uint32_t>(counts->size()));
            for (const auto& [node, items] : *counts) words.insert(words.end(), {node, items});
        }
        return words;
    }

    void report() {
        engine_.superstep([&](std::uint32_t v, auto, Engine::Outbox& outbox) {
            const auto words = report_words(v);
            if (words[0] != 0 || words[1 + 2 * words[0]] != 0) outbox.post(coordinator(placement_.node(v)), words);
        });
    }

    /// LPT over the node's ranks: node pairs by decreasing items (forwarding first on ties,
    /// then by node), each to the least-loaded rank, the lower index on ties.
    void assign_roles(std::uint32_t node, Coordinator& c) const {
        std::vector<std::tuple<std::uint64_t, int, std::uint32_t>> pairs;  // (items, role, other node)
        for (const auto& [m, items] : c.out_load) pairs.emplace_back(items, 0, m);
        for (const auto& [n, items] : c.in_load) pairs.emplace_back(items, 1, n);
        std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
            return std::tuple(std::get<0>(b), std::get<1>(a), std::get<2>(a)) <
                   std::tuple(std::get<0>(a), std::get<1>(b), std::get<2>(b));
        });
        const auto& ranks = members_[node];
        std::vector<std::uint64_t> load(ranks.size(), 0);
        for (const auto& [items, role, other] : pairs) {
            const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
            load[least] += items;
            (role == 0 ? c.forwarder : c.receiver)[other] = ranks[least];
        }
    }

    void assign() {
        const auto active = engine_.receivers();
        engine_.superstep(active, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            Coordinator& c = coordinators_[v];
            for (const Message& m : inbox) {
                const auto& w = m.payload;
                const std::uint32_t n_out = w[0];
                for (std::uint32_t i = 0; i < n_out; ++i) {
                    c.out_load[w[1 + 2 * i]] += w[2 + 2 * i];
                    c.senders[w[1 + 2 * i]].push_back(m.source);
                }
                const std::size_t at = 1 + 2 * n_out;
                for (std::uint32_t i = 0; i < w[at]; ++i) c.in_load[w[at + 1 + 2 * i]] += w[at + 2 + 2 * i];
            }
            const std::uint32_t node = placement_.node(v);
            assign_roles(node, c);
            for (const auto& [n, g] : c.receiver) {
                const std::uint32_t words[] = {node, g};
                outbox.post(coordinator(n), words);
            }
        });
    }

    void inform() {
        std::vector<std::uint32_t> active;
        for (const auto& [v, c] : coordinators_) active.push_back(v);
        engine_.superstep(active, [&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            Coordinator& c = coordinators_[v];
            std::map<std::uint32_t, std::uint32_t> receiver_of;  // destination node -> its receiver
            for (const Message& m : inbox) receiver_of[m.payload[0]] = m.payload[1];
            // Per rank of the node: [n, (node, forwarder)*, n, (node, receiver)*, source nodes
            // it receives for].
            struct Told {
                std::vector<std::uint32_t> forwarders, receivers;
                std::uint32_t receiving = 0;
            };
            std::map<std::uint32_t, Told> told;
            for (const auto& [m, ranks] : c.senders) {
                for (const auto r : ranks) told[r].forwarders.insert(told[r].forwarders.end(), {m, c.forwarder.at(m)});
            }
            for (const auto& [m, f] : c.forwarder) {
                told[f].receivers.insert(told[f].receivers.end(), {m, receiver_of.at(m)});
            }
            for (const auto& [n, g] : c.receiver) ++told[g].receiving;
            for (const auto& [r, t] : told) {
                std::vector<std::uint32_t> words{static_cast<std::uint32_t>(t.forwarders.size() / 2)};
                words.insert(words.end(), t.forwarders.begin(), t.forwarders.end());
                words.push_back(static_cast<std::uint32_t>(t.receivers.size() / 2));
                words.insert(words.end(), t.receivers.begin(), t.receivers.end());
                words.push_back(t.receiving);
                outbox.post(r, words);
            }
        });
    }

    /// Step 0: edges inside the node directly, the others to their forwarders.
    void hand_off() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            for (const Message& m : inbox) {
                const auto& w = m.payload;
                for (std::uint32_t i = 0; i < w[0]; ++i) s.forwarder_for[w[1 + 2 * i]] = w[2 + 2 * i];
                const std::size_t at = 1 + 2 * w[0];
                for (std::uint32_t i = 0; i < w[at]; ++i) s.receiver_for[w[at + 1 + 2 * i]] = w[at + 2 + 2 * i];
                s.node_pairs_received = w[at + 1 + 2 * w[at]];
            }
            std::map<std::uint32_t, std::vector<Routed>> direct, handed;
            const auto targets = topology_.out_neighbors(v);
            for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
                const Routed r{targets[slot], v, slot};
                const std::uint32_t m = placement_.node(r.target);
                if (m == placement_.node(v)) {
                    direct[r.target].push_back(r);
                } else {
                    const std::uint32_t f = s.forwarder_for.at(m);
                    (f == v ? s.own_forwarded : handed[f]).push_back(r);
                }
            }
            for (auto& [d, items] : direct) out_.add_send(v, 0, d, items_of(items));
            for (auto& [f, items] : handed) {
                out_.add_send(v, 0, f, items_of(items));
                outbox.post(f, to_words(items));
            }
        });
    }

    /// Step 1: one message per destination node a forwarder serves.
    void forward() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& outbox) {
            RankState& s = state(v);
            std::vector<Routed> held = std::move(s.own_forwarded);
            for (const Message& m : inbox) append_routed(m.payload, held);
            std::map<std::uint32_t, std::vector<Routed>> per_node;
            for (const Routed& r : held) per_node[placement_.node(r.target)].push_back(r);
            for (auto& [m, items] : per_node) {
                std::sort(items.begin(), items.end());
                const std::uint32_t g = s.receiver_for.at(m);
                out_.add_send(v, 1, g, items_of(items));
                std::vector<Routed> onward;
                for (const Routed& r : items) {
                    if (r.target != g) onward.push_back(r);
                }
                if (!onward.empty()) outbox.post(g, to_words(onward));
                ++s.node_pairs_forwarded;
                s.items_forwarded += items.size();
            }
        });
    }

    /// Step 2: one message per destination a receiver delivers to.
    void deliver() {
        engine_.superstep([&](std::uint32_t v, std::span<const Message> inbox, auto&) {
            std::vector<Routed> held;
            for (const Message& m : inbox) append_routed(m.payload, held);
            std::map<std::uint32_t, std::vector<Routed>> per_target;
            for (const Routed& r : held) per_target[r.target].push_back(r);
            for (auto& [d, items] : per_target) {
                std::sort(items.begin(), items.end());
                out_.add_send(v, 2, d, items_of(items));
            }
        });
    }

    void record_metrics() {
        for (std::uint32_t v = engine_.local_begin(); v < engine_.local_end(); ++v) {
            const RankState& s = state(v);
            double off_node = 0, on_node = 0;
            for (const auto& op : out_.sends(v)) ++(placement_.same_node(v, op.peer) ? on_node : off_node);
            out_.add_metric(v, "sends_off_node", off_node);
            out_.add_metric(v, "sends_on_node", on_node);
            out_.add_metric(v, "node_pairs_forwarded", s.node_pairs_forwarded);
            out_.add_metric(v, "node_pairs_received", s.node_pairs_received);
            out_.add_metric(v, "items_forwarded", static_cast<double>(s.items_forwarded));
        }
    }

    Engine& engine_;
    const Topology& topology_;
    PatternBuilder& out_;
    const Placement& placement_;
    std::uint32_t first_;
    std::vector<RankState> states_;
    std::vector<std::vector<std::uint32_t>> members_;    // node -> its ranks, increasing
    std::map<std::uint32_t, Coordinator> coordinators_;  // local coordinators that heard from their node
};

}  // namespace

HierarchicalAlgorithm::HierarchicalAlgorithm(Placement placement) : placement_(std::move(placement)) {}

std::vector<std::pair<std::string, std::string>> HierarchicalAlgorithm::parameters() const {
    return {{"placement", placement_.description()},
            {"ranks_per_node", std::to_string(placement_.max_ranks_per_node())}};
}

void HierarchicalAlgorithm::build(Engine& engine, const Topology& topology, PatternBuilder& out) {
    if (placement_.num_ranks() != topology.num_ranks()) {
        throw std::invalid_argument("hierarchical: the placement has " + std::to_string(placement_.num_ranks()) +
                                    " ranks, the topology " + std::to_string(topology.num_ranks()));
    }
    Run(engine, topology, out, placement_).execute();
}

}  // namespace nbr::compiler::internal
