// libnbr's handle table: handles name a slot and its generation, stale copies never resolve,
// slots beyond the first chunks keep their objects where they are, and lookups need no lock
// while other threads acquire and release.
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "handle_table.hpp"

namespace {

using nbr::internal::HandleTable;

struct Object {
    int value = 0;
};

TEST(HandleTable, HandlesResolveUntilReleasedAndStaleCopiesNeverDo) {
    HandleTable<Object> table;
    auto [first, handle] = table.acquire();
    first->value = 7;
    EXPECT_EQ(table.find(handle), first);
    EXPECT_EQ(table.find(0), nullptr);
    EXPECT_EQ(table.find(handle + 1), nullptr) << "a slot never issued";
    table.release(handle, true);
    EXPECT_EQ(table.find(handle), nullptr);
    auto [again, second] = table.acquire();
    EXPECT_EQ(again, first) << "a kept object is reused";
    EXPECT_EQ(HandleTable<Object>::slot_of(second), HandleTable<Object>::slot_of(handle));
    EXPECT_NE(second, handle) << "the slot's generation advanced";
    EXPECT_EQ(table.find(handle), nullptr) << "the stale copy";
    EXPECT_EQ(table.find(second), again);
    table.release(second, false);
    auto [fresh, third] = table.acquire(std::make_unique<Object>(Object{42}));
    EXPECT_EQ(fresh->value, 42);
    EXPECT_EQ(table.find(third), fresh);
}

TEST(HandleTable, ObjectsStayPutAcrossChunksAndSlotsAreReused) {
    HandleTable<Object> table;
    std::vector<std::pair<Object*, std::uintptr_t>> live;
    for (int i = 0; i < 1000; ++i) {  // chunks of 64, 128, 256, 512: into the fifth
        live.push_back(table.acquire());
        live.back().first->value = i;
    }
    std::set<std::size_t> slots;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(table.find(live[i].second), live[i].first) << i;
        EXPECT_EQ(live[i].first->value, i);
        slots.insert(HandleTable<Object>::slot_of(live[i].second));
    }
    EXPECT_EQ(slots.size(), 1000U);
    EXPECT_EQ(*slots.rbegin(), 1000U) << "slots numbered 1..1000";
    for (int i = 0; i < 1000; i += 2) table.release(live[i].second, false);
    for (int i = 0; i < 500; ++i) {
        const auto [object, handle] = table.acquire();
        EXPECT_LE(HandleTable<Object>::slot_of(handle), 1000U) << "released slots are reused first";
    }
    for (int i = 1; i < 1000; i += 2) EXPECT_EQ(table.find(live[i].second), live[i].first) << i;
    for (int i = 0; i < 1000; i += 2) EXPECT_EQ(table.find(live[i].second), nullptr) << i;
}

TEST(HandleTable, LookupsRunBesideAcquiresAndReleasesOfOtherThreads) {
    HandleTable<Object> table;
    const auto [mine, handle] = table.acquire();
    mine->value = 5;
    std::atomic<bool> stop{false};
    std::thread churn([&] {  // grows the table through several chunks, releasing half
        std::vector<std::uintptr_t> held;
        for (int i = 0; i < 20000 && !stop.load(); ++i) {
            held.push_back(table.acquire().second);
            if (i % 2 == 1) {
                table.release(held.front(), i % 4 == 1);
                held.erase(held.begin());
            }
        }
        for (const auto h : held) table.release(h, false);
    });
    long found = 0;
    for (int i = 0; i < 200000; ++i) {
        const Object* object = table.find(handle);
        ASSERT_EQ(object, mine);
        found += object->value == 5 ? 1 : 0;
    }
    stop = true;
    churn.join();
    EXPECT_EQ(found, 200000);
    EXPECT_EQ(table.find(handle), mine);
}

}  // namespace
