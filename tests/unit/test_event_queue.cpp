// The simulator's event queue against a reference order: (time, insertion order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "event_queue.hpp"

namespace {

struct TestEvent {
    std::int64_t time;
    std::uint64_t order;
};

using Queue = nbr::simulator::internal::MonotoneEventQueue<TestEvent>;

// Simulation-like use: every event taken out schedules 0–3 later ones, many at equal times
// (zero delays) and some far apart; the order taken out must be exactly (time, order).
TEST(EventQueue, TakesOutByTimeThenInsertionOrder) {
    std::mt19937_64 random(7);
    Queue queue;
    std::uint64_t order = 0;
    for (int i = 0; i < 1000; ++i) queue.push({static_cast<std::int64_t>(random() % 50), order++});
    std::vector<TestEvent> taken;
    while (!queue.empty() && taken.size() < 200000) {
        const TestEvent e = queue.pop();
        if (!taken.empty()) {
            const TestEvent& prev = taken.back();
            ASSERT_TRUE(prev.time < e.time || (prev.time == e.time && prev.order < e.order))
                << "event " << taken.size() << " out of order";
        }
        taken.push_back(e);
        const auto children = random() % 4;
        for (std::uint64_t c = 0; c < children && order < 150000; ++c) {
            const std::int64_t delays[] = {0, 0, 1, 3, 1000, std::int64_t{1} << 40};
            queue.push({e.time + delays[random() % 6], order++});
        }
    }
    EXPECT_TRUE(queue.empty());
    EXPECT_EQ(taken.size(), order);
}

TEST(EventQueue, RejectsEventsInThePast) {
    Queue queue;
    queue.push({10, 0});
    queue.push({20, 1});
    EXPECT_EQ(queue.pop().time, 10);
    EXPECT_THROW(queue.push({9, 2}), std::logic_error);
    EXPECT_THROW(queue.push({-1, 3}), std::logic_error);
    queue.push({10, 4});
    EXPECT_EQ(queue.pop().order, 4u);
    EXPECT_EQ(queue.pop().order, 1u);
    EXPECT_TRUE(queue.empty());
}

}  // namespace
