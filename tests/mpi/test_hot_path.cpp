// The hot path's contract: a repeated nonblocking or persistent call allocates nothing on the
// heap, and the native hand-off happens exactly where docs/architecture.md says it does.
//
// Allocations are counted by replacing the global operator new (libnbr's C++ allocations all
// go through it); native collectives are counted by wrapping them through MPI's profiling
// interface in this executable, so the calls libnbr makes reach the counters.
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "mpi/auto_directory.hpp"
#include "mpi/mpi_test_support.hpp"
#include "mpi/replay_corpus.hpp"
#include "nbr.h"
#include "nbr/graphs/generators.hpp"

namespace {

std::atomic<long> allocations{0};
std::atomic<bool> counting{false};
std::atomic<long> native_calls{0};  // blocking native neighborhood collectives
std::atomic<long> native_inits{0};  // native persistent neighborhood collectives
std::atomic<bool> counting_native{false};

void count_native(std::atomic<long>& counter) {
    if (counting_native.load()) ++counter;
}

}  // namespace

// ---- allocation hook --------------------------------------------------------------------------
// Replacements of every unaligned form (plain and nothrow, the library's temporary buffers
// use the latter): new takes from malloc, delete gives back to free (GCC cannot see that the
// two belong together). The aligned forms stay the library's, new and delete alike.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    return ::operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
    return ::operator new(size, tag);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

// ---- native collectives, counted ---------------------------------------------------------------

extern "C" {
int MPI_Neighbor_allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm c) {
    count_native(native_calls);
    return PMPI_Neighbor_allgather(sb, sc, st, rb, rc, rt, c);
}
int MPI_Neighbor_alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm c) {
    count_native(native_calls);
    return PMPI_Neighbor_alltoall(sb, sc, st, rb, rc, rt, c);
}
int MPI_Neighbor_allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int rds[],
                            MPI_Datatype rt, MPI_Comm c) {
    count_native(native_calls);
    return PMPI_Neighbor_allgatherv(sb, sc, st, rb, rcs, rds, rt, c);
}
int MPI_Neighbor_alltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                           const int rds[], MPI_Datatype rt, MPI_Comm c) {
    count_native(native_calls);
    return PMPI_Neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, c);
}
int MPI_Neighbor_alltoallw(const void* sb, const int scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void* rb,
                           const int rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm c) {
    count_native(native_calls);
    return PMPI_Neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, c);
}
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_TEST_INIT(name) MPIX_Neighbor_##name##_init
#define NBR_TEST_PINIT(name) PMPIX_Neighbor_##name##_init
#elif MPI_VERSION >= 4
#define NBR_TEST_INIT(name) MPI_Neighbor_##name##_init
#define NBR_TEST_PINIT(name) PMPI_Neighbor_##name##_init
#endif
#if defined(NBR_TEST_INIT)
int NBR_TEST_INIT(allgather)(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm c,
                             MPI_Info info, MPI_Request* r) {
    count_native(native_inits);
    return NBR_TEST_PINIT(allgather)(sb, sc, st, rb, rc, rt, c, info, r);
}
int NBR_TEST_INIT(alltoall)(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm c,
                            MPI_Info info, MPI_Request* r) {
    count_native(native_inits);
    return NBR_TEST_PINIT(alltoall)(sb, sc, st, rb, rc, rt, c, info, r);
}
#endif
}  // extern "C"

namespace {

using nbr::test::world_rank;
using nbr::test::world_size;

/// One fixed-size call's buffers for a rank with `in`/`out` neighbors and blocks of `count` ints.
struct Buffers {
    std::vector<int> send, recv, expected;
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
    Buffers(int in, int out, int count) {
        send.resize(static_cast<std::size_t>(std::max(out, 1) * count));
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = world_rank() * 100000 + static_cast<int>(i);
        recv.assign(static_cast<std::size_t>(std::max(in, 1) * count), -1);
        expected = recv;
        for (int j = 0; j < out; ++j) {
            send_counts.push_back(count);
            send_displs.push_back(j * count);
        }
        for (int i = 0; i < in; ++i) {
            recv_counts.push_back(count);
            recv_displs.push_back(i * count);
        }
    }
};

class HotPathTest : public testing::Test {
protected:
    void SetUp() override {
        // Moore (2,1) on a 2 x n/2 torus would repeat neighbors; a random graph without
        // duplicate edges keeps MPICH's native alltoall usable.
        topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.7, 11});
        graph = nbr::test::dist_graph(topology);
        nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "naive");
        nbr::test::compile_relay(topology, tmp.path() / "relay");
        in = static_cast<int>(topology.in_neighbors(static_cast<std::uint32_t>(world_rank())).size());
        out = static_cast<int>(topology.out_neighbors(static_cast<std::uint32_t>(world_rank())).size());
    }
    void TearDown() override { MPI_Comm_free(&graph); }

    nbr_pattern_t load(const char* name, MPI_Comm comm, unsigned long flags = 0) {
        nbr_pattern_t pattern = NBR_PATTERN_NULL;
        EXPECT_EQ(nbr_load_pattern_flags((tmp.path() / name).c_str(), comm, flags, &pattern), NBR_SUCCESS)
            << nbr_last_error();
        return pattern;
    }

    /// One blocking call (0 allgather, 1 alltoall, 2 allgatherv, 3 alltoallv, 4 alltoallw) on
    /// `pattern` with blocks of `ints` ints (of `type`, a contiguous type of `ints` ints, when
    /// given, with count 1), checked against MPI on `graph`; returns how many native
    /// collectives libnbr made.
    long handed(nbr_pattern_t pattern, int call, int ints, MPI_Datatype type = MPI_DATATYPE_NULL) {
        Buffers b(in, out, ints);
        const int count = type == MPI_DATATYPE_NULL ? ints : 1;
        if (type == MPI_DATATYPE_NULL) type = MPI_INT;
        for (auto* counts : {&b.send_counts, &b.recv_counts}) std::fill(counts->begin(), counts->end(), count);
        for (std::size_t j = 0; j < b.send_displs.size(); ++j) b.send_displs[j] = static_cast<int>(j) * count;
        for (std::size_t i = 0; i < b.recv_displs.size(); ++i) b.recv_displs[i] = static_cast<int>(i) * count;
        const auto bytes = static_cast<MPI_Aint>(ints * sizeof(int));  // alltoallw's displacements are bytes
        std::vector<MPI_Aint> send_bytes(b.send_displs.size()), recv_bytes(b.recv_displs.size());
        for (std::size_t j = 0; j < send_bytes.size(); ++j) send_bytes[j] = static_cast<MPI_Aint>(j) * bytes;
        for (std::size_t i = 0; i < recv_bytes.size(); ++i) recv_bytes[i] = static_cast<MPI_Aint>(i) * bytes;
        const std::vector<MPI_Datatype> send_types(send_bytes.size(), type), recv_types(recv_bytes.size(), type);
        counting_native = true;
        const long before = native_calls.load();
        int code = NBR_SUCCESS;
        if (call == 0) code = nbr_neighbor_allgather(b.send.data(), count, type, b.recv.data(), count, type, pattern);
        if (call == 1) code = nbr_neighbor_alltoall(b.send.data(), count, type, b.recv.data(), count, type, pattern);
        if (call == 2) {
            code = nbr_neighbor_allgatherv(b.send.data(), count, type, b.recv.data(), b.recv_counts.data(),
                                           b.recv_displs.data(), type, pattern);
        }
        if (call == 3) {
            code = nbr_neighbor_alltoallv(b.send.data(), b.send_counts.data(), b.send_displs.data(), type,
                                          b.recv.data(), b.recv_counts.data(), b.recv_displs.data(), type, pattern);
        }
        if (call == 4) {
            code = nbr_neighbor_alltoallw(b.send.data(), b.send_counts.data(), send_bytes.data(), send_types.data(),
                                          b.recv.data(), b.recv_counts.data(), recv_bytes.data(), recv_types.data(),
                                          pattern);
        }
        const long made = native_calls.load() - before;
        counting_native = false;
        EXPECT_EQ(code, NBR_SUCCESS) << nbr_last_error();
        if (call == 0 || call == 2) {
            PMPI_Neighbor_allgather(b.send.data(), ints, MPI_INT, b.expected.data(), ints, MPI_INT, graph);
        } else {
            PMPI_Neighbor_alltoall(b.send.data(), ints, MPI_INT, b.expected.data(), ints, MPI_INT, graph);
        }
        EXPECT_EQ(b.recv, b.expected) << "call " << call << ", " << ints << " ints, on rank " << world_rank();
        return made;
    }

    /// 1 where libnbr hands alltoallw to MPI (never MPICH 4.0's, nbr.cpp), else 0.
    static long alltoallw_native() { return nbr::test::is_mpich() ? 0 : 1; }

    /// Blocking allgather, alltoall and their v-variants on `pattern` (blocks of 3 ints);
    /// returns how many of them libnbr handed to the native collective.
    long native_share(nbr_pattern_t pattern) {
        long made = 0;
        for (int call = 0; call < 4; ++call) made += handed(pattern, call, 3);
        return made;
    }

    nbr::test::SharedTempDir tmp;
    nbr::Topology topology;
    MPI_Comm graph = MPI_COMM_NULL;
    int in = 0, out = 0;
};

TEST_F(HotPathTest, BlockingCallsHandOffToTheNativeCollectiveExactlyWhereDocumented) {
    // Naive plans on the topology communicator: every blocking call goes native.
    nbr_pattern_t naive = load("naive", graph);
    EXPECT_EQ(native_share(naive), 4) << "naive pattern on its dist-graph communicator";
    EXPECT_EQ(handed(naive, 4, 3), alltoallw_native()) << "alltoallw";
    // Also while requests of this process are outstanding: the choice must be the same on
    // every rank, and a rank whose request completed earlier (an nbr_test) must not take
    // another path than one whose request is still pending. They are completed first.
    nbr_pattern_t relayed = load("relay", graph);
    Buffers b(in, out, 1);
    nbr_request_t pending = NBR_REQUEST_NULL;
    ASSERT_EQ(nbr_ineighbor_allgather(b.send.data(), 1, MPI_INT, b.recv.data(), 1, MPI_INT, relayed, &pending),
              NBR_SUCCESS);
    if (world_rank() == 0) {  // progress on one rank only: the ranks' registries now differ
        int flag = 0;
        EXPECT_EQ(nbr_test(&pending, &flag), NBR_SUCCESS);
    }
    EXPECT_EQ(native_share(naive), 4) << "requests outstanding on some ranks";
    int flag = 0;
    EXPECT_EQ(nbr_test(&pending, &flag), NBR_SUCCESS);
    EXPECT_EQ(flag, 1) << "the native hand-off completed the outstanding request first";
    EXPECT_EQ(pending, NBR_REQUEST_NULL);
    PMPI_Neighbor_allgather(b.send.data(), 1, MPI_INT, b.expected.data(), 1, MPI_INT, graph);
    EXPECT_EQ(b.recv, b.expected);
    EXPECT_EQ(nbr_pattern_free(&relayed), NBR_SUCCESS);
    EXPECT_EQ(nbr_pattern_free(&naive), NBR_SUCCESS);

    // Never with NBR_LOAD_NO_NATIVE, on a plain communicator, or for plans that are not MPI's.
    nbr_pattern_t engine = load("naive", graph, NBR_LOAD_NO_NATIVE);
    EXPECT_EQ(native_share(engine), 0) << "NBR_LOAD_NO_NATIVE";
    EXPECT_EQ(handed(engine, 4, 3), 0) << "alltoallw, NBR_LOAD_NO_NATIVE";
    EXPECT_EQ(nbr_pattern_free(&engine), NBR_SUCCESS);
    nbr_pattern_t plain = load("naive", MPI_COMM_WORLD);
    EXPECT_EQ(native_share(plain), 0) << "plain communicator: MPI knows no neighborhood";
    EXPECT_EQ(nbr_pattern_free(&plain), NBR_SUCCESS);
    nbr_pattern_t relay = load("relay", graph);
    if (world_size() > 2) {
        EXPECT_EQ(native_share(relay), 0) << "relayed pattern";
    }
    EXPECT_EQ(nbr_pattern_free(&relay), NBR_SUCCESS);

    nbr_pattern_t bad = NBR_PATTERN_NULL;
    EXPECT_EQ(nbr_load_pattern_flags((tmp.path() / "naive").c_str(), graph, 0x100, &bad), NBR_ERR_ARG);  // not a flag
    EXPECT_EQ(bad, NBR_PATTERN_NULL);
}

// Blocking calls reach MPI's collective from a small per-pattern record (hand_off.hpp) when
// they are well formed and on common predefined types; every other call takes the full path.
// Both must make the same choice at every size, and neither may outlive the pattern.
TEST_F(HotPathTest, TheHandOffRecordAndTheFullPathHandOverTheSameCalls) {
    // An auto directory: allgather relayed below 16 B, naive from there; alltoall naive below
    // 64 B, relayed from there; allgatherv naive, alltoallv relayed.
    nbr::test::assemble_auto(topology, tmp.path() / "auto",
                             {{nbr::schema::ALLGATHER, 0, 1},
                              {nbr::schema::ALLGATHER, 16, 0},
                              {nbr::schema::ALLTOALL, 0, 0},
                              {nbr::schema::ALLTOALL, 64, 1}},
                             0, 1);
    nbr_pattern_t banded = load("auto", graph);
    const long relayed = world_size() > 2 ? 0 : 1;  // two ranks' relay plans are all direct
    MPI_Datatype three = MPI_DATATYPE_NULL, sixteen = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_contiguous(16, MPI_INT, &sixteen);
    MPI_Type_commit(&three);
    MPI_Type_commit(&sixteen);
    EXPECT_EQ(handed(banded, 0, 3), relayed) << "allgather, 12 B";
    EXPECT_EQ(handed(banded, 0, 4), 1) << "allgather, 16 B";
    EXPECT_EQ(handed(banded, 1, 3), 1) << "alltoall, 12 B (a later band is relayed)";
    EXPECT_EQ(handed(banded, 1, 3, three), 1) << "alltoall, 12 B of a derived type";
    EXPECT_EQ(handed(banded, 1, 16), relayed) << "alltoall, 64 B";
    EXPECT_EQ(handed(banded, 1, 16, sixteen), relayed) << "alltoall, 64 B of a derived type";
    EXPECT_EQ(handed(banded, 2, 3), 1) << "allgatherv";
    EXPECT_EQ(handed(banded, 3, 3), relayed) << "alltoallv";
    EXPECT_EQ(handed(banded, 4, 3), relayed * alltoallw_native()) << "alltoallw (alltoallv's variant)";
    EXPECT_EQ(handed(banded, 4, 3, three), relayed * alltoallw_native()) << "alltoallw of a derived type";
    nbr_pattern_t naive = load("naive", graph);
    EXPECT_EQ(handed(naive, 4, 3, three), alltoallw_native()) << "alltoallw of a derived type, naive";
    EXPECT_EQ(nbr_pattern_free(&naive), NBR_SUCCESS);
    MPI_Type_free(&three);
    MPI_Type_free(&sixteen);

    // Blocks of different sizes are still the full path's error, on every rank with neighbors
    // both ways (elsewhere a side without neighbors takes any count, as in MPI: no call here).
    Buffers b(in, out, 3);
    if (in > 0 && out > 0) {
        EXPECT_EQ(nbr_neighbor_allgather(b.send.data(), 3, MPI_INT, b.recv.data(), 2, MPI_INT, banded),
                  NBR_ERR_DATATYPE);
    }
    EXPECT_EQ(nbr_pattern_free(&banded), NBR_SUCCESS);

    // A freed pattern's handle stops resolving, also once its slot holds another pattern.
    nbr_pattern_t first = load("naive", graph);
    const nbr_pattern_t stale = first;
    EXPECT_EQ(nbr_pattern_free(&first), NBR_SUCCESS);
    nbr_pattern_t second = load("naive", graph);
    EXPECT_EQ(nbr_neighbor_allgather(b.send.data(), 3, MPI_INT, b.recv.data(), 3, MPI_INT, stale), NBR_ERR_ARG);
    EXPECT_EQ(native_share(second), 4);

    // Patterns beyond the records (64 of them) hand off through the full path.
    std::vector<nbr_pattern_t> many;
    for (int i = 0; i < 70; ++i) many.push_back(load("naive", graph));
    EXPECT_EQ(native_share(many.back()), 4);
    EXPECT_EQ(native_share(many.front()), 4);
    for (auto& pattern : many) EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    EXPECT_EQ(native_share(second), 4);
    EXPECT_EQ(nbr_pattern_free(&second), NBR_SUCCESS);
}

// A pattern loaded for its statistics hands a v-shape to MPI's collective once its calls are
// timed (hand_off.hpp); alltoallw and alltoallv calls are one shape, counted whichever path
// each call took.
TEST_F(HotPathTest, HandedOffAlltoallwCallsCountInTheirShape) {
    nbr_pattern_t naive = load("naive", graph, NBR_LOAD_STATS);
    const int calls = 20;
    long made = 0;
    for (int call = 0; call < calls; ++call) made += handed(naive, 4, 3) + handed(naive, 3, 3);
    EXPECT_EQ(made, calls + calls * alltoallw_native());
    int count = 0;
    ASSERT_EQ(nbr_pattern_shape_count(naive, &count), NBR_SUCCESS);
    ASSERT_EQ(count, 1);
    nbr_shape_stats_t shape{};
    ASSERT_EQ(nbr_pattern_shape_stats(naive, 0, &shape), NBR_SUCCESS);
    EXPECT_EQ(shape.collective, NBR_ALLTOALLV);
    EXPECT_EQ(shape.mode, NBR_MODE_BLOCKING);
    EXPECT_EQ(shape.calls, 2U * calls);
    EXPECT_EQ(shape.after_calls, 2U * calls);
    EXPECT_EQ(nbr_pattern_free(&naive), NBR_SUCCESS);
}

// A rank without neighbors may pass any counts to a fixed-size call (here 0, as mpi4py does), so
// it cannot tell the others' block size: it follows them to MPI's collective only where no size
// decides, every band handed over and no trials choosing (docs/architecture.md, "Block sizes
// of the fixed-size collectives"); elsewhere no rank goes there.
TEST_F(HotPathTest, ARankWithoutNeighborsGoesToMpisCollectiveWithTheOthersWhereNoSizeDecides) {
    const auto n = static_cast<std::uint32_t>(world_size());
    std::vector<nbr::Edge> edges{{0, 0}};  // the last rank has no neighbors, rank 0 at least one
    const auto active = nbr::generate_random({n - 1, 0.7, 11});
    for (std::uint32_t u = 0; u + 1 < n; ++u) {
        for (const auto v : active.out_neighbors(u)) edges.push_back({u, v});
    }
    topology = nbr::Topology::from_edges(n, edges);
    MPI_Comm_free(&graph);
    graph = nbr::test::dist_graph(topology);
    in = static_cast<int>(topology.in_neighbors(static_cast<std::uint32_t>(world_rank())).size());
    out = static_cast<int>(topology.out_neighbors(static_cast<std::uint32_t>(world_rank())).size());
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "naive-isolated");
    // allgather naive below 16 B, relay from there; naive with common-neighbor kept beside it
    nbr::test::assemble_auto(
        topology, tmp.path() / "banded-isolated",
        {{nbr::schema::ALLGATHER, 0, 0}, {nbr::schema::ALLGATHER, 16, 1}, {nbr::schema::ALLTOALL, 0, 0}}, 0, 0);
    nbr::test::assemble_auto(topology, tmp.path() / "kept-isolated",
                             {{nbr::schema::ALLGATHER, 0, 0, {2}}, {nbr::schema::ALLTOALL, 0, 0}}, 0, 0);
    const int ints = world_rank() + 1 == world_size() ? 0 : 3;
    // One blocking fixed-size call (0 allgather, 1 alltoall) checked against MPI; the native
    // collectives libnbr made.
    const auto made = [&](nbr_pattern_t pattern, int call) {
        Buffers b(in, out, 3);
        counting_native = true;
        const long before = native_calls.load();
        const int code =
            call == 0 ? nbr_neighbor_allgather(b.send.data(), ints, MPI_INT, b.recv.data(), ints, MPI_INT, pattern)
                      : nbr_neighbor_alltoall(b.send.data(), ints, MPI_INT, b.recv.data(), ints, MPI_INT, pattern);
        const long count = native_calls.load() - before;
        counting_native = false;
        EXPECT_EQ(code, NBR_SUCCESS) << nbr_last_error();
        if (call == 0) {
            PMPI_Neighbor_allgather(b.send.data(), ints, MPI_INT, b.expected.data(), ints, MPI_INT, graph);
        } else {
            PMPI_Neighbor_alltoall(b.send.data(), ints, MPI_INT, b.expected.data(), ints, MPI_INT, graph);
        }
        EXPECT_EQ(b.recv, b.expected) << "call " << call << " on rank " << world_rank();
        return count;
    };
    for (const unsigned long flags :
         {0UL, static_cast<unsigned long>(NBR_LOAD_STATS), static_cast<unsigned long>(NBR_LOAD_MEASURE)}) {
        // One candidate per band: measurement has nothing to try either.
        nbr_pattern_t naive = load("naive-isolated", graph, flags);
        for (int round = 0; round < 3; ++round) {
            EXPECT_EQ(made(naive, 0), 1) << "naive allgather, flags " << flags;
            EXPECT_EQ(made(naive, 1), 1) << "naive alltoall, flags " << flags;
        }
        EXPECT_EQ(nbr_pattern_free(&naive), NBR_SUCCESS);
        nbr_pattern_t engine = load("naive-isolated", graph, flags | NBR_LOAD_NO_NATIVE);
        EXPECT_EQ(made(engine, 0) + made(engine, 1), 0) << "NBR_LOAD_NO_NATIVE, flags " << flags;
        EXPECT_EQ(nbr_pattern_free(&engine), NBR_SUCCESS);
    }
    // Relay forwards through the last rank, so naive's schedule takes its band: both bands go to
    // MPI. Under measurement, trials between naive and common-neighbor keep every rank's
    // allgather on nbr's engine (the rank without neighbors cannot tell what they time);
    // alltoall, naive in its one band, still goes to MPI.
    nbr_pattern_t banded = load("banded-isolated", graph);
    nbr_pattern_t kept = load("kept-isolated", graph, NBR_LOAD_MEASURE);
    for (int round = 0; round < 3; ++round) {
        EXPECT_EQ(made(banded, 0), 1) << "banded allgather, relay's band naive";
        EXPECT_EQ(made(banded, 1), 1) << "banded alltoall";
        EXPECT_EQ(made(kept, 0), 0) << "measured allgather with a candidate beside naive";
        EXPECT_EQ(made(kept, 1), 1) << "measured alltoall, naive alone";
    }
    EXPECT_EQ(nbr_pattern_free(&kept), NBR_SUCCESS);
    // The ranks' sequences of collectives on the communicator stayed alike (MPICH numbers its
    // nonblocking ones per communicator): a nonblocking reduction on it still matches.
    int one = 1, sum = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, graph, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    EXPECT_EQ(sum, world_size());
    EXPECT_EQ(nbr_pattern_free(&banded), NBR_SUCCESS);
}

TEST_F(HotPathTest, PersistentFixedSizeCallsOfNaivePlansHandOffFrom512Bytes) {
#if !defined(NBR_TEST_INIT)
    GTEST_SKIP() << "this MPI has no persistent neighborhood collectives";
#else
    nbr_pattern_t naive = load("naive", graph);
    nbr_pattern_t engine = load("naive", graph, NBR_LOAD_NO_NATIVE);
    for (const int ints : {1, 128, 256}) {  // 4 B, 512 B, 1 KiB blocks
        for (nbr_pattern_t pattern : {naive, engine}) {
            Buffers b(in, out, ints);
            counting_native = true;
            const long before = native_inits.load();
            nbr_request_t request = NBR_REQUEST_NULL;
            ASSERT_EQ(nbr_neighbor_allgather_init(b.send.data(), ints, MPI_INT, b.recv.data(), ints, MPI_INT, pattern,
                                                  0, &request),
                      NBR_SUCCESS)
                << nbr_last_error();
            const long handed = native_inits.load() - before;
            counting_native = false;
            const bool expected = pattern == naive && ints * 4 >= 512;
            EXPECT_EQ(handed, expected ? 1 : 0) << ints * 4 << " B blocks" << (pattern == engine ? ", no native" : "");
            for (int round = 0; round < 3; ++round) {
                std::fill(b.recv.begin(), b.recv.end(), -1);
                ASSERT_EQ(nbr_start(&request), NBR_SUCCESS);
                ASSERT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
                PMPI_Neighbor_allgather(b.send.data(), ints, MPI_INT, b.expected.data(), ints, MPI_INT, graph);
                EXPECT_EQ(b.recv, b.expected);
            }
            EXPECT_NE(request, NBR_REQUEST_NULL) << "a persistent request stays allocated";
            EXPECT_EQ(nbr_request_free(&request), NBR_SUCCESS);
        }
    }
    EXPECT_EQ(nbr_pattern_free(&naive), NBR_SUCCESS);
    EXPECT_EQ(nbr_pattern_free(&engine), NBR_SUCCESS);
#endif
}

/// Runs `call` a few times to warm up, then `repeats` times with allocations counted.
template <class Call>
long allocations_of(Call&& call, int repeats = 20) {
    for (int i = 0; i < 3; ++i) call();
    MPI_Barrier(MPI_COMM_WORLD);
    allocations = 0;
    counting = true;
    for (int i = 0; i < repeats; ++i) call();
    counting = false;
    MPI_Barrier(MPI_COMM_WORLD);
    return allocations.load();
}

TEST_F(HotPathTest, RepeatedNonblockingAndPersistentCallsAllocateNothing) {
    int cases = 0;
    for (const char* name : {"naive", "relay"}) {
        nbr_pattern_t pattern = load(name, graph, NBR_LOAD_NO_NATIVE);
        Buffers b(in, out, 5);
        const auto expect_none = [&](long count, const char* what) {
            EXPECT_EQ(count, 0) << name << ": " << what << " allocated " << count << " times in 20 repeats";
            ++cases;
        };
        expect_none(allocations_of([&] {
                        nbr_request_t r = NBR_REQUEST_NULL;
                        nbr_ineighbor_allgather(b.send.data(), 5, MPI_INT, b.recv.data(), 5, MPI_INT, pattern, &r);
                        nbr_wait(&r);
                    }),
                    "ineighbor_allgather + wait");
        expect_none(allocations_of([&] {
                        nbr_request_t r = NBR_REQUEST_NULL;
                        nbr_ineighbor_alltoall(b.send.data(), 5, MPI_INT, b.recv.data(), 5, MPI_INT, pattern, &r);
                        int flag = 0;
                        while (!flag) nbr_test(&r, &flag);
                    }),
                    "ineighbor_alltoall + test");
        expect_none(allocations_of([&] {
                        nbr_request_t r[2] = {NBR_REQUEST_NULL, NBR_REQUEST_NULL};
                        nbr_ineighbor_allgatherv(b.send.data(), 5, MPI_INT, b.recv.data(), b.recv_counts.data(),
                                                 b.recv_displs.data(), MPI_INT, pattern, &r[0]);
                        nbr_ineighbor_alltoallv(b.send.data(), b.send_counts.data(), b.send_displs.data(), MPI_INT,
                                                b.recv.data(), b.recv_counts.data(), b.recv_displs.data(), MPI_INT,
                                                pattern, &r[1]);
                        nbr_waitall(2, r);
                    }),
                    "ineighbor_allgatherv + ineighbor_alltoallv + waitall");
        expect_none(allocations_of(
                        [&] { nbr_neighbor_alltoall(b.send.data(), 5, MPI_INT, b.recv.data(), 5, MPI_INT, pattern); }),
                    "blocking alltoall");
        nbr_request_t persistent[2] = {NBR_REQUEST_NULL, NBR_REQUEST_NULL};
        ASSERT_EQ(nbr_neighbor_alltoall_init(b.send.data(), 5, MPI_INT, b.recv.data(), 5, MPI_INT, pattern, 0,
                                             &persistent[0]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_neighbor_allgatherv_init(b.send.data(), 5, MPI_INT, b.expected.data(), b.recv_counts.data(),
                                               b.recv_displs.data(), MPI_INT, pattern, 0, &persistent[1]),
                  NBR_SUCCESS);
        expect_none(allocations_of([&] {
                        nbr_start(&persistent[0]);
                        nbr_wait(&persistent[0]);
                    }),
                    "persistent alltoall start + wait");
        expect_none(allocations_of([&] {
                        nbr_start(&persistent[0]);
                        nbr_start(&persistent[1]);
                        int flag = 0;
                        while (!flag) nbr_testall(2, persistent, &flag);
                    }),
                    "two persistent starts + testall");
        PMPI_Neighbor_allgather(b.send.data(), 5, MPI_INT, b.recv.data(), 5, MPI_INT, graph);
        EXPECT_EQ(b.expected, b.recv) << "persistent allgatherv on rank " << world_rank();
        nbr_request_free(&persistent[0]);
        nbr_request_free(&persistent[1]);
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    }
    EXPECT_EQ(cases, 12) << "every case ran";
}

}  // namespace
