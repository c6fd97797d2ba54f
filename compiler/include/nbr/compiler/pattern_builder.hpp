#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nbr/compiler/engine.hpp"
#include "nbr/compiler/words.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr_pattern.pb.h"

namespace nbr::compiler {

/// @brief One topology edge's data: what `origin` sends through its out-slot `slot`.
struct Item {
    std::uint32_t origin = 0;
    std::uint32_t slot = 0;
    friend bool operator==(const Item&, const Item&) = default;
};

/// @brief A send operation chosen by an algorithm.
struct SendOp {
    std::uint32_t step = 0;
    std::uint32_t peer = 0;
    std::vector<Item> items;
};

namespace internal {

/// @brief derive_receives' message: a send's step and items, told to its peer, which records
/// the matching receive.
struct SendAnnouncement {
    std::uint32_t step = 0;
    std::vector<Item> items;

    [[nodiscard]] static std::vector<std::uint32_t> encode(std::uint32_t step, std::span<const Item> items) {
        WordWriter w;
        w.put(step).put_list(items, [](WordWriter& o, const Item& i) { o.put(i.origin).put(i.slot); });
        return w.take();
    }
    static SendAnnouncement decode(std::span<const std::uint32_t> words) {
        SendAnnouncement a;
        WordReader r(words);
        a.step = r.get();
        r.get_list([&](WordReader& in) {
            Item i;
            i.origin = in.get();
            i.slot = in.get();
            a.items.push_back(i);
        });
        r.finish();
        return a;
    }
    friend bool operator==(const SendAnnouncement&, const SendAnnouncement&) = default;
};

}  // namespace internal

/// @brief Collects the send operations algorithms choose for the local virtual ranks and
/// turns them into RankPattern messages. Algorithms only decide sends: the matching
/// receives are derived by telling every peer what it will get (derive_receives), so a
/// pattern's sends and receives agree by construction.
class PatternBuilder {
public:
    explicit PatternBuilder(const Engine& engine);

    /// @brief Adds a send of `items` from local rank `rank` to `peer` in `step`.
    void add_send(std::uint32_t rank, std::uint32_t step, std::uint32_t peer, std::vector<Item> items);

    /// @brief Records a per-rank statistic (reported by `nbrc inspect`).
    void add_metric(std::uint32_t rank, const std::string& name, double value);

    /// @brief Sends of a local rank, in the order they were added.
    [[nodiscard]] const std::vector<SendOp>& sends(std::uint32_t rank) const;

    /// @brief Routes every send to its peer, which records the matching receive. Receives
    /// of a step are ordered by source rank, then by the order the source added them.
    /// Collective over the engine's processes.
    void derive_receives(Engine& engine);

    /// @brief The finished pattern of local rank `rank` (call after derive_receives).
    [[nodiscard]] schema::RankPattern rank_pattern(std::uint32_t rank, const Topology& topology,
                                                   const std::string& algorithm, std::uint64_t topology_hash) const;

private:
    [[nodiscard]] std::size_t local(std::uint32_t rank) const;

    std::uint32_t first_;
    std::vector<std::vector<SendOp>> sends_;
    std::vector<std::vector<SendOp>> recvs_;  // peer = source
    std::vector<std::vector<schema::Metric>> metrics_;
};

}  // namespace nbr::compiler
