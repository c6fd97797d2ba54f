// Cartesian communicators of every shape: 2-D grids of every factorization of the process
// count, 3-D ones with their extents out of order (extents 1, 2, 3 and more at 6 processes;
// 1, 2 and 4 at 4), with every combination of periodic and non-periodic dimensions. nbr's four
// collectives in all three modes deliver exactly what the MPI-4.1 reference code (§8.6: per
// dimension, a Sendrecv each way) and MPI's native blocking collective deliver: MPI_PROC_NULL
// slots untouched, and in periodic dimensions of extent 1 or 2 the block sent towards the
// negative neighbor in that neighbor's positive slot.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr.h"
#include "nbr/graphs/generators.hpp"
#include "replay_corpus.hpp"

namespace {

using nbr::test::world_rank;
using nbr::test::world_size;

constexpr int kSentinel = -7;
constexpr int kSlot = 4;  // ints reserved per receive slot (blocks hold at most 3)

struct Grid {
    std::vector<int> dims;
    std::vector<int> periods;

    /// A periodic dimension of extent 1 or 2: one rank both ways, blocks delivered crosswise.
    [[nodiscard]] bool crosswise() const {
        for (std::size_t d = 0; d < dims.size(); ++d) {
            if (periods[d] != 0 && dims[d] <= 2) return true;
        }
        return false;
    }
    [[nodiscard]] std::string name() const {
        std::string out = "cart";
        for (std::size_t d = 0; d < dims.size(); ++d) {
            out += (d ? "x" : "") + std::to_string(dims[d]) + (periods[d] ? "p" : "");
        }
        return out;
    }
};

/// The 2-D factorizations of n and the 3-D ones whose extents are neither ascending nor
/// descending, each with every combination of periods.
std::vector<Grid> grids(int n) {
    std::vector<std::vector<int>> shapes;
    for (int a = 1; a <= n; ++a) {
        if (n % a == 0) shapes.push_back({a, n / a});
    }
    for (int a = 1; a <= n; ++a) {
        for (int b = 1; a * b <= n; ++b) {
            const int c = n / (a * b);
            const bool monotone = (a <= b && b <= c) || (a >= b && b >= c);
            if (a * b * c == n && !monotone) shapes.push_back({a, b, c});
        }
    }
    std::vector<Grid> out;
    for (const auto& shape : shapes) {
        for (int mask = 0; mask < (1 << shape.size()); ++mask) {
            Grid grid{shape, {}};
            for (std::size_t d = 0; d < shape.size(); ++d) grid.periods.push_back((mask >> d) & 1);
            out.push_back(grid);
        }
    }
    return out;
}

/// What one rank passes to one collective: send blocks of 0-2 ints (v-variants) or 2 ints, and
/// receive slots of kSlot ints, each with the count its origin sends (3 at MPI_PROC_NULL).
struct Call {
    bool alltoall = false;
    bool variable = false;
    std::vector<int> send, send_counts, send_displs;
    std::vector<int> recv_counts, recv_displs;
    int send_count = 2;
    [[nodiscard]] std::string name() const {
        return std::string(alltoall ? "alltoall" : "allgather") + (variable ? "v" : "");
    }
};

int block_count(int rank, int block) {
    return (rank + 2 * block) % 3;
}

Call make_call(MPI_Comm cart, bool alltoall, bool variable) {
    int ndims = 0;
    MPI_Cartdim_get(cart, &ndims);
    const int slots = 2 * ndims, r = world_rank();
    Call call;
    call.alltoall = alltoall;
    call.variable = variable;
    call.send_count = variable && !alltoall ? r % 3 : 2;
    call.send.resize(static_cast<std::size_t>(slots * kSlot) + 1);
    for (std::size_t i = 0; i < call.send.size(); ++i) call.send[i] = r * 1000 + static_cast<int>(i);
    for (int j = 0; j < slots; ++j) {
        call.send_counts.push_back(variable ? block_count(r, j) : 2);
        call.send_displs.push_back(j * kSlot + j % 2);
        call.recv_displs.push_back(slots * kSlot - (j + 1) * kSlot);  // reversed, with gaps
    }
    for (int d = 0; d < ndims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        MPI_Cart_shift(cart, d, 1, &source, &dest);
        // Slot 2d holds what the negative neighbor sent towards its positive side, and so on.
        const auto count = [&](int peer, int their_block) {
            if (peer == MPI_PROC_NULL) return 3;
            if (!variable) return 2;
            return alltoall ? block_count(peer, their_block) : peer % 3;
        };
        call.recv_counts.push_back(count(source, 2 * d + 1));
        call.recv_counts.push_back(count(dest, 2 * d));
    }
    return call;
}

std::vector<int> fresh_recv(const Call& call) {
    return std::vector<int>(call.recv_counts.size() * kSlot + 1, kSentinel);
}

/// MPI-4.1 §8.6's reference code for a Cartesian communicator, with counts and displacements.
std::vector<int> reference(MPI_Comm cart, const Call& call) {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(cart, &comm);
    int ndims = 0;
    MPI_Cartdim_get(comm, &ndims);
    auto recv = fresh_recv(call);
    const auto block = [&](int j) { return call.send.data() + (call.alltoall ? call.send_displs[j] : 0); };
    const auto count = [&](int j) { return call.alltoall ? call.send_counts[j] : call.send_count; };
    for (int d = 0; d < ndims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        MPI_Cart_shift(comm, d, 1, &source, &dest);
        const int neg = 2 * d, pos = 2 * d + 1;
        MPI_Sendrecv(block(neg), count(neg), MPI_INT, source, 0, recv.data() + call.recv_displs[pos],
                     call.recv_counts[pos], MPI_INT, dest, 0, comm, MPI_STATUS_IGNORE);
        MPI_Sendrecv(block(pos), count(pos), MPI_INT, dest, 0, recv.data() + call.recv_displs[neg],
                     call.recv_counts[neg], MPI_INT, source, 0, comm, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&comm);
    return recv;
}

/// A fixed-size call's buffers: its blocks of 2, consecutive, and a receive buffer for them.
struct Packed {
    std::vector<int> send, recv;

    explicit Packed(const Call& c) : send(2 * c.send_counts.size() + 1), recv(2 * c.recv_counts.size() + 1, kSentinel) {
        for (std::size_t j = 0; j < c.send_counts.size(); ++j) {
            std::copy_n(c.send.data() + (c.alltoall ? c.send_displs[j] : 0), 2, send.data() + 2 * j);
        }
    }
    /// The received blocks placed into the slot layout, for comparison.
    void unpack(const Call& c, std::vector<int>& out) const {
        for (std::size_t i = 0; i < c.recv_counts.size(); ++i) {
            std::copy_n(recv.data() + 2 * i, std::min(2, c.recv_counts[i]), out.data() + c.recv_displs[i]);
        }
    }
};

/// MPI's own blocking collective.
std::vector<int> native(MPI_Comm cart, const Call& c) {
    auto recv = fresh_recv(c);
    const int* sc = c.send_counts.data();
    const int* sd = c.send_displs.data();
    const int* rc = c.recv_counts.data();
    const int* rd = c.recv_displs.data();
    if (c.variable && c.alltoall) {
        MPI_Neighbor_alltoallv(c.send.data(), sc, sd, MPI_INT, recv.data(), rc, rd, MPI_INT, cart);
    } else if (c.variable) {
        MPI_Neighbor_allgatherv(c.send.data(), c.send_count, MPI_INT, recv.data(), rc, rd, MPI_INT, cart);
    } else {
        Packed packed(c);
        if (c.alltoall) {
            MPI_Neighbor_alltoall(packed.send.data(), 2, MPI_INT, packed.recv.data(), 2, MPI_INT, cart);
        } else {
            MPI_Neighbor_allgather(packed.send.data(), 2, MPI_INT, packed.recv.data(), 2, MPI_INT, cart);
        }
        packed.unpack(c, recv);
    }
    return recv;
}

enum class Mode { blocking, nonblocking, persistent };

const char* mode_name(Mode mode) {
    return mode == Mode::blocking ? "blocking" : mode == Mode::nonblocking ? "nonblocking" : "persistent";
}

/// Starts (or, blocking, runs) one call on the pattern; returns nbr's code.
int start_call(const Call& c, const int* send, int* recv, nbr_pattern_t p, Mode mode, nbr_request_t* request) {
    const int* sc = c.send_counts.data();
    const int* sd = c.send_displs.data();
    const int* rc = c.recv_counts.data();
    const int* rd = c.recv_displs.data();
    const int n = c.send_count;
    if (c.variable && c.alltoall) {
        if (mode == Mode::blocking) return nbr_neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p);
        if (mode == Mode::nonblocking) {
            return nbr_ineighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p, request);
        }
        return nbr_neighbor_alltoallv_init(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, p, 0, request);
    }
    if (c.variable) {
        if (mode == Mode::blocking) return nbr_neighbor_allgatherv(send, n, MPI_INT, recv, rc, rd, MPI_INT, p);
        if (mode == Mode::nonblocking)
            return nbr_ineighbor_allgatherv(send, n, MPI_INT, recv, rc, rd, MPI_INT, p, request);
        return nbr_neighbor_allgatherv_init(send, n, MPI_INT, recv, rc, rd, MPI_INT, p, 0, request);
    }
    if (c.alltoall) {
        if (mode == Mode::blocking) return nbr_neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, p);
        if (mode == Mode::nonblocking) return nbr_ineighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, p, request);
        return nbr_neighbor_alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, p, 0, request);
    }
    if (mode == Mode::blocking) return nbr_neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, p);
    if (mode == Mode::nonblocking) return nbr_ineighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, p, request);
    return nbr_neighbor_allgather_init(send, 2, MPI_INT, recv, 2, MPI_INT, p, 0, request);
}

/// nbr's result of one call in one mode, in the slot layout (persistent: the second start).
std::vector<int> replay(const Call& c, nbr_pattern_t pattern, Mode mode) {
    auto recv = fresh_recv(c);
    Packed packed(c);  // fixed-size calls: consecutive blocks of 2
    const int* send = c.variable ? c.send.data() : packed.send.data();
    int* target = c.variable ? recv.data() : packed.recv.data();
    nbr_request_t request = NBR_REQUEST_NULL;
    EXPECT_EQ(start_call(c, send, target, pattern, mode, &request), NBR_SUCCESS) << nbr_last_error();
    if (mode == Mode::nonblocking) {
        EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
    }
    if (mode == Mode::persistent) {
        for (int round = 0; round < 2; ++round) {
            EXPECT_EQ(nbr_start(&request), NBR_SUCCESS) << nbr_last_error();
            EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
        }
        EXPECT_EQ(nbr_request_free(&request), NBR_SUCCESS);
    }
    if (!c.variable) {
        packed.unpack(c, recv);
        EXPECT_EQ(packed.recv.back(), kSentinel) << "wrote past the receive buffer";
    }
    return recv;
}

/// The lists MPI reports (MPI_Cart_shift), MPI_PROC_NULL left out, gathered from every rank.
nbr::Topology reported_topology(MPI_Comm cart) {
    int ndims = 0;
    MPI_Cartdim_get(cart, &ndims);
    std::vector<int> mine;
    for (int d = 0; d < ndims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        MPI_Cart_shift(cart, d, 1, &source, &dest);
        for (int peer : {source, dest}) {
            if (peer != MPI_PROC_NULL) mine.push_back(peer);
        }
    }
    return nbr::test::topology_of_symmetric_lists(mine);
}

TEST(Cartesian, EveryShapeAndPeriodicityReplaysAsMpiDefines) {
    nbr::test::SharedTempDir tmp;
    const auto all = grids(world_size());
    std::size_t checked = 0;
    for (std::size_t g = 0; g < all.size(); ++g) {
        const Grid& grid = all[g];
        SCOPED_TRACE(grid.name());
        MPI_Comm cart = MPI_COMM_NULL;
        MPI_Cart_create(MPI_COMM_WORLD, static_cast<int>(grid.dims.size()), grid.dims.data(), grid.periods.data(), 0,
                        &cart);
        // The generator gives exactly MPI's lists.
        nbr::CartParams params;
        params.dims.assign(grid.dims.begin(), grid.dims.end());
        params.periods.assign(grid.periods.begin(), grid.periods.end());
        const nbr::Topology topology = nbr::generate_cart(params);
        ASSERT_EQ(topology.hash(), reported_topology(cart).hash()) << "nbrc gen cart differs from MPI_Cart_shift";
        // naive on every grid; the other eleven configurations two at a time, in turn (each on
        // five grids or more).
        const std::size_t others = nbr::test::corpus_algorithms().size() - 1;
        const auto dirs = nbr::test::compile_algorithms(tmp.path(), grid.name(), topology,
                                                        {0, 1 + 2 * g % others, 1 + (2 * g + 1) % others});
        for (bool alltoall : {false, true}) {
            for (bool variable : {false, true}) {
                const Call call = make_call(cart, alltoall, variable);
                const auto standard = reference(cart, call);
                // MPICH 4.0's alltoall(v) delivers a periodic extent 1 or 2 in list order, not
                // crosswise (fixed upstream in pmodels/mpich#7945); nothing else may differ.
                if (!(alltoall && grid.crosswise() && nbr::test::is_mpich())) {
                    EXPECT_EQ(native(cart, call), standard) << call.name() << ": MPI's native collective on rank "
                                                            << world_rank() << " differs from MPI-4.1's reference";
                }
                for (const auto& dir : dirs) {
                    nbr_pattern_t pattern = nullptr;
                    ASSERT_EQ(nbr_load_pattern(dir.c_str(), cart, &pattern), NBR_SUCCESS) << nbr_last_error();
                    for (Mode mode : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
                        EXPECT_EQ(replay(call, pattern, mode), standard)
                            << dir.filename().string() << " " << call.name() << " " << mode_name(mode) << " on rank "
                            << world_rank();
                        ++checked;
                    }
                    nbr_pattern_free(&pattern);
                }
            }
        }
        MPI_Comm_free(&cart);
    }
    EXPECT_EQ(checked, all.size() * 4 * 3 * 3);
}

TEST(Cartesian, PatternsBuiltInTheJobReplayAsMpiDefines) {
    // nbr_pattern_build on grids with a crosswise and a non-periodic dimension: the lists it
    // gathers leave MPI_PROC_NULL out, and the built pattern replays as MPI-4.1 defines.
    nbr::test::SharedTempDir tmp;
    std::vector<int> dims(2, 0);
    MPI_Dims_create(world_size(), 2, dims.data());
    int built = 0;
    for (const auto& periods : {std::vector<int>{1, 0}, std::vector<int>{0, 1}}) {
        const Grid grid{dims, periods};
        SCOPED_TRACE(grid.name());
        MPI_Comm cart = MPI_COMM_NULL;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims.data(), periods.data(), 0, &cart);
        MPI_Info info = MPI_INFO_NULL;
        MPI_Info_create(&info);
        MPI_Info_set(info, "nbr_algo", "common-neighbor");
        nbr_pattern_t pattern = nullptr;
        const int code = nbr_pattern_build(cart, tmp.path().c_str(), info, 0, &pattern);
        MPI_Info_free(&info);
        if (code == NBR_ERR_DECLINED) {  // every rank with at most two neighbors each way
            MPI_Comm_free(&cart);
            continue;
        }
        ASSERT_EQ(code, NBR_SUCCESS) << nbr_last_error();
        ++built;
        for (bool alltoall : {false, true}) {
            for (bool variable : {false, true}) {
                const Call call = make_call(cart, alltoall, variable);
                const auto standard = reference(cart, call);
                for (Mode mode : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
                    EXPECT_EQ(replay(call, pattern, mode), standard) << call.name() << " " << mode_name(mode);
                }
            }
        }
        nbr_pattern_free(&pattern);
        MPI_Comm_free(&cart);
    }
    EXPECT_EQ(built, 2) << "the crosswise dimension gives every rank three neighbors or more";
}

TEST(Cartesian, PatternNeighborsLeaveOutProcNull) {
    // A non-periodic ring: the ends have one neighbor each way in the pattern, two buffer slots.
    nbr::test::SharedTempDir tmp;
    int dims[1] = {world_size()}, periods[1] = {0};
    MPI_Comm ring = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    nbr::test::compile_to(MPI_COMM_WORLD, nbr::generate_cart({{static_cast<std::uint32_t>(world_size())}, {false}}),
                          tmp.path() / "ring");
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "ring").c_str(), ring, &pattern), NBR_SUCCESS) << nbr_last_error();
    int in = 0, out = 0;
    ASSERT_EQ(nbr_pattern_neighbors_count(pattern, &in, &out), NBR_SUCCESS);
    const int end = world_rank() == 0 || world_rank() == world_size() - 1 ? 1 : 0;
    EXPECT_EQ(in, 2 - end - (world_size() == 1 ? 1 : 0));
    EXPECT_EQ(out, in);
    // alltoallv with a boundary slot's count larger than the buffer: MPI ignores that slot,
    // so does nbr (reading or writing it would overrun: AddressSanitizer).
    std::vector<int> send = {world_rank() * 2, world_rank() * 2 + 1};
    std::vector<int> recv = {kSentinel, kSentinel};
    const int counts[2] = {world_rank() == 0 ? 5 : 1, world_rank() == world_size() - 1 ? 5 : 1};
    const int displs[2] = {0, 1};
    EXPECT_EQ(
        nbr_neighbor_alltoallv(send.data(), counts, displs, MPI_INT, recv.data(), counts, displs, MPI_INT, pattern),
        NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(recv[0], world_rank() == 0 ? kSentinel : world_rank() * 2 - 1);
    EXPECT_EQ(recv[1], world_rank() == world_size() - 1 ? kSentinel : world_rank() * 2 + 2);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&ring);
}

TEST(Cartesian, ARankWithoutNeighborsTakesNullArrays) {
    // A 1x1 non-periodic grid on each process alone: four MPI_PROC_NULL slots, no neighbor.
    // nbr's engine reads no array there, so NULL arrays pass in every mode (MPI's own
    // collective, which the naive pattern would hand blocking calls to, rejects them).
    nbr::test::SharedTempDir tmp;
    const auto dir = tmp.path() / ("alone" + std::to_string(world_rank()));
    nbr::test::compile_to(MPI_COMM_SELF, nbr::generate_cart({{1, 1}, {false, false}}), dir);
    int dims[2] = {1, 1}, periods[2] = {0, 0};
    MPI_Comm alone = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_SELF, 2, dims, periods, 0, &alone);
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern_flags(dir.c_str(), alone, NBR_LOAD_NO_NATIVE, &pattern), NBR_SUCCESS)
        << nbr_last_error();
    int send = 1, recv = kSentinel;
    EXPECT_EQ(nbr_neighbor_alltoallv(&send, nullptr, nullptr, MPI_INT, &recv, nullptr, nullptr, MPI_INT, pattern),
              NBR_SUCCESS)
        << nbr_last_error();
    nbr_request_t request = NBR_REQUEST_NULL;
    EXPECT_EQ(
        nbr_ineighbor_alltoallv(&send, nullptr, nullptr, MPI_INT, &recv, nullptr, nullptr, MPI_INT, pattern, &request),
        NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
    EXPECT_EQ(nbr_neighbor_allgatherv_init(&send, 1, MPI_INT, &recv, nullptr, nullptr, MPI_INT, pattern, 0, &request),
              NBR_SUCCESS)
        << nbr_last_error();
    EXPECT_EQ(nbr_start(&request), NBR_SUCCESS);
    EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS);
    EXPECT_EQ(nbr_request_free(&request), NBR_SUCCESS);
    EXPECT_EQ(recv, kSentinel);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&alone);
}

}  // namespace
