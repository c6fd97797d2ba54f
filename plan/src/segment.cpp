// Segmented (pipelined) forwarding: a plan's staged messages split into segments of whole
// blocks (docs/algorithms.md, "Segmented forwarding").
#include <algorithm>
#include <bit>
#include <unordered_map>

#include "nbr/plan/plan.hpp"

namespace nbr::internal {

std::uint32_t segment_units(std::uint64_t segment_bytes, std::uint64_t block_bytes) {
    if (segment_bytes == 0 || block_bytes == 0) return kWholeMessages;
    const std::uint64_t units = segment_bytes / block_bytes;
    if (units == 0) return 1;
    if (units >= (std::uint64_t{1} << 31)) return kWholeMessages;
    return static_cast<std::uint32_t>(std::bit_floor(units));
}

namespace {

/// Segments of a message of `units` blocks.
std::uint32_t pieces(std::size_t units, bool one_hop, std::uint32_t max_units) {
    if (one_hop || units <= max_units) return 1;
    return static_cast<std::uint32_t>((units + max_units - 1) / max_units);
}

/// Builds the segmented plan: receives first (their new indices are the units' providers),
/// then sends with their dependencies on receive segments.
class Segmenter {
public:
    Segmenter(const Plan& plan, std::uint32_t max_units) : in_(plan), max_units_(max_units) {
        out_.collective = plan.collective;
        out_.homes = plan.homes;
        out_.staged_recvs = plan.staged_recvs;
    }

    Plan run() && {
        split_recvs();
        rehome_units();
        split_sends();
        out_.independent = std::none_of(out_.sends.begin(), out_.sends.end(),
                                        [](const SendPlan& send) { return send.dependencies > 0; });
        return std::move(out_);
    }

private:
    /// The tag of a segment: per peer, the messages' segments numbered in plan order.
    int next_tag(std::unordered_map<std::uint32_t, int>& counters, std::uint32_t peer) {
        const int tag = counters[peer]++;
        out_.max_tag = std::max(out_.max_tag, tag);
        return tag;
    }

    /// Segment k of a message's `count`: its peer, kind, step and blocks, and its tag.
    template <class Message>
    Message segment_of(const Message& message, std::uint32_t k, std::uint32_t count,
                       std::unordered_map<std::uint32_t, int>& tags) {
        const std::size_t begin = std::size_t{k} * max_units_;
        const std::size_t end = count == 1 ? message.units.size() : std::min(message.units.size(), begin + max_units_);
        Message piece;
        piece.peer = message.peer;
        piece.tag = next_tag(tags, message.peer);
        piece.direct = message.direct;
        piece.one_hop = message.one_hop;
        piece.step = message.step;
        piece.units.assign(message.units.begin() + static_cast<std::ptrdiff_t>(begin),
                           message.units.begin() + static_cast<std::ptrdiff_t>(end));
        return piece;
    }

    void split_recvs() {
        first_piece_.reserve(in_.recvs.size() + 1);
        for (const RecvPlan& recv : in_.recvs) {
            first_piece_.push_back(static_cast<std::uint32_t>(out_.recvs.size()));
            const std::uint32_t count = pieces(recv.units.size(), recv.one_hop, max_units_);
            for (std::uint32_t k = 0; k < count; ++k) {
                RecvPlan piece = segment_of(recv, k, count, recv_tags_);
                const std::size_t begin = std::size_t{k} * max_units_;
                const std::size_t end = begin + piece.units.size();
                for (const auto& [position, slot] : recv.deliveries) {
                    if (position >= begin && position < end) {
                        piece.deliveries.emplace_back(static_cast<std::uint32_t>(position - begin), slot);
                    }
                }
                piece.first = out_.recv_units;
                out_.recv_units += static_cast<std::uint32_t>(piece.units.size());
                out_.recvs.push_back(std::move(piece));
            }
        }
        first_piece_.push_back(static_cast<std::uint32_t>(out_.recvs.size()));
    }

    /// A received unit's home moves to the segment that brings it.
    void rehome_units() {
        for (UnitHome& home : out_.homes) {
            if (home.kind == UnitHome::Kind::send_block) continue;
            const std::uint32_t whole = home.provider;
            const bool split = first_piece_[whole + 1] - first_piece_[whole] > 1;
            const std::uint32_t piece = first_piece_[whole] + (split ? home.position / max_units_ : 0);
            if (split) home.position %= max_units_;
            home.provider = piece;
            if (home.kind == UnitHome::Kind::staging) home.index = piece;
        }
    }

    void split_sends() {
        std::vector<std::uint32_t> providers;
        for (const SendPlan& send : in_.sends) {
            const std::uint32_t count = pieces(send.units.size(), send.one_hop, max_units_);
            for (std::uint32_t k = 0; k < count; ++k) {
                SendPlan piece = segment_of(send, k, count, send_tags_);
                providers.clear();
                for (const std::uint32_t u : piece.units) {
                    if (out_.homes[u].kind != UnitHome::Kind::send_block) providers.push_back(out_.homes[u].provider);
                }
                std::sort(providers.begin(), providers.end());
                providers.erase(std::unique(providers.begin(), providers.end()), providers.end());
                piece.dependencies = static_cast<std::uint32_t>(providers.size());
                const auto index = static_cast<std::uint32_t>(out_.sends.size());
                for (const std::uint32_t r : providers) out_.recvs[r].dependents.push_back(index);
                piece.first = out_.send_units;
                out_.send_units += static_cast<std::uint32_t>(piece.units.size());
                out_.sends.push_back(std::move(piece));
            }
        }
    }

    const Plan& in_;
    const std::uint32_t max_units_;
    Plan out_;
    std::vector<std::uint32_t> first_piece_;  // per receive of in_ (+1): its first segment
    std::unordered_map<std::uint32_t, int> recv_tags_, send_tags_;
};

}  // namespace

std::uint32_t longest_segmentable(const Plan& plan) {
    std::size_t longest = 0;
    for (const auto& r : plan.recvs) longest = r.one_hop ? longest : std::max(longest, r.units.size());
    for (const auto& s : plan.sends) longest = s.one_hop ? longest : std::max(longest, s.units.size());
    return static_cast<std::uint32_t>(longest);
}

Plan segment_plan(const Plan& plan, std::uint32_t max_units) {
    if (max_units == kWholeMessages || plan.all_direct || longest_segmentable(plan) <= max_units) return plan;
    return Segmenter(plan, max_units).run();
}

int segmented_max_tag(const Plan& plan, std::uint32_t max_units) {
    std::unordered_map<std::uint32_t, int> sent, received;  // per peer: segments so far
    int max_tag = plan.max_tag;
    const auto count = [&](const auto& messages, std::unordered_map<std::uint32_t, int>& per_peer) {
        for (const auto& message : messages) {
            int& segments = per_peer[message.peer];
            segments += static_cast<int>(pieces(message.units.size(), message.one_hop, max_units));
            max_tag = std::max(max_tag, segments - 1);
        }
    };
    count(plan.recvs, received);
    count(plan.sends, sent);
    return max_tag;
}

}  // namespace nbr::internal
