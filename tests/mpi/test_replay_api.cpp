// Replay of the rest of the neighborhood API: the v-variants (blocking, nonblocking and
// persistent) and the nonblocking fixed-size collectives deliver exactly what the native
// MPI_Neighbor_*v and MPI_Ineighbor_* calls deliver, on the replay corpus, with every
// algorithm's patterns; several nonblocking requests complete in any order beside blocking
// calls and the application's own messages; a side without neighbors takes any count, as in
// MPI; request semantics and argument errors.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr.h"
#include "replay_corpus.hpp"

namespace {

using nbr::test::dist_graph;
using nbr::test::fill;
using nbr::test::has_duplicate_in_edges;
using nbr::test::is_mpich;
using nbr::test::Signature;
using nbr::test::world_rank;
using nbr::test::world_size;

constexpr unsigned char kSentinel = 0x5A;

enum class Mode { blocking, nonblocking, persistent };

const char* mode_name(Mode mode) {
    switch (mode) {
        case Mode::blocking: return "blocking";
        case Mode::nonblocking: return "nonblocking";
        case Mode::persistent: return "persistent";
    }
    return "?";
}

/// Elements per edge of the v-variants, from the origin rank and the edge's out-slot there:
/// zero on some edges, and one in six carries a large block (64 KiB of chars).
int edge_units(std::uint32_t origin, std::uint32_t slot, int large) {
    switch ((origin * 7 + slot * 3) % 6) {
        case 0: return 0;
        case 1: return 1;
        case 2: return 3;
        case 3: return 17;
        case 4: return large;
        default: return 2;
    }
}

/// A v-variant type pairing: `send_per_unit` elements of send_type carry the same type
/// signature as `recv_per_unit` elements of recv_type.
struct VariantTypes {
    std::string name;
    MPI_Datatype send_type;
    int send_per_unit;
    MPI_Datatype recv_type;
    int recv_per_unit;
    int large;  // units of the large edges
};

/// Counts and displacements (in extents) of v-variant blocks: laid out in the order given by
/// `order`, with `gap` unused elements after each block.
struct Layout {
    std::vector<int> counts;
    std::vector<int> displs;
    std::size_t elements = 0;
};

Layout layout(std::vector<int> counts, const std::vector<std::size_t>& order, int gap) {
    Layout l;
    l.displs.assign(counts.size() + 1, 0);
    for (const std::size_t b : order) {
        l.displs[b] = static_cast<int>(l.elements);
        l.elements += static_cast<std::size_t>(counts[b] + gap);
    }
    counts.push_back(0);  // never an empty vector: .data() must not be NULL
    l.counts = std::move(counts);
    return l;
}

std::vector<std::size_t> reversed(std::size_t n) {
    std::vector<std::size_t> order(n);
    std::iota(order.rbegin(), order.rend(), std::size_t{0});
    return order;
}

std::vector<std::size_t> odd_then_even(std::size_t n) {
    std::vector<std::size_t> order;
    for (std::size_t b = 1; b < n; b += 2) order.push_back(b);
    for (std::size_t b = 0; b < n; b += 2) order.push_back(b);
    return order;
}

std::vector<unsigned char> buffer_for(std::size_t elements, MPI_Datatype type, unsigned char value) {
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    return std::vector<unsigned char>(elements * static_cast<std::size_t>(extent) + 64, value);
}

/// The arguments of one v-variant call on the calling rank.
struct VariantCall {
    bool alltoall = false;
    Layout send;  // alltoallv: per out-neighbor; allgatherv: counts[0] is sendcount
    Layout recv;  // per in-neighbor
    std::vector<unsigned char> send_buffer;
};

VariantCall variant_call(const nbr::Topology& topology, bool alltoall, const VariantTypes& types, int seed) {
    const auto r = static_cast<std::uint32_t>(world_rank());
    const auto in = topology.in_neighbors(r);
    const auto slots = topology.in_source_slots(r);
    VariantCall call;
    call.alltoall = alltoall;
    std::vector<int> recv_counts(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        recv_counts[i] = edge_units(in[i], alltoall ? slots[i] : 0, types.large) * types.recv_per_unit;
    }
    call.recv = layout(recv_counts, reversed(in.size()), 2);
    std::vector<int> send_counts(alltoall ? topology.out_degree(r) : 1);
    for (std::size_t j = 0; j < send_counts.size(); ++j) {
        send_counts[j] = edge_units(r, static_cast<std::uint32_t>(j), types.large) * types.send_per_unit;
    }
    call.send = layout(send_counts, odd_then_even(send_counts.size()), 1);
    call.send_buffer = buffer_for(call.send.elements, types.send_type, 0);
    fill(call.send_buffer, seed);
    return call;
}

/// The native result of a v-variant call (nonblocking mode uses MPI_Ineighbor_*v + MPI_Wait).
std::vector<unsigned char> native_variant(const VariantCall& c, const VariantTypes& t, Mode mode, MPI_Comm graph) {
    auto out = buffer_for(c.recv.elements, t.recv_type, kSentinel);
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Request* nonblocking = mode == Mode::nonblocking ? &request : nullptr;
    if (c.alltoall && nonblocking) {
        MPI_Ineighbor_alltoallv(c.send_buffer.data(), c.send.counts.data(), c.send.displs.data(), t.send_type,
                                out.data(), c.recv.counts.data(), c.recv.displs.data(), t.recv_type, graph, &request);
    } else if (c.alltoall) {
        MPI_Neighbor_alltoallv(c.send_buffer.data(), c.send.counts.data(), c.send.displs.data(), t.send_type,
                               out.data(), c.recv.counts.data(), c.recv.displs.data(), t.recv_type, graph);
    } else if (nonblocking) {
        MPI_Ineighbor_allgatherv(c.send_buffer.data(), c.send.counts[0], t.send_type, out.data(), c.recv.counts.data(),
                                 c.recv.displs.data(), t.recv_type, graph, &request);
    } else {
        MPI_Neighbor_allgatherv(c.send_buffer.data(), c.send.counts[0], t.send_type, out.data(), c.recv.counts.data(),
                                c.recv.displs.data(), t.recv_type, graph);
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    return out;
}

/// Starts (nonblocking) or initializes (persistent) nbr's v-variant call.
int nbr_variant_request(const VariantCall& c, const VariantTypes& t, Mode mode, std::vector<unsigned char>& out,
                        nbr_pattern_t pattern, nbr_request_t* request) {
    if (c.alltoall && mode == Mode::nonblocking) {
        return nbr_ineighbor_alltoallv(c.send_buffer.data(), c.send.counts.data(), c.send.displs.data(), t.send_type,
                                       out.data(), c.recv.counts.data(), c.recv.displs.data(), t.recv_type, pattern,
                                       request);
    }
    if (c.alltoall) {
        return nbr_neighbor_alltoallv_init(c.send_buffer.data(), c.send.counts.data(), c.send.displs.data(),
                                           t.send_type, out.data(), c.recv.counts.data(), c.recv.displs.data(),
                                           t.recv_type, pattern, 0, request);
    }
    if (mode == Mode::nonblocking) {
        return nbr_ineighbor_allgatherv(c.send_buffer.data(), c.send.counts[0], t.send_type, out.data(),
                                        c.recv.counts.data(), c.recv.displs.data(), t.recv_type, pattern, request);
    }
    return nbr_neighbor_allgatherv_init(c.send_buffer.data(), c.send.counts[0], t.send_type, out.data(),
                                        c.recv.counts.data(), c.recv.displs.data(), t.recv_type, pattern, 0, request);
}

/// nbr's result of the call in `mode` (persistent: the second start of one request, after a
/// first start on other data).
std::vector<unsigned char> nbr_variant(VariantCall& c, const VariantTypes& t, Mode mode, nbr_pattern_t pattern) {
    auto out = buffer_for(c.recv.elements, t.recv_type, kSentinel);
    if (mode == Mode::blocking) {
        const int code =
            c.alltoall
                ? nbr_neighbor_alltoallv(c.send_buffer.data(), c.send.counts.data(), c.send.displs.data(), t.send_type,
                                         out.data(), c.recv.counts.data(), c.recv.displs.data(), t.recv_type, pattern)
                : nbr_neighbor_allgatherv(c.send_buffer.data(), c.send.counts[0], t.send_type, out.data(),
                                          c.recv.counts.data(), c.recv.displs.data(), t.recv_type, pattern);
        EXPECT_EQ(code, NBR_SUCCESS) << nbr_last_error();
        return out;
    }
    nbr_request_t request = nullptr;
    const auto wanted = c.send_buffer;
    if (mode == Mode::persistent) std::fill(c.send_buffer.begin(), c.send_buffer.end(), 0xEE);
    EXPECT_EQ(nbr_variant_request(c, t, mode, out, pattern, &request), NBR_SUCCESS) << nbr_last_error();
    if (request == nullptr) return out;
    if (mode == Mode::persistent) {
        EXPECT_EQ(nbr_start(&request), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
        std::copy(wanted.begin(), wanted.end(), c.send_buffer.begin());  // the request is bound to this storage
        std::fill(out.begin(), out.end(), kSentinel);
        EXPECT_EQ(nbr_start(&request), NBR_SUCCESS) << nbr_last_error();
    }
    EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
    if (mode == Mode::persistent) {
        EXPECT_EQ(nbr_request_free(&request), NBR_SUCCESS);
    }
    return out;
}

/// Native and nbr must agree byte for byte, gaps included; alltoall(v) is also checked
/// against the MPI-4.1 reference code (MPICH 4.0 mismatches duplicate edges natively).
void expect_same(const std::vector<unsigned char>& native, const std::vector<unsigned char>& actual,
                 const std::vector<unsigned char>* standard, MPI_Comm graph, const std::string& what) {
    if (standard == nullptr) {
        EXPECT_TRUE(native == actual) << what;
        return;
    }
    EXPECT_TRUE(*standard == actual) << what << " (against the MPI-4.1 reference code)";
    if (native != *standard) {
        EXPECT_TRUE(is_mpich() && has_duplicate_in_edges(graph))
            << what << ": native result differs from the standard's";
    } else {
        EXPECT_TRUE(native == actual) << what;
    }
}

void compare_variant(MPI_Comm graph, nbr_pattern_t pattern, const nbr::Topology& topology, bool alltoall,
                     const VariantTypes& types, Mode mode, const std::string& label) {
    VariantCall call = variant_call(topology, alltoall, types, static_cast<int>(label.size()));
    const auto native = native_variant(call, types, mode, graph);
    const auto actual = nbr_variant(call, types, mode, pattern);
    const std::string what = label + " " + mode_name(mode) + (alltoall ? " alltoallv " : " allgatherv ") + types.name +
                             " on rank " + std::to_string(world_rank());
    if (!alltoall) {
        expect_same(native, actual, nullptr, graph, what);
        return;
    }
    auto standard = buffer_for(call.recv.elements, types.recv_type, kSentinel);
    nbr::test::reference_alltoallv(call.send_buffer.data(), call.send.counts.data(), call.send.displs.data(),
                                   types.send_type, standard.data(), call.recv.counts.data(), call.recv.displs.data(),
                                   types.recv_type, graph);
    expect_same(native, actual, &standard, graph, what);
}

/// nbr_ineighbor_* + nbr_wait against MPI_Ineighbor_* + MPI_Wait.
void compare_nonblocking(MPI_Comm graph, nbr_pattern_t pattern, bool alltoall, const Signature& sig,
                         const std::string& label) {
    int indegree = 0, outdegree = 0;
    ASSERT_EQ(nbr_pattern_neighbors_count(pattern, &indegree, &outdegree), NBR_SUCCESS);
    auto send = buffer_for(static_cast<std::size_t>(sig.send_count) * (alltoall ? outdegree : 1), sig.send_type, 0);
    fill(send, static_cast<int>(label.size()));
    const std::size_t recv_elements = static_cast<std::size_t>(sig.recv_count) * static_cast<std::size_t>(indegree);
    auto native = buffer_for(recv_elements, sig.recv_type, kSentinel);
    auto actual = native;
    MPI_Request request = MPI_REQUEST_NULL;
    nbr_request_t mine = nullptr;
    if (alltoall) {
        MPI_Ineighbor_alltoall(send.data(), sig.send_count, sig.send_type, native.data(), sig.recv_count, sig.recv_type,
                               graph, &request);
        ASSERT_EQ(nbr_ineighbor_alltoall(send.data(), sig.send_count, sig.send_type, actual.data(), sig.recv_count,
                                         sig.recv_type, pattern, &mine),
                  NBR_SUCCESS)
            << nbr_last_error();
    } else {
        MPI_Ineighbor_allgather(send.data(), sig.send_count, sig.send_type, native.data(), sig.recv_count,
                                sig.recv_type, graph, &request);
        ASSERT_EQ(nbr_ineighbor_allgather(send.data(), sig.send_count, sig.send_type, actual.data(), sig.recv_count,
                                          sig.recv_type, pattern, &mine),
                  NBR_SUCCESS)
            << nbr_last_error();
    }
    // Native first, then nbr: each completes on its own communicator.
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    ASSERT_EQ(nbr_wait(&mine), NBR_SUCCESS) << nbr_last_error();
    const std::string what =
        label + (alltoall ? " ialltoall " : " iallgather ") + sig.name + " on rank " + std::to_string(world_rank());
    if (!alltoall) {
        expect_same(native, actual, nullptr, graph, what);
        return;
    }
    auto standard = buffer_for(recv_elements, sig.recv_type, kSentinel);
    nbr::test::reference_alltoall(send.data(), sig.send_count, sig.send_type, standard.data(), sig.recv_count,
                                  sig.recv_type, graph);
    expect_same(native, actual, &standard, graph, what);
}

class ReplayApiTest : public nbr::test::StridedTypesTest {
protected:
    static std::vector<VariantTypes> variant_types() {
        return {
            {"char (64 KiB on some edges)", MPI_CHAR, 1, MPI_CHAR, 1, 65536},
            {"strided int6 -> int", strided_int6_, 1, MPI_INT, 6, 40},
            {"int -> strided int6", MPI_INT, 6, strided_int6_, 1, 40},
        };
    }

    static std::vector<Signature> signatures() {
        return {
            {"int x3", 3, MPI_INT, 3, MPI_INT},
            {"int x0", 0, MPI_INT, 0, MPI_INT},
            {"char x65536", 65536, MPI_CHAR, 65536, MPI_CHAR},
            {"strided double -> double x6", 3, strided_double2_, 6, MPI_DOUBLE},
        };
    }
};

TEST_F(ReplayApiTest, VariantsAndNonblockingMatchNativeOnEveryTopologyAndAlgorithm) {
    nbr::test::SharedTempDir tmp;
    const auto corpus = nbr::test::corpus_topologies();
    std::size_t replayed = 0;
    for (std::size_t t = 0; t < corpus.size(); ++t) {
        const auto& [name, topology] = corpus[t];
        SCOPED_TRACE(name);
        const auto dirs = nbr::test::compile_algorithms(tmp.path(), name, topology, nbr::test::corpus_sample(t));
        MPI_Comm graph = dist_graph(topology);
        for (const auto& dir : dirs) {
            const std::string label = dir.filename().string();
            nbr_pattern_t pattern = nullptr;
            ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
            for (bool alltoall : {false, true}) {
                for (const auto& types : variant_types()) {
                    for (Mode mode : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
                        compare_variant(graph, pattern, topology, alltoall, types, mode, label);
                    }
                }
                for (const auto& sig : signatures()) compare_nonblocking(graph, pattern, alltoall, sig, label);
            }
            EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS) << nbr_last_error();
            ++replayed;
        }
        MPI_Comm_free(&graph);
    }
    EXPECT_GE(corpus.size(), 8u) << "Moore, two random graphs, four matrices, awkward graphs";
    EXPECT_EQ(replayed, nbr::test::corpus_sample_size(corpus.size())) << "every algorithm on every topology";
    EXPECT_GE(replayed, corpus.size()) << "never fewer pairs than topologies (NBR_TEST_CORPUS_STRIDE)";
}

TEST_F(ReplayApiTest, NaivePatternsOnTopologyCommunicatorsMatchNativeThroughNbrsEngineToo) {
    // Blocking calls on an all-direct plan go to the native collective unless
    // NBR_REPLAY_NAIVE=1 (read at load): nbr's engine must deliver the same bytes.
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.7, 8});
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "naive");
    MPI_Comm graph = dist_graph(topology);
    setenv("NBR_REPLAY_NAIVE", "1", 1);
    nbr_pattern_t pattern = nullptr;
    const int code = nbr_load_pattern((tmp.path() / "naive").c_str(), graph, &pattern);
    unsetenv("NBR_REPLAY_NAIVE");
    ASSERT_EQ(code, NBR_SUCCESS) << nbr_last_error();
    for (bool alltoall : {false, true}) {
        for (const auto& types : variant_types()) {
            compare_variant(graph, pattern, topology, alltoall, types, Mode::blocking, "naive engine");
        }
        int indegree = 0, outdegree = 0;
        nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
        std::vector<int> send(static_cast<std::size_t>(3 * std::max(outdegree, 1)), world_rank());
        std::iota(send.begin(), send.end(), world_rank() * 100);
        std::vector<int> expected(static_cast<std::size_t>(3 * indegree) + 1, -1), actual(expected);
        if (alltoall) {
            MPI_Neighbor_alltoall(send.data(), 3, MPI_INT, expected.data(), 3, MPI_INT, graph);
            ASSERT_EQ(nbr_neighbor_alltoall(send.data(), 3, MPI_INT, actual.data(), 3, MPI_INT, pattern), NBR_SUCCESS);
        } else {
            MPI_Neighbor_allgather(send.data(), 3, MPI_INT, expected.data(), 3, MPI_INT, graph);
            ASSERT_EQ(nbr_neighbor_allgather(send.data(), 3, MPI_INT, actual.data(), 3, MPI_INT, pattern), NBR_SUCCESS);
        }
        EXPECT_EQ(actual, expected) << (alltoall ? "alltoall" : "allgather") << " on rank " << world_rank();
    }
    // Mismatched block sizes are rejected on both paths, before any message, by the ranks with
    // neighbors both ways; the others make no call (MPI leaves a side without neighbors any
    // count, and so does nbr: CountsOfASideWithoutNeighborsAreFreeAsInMpi).
    int indegree = 0, outdegree = 0;
    nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
    const bool both_ways = indegree > 0 && outdegree > 0;
    std::vector<int> buffer(64 * static_cast<std::size_t>(world_size()));
    if (both_ways) {
        EXPECT_EQ(nbr_neighbor_allgather(buffer.data(), 2, MPI_INT, buffer.data(), 3, MPI_INT, pattern),
                  NBR_ERR_DATATYPE);
    }
    nbr_pattern_t delegated = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "naive").c_str(), graph, &delegated), NBR_SUCCESS);
    if (both_ways) {
        EXPECT_EQ(nbr_neighbor_allgather(buffer.data(), 2, MPI_INT, buffer.data(), 3, MPI_INT, delegated),
                  NBR_ERR_DATATYPE);
    }
    EXPECT_EQ(nbr_pattern_free(&delegated), NBR_SUCCESS);
    EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    MPI_Comm_free(&graph);
}

/// One fixed-size call of `mode` on the pattern with the given counts of 3-int blocks (block
/// slot j of rank q holds q·1000 + 3j, +1, +2): the received ints, −1 where nothing was written.
std::vector<int> fixed_call(nbr_pattern_t pattern, bool alltoall, Mode mode, int send_count, int recv_count,
                            int indegree, int outdegree) {
    std::vector<int> send(static_cast<std::size_t>(3 * std::max(outdegree, 1)));
    std::iota(send.begin(), send.end(), world_rank() * 1000);
    std::vector<int> recv(static_cast<std::size_t>(3 * indegree) + 1, -1);
    nbr_request_t request = NBR_REQUEST_NULL;
    int code = NBR_SUCCESS;
    const auto* s = send.data();
    auto* r = recv.data();
    switch (mode) {
        case Mode::blocking:
            code = alltoall ? nbr_neighbor_alltoall(s, send_count, MPI_INT, r, recv_count, MPI_INT, pattern)
                            : nbr_neighbor_allgather(s, send_count, MPI_INT, r, recv_count, MPI_INT, pattern);
            break;
        case Mode::nonblocking:
            code = alltoall
                       ? nbr_ineighbor_alltoall(s, send_count, MPI_INT, r, recv_count, MPI_INT, pattern, &request)
                       : nbr_ineighbor_allgather(s, send_count, MPI_INT, r, recv_count, MPI_INT, pattern, &request);
            if (code == NBR_SUCCESS) code = nbr_wait(&request);
            break;
        case Mode::persistent:
            code =
                alltoall
                    ? nbr_neighbor_alltoall_init(s, send_count, MPI_INT, r, recv_count, MPI_INT, pattern, 0, &request)
                    : nbr_neighbor_allgather_init(s, send_count, MPI_INT, r, recv_count, MPI_INT, pattern, 0, &request);
            for (int round = 0; round < 2 && code == NBR_SUCCESS; ++round) {
                code = nbr_start(&request);
                if (code == NBR_SUCCESS) code = nbr_wait(&request);
            }
            if (code == NBR_SUCCESS) code = nbr_request_free(&request);
            break;
    }
    EXPECT_EQ(code, NBR_SUCCESS) << nbr_last_error();
    return recv;
}

TEST_F(ReplayApiTest, CountsOfASideWithoutNeighborsAreFreeAsInMpi) {
    // MPI matches a rank's send blocks with its out-neighbors' receive blocks and its receive
    // blocks with its in-neighbors' send blocks, so where a rank has no neighbors on one side
    // that side's count is free: mpi4py passes 0 there (its buffer is empty). A path
    // 0 → 1 → ... → P−2 and P−1 alone: rank 0 receives nothing, rank P−2 sends nothing, the
    // last rank neither (it passes its block size on the send side, as mpi4py does for
    // allgather). Every algorithm, every mode. The expected bytes are written out here: Open
    // MPI 4.1's own MPI_Neighbor_allgather returns at once where the receive count is 0,
    // sending nothing, so its out-neighbors would wait forever.
    const auto n = static_cast<std::uint32_t>(world_size());
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r + 2 < n; ++r) edges.push_back({r, r + 1});
    const auto topology = nbr::Topology::from_edges(n, edges);
    nbr::test::SharedTempDir tmp;
    const auto dirs = nbr::test::compile_every_algorithm(tmp.path(), "path", topology);
    MPI_Comm graph = dist_graph(topology);
    const auto r = static_cast<std::uint32_t>(world_rank());
    const int indegree = static_cast<int>(topology.in_neighbors(r).size());
    const int outdegree = static_cast<int>(topology.out_neighbors(r).size());
    std::vector<int> expected(static_cast<std::size_t>(3 * indegree) + 1, -1);
    for (int i = 0; i < 3 * indegree; ++i) expected[static_cast<std::size_t>(i)] = static_cast<int>(r - 1) * 1000 + i;
    for (const auto& dir : dirs) {
        SCOPED_TRACE(dir.filename().string());
        nbr_pattern_t pattern = nullptr;
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
        for (bool alltoall : {false, true}) {  // the one edge into r leaves r − 1 by its slot 0
            const int send_count = alltoall && outdegree == 0 && indegree > 0 ? 0 : 3;
            const int recv_count = indegree == 0 ? 0 : 3;
            for (Mode mode : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
                EXPECT_EQ(fixed_call(pattern, alltoall, mode, send_count, recv_count, indegree, outdegree), expected)
                    << (alltoall ? "alltoall " : "allgather ") << mode_name(mode) << " on rank " << r;
            }
        }
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    }
    MPI_Comm_free(&graph);
}

/// What MPI's fixed-size call delivers for fixed_call's send blocks: −1 where nothing lands
/// (alltoall: MPI-4.1's reference semantics, since MPICH 4.0's own mismatches duplicate edges).
std::vector<int> native_fixed_call(MPI_Comm graph, bool alltoall, int count, int indegree, int outdegree) {
    std::vector<int> send(static_cast<std::size_t>(3 * std::max(outdegree, 1)));
    std::iota(send.begin(), send.end(), world_rank() * 1000);
    std::vector<int> recv(static_cast<std::size_t>(3 * indegree) + 1, -1);
    if (alltoall) {
        nbr::test::reference_alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, graph);
    } else {
        MPI_Neighbor_allgather(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, graph);
    }
    return recv;
}

TEST_F(ReplayApiTest, ARankWithoutNeighborsNeedNotNameTheBlockSize) {
    // MPI leaves both counts of a rank without neighbors free (mpi4py passes 0 for its empty
    // buffers), so such a rank cannot tell the block size the others move: no plan it runs
    // may hold a message for it (relay and hierarchical lanes would route through it; the
    // load falls back to a candidate without, else naive's schedule), and where the others'
    // band or native hand-off depends on the size it must not matter. A random graph on all
    // ranks but the last, which has no neighbors and passes 0 on both sides; every algorithm,
    // every mode, compared with MPI's own call.
    const auto n = static_cast<std::uint32_t>(world_size());
    const auto active = nbr::generate_random({n - 1, 0.7, 5});
    std::vector<nbr::Edge> edges{{n - 2, 0}};  // relay forwards it through rank P − 1
    for (std::uint32_t u = 0; u + 1 < n; ++u) {
        for (const auto v : active.out_neighbors(u)) edges.push_back({u, v});
    }
    const auto topology = nbr::Topology::from_edges(n, edges);
    nbr::test::SharedTempDir tmp;
    const auto dirs = nbr::test::compile_every_algorithm(tmp.path(), "isolated", topology);
    MPI_Comm graph = dist_graph(topology);
    const auto r = static_cast<std::uint32_t>(world_rank());
    const int indegree = static_cast<int>(topology.in_neighbors(r).size());
    const int outdegree = static_cast<int>(topology.out_neighbors(r).size());
    const int count = r + 1 == n ? 0 : 3;
    for (const auto& dir : dirs) {
        SCOPED_TRACE(dir.filename().string());
        nbr_pattern_t pattern = nullptr;
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
        const char* fixed_variant = nullptr;
        const char* v_variant = nullptr;
        ASSERT_EQ(nbr_pattern_variant(pattern, NBR_ALLGATHER, 12, &fixed_variant), NBR_SUCCESS);
        ASSERT_EQ(nbr_pattern_variant(pattern, NBR_ALLGATHERV, 12, &v_variant), NBR_SUCCESS);
        if (dir.extension() == ".relay") {  // naive's schedule added for the fixed-size calls
            EXPECT_EQ(std::string(fixed_variant), "naive");
            EXPECT_EQ(std::string(v_variant), "test-relay");
        } else if (dir.extension() == ".hi3") {  // its lanes avoid rank P − 1 (nodes of 3)
            EXPECT_EQ(std::string(fixed_variant), "hierarchical");
        }
        for (bool alltoall : {false, true}) {
            const auto expected = native_fixed_call(graph, alltoall, count, indegree, outdegree);
            for (Mode mode : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
                EXPECT_EQ(fixed_call(pattern, alltoall, mode, count, count, indegree, outdegree), expected)
                    << (alltoall ? "alltoall " : "allgather ") << mode_name(mode) << " on rank " << r;
            }
        }
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    }
    MPI_Comm_free(&graph);
}

TEST_F(ReplayApiTest, OutstandingRequestsCompleteInReverseOrderBesideBlockingCallsAndUserMessages) {
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.6, 5});
    const auto dirs = nbr::test::compile_every_algorithm(tmp.path(), "random", topology);
    MPI_Comm graph = dist_graph(topology);
    const int n = world_size(), r = world_rank();
    const VariantTypes chars{"char", MPI_CHAR, 1, MPI_CHAR, 1, 65536};
    for (const auto& dir : dirs) {
        SCOPED_TRACE(dir.filename().string());
        nbr_pattern_t pattern = nullptr;
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
        int indegree = 0, outdegree = 0;
        nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
        // The application's own messages on the same communicator, same tag as nbr's first.
        int user_in = -1;
        const int user_out = r * 1000 + 7;
        MPI_Request user[2];
        MPI_Irecv(&user_in, 1, MPI_INT, (r + n - 1) % n, 0, graph, &user[0]);
        MPI_Isend(&user_out, 1, MPI_INT, (r + 1) % n, 0, graph, &user[1]);

        std::vector<int> ints(static_cast<std::size_t>(4 * std::max(outdegree, 1)));
        std::iota(ints.begin(), ints.end(), r * 100);
        std::vector<int> gathered(static_cast<std::size_t>(4 * indegree) + 1, -1), exchanged(gathered.size(), -1),
            blocking(gathered.size(), -1), persistent(gathered.size(), -1), again(gathered.size(), -1);
        VariantCall vall = variant_call(topology, true, chars, 1);
        VariantCall vgather = variant_call(topology, false, chars, 2);
        auto vall_out = buffer_for(vall.recv.elements, MPI_CHAR, kSentinel);
        auto vgather_out = buffer_for(vgather.recv.elements, MPI_CHAR, kSentinel);

        nbr_request_t persistent_request = nullptr;
        ASSERT_EQ(nbr_neighbor_alltoall_init(ints.data(), 2, MPI_INT, persistent.data(), 2, MPI_INT, pattern, 0,
                                             &persistent_request),
                  NBR_SUCCESS);
        nbr_request_t req[5] = {};
        ASSERT_EQ(nbr_ineighbor_allgather(ints.data(), 4, MPI_INT, gathered.data(), 4, MPI_INT, pattern, &req[0]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_ineighbor_alltoallv(vall.send_buffer.data(), vall.send.counts.data(), vall.send.displs.data(),
                                          MPI_CHAR, vall_out.data(), vall.recv.counts.data(), vall.recv.displs.data(),
                                          MPI_CHAR, pattern, &req[1]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_start(&persistent_request), NBR_SUCCESS);
        // A blocking call on the same pattern while three requests are in flight.
        ASSERT_EQ(nbr_neighbor_alltoall(ints.data(), 1, MPI_INT, blocking.data(), 1, MPI_INT, pattern), NBR_SUCCESS);
        ASSERT_EQ(nbr_ineighbor_allgatherv(vgather.send_buffer.data(), vgather.send.counts[0], MPI_CHAR,
                                           vgather_out.data(), vgather.recv.counts.data(), vgather.recv.displs.data(),
                                           MPI_CHAR, pattern, &req[2]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_ineighbor_alltoall(ints.data(), 3, MPI_INT, exchanged.data(), 3, MPI_INT, pattern, &req[3]),
                  NBR_SUCCESS);
        ASSERT_EQ(nbr_ineighbor_allgather(ints.data(), 1, MPI_INT, again.data(), 1, MPI_INT, pattern, &req[4]),
                  NBR_SUCCESS);
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_ERR_STATE) << "requests are outstanding";
        ASSERT_NE(pattern, nullptr);
        EXPECT_EQ(nbr_start(&req[4]), NBR_ERR_STATE) << "a nonblocking request cannot be started";

        // Complete in reverse order: wait, test until done, then waitall with a NULL entry.
        ASSERT_EQ(nbr_wait(&req[4]), NBR_SUCCESS) << nbr_last_error();
        req[4] = nullptr;
        int flag = 0;
        nbr_request_t pair[2] = {req[3], req[2]};
        while (!flag) ASSERT_EQ(nbr_testall(2, pair, &flag), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(pair[0], nullptr);
        EXPECT_EQ(pair[1], nullptr);
        nbr_request_t rest[4] = {req[1], nullptr, persistent_request, req[0]};
        ASSERT_EQ(nbr_waitall(4, rest), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(rest[0], nullptr);
        EXPECT_EQ(rest[2], persistent_request) << "persistent requests stay allocated";
        EXPECT_EQ(rest[3], nullptr);
        MPI_Waitall(2, user, MPI_STATUSES_IGNORE);
        EXPECT_EQ(user_in, ((r + n - 1) % n) * 1000 + 7);

        auto native_ints = [&](bool alltoall, int count, const std::vector<int>& got, const char* what) {
            std::vector<int> expected(got.size(), -1);
            if (alltoall) {
                MPI_Neighbor_alltoall(ints.data(), count, MPI_INT, expected.data(), count, MPI_INT, graph);
            } else {
                MPI_Neighbor_allgather(ints.data(), count, MPI_INT, expected.data(), count, MPI_INT, graph);
            }
            EXPECT_EQ(got, expected) << what << " on rank " << r;
        };
        native_ints(false, 4, gathered, "iallgather x4");
        native_ints(true, 3, exchanged, "ialltoall x3");
        native_ints(true, 1, blocking, "blocking alltoall x1");
        native_ints(true, 2, persistent, "persistent alltoall x2");
        native_ints(false, 1, again, "iallgather x1");
        EXPECT_TRUE(native_variant(vall, chars, Mode::blocking, graph) == vall_out) << "ialltoallv on rank " << r;
        EXPECT_TRUE(native_variant(vgather, chars, Mode::blocking, graph) == vgather_out)
            << "iallgatherv on rank " << r;
        EXPECT_EQ(nbr_request_free(&persistent_request), NBR_SUCCESS);
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS) << nbr_last_error();
    }
    MPI_Comm_free(&graph);
}

TEST_F(ReplayApiTest, CompletionCallsAcceptEmptyAndNullEntries) {
    int flag = 0;
    EXPECT_EQ(nbr_waitall(0, nullptr), NBR_SUCCESS);
    EXPECT_EQ(nbr_testall(0, nullptr, &flag), NBR_SUCCESS);
    EXPECT_EQ(flag, 1);
    nbr_request_t none[3] = {};
    EXPECT_EQ(nbr_waitall(3, none), NBR_SUCCESS);
    EXPECT_EQ(nbr_waitall(-1, none), NBR_ERR_ARG);
    EXPECT_EQ(nbr_testall(3, none, nullptr), NBR_ERR_ARG);
    EXPECT_EQ(nbr_wait(nullptr), NBR_ERR_ARG);
}

TEST_F(ReplayApiTest, PersistentVariantInitRejectsMismatchedCountsOnEveryRank) {
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.8, 9});
    const auto dirs = nbr::test::compile_every_algorithm(tmp.path(), "random", topology);
    const VariantTypes chars{"char", MPI_CHAR, 1, MPI_CHAR, 1, 100};
    for (const auto& dir : {dirs[0], dirs[2], dirs[4], dirs[6]}) {  // naive, cn2, dh1, kg3
        SCOPED_TRACE(dir.filename().string());
        nbr_pattern_t pattern = nullptr;
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), MPI_COMM_WORLD, &pattern), NBR_SUCCESS) << nbr_last_error();
        for (bool alltoall : {false, true}) {
            VariantCall call = variant_call(topology, alltoall, chars, 3);
            // The lowest rank with in-neighbors expects one byte more from its first one than sent.
            const bool has_in = call.recv.counts.size() > 1;
            int culprit = world_size();
            const int candidate = has_in ? world_rank() : world_size();
            MPI_Allreduce(&candidate, &culprit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            ASSERT_LT(culprit, world_size());
            const bool wrong = world_rank() == culprit;
            if (wrong) call.recv.counts[0] += 1;
            auto out = buffer_for(call.recv.elements + 1, MPI_CHAR, kSentinel);
            nbr_request_t request = nullptr;
            const int code = nbr_variant_request(call, chars, Mode::persistent, out, pattern, &request);
            EXPECT_EQ(code, wrong ? NBR_ERR_DATATYPE : NBR_ERR_REMOTE) << nbr_last_error();
            EXPECT_EQ(request, nullptr);
            if (wrong) {
                EXPECT_NE(std::string(nbr_last_error()).find("receive block 0"), std::string::npos);
            }
        }
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS) << "no request left behind";
    }
}

TEST_F(ReplayApiTest, MismatchedVariantCountsFailOnlyTheMismatchingRankWithoutHangingPeers) {
    // On the relay pattern over a complete graph, rank 0 receives origin 1's block (its
    // in-slot 0) forwarded by rank 2 in a staged message, whose in-band header carries the
    // size: rank 0 expects one byte more. Rank 0 reports NBR_ERR_DATATYPE after forwarding
    // what the others need; they succeed; the next call on the pattern is clean.
    nbr::test::SharedTempDir tmp;
    const auto n = static_cast<std::uint32_t>(world_size());
    const auto topology = nbr::generate_random({n, 1.0, 1});
    const auto dirs = nbr::test::compile_every_algorithm(tmp.path(), "complete", topology);
    const VariantTypes chars{"char", MPI_CHAR, 1, MPI_CHAR, 1, 100};
    nbr_pattern_t pattern = nullptr;  // on a plain communicator: nbr's engine for every call
    ASSERT_EQ(nbr_load_pattern(dirs[1].c_str(), MPI_COMM_WORLD, &pattern), NBR_SUCCESS) << nbr_last_error();
    MPI_Comm graph = dist_graph(topology);
    for (Mode mode : {Mode::blocking, Mode::nonblocking}) {
        VariantCall call = variant_call(topology, false, chars, 4);
        if (world_rank() == 0) call.recv.counts[0] += 1;  // the gap after each block holds it
        auto out = buffer_for(call.recv.elements, MPI_CHAR, kSentinel);
        int code = NBR_SUCCESS;
        if (mode == Mode::blocking) {
            code = nbr_neighbor_allgatherv(call.send_buffer.data(), call.send.counts[0], MPI_CHAR, out.data(),
                                           call.recv.counts.data(), call.recv.displs.data(), MPI_CHAR, pattern);
        } else {
            nbr_request_t request = nullptr;
            ASSERT_EQ(nbr_variant_request(call, chars, mode, out, pattern, &request), NBR_SUCCESS);
            code = nbr_wait(&request);
        }
        if (world_rank() == 0) {
            EXPECT_EQ(code, NBR_ERR_DATATYPE) << mode_name(mode);
            EXPECT_NE(std::string(nbr_last_error()).find("receive block 0"), std::string::npos) << nbr_last_error();
        } else {
            EXPECT_EQ(code, NBR_SUCCESS) << mode_name(mode) << ": " << nbr_last_error();
        }
        compare_variant(graph, pattern, topology, false, chars, mode, "relay after a mismatch");
    }
    EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    MPI_Comm_free(&graph);
}

TEST_F(ReplayApiTest, NullBuffersNullArraysBadTypesInPlaceAndStaleHandlesAreArgumentErrorsOnEveryAlgorithm) {
    // A complete graph: every rank sends and receives, so every rank sees the same error and
    // none enters the collective alone.
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 1.0, 1});
    const auto dirs = nbr::test::compile_every_algorithm(tmp.path(), "complete", topology);
    std::vector<int> buffer(4 * static_cast<std::size_t>(world_size()));
    std::vector<int> counts(static_cast<std::size_t>(world_size()), 1), displs(counts.size());
    std::iota(displs.begin(), displs.end(), 0);
    int* data = buffer.data();
    const auto expect_arg = [](int code, const char* needle, const std::string& what) {
        EXPECT_EQ(code, NBR_ERR_ARG) << what;
        EXPECT_NE(std::string(nbr_last_error()).find(needle), std::string::npos) << what << ": " << nbr_last_error();
    };
    nbr_pattern_t freed = NBR_PATTERN_NULL;  // the previous algorithm's pattern, freed
    for (const auto& dir : dirs) {
        const std::string label = dir.filename().string();
        nbr_pattern_t p = nullptr;
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), MPI_COMM_WORLD, &p), NBR_SUCCESS) << nbr_last_error();
        if (freed != NBR_PATTERN_NULL) {
            // A freed pattern's handle stays dead after a new pattern has taken its place.
            expect_arg(nbr_neighbor_alltoall(data, 1, MPI_INT, data, 1, MPI_INT, freed), "invalid pattern", label);
            EXPECT_NE(freed, p) << "a new pattern must not be named by a freed pattern's handle";
        }
        nbr_request_t r = nullptr;
        expect_arg(nbr_neighbor_allgather(nullptr, 1, MPI_INT, data, 1, MPI_INT, p), "sendbuf", label);
        expect_arg(nbr_neighbor_alltoall(data, 1, MPI_INT, nullptr, 1, MPI_INT, p), "recvbuf", label);
        expect_arg(nbr_ineighbor_alltoall(nullptr, 1, MPI_INT, data, 1, MPI_INT, p, &r), "sendbuf", label);
        expect_arg(nbr_neighbor_allgather_init(data, 1, MPI_INT, nullptr, 1, MPI_INT, p, 0, &r), "recvbuf", label);
        expect_arg(nbr_neighbor_allgatherv(nullptr, 1, MPI_INT, data, counts.data(), displs.data(), MPI_INT, p),
                   "sendbuf", label);
        expect_arg(nbr_ineighbor_alltoallv(data, counts.data(), displs.data(), MPI_INT, nullptr, counts.data(),
                                           displs.data(), MPI_INT, p, &r),
                   "recvbuf", label);
        expect_arg(nbr_neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, data, 1, MPI_INT, p), "MPI_IN_PLACE", label);
        MPI_Datatype uncommitted = MPI_DATATYPE_NULL;
        MPI_Type_contiguous(1, MPI_INT, &uncommitted);
        expect_arg(nbr_neighbor_alltoall(data, 1, uncommitted, data, 1, MPI_INT, p), "sendtype is not committed",
                   label);
        expect_arg(nbr_ineighbor_allgatherv(data, 1, MPI_INT, data, counts.data(), displs.data(), uncommitted, p, &r),
                   "recvtype is not committed", label);
        expect_arg(nbr_neighbor_alltoall_init(data, 1, uncommitted, data, 1, uncommitted, p, 0, &r), "not committed",
                   label);
        MPI_Type_free(&uncommitted);
        expect_arg(nbr_neighbor_allgatherv(data, 1, MPI_INT, data, nullptr, displs.data(), MPI_INT, p), "NULL", label);
        expect_arg(nbr_neighbor_alltoallv_init(data, counts.data(), nullptr, MPI_INT, data, counts.data(),
                                               displs.data(), MPI_INT, p, 0, &r),
                   "NULL", label);
        expect_arg(nbr_neighbor_allgather(data, 1, MPI_DATATYPE_NULL, data, 1, MPI_INT, p), "MPI_DATATYPE_NULL", label);
        expect_arg(nbr_neighbor_allgather(data, 1, MPI_INT, data, -1, MPI_INT, p), "negative", label);
        expect_arg(nbr_neighbor_allgather_init(data, 1, MPI_INT, data, 1, MPI_INT, p, 2, &r), "flags", label);
        EXPECT_EQ(r, nullptr);
        // Zero counts need no buffers.
        EXPECT_EQ(nbr_neighbor_allgather(nullptr, 0, MPI_INT, nullptr, 0, MPI_INT, p), NBR_SUCCESS) << label;
        // A released nonblocking request and a freed pattern are no longer handles.
        ASSERT_EQ(nbr_ineighbor_allgather(data, 1, MPI_INT, data + world_size(), 1, MPI_INT, p, &r), NBR_SUCCESS);
        nbr_request_t stale = r;
        ASSERT_EQ(nbr_wait(&r), NBR_SUCCESS);
        EXPECT_EQ(r, NBR_REQUEST_NULL) << "a completed nonblocking request is set to NBR_REQUEST_NULL";
        expect_arg(nbr_wait(&stale), "not live", label);
        // The next request reuses the released one's slot and object: the stale copy must
        // still name nothing, and must not complete the new request behind its back.
        int indegree = 0, outdegree = 0;
        ASSERT_EQ(nbr_pattern_neighbors_count(p, &indegree, &outdegree), NBR_SUCCESS);
        std::vector<int> sources(static_cast<std::size_t>(indegree)), destinations(static_cast<std::size_t>(outdegree));
        ASSERT_EQ(nbr_pattern_neighbors(p, indegree, sources.data(), outdegree, destinations.data()), NBR_SUCCESS);
        const int mine = 100 + world_rank();
        std::vector<int> got(sources.size(), -1);
        nbr_request_t next = NBR_REQUEST_NULL;
        ASSERT_EQ(nbr_ineighbor_allgather(&mine, 1, MPI_INT, got.data(), 1, MPI_INT, p, &next), NBR_SUCCESS);
        EXPECT_NE(next, stale) << "a new request must not be named by a released request's handle";
        expect_arg(nbr_wait(&stale), "not live", label);
        int flag = 0;
        expect_arg(nbr_test(&stale, &flag), "not live", label);
        expect_arg(nbr_start(&stale), "not live", label);
        expect_arg(nbr_request_free(&stale), "not live", label);
        nbr_request_t in_array[2] = {nullptr, stale};
        expect_arg(nbr_waitall(2, in_array), "requests[1]", label);
        expect_arg(nbr_testall(2, in_array, &flag), "requests[1]", label);
        ASSERT_EQ(nbr_wait(&next), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(next, NBR_REQUEST_NULL);
        for (std::size_t i = 0; i < sources.size(); ++i) EXPECT_EQ(got[i], 100 + sources[i]) << label;
        freed = p;
        ASSERT_EQ(nbr_pattern_free(&p), NBR_SUCCESS);
        EXPECT_EQ(p, NBR_PATTERN_NULL);
        expect_arg(nbr_neighbor_alltoall(data, 1, MPI_INT, data, 1, MPI_INT, freed), "invalid pattern", label);
        expect_arg(nbr_pattern_free(&freed), "not a live pattern", label);
    }
}

TEST_F(ReplayApiTest, VariantCountsDisplacementsAndNullHandlesAreArgumentErrors) {
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.8, 4});
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "p");
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "p").c_str(), MPI_COMM_WORLD, &pattern), NBR_SUCCESS);
    int indegree = 0, outdegree = 0;
    nbr_pattern_neighbors_count(pattern, &indegree, &outdegree);
    std::vector<int> counts(static_cast<std::size_t>(indegree + outdegree) + 1, 1), displs(counts.size());
    std::iota(displs.begin(), displs.end(), 0);
    std::vector<char> buffer(counts.size() + 64);
    nbr_request_t request = nullptr;
    if (indegree > 0) {
        EXPECT_EQ(nbr_neighbor_allgatherv(buffer.data(), 1, MPI_CHAR, buffer.data(), nullptr, displs.data(), MPI_CHAR,
                                          pattern),
                  NBR_ERR_ARG);
        EXPECT_NE(std::string(nbr_last_error()).find("NULL"), std::string::npos);
        counts[0] = -1;
        EXPECT_EQ(nbr_ineighbor_allgatherv(buffer.data(), 1, MPI_CHAR, buffer.data(), counts.data(), displs.data(),
                                           MPI_CHAR, pattern, &request),
                  NBR_ERR_ARG);
        EXPECT_NE(std::string(nbr_last_error()).find("recvcounts[0]"), std::string::npos);
        EXPECT_EQ(request, nullptr);
        counts[0] = 1;
    }
    if (outdegree > 0) {
        EXPECT_EQ(nbr_neighbor_alltoallv_init(buffer.data(), counts.data(), nullptr, MPI_CHAR, buffer.data(),
                                              counts.data(), displs.data(), MPI_CHAR, pattern, 0, &request),
                  NBR_ERR_ARG);
    }
    EXPECT_EQ(nbr_ineighbor_alltoall(buffer.data(), 1, MPI_CHAR, buffer.data(), 1, MPI_CHAR, pattern, nullptr),
              NBR_ERR_ARG);
    EXPECT_EQ(
        nbr_ineighbor_allgather(buffer.data(), 1, MPI_DATATYPE_NULL, buffer.data(), 1, MPI_CHAR, pattern, &request),
        NBR_ERR_ARG);
    EXPECT_EQ(nbr_ineighbor_allgather(buffer.data(), 1, MPI_CHAR, buffer.data(), 1, MPI_CHAR, nullptr, &request),
              NBR_ERR_ARG);
    EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
}

}  // namespace
