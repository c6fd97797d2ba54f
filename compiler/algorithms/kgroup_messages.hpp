#pragma once
// The kgroup algorithm's engine messages with content beyond their tag (kgroup.cpp), each kind
// with its encode() and decode() side by side (words.hpp). As in SlotExchange and Departures,
// the tag comes first and is the caller's: it read it to tell the message's kind.

#include "nbr/compiler/words.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace nbr::compiler::internal {

/// The groups a rank found that one of their members holds too, each as its weight and its k
/// members (sorted); one message per member.
struct GroupShare {
    /// The groups at `offsets` of `groups` ([weight, k members] each).
    [[nodiscard]] static std::vector<std::uint32_t> encode(std::uint32_t tag, std::uint32_t k,
                                                           std::span<const std::uint32_t> groups,
                                                           std::span<const std::size_t> offsets) {
        WordWriter w;
        w.put(tag).put_list(offsets, [&](WordWriter& o, std::size_t at) {
            for (std::size_t i = 0; i <= k; ++i) o.put(groups[at + i]);
        });
        return w.take();
    }
    /// Appends the message's groups to `groups`, [weight, k members] each.
    static void decode(std::uint32_t k, std::span<const std::uint32_t> words, std::vector<std::uint32_t>& groups) {
        WordReader r(words);
        r.get();  // the tag
        r.get_list([&](WordReader& in) {
            for (std::size_t i = 0; i <= k; ++i) groups.push_back(in.get());
        });
        r.finish();
    }
};

/// The group a rank chose, its weight and its k members (sorted), to every other member.
struct GroupRequest {
    [[nodiscard]] static std::vector<std::uint32_t> encode(std::uint32_t tag, std::uint32_t weight,
                                                           std::span<const std::uint32_t> members) {
        WordWriter w;
        w.put(tag).put(weight).put_words(members);
        return w.take();
    }
    /// The group as [weight, k members].
    static std::vector<std::uint32_t> decode(std::uint32_t k, std::span<const std::uint32_t> words) {
        WordReader r(words);
        r.get();  // the tag
        std::vector<std::uint32_t> group{r.get()};
        const auto members = r.get_words();
        group.insert(group.end(), members.begin(), members.end());
        r.finish();
        if (group.size() != std::size_t{k} + 1) throw std::logic_error("kgroup: a requested group is not of k ranks");
        return group;
    }
};

}  // namespace nbr::compiler::internal
