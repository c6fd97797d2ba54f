#include <numeric>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr/compiler/engine.hpp"

namespace {

using nbr::compiler::Engine;
using nbr::compiler::Message;

TEST(Engine, BlockDistributionCoversEveryRankOnce) {
    for (std::uint32_t n : {1u, 3u, 17u, 100u}) {
        Engine engine(MPI_COMM_WORLD, n);
        const std::uint64_t total = engine.sum(engine.local_count());
        EXPECT_EQ(total, n);
        for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
            EXPECT_EQ(engine.owner(v), engine.process());
        }
    }
}

/// Every rank v posts to (v + k) % n for k = 1..3 the payload [v, k, v * k]; every rank then
/// checks that it got exactly three messages, ordered by source, with the right payloads.
TEST(Engine, PostDeliversInSourceOrder) {
    const std::uint32_t n = 37;
    Engine engine(MPI_COMM_WORLD, n);
    engine.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& out) {
        EXPECT_TRUE(inbox.empty());
        for (std::uint32_t k = 1; k <= 3; ++k) {
            const std::uint32_t payload[] = {v, k, v * k};
            out.post((v + k) % n, payload);
        }
    });
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        const auto inbox = engine.inbox(v);
        ASSERT_EQ(inbox.size(), 3u);
        for (std::size_t i = 0; i < inbox.size(); ++i) {
            const Message& m = inbox[i];
            if (i > 0) {
                EXPECT_LT(inbox[i - 1].source, m.source);
            }
            ASSERT_EQ(m.payload.size(), 3u);
            EXPECT_EQ(m.payload[0], m.source);
            EXPECT_EQ((m.source + m.payload[1]) % n, v);
            EXPECT_EQ(m.payload[2], m.source * m.payload[1]);
        }
    }
}

TEST(Engine, MulticastReachesEveryDestinationOnce) {
    const std::uint32_t n = 23;
    Engine engine(MPI_COMM_WORLD, n);
    // Rank v multicasts [v, v+1 ... ] to all ranks w with (w + v) % 3 == 0, in reverse order,
    // and also posts a plain message to itself.
    engine.superstep([&](std::uint32_t v, auto, Engine::Outbox& out) {
        std::vector<std::uint32_t> dsts;
        for (std::uint32_t w = n; w-- > 0;) {
            if ((w + v) % 3 == 0) dsts.push_back(w);
        }
        std::vector<std::uint32_t> payload(v % 5 + 1);
        std::iota(payload.begin(), payload.end(), v);
        out.multicast(dsts, payload);
        out.post(v, std::span<const std::uint32_t>());
    });
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        std::vector<std::uint32_t> sources;
        bool self_seen = false;
        for (const Message& m : engine.inbox(v)) {
            if (m.payload.empty()) {
                EXPECT_EQ(m.source, v);
                self_seen = true;
                continue;
            }
            sources.push_back(m.source);
            ASSERT_EQ(m.payload.size(), m.source % 5 + 1);
            for (std::size_t i = 0; i < m.payload.size(); ++i) EXPECT_EQ(m.payload[i], m.source + i);
        }
        EXPECT_TRUE(self_seen);
        std::vector<std::uint32_t> expected;
        for (std::uint32_t s = 0; s < n; ++s) {
            if ((v + s) % 3 == 0) expected.push_back(s);
        }
        EXPECT_EQ(sources, expected);
    }
}

TEST(Engine, MessagesLiveForOneSuperstep) {
    const std::uint32_t n = 9;
    Engine engine(MPI_COMM_WORLD, n);
    // A token walks the ring: superstep s moves it from rank s to s+1.
    for (std::uint32_t s = 0; s < n; ++s) {
        engine.superstep([&](std::uint32_t v, std::span<const Message> inbox, Engine::Outbox& out) {
            const bool has = (s == 0 && v == 0) || !inbox.empty();
            if (s > 0) {
                EXPECT_EQ(!inbox.empty(), v == s % n);
            }
            if (has) {
                const std::uint32_t hops[] = {s + 1};
                out.post((v + 1) % n, hops);
            }
        });
        EXPECT_TRUE(engine.any(engine.local_begin() <= (s + 1) % n && (s + 1) % n < engine.local_end()));
    }
    EXPECT_EQ(engine.supersteps(), n);
}

TEST(Engine, FewerRanksThanProcesses) {
    Engine engine(MPI_COMM_WORLD, 1);
    engine.superstep([&](std::uint32_t v, auto, Engine::Outbox& out) {
        const std::uint32_t x[] = {42};
        out.post(v, x);
    });
    if (engine.local_count() == 1) {
        ASSERT_EQ(engine.inbox(0).size(), 1u);
        EXPECT_EQ(engine.inbox(0)[0].payload[0], 42u);
    }
    EXPECT_EQ(engine.max(engine.local_count()), 1u);
}

}  // namespace
