// Replay: every byte nbr delivers equals what MPI_Neighbor_allgather / MPI_Neighbor_alltoall
// deliver on the same dist-graph communicator, for the patterns of every algorithm, on
// Moore, random, real-matrix and awkward (duplicate edges, self-loops, isolated ranks)
// topologies, with basic and derived datatypes, blocking and persistent.
#include <algorithm>
#include <cstring>
#include <functional>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr.h"
#include "replay_corpus.hpp"

namespace {

using nbr::test::world_rank;
using nbr::test::world_size;

namespace fs = std::filesystem;

constexpr unsigned char kSentinel = 0xA5;

using nbr::test::dist_graph;
using nbr::test::fill;
using nbr::test::has_duplicate_in_edges;
using nbr::test::is_mpich;
using nbr::test::reference_alltoall;
using nbr::test::Signature;

std::size_t span_bytes(int count, MPI_Datatype type, std::size_t blocks) {
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    return static_cast<std::size_t>(extent) * static_cast<std::size_t>(count) * blocks + 64;
}

class ReplayTest : public nbr::test::StridedTypesTest {
protected:
    static std::vector<Signature> signatures() {
        return {
            {"int x1", 1, MPI_INT, 1, MPI_INT},
            {"int x0", 0, MPI_INT, 0, MPI_INT},
            {"char x5", 5, MPI_CHAR, 5, MPI_CHAR},
            {"double x1000", 1000, MPI_DOUBLE, 1000, MPI_DOUBLE},
            {"int x6 -> strided", 6, MPI_INT, 1, strided_int6_},
            {"strided double -> double x6", 3, strided_double2_, 6, MPI_DOUBLE},
        };
    }

    /// Runs native and nbr with identical inputs and compares every receive byte.
    static void compare(MPI_Comm graph, nbr_pattern_t pattern, bool alltoall, const Signature& sig,
                        const std::string& label) {
        int indegree = 0, outdegree = 0;
        ASSERT_EQ(nbr_pattern_neighbors_count(pattern, &indegree, &outdegree), NBR_SUCCESS);
        const std::size_t send_blocks = alltoall ? static_cast<std::size_t>(outdegree) : 1;
        std::vector<unsigned char> send(span_bytes(sig.send_count, sig.send_type, send_blocks));
        std::vector<unsigned char> expected(
            span_bytes(sig.recv_count, sig.recv_type, static_cast<std::size_t>(indegree)), kSentinel);
        std::vector<unsigned char> actual(expected.size(), kSentinel);
        fill(send, static_cast<int>(label.size()));
        if (alltoall) {
            MPI_Neighbor_alltoall(send.data(), sig.send_count, sig.send_type, expected.data(), sig.recv_count,
                                  sig.recv_type, graph);
            ASSERT_EQ(nbr_neighbor_alltoall(send.data(), sig.send_count, sig.send_type, actual.data(), sig.recv_count,
                                            sig.recv_type, pattern),
                      NBR_SUCCESS)
                << nbr_last_error();
        } else {
            MPI_Neighbor_allgather(send.data(), sig.send_count, sig.send_type, expected.data(), sig.recv_count,
                                   sig.recv_type, graph);
            ASSERT_EQ(nbr_neighbor_allgather(send.data(), sig.send_count, sig.send_type, actual.data(), sig.recv_count,
                                             sig.recv_type, pattern),
                      NBR_SUCCESS)
                << nbr_last_error();
        }
        const std::string what = label + " " + (alltoall ? "alltoall " : "allgather ") + sig.name + " on rank " +
                                 std::to_string(world_rank());
        if (!alltoall) {
            EXPECT_TRUE(expected == actual) << what;
            return;
        }
        std::vector<unsigned char> standard(expected.size(), kSentinel);
        reference_alltoall(send.data(), sig.send_count, sig.send_type, standard.data(), sig.recv_count, sig.recv_type,
                           graph);
        EXPECT_TRUE(standard == actual) << what << " (against the MPI-4.1 reference code)";
        if (expected != standard) {
            // MPICH 4.0's linear neighbor_alltoall reverses the receive order, which mismatches
            // duplicate edges (fixed upstream in pmodels/mpich#7945). Nothing else may differ.
            EXPECT_TRUE(is_mpich() && has_duplicate_in_edges(graph))
                << what << ": native result differs from the standard's";
        } else {
            EXPECT_TRUE(expected == actual) << what;
        }
    }
};

TEST_F(ReplayTest, BlockingMatchesNativeOnEveryTopology) {
    nbr::test::SharedTempDir tmp;
    const auto corpus = nbr::test::corpus_topologies();
    std::size_t replayed = 0;
    for (std::size_t t = 0; t < corpus.size(); ++t) {
        const auto& [name, topology] = corpus[t];
        SCOPED_TRACE(name);
        const auto dirs = nbr::test::compile_algorithms(tmp.path(), name, topology, nbr::test::corpus_sample(t));
        MPI_Comm graph = dist_graph(topology);
        for (const auto& dir : dirs) {
            nbr_pattern_t pattern = nullptr;
            ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
            nbr_pattern_t plain = nullptr;
            ASSERT_EQ(nbr_load_pattern(dir.c_str(), MPI_COMM_WORLD, &plain), NBR_SUCCESS) << nbr_last_error();
            // The step rule (NBR_LOAD_STEP_SYNC, for benchmarks) holds sends back, never changes bytes.
            nbr_pattern_t stepped = nullptr;
            ASSERT_EQ(nbr_load_pattern_flags(dir.c_str(), graph, NBR_LOAD_STEP_SYNC, &stepped), NBR_SUCCESS)
                << nbr_last_error();
            const auto all = signatures();
            for (const auto& sig : all) {
                for (bool alltoall : {false, true}) {
                    compare(graph, pattern, alltoall, sig, dir.filename().string());
                    compare(graph, plain, alltoall, sig, dir.filename().string() + " (plain comm)");
                    if (&sig == &all[0] || &sig == &all[3]) {
                        compare(graph, stepped, alltoall, sig, dir.filename().string() + " (step rule)");
                    }
                }
            }
            nbr_pattern_free(&stepped);
            EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
            EXPECT_EQ(pattern, nullptr);
            nbr_pattern_free(&plain);
            ++replayed;
        }
        MPI_Comm_free(&graph);
    }
    EXPECT_GE(corpus.size(), 8u) << "Moore, two random graphs, four matrices, awkward graphs";
    EXPECT_EQ(replayed, nbr::test::corpus_sample_size(corpus.size())) << "every algorithm on every topology";
    EXPECT_GE(replayed, corpus.size()) << "never fewer pairs than topologies (NBR_TEST_CORPUS_STRIDE)";
}

TEST_F(ReplayTest, AllgatherDeliversInNeighborData) {
    // Independent of the native collective: block i must hold in-neighbor i's value.
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::test::awkward_topology(static_cast<std::uint32_t>(world_size()));
    nbr::test::RelayAlgorithm relay;
    nbr::compiler::CompileOptions options;
    options.output = tmp.path() / "relay";
    options.quiet = true;
    nbr::compiler::compile(MPI_COMM_WORLD, topology, relay, options);
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern(options.output.c_str(), MPI_COMM_WORLD, &pattern), NBR_SUCCESS) << nbr_last_error();
    const auto r = static_cast<std::uint32_t>(world_rank());
    const auto in = topology.in_neighbors(r);
    const auto slots = topology.in_source_slots(r);
    const int mine[2] = {world_rank() * 10 + 1, world_rank() * 10 + 2};
    std::vector<int> got(2 * in.size() + 1, -1);
    ASSERT_EQ(nbr_neighbor_allgather(mine, 2, MPI_INT, got.data(), 2, MPI_INT, pattern), NBR_SUCCESS);
    for (std::size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(got[2 * i], static_cast<int>(in[i]) * 10 + 1);
        EXPECT_EQ(got[2 * i + 1], static_cast<int>(in[i]) * 10 + 2);
    }
    EXPECT_EQ(got.back(), -1) << "wrote past the receive buffer";
    // Alltoall: block j of the origin's send buffer, tagged with (origin, slot).
    const auto out_degree = topology.out_degree(r);
    std::vector<int> send(out_degree);
    for (std::uint32_t j = 0; j < out_degree; ++j) send[j] = static_cast<int>(r * 1000 + j);
    std::vector<int> recv(in.size(), -1);
    ASSERT_EQ(nbr_neighbor_alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, pattern), NBR_SUCCESS);
    for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(recv[i], static_cast<int>(in[i] * 1000 + slots[i]));
    nbr_pattern_free(&pattern);
}

/// A periodic Cartesian communicator over MPI_COMM_WORLD (no reordering) with the given extents.
MPI_Comm periodic_cartesian(const std::vector<int>& extents) {
    const std::vector<int> periods(extents.size(), 1);
    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, static_cast<int>(extents.size()), extents.data(), periods.data(), 0, &cart);
    return cart;
}

/// Every rank's lists of a Cartesian communicator, gathered into a topology.
nbr::Topology cartesian_topology(MPI_Comm cart) {
    return nbr::test::topology_of_symmetric_lists(nbr::test::neighbors_of(cart).in);  // in == out
}

TEST_F(ReplayTest, PeriodicCartesianCommunicatorsMatchNative) {
    // A ring of all ranks and, where MPI_Dims_create gives extents of 3 or more, a 2-D torus.
    nbr::test::SharedTempDir tmp;
    std::vector<std::vector<int>> shapes = {{world_size()}};
    std::vector<int> torus(2, 0);
    MPI_Dims_create(world_size(), 2, torus.data());
    if (torus[0] >= 3 && torus[1] >= 3) shapes.push_back(torus);
    for (const auto& shape : shapes) {
        const std::string name = "cart" + std::to_string(shape.size()) + "d";
        SCOPED_TRACE(name);
        MPI_Comm cart = periodic_cartesian(shape);
        const auto topology = cartesian_topology(cart);
        ASSERT_EQ(topology.num_edges(), 2 * shape.size() * static_cast<std::size_t>(world_size()));
        for (const auto& dir : nbr::test::compile_every_algorithm(tmp.path(), name, topology)) {
            nbr_pattern_t pattern = nullptr;
            ASSERT_EQ(nbr_load_pattern(dir.c_str(), cart, &pattern), NBR_SUCCESS) << nbr_last_error();
            for (const auto& sig : signatures()) {
                for (bool alltoall : {false, true}) compare(cart, pattern, alltoall, sig, dir.filename().string());
            }
            nbr_pattern_free(&pattern);
        }
        MPI_Comm_free(&cart);
    }
}

/// Persistent allgather and alltoall of `count` ints on the pattern in `dir`, both in flight at
/// once, restarted four times with new data, against the native collectives.
void expect_persistent_restarts_match_native(const fs::path& dir, const nbr::Topology& topology, int count) {
    SCOPED_TRACE(dir.filename().string() + ", " + std::to_string(count) + " ints per block");
    MPI_Comm graph = dist_graph(topology);
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
    int indegree = 0, outdegree = 0;
    nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
    const auto c = static_cast<std::size_t>(count);
    // One spare element each: MPI rejects NULL buffers even for zero neighbors.
    std::vector<int> ag_send(c), ag_recv(c * static_cast<std::size_t>(indegree) + 1), ag_ref(ag_recv.size());
    std::vector<int> aa_send(c * static_cast<std::size_t>(outdegree) + 1), aa_recv(ag_recv.size()),
        aa_ref(ag_recv.size());
    nbr_request_t ag = nullptr, aa = nullptr;
    ASSERT_EQ(
        nbr_neighbor_allgather_init(ag_send.data(), count, MPI_INT, ag_recv.data(), count, MPI_INT, pattern, 0, &ag),
        NBR_SUCCESS);
    ASSERT_EQ(
        nbr_neighbor_alltoall_init(aa_send.data(), count, MPI_INT, aa_recv.data(), count, MPI_INT, pattern, 0, &aa),
        NBR_SUCCESS);
    nbr_request_t bad = nullptr;
    EXPECT_EQ(
        nbr_neighbor_allgather_init(ag_send.data(), count, MPI_INT, ag_recv.data(), count, MPI_INT, pattern, 1, &bad),
        NBR_ERR_ARG);  // flags must be 0 (returns before any collective call)
    EXPECT_EQ(bad, nullptr);
    for (int iteration = 0; iteration < 4; ++iteration) {
        for (std::size_t i = 0; i < c; ++i) ag_send[i] = world_rank() * 100 + static_cast<int>(i) + iteration * 7;
        for (std::size_t i = 0; i < aa_send.size(); ++i)
            aa_send[i] = world_rank() * 10000 + static_cast<int>(i) - iteration;
        for (auto* v : {&ag_recv, &aa_recv, &ag_ref, &aa_ref}) std::fill(v->begin(), v->end(), -1);
        // Both requests in flight at once.
        ASSERT_EQ(nbr_start(&ag), NBR_SUCCESS);
        ASSERT_EQ(nbr_start(&aa), NBR_SUCCESS);
        EXPECT_EQ(nbr_start(&aa), NBR_ERR_STATE);
        int done = 0;
        while (!done) ASSERT_EQ(nbr_test(&aa, &done), NBR_SUCCESS);
        ASSERT_EQ(nbr_wait(&ag), NBR_SUCCESS);
        MPI_Neighbor_allgather(ag_send.data(), count, MPI_INT, ag_ref.data(), count, MPI_INT, graph);
        MPI_Neighbor_alltoall(aa_send.data(), count, MPI_INT, aa_ref.data(), count, MPI_INT, graph);
        EXPECT_EQ(ag_recv, ag_ref) << "iteration " << iteration;
        EXPECT_EQ(aa_recv, aa_ref) << "iteration " << iteration;
    }
    EXPECT_EQ(nbr_request_free(&ag), NBR_SUCCESS);
    EXPECT_EQ(nbr_request_free(&aa), NBR_SUCCESS);
    EXPECT_EQ(ag, nullptr);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&graph);
}

TEST_F(ReplayTest, PersistentRequestsMatchNativeAcrossRestarts) {
    // The relay pattern runs on nbr's engine; the naive one with blocks of 1 KiB goes to the
    // native persistent collective (from 512 B), with 12 B blocks to nbr's engine.
    nbr::test::SharedTempDir tmp;
    nbr::test::RelayAlgorithm relay;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.4, 21});
    nbr::compiler::CompileOptions options;
    options.output = tmp.path() / "relay";
    options.quiet = true;
    nbr::compiler::compile(MPI_COMM_WORLD, topology, relay, options);
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "naive");
    for (int count : {3, 256}) {
        expect_persistent_restarts_match_native(tmp.path() / "relay", topology, count);
        expect_persistent_restarts_match_native(tmp.path() / "naive", topology, count);
    }
}

TEST_F(ReplayTest, MismatchedBlockSizesAreRejected) {
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.5, 2});
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "p");
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "p").c_str(), MPI_COMM_WORLD, &pattern), NBR_SUCCESS);
    std::vector<int> buffer(64 * static_cast<std::size_t>(world_size()));
    // Ranks with neighbors both ways refuse before sending anything; where a rank has none on
    // one side MPI leaves that side's count free, and so does nbr: such ranks make no call here.
    const auto r = static_cast<std::uint32_t>(world_rank());
    if (!topology.in_neighbors(r).empty() && !topology.out_neighbors(r).empty()) {
        EXPECT_EQ(nbr_neighbor_allgather(buffer.data(), 2, MPI_INT, buffer.data(), 3, MPI_INT, pattern),
                  NBR_ERR_DATATYPE);
        EXPECT_NE(std::string(nbr_last_error()).find("bytes"), std::string::npos);
    }
    EXPECT_EQ(nbr_neighbor_alltoall(buffer.data(), -1, MPI_INT, buffer.data(), 1, MPI_INT, pattern), NBR_ERR_ARG);
    EXPECT_EQ(nbr_neighbor_alltoall(buffer.data(), 1, MPI_INT, buffer.data(), 1, MPI_INT, nullptr), NBR_ERR_ARG);
    nbr_pattern_free(&pattern);
}

}  // namespace
