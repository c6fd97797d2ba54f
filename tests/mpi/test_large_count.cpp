// The large-count forms (nbr_*_c, MPI-4's MPI_Count and MPI_Aint arrays; built where the MPI
// library has them). Every collective in every mode delivers through its _c form what its int
// form delivers, on the replay corpus with several algorithms; counts above INT_MAX travel in
// direct messages, and a block above 2 GiB in a combined (staged) message.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr.h"
#include "replay_corpus.hpp"

namespace {

using nbr::test::world_rank;
using nbr::test::world_size;

constexpr int kSentinel = -3;
constexpr int kRegion = 8;  // ints per block region

enum class Kind { allgather, alltoall, allgatherv, alltoallv, alltoallw };
enum class Mode { blocking, nonblocking, persistent };

const char* kind_name(Kind k) {
    static const char* const names[] = {"allgather", "alltoall", "allgatherv", "alltoallv", "alltoallw"};
    return names[static_cast<int>(k)];
}

/// Ints in send block j of `rank` (alltoallv/w) and in its one block (allgatherv).
int block_ints(int rank, int j) {
    return (rank + j) % 4 + 1;
}
int gather_ints(int rank) {
    return rank % 3 + 1;
}

/// One rank's arguments, in both the int and the large-count arrays.
struct Args {
    std::vector<int> send;
    std::vector<int> scounts, sdispls, rcounts, rdispls;
    std::vector<MPI_Count> scounts_c, rcounts_c;
    std::vector<MPI_Aint> sdispls_c, rdispls_c, sbytes, rbytes;
    std::vector<MPI_Datatype> types;
    std::size_t recv_ints = 0;
};

/// Reversed regions of kRegion ints, every other shifted by one (gaps, out of order).
std::vector<int> regions(std::size_t blocks) {
    std::vector<int> displs(blocks + 1, 0);  // one spare entry: arrays are never empty
    for (std::size_t b = 0; b < blocks; ++b) {
        displs[b] = static_cast<int>(blocks - 1 - b) * kRegion + static_cast<int>(b % 2);
    }
    return displs;
}

Args make_args(const nbr::Topology& t) {
    const int r = world_rank();
    const auto me = static_cast<std::uint32_t>(r);
    const auto in = t.in_neighbors(me);
    const auto out = t.out_neighbors(me);
    Args a;
    a.send.resize(out.size() * kRegion + kRegion);
    for (std::size_t i = 0; i < a.send.size(); ++i) a.send[i] = r * 1000 + static_cast<int>(i);
    a.sdispls = regions(out.size());
    a.rdispls = regions(in.size());
    for (std::size_t j = 0; j < out.size(); ++j) a.scounts.push_back(block_ints(r, static_cast<int>(j)));
    // Receive slot i holds what its origin's matching out-edge carries (k-th edge <-> k-th edge).
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto k = std::count(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(i), in[i]);
        const auto theirs = t.out_neighbors(in[i]);
        std::ptrdiff_t seen = 0;
        for (std::size_t j = 0; j < theirs.size(); ++j) {
            if (theirs[j] == me && seen++ == k) {
                a.rcounts.push_back(block_ints(static_cast<int>(in[i]), static_cast<int>(j)));
            }
        }
    }
    a.scounts.push_back(0);
    a.rcounts.push_back(0);
    a.scounts_c.assign(a.scounts.begin(), a.scounts.end());
    a.rcounts_c.assign(a.rcounts.begin(), a.rcounts.end());
    a.sdispls_c.assign(a.sdispls.begin(), a.sdispls.end());
    a.rdispls_c.assign(a.rdispls.begin(), a.rdispls.end());
    for (const int d : a.sdispls) a.sbytes.push_back(static_cast<MPI_Aint>(d) * static_cast<MPI_Aint>(sizeof(int)));
    for (const int d : a.rdispls) a.rbytes.push_back(static_cast<MPI_Aint>(d) * static_cast<MPI_Aint>(sizeof(int)));
    a.types.assign(std::max(in.size(), out.size()) + 1, MPI_INT);
    a.recv_ints = in.size() * kRegion + kRegion;
    return a;
}

/// The receive counts of allgatherv: each in-neighbor's one block.
std::vector<int> gather_counts(const nbr::Topology& t) {
    std::vector<int> counts;
    for (const auto s : t.in_neighbors(static_cast<std::uint32_t>(world_rank()))) {
        counts.push_back(gather_ints(static_cast<int>(s)));
    }
    counts.push_back(0);
    return counts;
}

/// Starts (or runs) one call; `large`: its _c form.
int start(Kind k, Mode m, bool large, Args& a, const std::vector<int>& gcounts, int* recv, nbr_pattern_t p,
          nbr_request_t* q) {
    const int* s = a.send.data();
    const std::vector<MPI_Count> gcounts_c(gcounts.begin(), gcounts.end());
    const int gsend = gather_ints(world_rank());
    const bool b = m == Mode::blocking, n = m == Mode::nonblocking;
    switch (k) {
        case Kind::allgather:
            if (large) {
                return b   ? nbr_neighbor_allgather_c(s, 3, MPI_INT, recv, 3, MPI_INT, p)
                       : n ? nbr_ineighbor_allgather_c(s, 3, MPI_INT, recv, 3, MPI_INT, p, q)
                           : nbr_neighbor_allgather_init_c(s, 3, MPI_INT, recv, 3, MPI_INT, p, 0, q);
            }
            return b   ? nbr_neighbor_allgather(s, 3, MPI_INT, recv, 3, MPI_INT, p)
                   : n ? nbr_ineighbor_allgather(s, 3, MPI_INT, recv, 3, MPI_INT, p, q)
                       : nbr_neighbor_allgather_init(s, 3, MPI_INT, recv, 3, MPI_INT, p, 0, q);
        case Kind::alltoall:
            if (large) {
                return b   ? nbr_neighbor_alltoall_c(s, 2, MPI_INT, recv, 2, MPI_INT, p)
                       : n ? nbr_ineighbor_alltoall_c(s, 2, MPI_INT, recv, 2, MPI_INT, p, q)
                           : nbr_neighbor_alltoall_init_c(s, 2, MPI_INT, recv, 2, MPI_INT, p, 0, q);
            }
            return b   ? nbr_neighbor_alltoall(s, 2, MPI_INT, recv, 2, MPI_INT, p)
                   : n ? nbr_ineighbor_alltoall(s, 2, MPI_INT, recv, 2, MPI_INT, p, q)
                       : nbr_neighbor_alltoall_init(s, 2, MPI_INT, recv, 2, MPI_INT, p, 0, q);
        case Kind::allgatherv: {
            const MPI_Count* rc = gcounts_c.data();
            const MPI_Aint* rd = a.rdispls_c.data();
            if (large) {
                return b   ? nbr_neighbor_allgatherv_c(s, gsend, MPI_INT, recv, rc, rd, MPI_INT, p)
                       : n ? nbr_ineighbor_allgatherv_c(s, gsend, MPI_INT, recv, rc, rd, MPI_INT, p, q)
                           : nbr_neighbor_allgatherv_init_c(s, gsend, MPI_INT, recv, rc, rd, MPI_INT, p, 0, q);
            }
            const int* c = gcounts.data();
            const int* d = a.rdispls.data();
            return b   ? nbr_neighbor_allgatherv(s, gsend, MPI_INT, recv, c, d, MPI_INT, p)
                   : n ? nbr_ineighbor_allgatherv(s, gsend, MPI_INT, recv, c, d, MPI_INT, p, q)
                       : nbr_neighbor_allgatherv_init(s, gsend, MPI_INT, recv, c, d, MPI_INT, p, 0, q);
        }
        case Kind::alltoallv:
            if (large) {
                const MPI_Count *sc = a.scounts_c.data(), *rc = a.rcounts_c.data();
                const MPI_Aint *sd = a.sdispls_c.data(), *rd = a.rdispls_c.data();
                return b   ? nbr_neighbor_alltoallv_c(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p)
                       : n ? nbr_ineighbor_alltoallv_c(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p, q)
                           : nbr_neighbor_alltoallv_init_c(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p, 0, q);
            } else {
                const int *sc = a.scounts.data(), *rc = a.rcounts.data();
                const int *sd = a.sdispls.data(), *rd = a.rdispls.data();
                return b   ? nbr_neighbor_alltoallv(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p)
                       : n ? nbr_ineighbor_alltoallv(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p, q)
                           : nbr_neighbor_alltoallv_init(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p, 0, q);
            }
        case Kind::alltoallw: {
            const MPI_Aint *sd = a.sbytes.data(), *rd = a.rbytes.data();
            const MPI_Datatype* t = a.types.data();
            if (large) {
                const MPI_Count *sc = a.scounts_c.data(), *rc = a.rcounts_c.data();
                return b   ? nbr_neighbor_alltoallw_c(s, sc, sd, t, recv, rc, rd, t, p)
                       : n ? nbr_ineighbor_alltoallw_c(s, sc, sd, t, recv, rc, rd, t, p, q)
                           : nbr_neighbor_alltoallw_init_c(s, sc, sd, t, recv, rc, rd, t, p, 0, q);
            }
            const int *sc = a.scounts.data(), *rc = a.rcounts.data();
            return b   ? nbr_neighbor_alltoallw(s, sc, sd, t, recv, rc, rd, t, p)
                   : n ? nbr_ineighbor_alltoallw(s, sc, sd, t, recv, rc, rd, t, p, q)
                       : nbr_neighbor_alltoallw_init(s, sc, sd, t, recv, rc, rd, t, p, 0, q);
        }
    }
    return NBR_ERR_INTERNAL;
}

std::vector<int> replay(Kind k, Mode m, bool large, Args& a, const std::vector<int>& gcounts, nbr_pattern_t p) {
    std::vector<int> recv(a.recv_ints + 64, kSentinel);  // fixed-size blocks fit in the regions
    nbr_request_t q = NBR_REQUEST_NULL;
    EXPECT_EQ(start(k, m, large, a, gcounts, recv.data(), p, &q), NBR_SUCCESS) << nbr_last_error();
    if (m == Mode::nonblocking) {
        EXPECT_EQ(nbr_wait(&q), NBR_SUCCESS) << nbr_last_error();
    }
    if (m == Mode::persistent) {
        EXPECT_EQ(nbr_start(&q), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(nbr_wait(&q), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(nbr_request_free(&q), NBR_SUCCESS);
    }
    return recv;
}

TEST(LargeCount, EveryFormDeliversWhatItsIntFormDelivers) {
    nbr::test::SharedTempDir tmp;
    const auto cases = nbr::test::corpus_topologies();
    const std::size_t others = nbr::test::corpus_algorithms().size() - 1;
    std::size_t checked = 0;
    for (std::size_t c = 0; c < cases.size(); ++c) {
        SCOPED_TRACE(cases[c].name);
        const auto dirs =
            nbr::test::compile_algorithms(tmp.path(), cases[c].name, cases[c].topology, {0, 1 + c % others});
        MPI_Comm graph = nbr::test::dist_graph(cases[c].topology);
        Args args = make_args(cases[c].topology);
        const auto gcounts = gather_counts(cases[c].topology);
        for (const auto& dir : dirs) {
            nbr_pattern_t pattern = nullptr;
            ASSERT_EQ(nbr_load_pattern(dir.c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
            for (Kind k : {Kind::allgather, Kind::alltoall, Kind::allgatherv, Kind::alltoallv, Kind::alltoallw}) {
                for (Mode m : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
                    const auto want = replay(k, m, false, args, gcounts, pattern);
                    EXPECT_EQ(replay(k, m, true, args, gcounts, pattern), want)
                        << dir.filename().string() << " " << kind_name(k) << "_c mode " << static_cast<int>(m);
                    ++checked;
                }
            }
            nbr_pattern_free(&pattern);
        }
        MPI_Comm_free(&graph);
    }
    EXPECT_EQ(checked, cases.size() * 2 * 5 * 3);
}

TEST(LargeCount, CountsAreCheckedBeforeAnythingIsSized) {
    nbr::test::SharedTempDir tmp;
    // Two edges each way between ranks 0 and 1.
    const std::vector<std::vector<std::uint32_t>> lists = {{1, 1}, {0, 0}};
    const auto topology = nbr::Topology::from_adjacency(lists, lists);
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "ring");
    MPI_Comm ring = nbr::test::dist_graph(topology);
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "ring").c_str(), ring, &pattern), NBR_SUCCESS) << nbr_last_error();
    MPI_Datatype huge = MPI_DATATYPE_NULL;  // 2^40 bytes per element: 2^24 elements overflow
    MPI_Type_contiguous(1 << 20, MPI_BYTE, &huge);
    MPI_Datatype huger = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(1 << 20, huge, &huger);
    MPI_Type_commit(&huger);
    char byte = 0;
    const MPI_Count counts[2] = {MPI_Count{1} << 24, 1};
    const MPI_Aint displs[2] = {0, 0};
    EXPECT_EQ(nbr_neighbor_alltoallv_c(&byte, counts, displs, huger, &byte, counts, displs, huger, pattern),
              NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("block 0 would hold more bytes than memory can address"),
              std::string::npos)
        << nbr_last_error();
    const MPI_Count negative[2] = {1, -1};
    EXPECT_EQ(nbr_neighbor_alltoallv_c(&byte, negative, displs, MPI_BYTE, &byte, counts, displs, MPI_BYTE, pattern),
              NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("sendcounts[1] is negative"), std::string::npos) << nbr_last_error();
    EXPECT_EQ(nbr_neighbor_allgather_c(&byte, -1, MPI_BYTE, &byte, 1, MPI_BYTE, pattern), NBR_ERR_ARG);
    MPI_Type_free(&huge);
    MPI_Type_free(&huger);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&ring);
}

/// Bytes of memory available to new processes, from /proc/meminfo (0 if unknown).
std::uint64_t available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemAvailable:") return kib * 1024;
    }
    return 0;
}

/// Fills `bytes` bytes with a pattern of period 251 (a prime: a block shifted by anything but a
/// multiple of 251 bytes differs), by doubling copies.
void fill_pattern(unsigned char* data, std::uint64_t bytes) {
    for (std::uint64_t i = 0; i < 251 && i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + 1);
    for (std::uint64_t done = 251; done < bytes; done *= 2)
        std::memcpy(data + done, data, std::min(done, bytes - done));
}

/// Whether `data` holds fill_pattern's bytes.
bool has_pattern(const unsigned char* data, std::uint64_t bytes) {
    std::vector<unsigned char> reference(251 * 4096);
    fill_pattern(reference.data(), reference.size());
    for (std::uint64_t at = 0; at < bytes; at += reference.size()) {
        if (std::memcmp(data + at, reference.data(), std::min<std::uint64_t>(reference.size(), bytes - at)) != 0) {
            return false;
        }
    }
    return true;
}

/// `edges` edges from rank 0 to rank 1 (duplicates when more than one).
nbr::Topology edges_0_to_1(std::size_t edges) {
    std::vector<std::vector<std::uint32_t>> in(2), out(2);
    out[0].assign(edges, 1);
    in[1].assign(edges, 0);
    return nbr::Topology::from_adjacency(in, out);
}

TEST(LargeCount, CountsAboveIntMaxTravelDirectly) {
    // More than INT_MAX elements of a datatype of size 0 in the naive pattern's direct messages
    // (nbr's engine, not MPI's collective): MPI_Isend_c and MPI_Irecv_c of the user's block.
    ASSERT_EQ(world_size(), 2);
    nbr::test::SharedTempDir tmp;
    nbr::test::compile_to(MPI_COMM_WORLD, edges_0_to_1(1), tmp.path() / "naive");
    MPI_Comm graph = nbr::test::dist_graph(edges_0_to_1(1));
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern_flags((tmp.path() / "naive").c_str(), graph, NBR_LOAD_NO_NATIVE, &pattern), NBR_SUCCESS)
        << nbr_last_error();
    MPI_Datatype empty = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    const MPI_Count count = MPI_Count{INT_MAX} + 5;
    const MPI_Aint zero = 0;
    int send = 1, recv = 2;
    EXPECT_EQ(nbr_neighbor_alltoall_c(&send, count, empty, &recv, count, empty, pattern), NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(nbr_neighbor_alltoallv_c(&send, &count, &zero, empty, &recv, &count, &zero, empty, pattern), NBR_SUCCESS)
        << nbr_last_error();
    nbr_request_t request = NBR_REQUEST_NULL;
    EXPECT_EQ(nbr_ineighbor_allgather_c(&send, count, empty, &recv, count, empty, pattern, &request), NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
    EXPECT_EQ(recv, 2);
    MPI_Type_free(&empty);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&graph);
}

TEST(LargeCount, BlocksAboveTwoGibibytesTravelInCombinedMessages) {
    // Rank 0 sends rank 1 a block of 2^31 + 24 bytes and one of 8 on a duplicate edge; the
    // hierarchical pattern with one rank per node combines them into one staged message (more
    // than INT_MAX bytes, sizes in band) that rank 1 unpacks into its two receive blocks.
    constexpr std::uint64_t kBig = (std::uint64_t{1} << 31) + 24, kTotal = kBig + 8;
    ASSERT_EQ(world_size(), 2);
    int enough = std::getenv("NBR_SANITIZED") == nullptr && available_bytes() > (std::uint64_t{11} << 30) ? 1 : 0;
    MPI_Bcast(&enough, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (enough == 0) GTEST_SKIP() << "needs 11 GiB of free memory and no sanitizer";
    nbr::test::SharedTempDir tmp;
    const auto topology = edges_0_to_1(2);
    nbr::compiler::compile(MPI_COMM_WORLD, topology,
                           nbr::test::hierarchical_options(tmp.path() / "hier", nbr::Placement::block(2, 1, 1)));
    MPI_Comm graph = nbr::test::dist_graph(topology);
    const int r = world_rank();
    // Not zeroed on allocation: only what is written is touched.
    const std::unique_ptr<unsigned char[]> send(new unsigned char[r == 0 ? kTotal : 1]);
    const std::unique_ptr<unsigned char[]> recv(new unsigned char[r == 1 ? kTotal : 1]);
    if (r == 0) fill_pattern(send.get(), kTotal);
    // recv stays untouched until the call writes it: fresh pages hold zeros, not the pattern
    // (touching 2 GiB twice costs seconds of page faults on a virtual machine).
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "hier").c_str(), graph, &pattern), NBR_SUCCESS) << nbr_last_error();
    const MPI_Count counts[2] = {static_cast<MPI_Count>(kBig), 8};
    const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(kBig)};
    EXPECT_EQ(
        nbr_neighbor_alltoallv_c(send.get(), counts, displs, MPI_BYTE, recv.get(), counts, displs, MPI_BYTE, pattern),
        NBR_SUCCESS)
        << nbr_last_error();
    if (r == 1) {
        EXPECT_TRUE(has_pattern(recv.get(), kTotal)) << "wrong bytes on rank 1";
    }
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&graph);
}

}  // namespace
