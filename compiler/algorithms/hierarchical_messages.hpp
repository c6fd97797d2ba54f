#pragma once
// The hierarchical algorithm's engine messages (hierarchical.cpp), each kind with its
// encode() and decode() side by side (words.hpp).

#include "nbr/compiler/words.hpp"

#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

namespace nbr::compiler::internal {

/// An item on its way: the edge (origin, slot), its destination, its lane (which of its node
/// pair's forwarders and receivers carry it) and its next stop inside the node it is in (its
/// forwarder or its destination; what the intra-node rounds route it to).
struct Routed {
    std::uint32_t target = 0;
    std::uint32_t origin = 0;
    std::uint32_t slot = 0;
    std::uint32_t lane = 0;
    std::uint32_t via = 0;
    /// Message order: by edge.
    friend bool operator<(const Routed& a, const Routed& b) {
        return std::tie(a.origin, a.slot) < std::tie(b.origin, b.slot);
    }
    friend bool operator==(const Routed&, const Routed&) = default;
};

/// Items a rank passes on (hand-off, forwarding, Bruck and cube rounds): the receiver adds
/// them to what it holds.
struct RoutedItems {
    [[nodiscard]] static std::vector<std::uint32_t> encode(std::span<const Routed> items) {
        WordWriter w;
        w.put_list(items, [](WordWriter& o, const Routed& r) {
            o.put(r.target).put(r.origin).put(r.slot).put(r.lane).put(r.via);
        });
        return w.take();
    }
    /// Appends the message's items to `out`.
    static void decode_into(std::span<const std::uint32_t> words, std::vector<Routed>& out) {
        WordReader r(words);
        r.get_list([&](WordReader& in) {
            Routed item;
            item.target = in.get();
            item.origin = in.get();
            item.slot = in.get();
            item.lane = in.get();
            item.via = in.get();
            out.push_back(item);
        });
        r.finish();
    }
};

/// A count of items to or from one other node.
struct NodeItems {
    std::uint32_t node = 0;
    std::uint32_t items = 0;
    friend bool operator==(const NodeItems&, const NodeItems&) = default;
};

/// report: a rank tells its node's coordinator its items per other node, out and in (by node).
struct TrafficReport {
    std::vector<NodeItems> out, in;

    [[nodiscard]] bool empty() const { return out.empty() && in.empty(); }
    [[nodiscard]] std::vector<std::uint32_t> encode() const {
        WordWriter w;
        const auto put = [](WordWriter& o, const NodeItems& n) { o.put(n.node).put(n.items); };
        w.put_list(out, put).put_list(in, put);
        return w.take();
    }
    static TrafficReport decode(std::span<const std::uint32_t> words) {
        TrafficReport report;
        WordReader r(words);
        for (auto* list : {&report.out, &report.in}) {
            r.get_list([&](WordReader& entry) {
                const std::uint32_t node = entry.get();
                list->push_back({node, entry.get()});
            });
        }
        r.finish();
        return report;
    }
    friend bool operator==(const TrafficReport&, const TrafficReport&) = default;
};

/// forwarders: a source node's coordinator tells the destination node's coordinator the
/// items of each lane of their pair.
struct LaneItems {
    std::uint32_t node = 0;            ///< the source node
    std::vector<std::uint32_t> items;  ///< per lane

    [[nodiscard]] std::vector<std::uint32_t> encode() const {
        WordWriter w;
        w.put(node).put_words(items);
        return w.take();
    }
    static LaneItems decode(std::span<const std::uint32_t> words) {
        LaneItems lanes;
        WordReader r(words);
        lanes.node = r.get();
        const auto items = r.get_words();
        lanes.items.assign(items.begin(), items.end());
        r.finish();
        return lanes;
    }
    friend bool operator==(const LaneItems&, const LaneItems&) = default;
};

/// receivers: a destination node's coordinator tells the source node's coordinator the
/// receiver of each lane of their pair.
struct LaneReceivers {
    std::uint32_t node = 0;                ///< the destination node
    std::vector<std::uint32_t> receivers;  ///< per lane

    [[nodiscard]] std::vector<std::uint32_t> encode() const {
        WordWriter w;
        w.put(node).put_words(receivers);
        return w.take();
    }
    static LaneReceivers decode(std::span<const std::uint32_t> words) {
        LaneReceivers lanes;
        WordReader r(words);
        lanes.node = r.get();
        const auto receivers = r.get_words();
        lanes.receivers.assign(receivers.begin(), receivers.end());
        r.finish();
        return lanes;
    }
    friend bool operator==(const LaneReceivers&, const LaneReceivers&) = default;
};

/// A lane of a node pair and the rank that carries it (its forwarder or its receiver).
struct LaneRank {
    std::uint32_t node = 0;
    std::uint32_t lane = 0;
    std::uint32_t rank = 0;
    friend bool operator==(const LaneRank&, const LaneRank&) = default;
};

/// inform: a coordinator tells a rank of its node its roles: its lane and forwarder for every
/// node it sends to, the receiver of every lane it forwards, and how many lanes it receives.
struct Roles {
    std::vector<LaneRank> forwarders;  ///< (destination node, lane, forwarder)
    std::vector<LaneRank> receivers;   ///< (destination node, lane, receiver)
    std::uint32_t receiving = 0;

    [[nodiscard]] std::vector<std::uint32_t> encode() const {
        WordWriter w;
        const auto put = [](WordWriter& o, const LaneRank& l) { o.put(l.node).put(l.lane).put(l.rank); };
        w.put_list(forwarders, put).put_list(receivers, put).put(receiving);
        return w.take();
    }
    static Roles decode(std::span<const std::uint32_t> words) {
        Roles roles;
        WordReader r(words);
        for (auto* list : {&roles.forwarders, &roles.receivers}) {
            r.get_list([&](WordReader& in) {
                LaneRank l;
                l.node = in.get();
                l.lane = in.get();
                l.rank = in.get();
                list->push_back(l);
            });
        }
        roles.receiving = r.get();
        r.finish();
        return roles;
    }
    friend bool operator==(const Roles&, const Roles&) = default;
};

}  // namespace nbr::compiler::internal
