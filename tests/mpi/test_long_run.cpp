// Long runs: 10^5 iterations of persistent and of nonblocking replay with two requests
// outstanding at once (completed in reverse order), on a staged pattern (every message
// bundles several blocks) and on the naive one. Received data is checked against MPI's own neighbor collectives every
// 4096 iterations and at the end; heap in use must not grow between the end of a warm-up and the end of the run.
// NBR_LONG_RUN_ITERATIONS overrides 10^5. The measured growth is printed.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr.h"
#include "replay_corpus.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define NBR_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NBR_TEST_ASAN 1
#endif
#endif
#if defined(NBR_TEST_ASAN)
// From the sanitizer runtime (<sanitizer/allocator_interface.h>, which GCC does not install).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace {

namespace fs = std::filesystem;
using nbr::test::world_rank;
using nbr::test::world_size;

constexpr int kCount = 3;                  // ints per block
constexpr long kCheckEvery = 4096;         // iterations between data checks
constexpr long kAllowedGrowth = 64 << 10;  // bytes of heap growth tolerated over the whole run

long iterations() {
    const char* text = std::getenv("NBR_LONG_RUN_ITERATIONS");
    return text != nullptr ? std::atol(text) : 100000;
}

/// Bytes of heap in use (the allocator's own count: ASan's in sanitized builds, glibc's otherwise).
long heap_in_use() {
#if defined(NBR_TEST_ASAN)
    return static_cast<long>(__sanitizer_get_current_allocated_bytes());
#else
    return static_cast<long>(mallinfo2().uordblks);
#endif
}

long resident_kib() {
    std::ifstream status("/proc/self/status");
    std::string key;
    long value = 0;
    while (status >> key) {
        if (key == "VmRSS:") {
            status >> value;
            return value;
        }
        status.ignore(1 << 10, '\n');
    }
    return 0;
}

/// Every rank sends to its next two ranks (the next one twice: a duplicate edge) and to itself.
nbr::Topology awkward_ring(std::uint32_t n) {
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r < n; ++r) {
        edges.push_back({r, (r + 1) % n});
        edges.push_back({r, (r + 2) % n});
        edges.push_back({r, r});
        edges.push_back({r, (r + 1) % n});
    }
    return nbr::Topology::from_edges(n, edges);
}

/// One message per distinct destination, carrying every block of the rank for it: with the
/// duplicate edges and self-loops of awkward_ring, every message holds several blocks and is
/// staged, already with 2 ranks.
class BundleAlgorithm final : public nbr::compiler::Algorithm {
public:
    [[nodiscard]] std::string name() const override { return "test-bundle"; }
    void build(nbr::compiler::Engine& engine, const nbr::Topology& topology,
               nbr::compiler::PatternBuilder& out) override {
        engine.superstep([&](std::uint32_t v, auto, nbr::compiler::Engine::Outbox&) {
            std::map<std::uint32_t, std::vector<nbr::compiler::Item>> by_destination;
            const auto targets = topology.out_neighbors(v);
            for (std::uint32_t s = 0; s < targets.size(); ++s) by_destination[targets[s]].push_back({v, s});
            for (auto& [destination, items] : by_destination) out.add_send(v, 0, destination, std::move(items));
        });
    }
};

/// The buffers of one allgather and one alltoall, nbr's and the native reference's.
struct Buffers {
    Buffers(int indegree, int outdegree)
        : gather_send(kCount),
          gather_recv(static_cast<std::size_t>(indegree) * kCount),
          all_send(static_cast<std::size_t>(outdegree) * kCount),
          all_recv(gather_recv.size()) {}
    /// New send data for iteration `it`.
    void fill(long it) {
        for (int i = 0; i < kCount; ++i) gather_send[i] = static_cast<int>(world_rank() * 1000003 + it * 7 + i);
        for (std::size_t i = 0; i < all_send.size(); ++i) {
            all_send[i] = static_cast<int>(world_rank() * 1000003 + it * 11 + static_cast<long>(i) * 13);
        }
    }
    std::vector<int> gather_send, gather_recv, all_send, all_recv;
};

class LongRunTest : public testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        const auto topology = awkward_ring(static_cast<std::uint32_t>(world_size()));
        dir_ = tmp_.path() / GetParam();
        if (std::string(GetParam()) == "naive") {
            nbr::test::compile_to(MPI_COMM_WORLD, topology, dir_);
        } else {
            BundleAlgorithm bundle;
            nbr::compiler::CompileOptions options;
            options.output = dir_;
            options.quiet = true;
            nbr::compiler::compile(MPI_COMM_WORLD, topology, bundle, options);
        }
        graph_ = nbr::test::dist_graph(topology);
        ASSERT_EQ(nbr_load_pattern(dir_.c_str(), graph_, &pattern_), NBR_SUCCESS) << nbr_last_error();
        ASSERT_EQ(nbr_pattern_neighbors_count(pattern_, &indegree_, &outdegree_), NBR_SUCCESS);
    }
    void TearDown() override {
        if (pattern_ != nullptr) {
            EXPECT_EQ(nbr_pattern_free(&pattern_), NBR_SUCCESS);
        }
        if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
    }

    /// Compares what nbr received with what MPI's own collectives deliver for the same sends.
    void check(const Buffers& b, long it) const {
        Buffers native(indegree_, outdegree_);
        native.fill(it);
        MPI_Neighbor_allgather(native.gather_send.data(), kCount, MPI_INT, native.gather_recv.data(), kCount, MPI_INT,
                               graph_);
        nbr::test::reference_alltoall(native.all_send.data(), kCount, MPI_INT, native.all_recv.data(), kCount, MPI_INT,
                                      graph_);
        ASSERT_EQ(b.gather_recv, native.gather_recv) << "allgather, iteration " << it;
        ASSERT_EQ(b.all_recv, native.all_recv) << "alltoall, iteration " << it;
    }

    /// Runs `step(it)` for every iteration, checking data and measuring the heap.
    template <class Step>
    void run(const char* mode, Buffers& b, Step step) {
        const long n = iterations();
        const long warmup = std::min(n / 10, 10000L);
        long heap_start = 0, rss_start = 0;
        for (long it = 0; it < n; ++it) {
            b.fill(it);
            step();
            if (HasFatalFailure()) return;
            if (it % kCheckEvery == 0 || it == n - 1) {
                check(b, it);
                if (HasFatalFailure()) return;
            }
            if (it == warmup) {
                heap_start = heap_in_use();
                rss_start = resident_kib();
            }
        }
        const long growth = heap_in_use() - heap_start;
        std::printf("[rank %d] %s %s: %ld iterations, heap in use %+ld bytes after warm-up, resident %+ld KiB\n",
                    world_rank(), GetParam(), mode, n, growth, resident_kib() - rss_start);
        EXPECT_LE(growth, kAllowedGrowth) << mode << ": the heap grew over the run";
    }

    nbr::test::SharedTempDir tmp_;
    fs::path dir_;
    MPI_Comm graph_ = MPI_COMM_NULL;
    nbr_pattern_t pattern_ = nullptr;
    int indegree_ = 0, outdegree_ = 0;
};

TEST_P(LongRunTest, PersistentRequestsOverlappingDoNotLeakOrCorrupt) {
    Buffers b(indegree_, outdegree_);
    nbr_request_t requests[2] = {nullptr, nullptr};
    ASSERT_EQ(nbr_neighbor_allgather_init(b.gather_send.data(), kCount, MPI_INT, b.gather_recv.data(), kCount, MPI_INT,
                                          pattern_, 0, &requests[0]),
              NBR_SUCCESS);
    ASSERT_EQ(nbr_neighbor_alltoall_init(b.all_send.data(), kCount, MPI_INT, b.all_recv.data(), kCount, MPI_INT,
                                         pattern_, 0, &requests[1]),
              NBR_SUCCESS);
    run("persistent", b, [&] {
        ASSERT_EQ(nbr_start(&requests[0]), NBR_SUCCESS);
        ASSERT_EQ(nbr_start(&requests[1]), NBR_SUCCESS);
        ASSERT_EQ(nbr_wait(&requests[1]), NBR_SUCCESS);
        ASSERT_EQ(nbr_wait(&requests[0]), NBR_SUCCESS);
    });
    EXPECT_EQ(nbr_request_free(&requests[0]), NBR_SUCCESS);
    EXPECT_EQ(nbr_request_free(&requests[1]), NBR_SUCCESS);
}

TEST_P(LongRunTest, NonblockingRequestsOverlappingDoNotLeakOrCorrupt) {
    Buffers b(indegree_, outdegree_);
    run("nonblocking", b, [&] {
        nbr_request_t requests[2] = {nullptr, nullptr};
        ASSERT_EQ(nbr_ineighbor_allgather(b.gather_send.data(), kCount, MPI_INT, b.gather_recv.data(), kCount, MPI_INT,
                                          pattern_, &requests[0]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_ineighbor_alltoall(b.all_send.data(), kCount, MPI_INT, b.all_recv.data(), kCount, MPI_INT,
                                         pattern_, &requests[1]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_wait(&requests[1]), NBR_SUCCESS);
        ASSERT_EQ(nbr_waitall(1, &requests[0]), NBR_SUCCESS);
    });
}

std::string pattern_name(const testing::TestParamInfo<const char*>& param) {
    return param.param;
}

INSTANTIATE_TEST_SUITE_P(Patterns, LongRunTest, testing::Values("bundle", "naive"), pattern_name);

}  // namespace
