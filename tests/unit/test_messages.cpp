// The algorithms' engine messages: every kind decodes to what was encoded (empty lists and
// large values included), and a message read past its end or not read to its end is a bug
// the reader reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "distance_halving_messages.hpp"
#include "hierarchical_messages.hpp"
#include "kgroup_messages.hpp"
#include "nbr/compiler/pattern_builder.hpp"
#include "nbr/compiler/words.hpp"
#include "neighbor_rows.hpp"

namespace {

using namespace nbr::compiler::internal;
constexpr std::uint32_t kMax = std::numeric_limits<std::uint32_t>::max();

TEST(Messages, WordsReadBackInOrderWithListsCarryingTheirLength) {
    WordWriter w;
    w.put(7).put_list(std::vector<std::uint32_t>{1, 2, 3}, [](WordWriter& o, std::uint32_t x) { o.put(x); }).put(9);
    const auto words = w.take();
    EXPECT_EQ(words, (std::vector<std::uint32_t>{7, 3, 1, 2, 3, 9}));
    WordReader r(words);
    EXPECT_EQ(r.get(), 7u);
    std::vector<std::uint32_t> list;
    r.get_list([&](WordReader& in) { list.push_back(in.get()); });
    EXPECT_EQ(list, (std::vector<std::uint32_t>{1, 2, 3}));
    EXPECT_EQ(r.get(), 9u);
    EXPECT_NO_THROW(r.finish());
}

TEST(Messages, PlainWordListsAreWrittenAsListsAndReadAsViews) {
    const std::vector<std::uint32_t> list{4, kMax, 0};
    WordWriter w;
    w.put(1).put_words(list).put_words({}).put(2);
    const auto words = w.take();
    EXPECT_EQ(words, (std::vector<std::uint32_t>{1, 3, 4, kMax, 0, 0, 2}));
    WordReader r(words);
    EXPECT_EQ(r.get(), 1u);
    const auto view = r.get_words();
    EXPECT_EQ(std::vector<std::uint32_t>(view.begin(), view.end()), list);
    EXPECT_EQ(view.data(), words.data() + 2) << "a view into the message, not a copy";
    EXPECT_TRUE(r.get_words().empty());
    EXPECT_EQ(r.get(), 2u);
    EXPECT_NO_THROW(r.finish());
}

TEST(Messages, AReaderRefusesToReadPastTheEndOrToLeaveWordsUnread) {
    const std::vector<std::uint32_t> words{5, 1, 2};
    WordReader past(words);
    EXPECT_THROW(past.get_list([](WordReader& in) { in.get(); }), std::logic_error);  // 5 items, 2 words
    WordReader past_words(words);
    EXPECT_THROW(past_words.get_words(), std::logic_error);
    WordReader unread(words);
    unread.get();
    EXPECT_THROW(unread.finish(), std::logic_error);
    WordReader empty(std::span<const std::uint32_t>{});
    EXPECT_THROW(empty.get(), std::logic_error);
    // A truncated message of a kind: the decoder throws rather than reading another's words.
    auto roles = Roles{{{1, 2, 3}}, {{4, 5, 6}}, 7}.encode();
    roles.pop_back();
    EXPECT_THROW(Roles::decode(roles), std::logic_error);
}

TEST(Messages, HierarchicalKindsRoundTrip) {
    const std::vector<Routed> items{{3, 1, 0, 0, 3}, {kMax, kMax, kMax, kMax, kMax}, {0, 2, 5, 1, 4}};
    std::vector<Routed> got{{9, 9, 9, 9, 9}};  // decode_into appends
    RoutedItems::decode_into(RoutedItems::encode(items), got);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(std::vector<Routed>(got.begin() + 1, got.end()), items);
    got.clear();
    RoutedItems::decode_into(RoutedItems::encode({}), got);
    EXPECT_TRUE(got.empty());

    const TrafficReport report{{{1, 10}, {4, 2}}, {{0, kMax}}};
    EXPECT_EQ(TrafficReport::decode(report.encode()), report);
    EXPECT_EQ(TrafficReport::decode(TrafficReport{{}, {{2, 1}}}.encode()), (TrafficReport{{}, {{2, 1}}}));
    EXPECT_TRUE(TrafficReport::decode(TrafficReport{}.encode()).empty());

    const LaneItems lanes{6, {5, 0, kMax}};
    EXPECT_EQ(LaneItems::decode(lanes.encode()), lanes);
    const LaneReceivers receivers{kMax, {12, 13}};
    EXPECT_EQ(LaneReceivers::decode(receivers.encode()), receivers);

    const Roles roles{{{1, 0, 8}, {2, 1, 9}}, {{3, 0, 10}}, 4};
    EXPECT_EQ(Roles::decode(roles.encode()), roles);
    EXPECT_EQ(Roles::decode(Roles{{}, {}, 0}.encode()), (Roles{{}, {}, 0}));
}

TEST(Messages, DistanceHalvingKindsRoundTrip) {
    const AgentPair pair{17, kMax};
    EXPECT_EQ(AgentPair::decode(pair.encode()), pair);
    const std::vector<Held> held{{1, 2, 3}, {kMax, 0, kMax}};
    EXPECT_EQ(HeldItems::decode(HeldItems::encode(held)), held);
    EXPECT_TRUE(HeldItems::decode(HeldItems::encode({})).empty());
}

TEST(Messages, SlotExchangeRoundTripsSorted) {
    const SlotPairs pairs{{9, 0}, {2, 5}, {2, 1}, {kMax, kMax}};
    const auto words = SlotExchange::encode(42, pairs);
    EXPECT_EQ(words.front(), 42u);  // the tag first: callers dispatch on it
    SlotPairs sorted = pairs;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(SlotExchange::decode(words), sorted);
}

TEST(Messages, DeparturesRoundTrip) {
    const std::vector<std::uint32_t> left{0, 3, kMax};
    const auto words = Departures::encode(6, left);
    EXPECT_EQ(words.front(), 6u);
    const auto decoded = Departures::decode(words);
    EXPECT_EQ(std::vector<std::uint32_t>(decoded.begin(), decoded.end()), left);
}

TEST(Messages, KGroupKindsRoundTrip) {
    // Two groups of k = 3 ([weight, members] each); the share carries the second and the first.
    const std::vector<std::uint32_t> groups{9, 1, 4, 7, 5, 0, 2, kMax};
    const std::vector<std::size_t> offsets{4, 0};
    const auto share = GroupShare::encode(7, 3, groups, offsets);
    EXPECT_EQ(share.front(), 7u);
    std::vector<std::uint32_t> got{kMax};  // appended to
    GroupShare::decode(3, share, got);
    EXPECT_EQ(got, (std::vector<std::uint32_t>{kMax, 5, 0, 2, kMax, 9, 1, 4, 7}));

    const std::vector<std::uint32_t> members{1, 4, 7};
    const auto request = GroupRequest::encode(1, 9, members);
    EXPECT_EQ(GroupRequest::decode(3, request), (std::vector<std::uint32_t>{9, 1, 4, 7}));
    EXPECT_THROW((void)GroupRequest::decode(2, request), std::logic_error);  // not of k ranks
    auto cut = request;
    cut.pop_back();
    EXPECT_THROW((void)GroupRequest::decode(3, cut), std::logic_error);  // truncated
}

TEST(Messages, SendAnnouncementRoundTrips) {
    const std::vector<nbr::compiler::Item> items{{4, 0}, {kMax, 7}};
    const auto got = SendAnnouncement::decode(SendAnnouncement::encode(3, items));
    EXPECT_EQ(got.step, 3u);
    EXPECT_EQ(got.items, items);
    EXPECT_TRUE(SendAnnouncement::decode(SendAnnouncement::encode(0, {})).items.empty());
}

}  // namespace
