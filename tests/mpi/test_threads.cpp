// nbr.h's thread contract under MPI_THREAD_MULTIPLE: two threads per process, each with its own
// pattern, replay blocking, nonblocking and persistent calls concurrently; every received
// block is compared with MPI's own neighborhood collective on the thread's communicator.
// (This executable's main asks for MPI_THREAD_MULTIPLE: NBR_TEST_THREAD_LEVEL.)
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi/mpi_test_support.hpp"
#include "mpi/replay_corpus.hpp"
#include "nbr.h"
#include "nbr/graphs/generators.hpp"

namespace {

using nbr::test::world_rank;
using nbr::test::world_size;

/// What one thread did wrong (checked on the main thread: GoogleTest assertions are not
/// meant for several threads at once).
struct Outcome {
    int mismatches = 0;
    int errors = 0;
    std::string first_error;
    int rounds = 0;
};

void note_error(Outcome& o, int code, const char* what) {
    if (code == NBR_SUCCESS) return;
    if (o.errors++ == 0) o.first_error = std::string(what) + ": " + nbr_strerror(code) + ": " + nbr_last_error();
}

/// One thread's work: `rounds` rounds of blocking, nonblocking and persistent calls on
/// `pattern`, each compared with the native collective on `native` (the thread's own
/// dist-graph communicator, so the two threads' MPI collectives never share one).
Outcome replay_rounds(nbr_pattern_t pattern, MPI_Comm native, int seed, int rounds) {
    Outcome o;
    int in = 0, out = 0, weighted = 0;
    MPI_Dist_graph_neighbors_count(native, &in, &out, &weighted);
    const int count = 3;
    std::vector<int> send(static_cast<std::size_t>(std::max(out, 1) * count));
    std::vector<int> got(static_cast<std::size_t>(std::max(in, 1) * count)), want(got.size());
    std::vector<int> persistent_got(got.size());
    nbr_request_t persistent = NBR_REQUEST_NULL;
    note_error(o,
               nbr_neighbor_alltoall_init(send.data(), count, MPI_INT, persistent_got.data(), count, MPI_INT, pattern,
                                          0, &persistent),
               "alltoall_init");
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < send.size(); ++i) {
            send[i] = seed * 1000000 + round * 1000 + world_rank() * 50 + static_cast<int>(i);
        }
        const int kind = round % 3;
        std::fill(got.begin(), got.end(), -1);
        std::fill(want.begin(), want.end(), -1);
        std::fill(persistent_got.begin(), persistent_got.end(), -1);
        if (kind == 0) {
            note_error(o, nbr_neighbor_allgather(send.data(), count, MPI_INT, got.data(), count, MPI_INT, pattern),
                       "allgather");
            MPI_Neighbor_allgather(send.data(), count, MPI_INT, want.data(), count, MPI_INT, native);
        } else if (kind == 1) {
            nbr_request_t r = NBR_REQUEST_NULL;
            note_error(o, nbr_ineighbor_alltoall(send.data(), count, MPI_INT, got.data(), count, MPI_INT, pattern, &r),
                       "ialltoall");
            note_error(o, nbr_wait(&r), "wait");
            MPI_Neighbor_alltoall(send.data(), count, MPI_INT, want.data(), count, MPI_INT, native);
        } else {
            note_error(o, nbr_start(&persistent), "start");
            note_error(o, nbr_wait(&persistent), "wait persistent");
            got = persistent_got;
            MPI_Neighbor_alltoall(send.data(), count, MPI_INT, want.data(), count, MPI_INT, native);
        }
        if (got != want) ++o.mismatches;
        ++o.rounds;
    }
    note_error(o, nbr_request_free(&persistent), "request_free");
    return o;
}

TEST(ThreadsTest, TwoThreadsReplayTwoPatternsConcurrentlyUnderThreadMultiple) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    ASSERT_EQ(provided, MPI_THREAD_MULTIPLE) << "the MPI library did not grant MPI_THREAD_MULTIPLE";
    nbr::test::SharedTempDir tmp;
    const auto n = static_cast<std::uint32_t>(world_size());
    // Two topologies and two algorithms: naive (hands blocking calls to the native collective)
    // and a relayed pattern (nbr's engine, forwarding, dependencies).
    const auto first = nbr::generate_random({n, 0.8, 5});
    const auto second = nbr::generate_random({n, 0.6, 9});
    nbr::test::compile_to(MPI_COMM_WORLD, first, tmp.path() / "first");
    nbr::test::compile_relay(second, tmp.path() / "second");

    MPI_Comm comms[2] = {nbr::test::dist_graph(first), nbr::test::dist_graph(second)};
    MPI_Comm native[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
    nbr_pattern_t patterns[2] = {NBR_PATTERN_NULL, NBR_PATTERN_NULL};
    for (int t = 0; t < 2; ++t) {
        MPI_Comm_dup(comms[t], &native[t]);
        const auto dir = tmp.path() / (t == 0 ? "first" : "second");
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), comms[t], &patterns[t]), NBR_SUCCESS) << nbr_last_error();
    }
    constexpr int kRounds = 150;
    Outcome outcomes[2];
    std::thread other([&] { outcomes[1] = replay_rounds(patterns[1], native[1], 2, kRounds); });
    outcomes[0] = replay_rounds(patterns[0], native[0], 1, kRounds);
    other.join();
    for (int t = 0; t < 2; ++t) {
        EXPECT_EQ(outcomes[t].rounds, kRounds) << "thread " << t;
        EXPECT_EQ(outcomes[t].errors, 0) << "thread " << t << ": " << outcomes[t].first_error;
        EXPECT_EQ(outcomes[t].mismatches, 0) << "thread " << t << " on rank " << world_rank();
        EXPECT_EQ(nbr_pattern_free(&patterns[t]), NBR_SUCCESS);
        MPI_Comm_free(&native[t]);
        MPI_Comm_free(&comms[t]);
    }
}

}  // namespace
