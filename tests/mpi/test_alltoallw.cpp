// nbr_neighbor_alltoallw in all three modes: every block its own datatype (predefined,
// contiguous, strided, resized with holes), the sender's and the receiver's types of a block
// different but of one signature, byte displacements out of order with gaps; and the same
// calls with MPI_INT for every block (those libnbr hands to MPI's collective directly). On the replay
// corpus (duplicate edges, self-loops, isolated ranks) and on Cartesian grids with
// non-periodic and crosswise dimensions, nbr delivers exactly what a point-to-point reference
// and MPI's own MPI_Neighbor_alltoallw deliver, holes in the receive buffer untouched.
#include <algorithm>
#include <array>
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

constexpr int kSentinel = -5;
constexpr int kRegion = 16;  // ints per block region (a block spans at most 12)

/// The four element types, each carrying 2 ints except MPI_INT (1): plain, contiguous pairs,
/// a strided pair (extent 3 ints), a pair with a hole resized to extent 4 ints. Predefined
/// only: MPI_INT for all four, the calls libnbr hands to MPI's collective without a look at
/// the types' shapes (hand_off.hpp).
class Palette {
public:
    explicit Palette(bool predefined_only = false) : predefined_only_(predefined_only) {
        if (predefined_only) return;
        MPI_Type_contiguous(2, MPI_INT, &types_[1]);
        MPI_Type_vector(2, 1, 2, MPI_INT, &types_[2]);
        const int lengths[2] = {1, 1}, displs[2] = {0, 2};
        MPI_Datatype holes = MPI_DATATYPE_NULL;
        MPI_Type_indexed(2, lengths, displs, MPI_INT, &holes);
        MPI_Type_create_resized(holes, 0, 4 * static_cast<MPI_Aint>(sizeof(int)), &types_[3]);
        MPI_Type_free(&holes);
        for (int t = 1; t < 4; ++t) MPI_Type_commit(&types_[t]);
    }
    ~Palette() {
        for (int t = 1; t < 4 && !predefined_only_; ++t) MPI_Type_free(&types_[t]);
    }
    Palette(const Palette&) = delete;
    Palette& operator=(const Palette&) = delete;

    [[nodiscard]] MPI_Datatype type(int choice) const { return types_[static_cast<std::size_t>(choice)]; }
    /// Elements of type `choice` that carry `ints` ints (even).
    [[nodiscard]] int count(int choice, int ints) const { return choice == 0 || predefined_only_ ? ints : ints / 2; }

private:
    bool predefined_only_ = false;
    std::array<MPI_Datatype, 4> types_{MPI_INT, MPI_INT, MPI_INT, MPI_INT};
};

/// Ints that `rank`'s send block j carries: 0, 2, 4 or 6.
int ints_of(int rank, int j) {
    return 2 * ((rank + 3 * j) % 4);
}

/// Where the blocks of one buffer start, in bytes: regions reversed, every other one shifted.
std::vector<MPI_Aint> byte_displs(std::size_t blocks) {
    std::vector<MPI_Aint> displs(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
        const auto region = static_cast<MPI_Aint>(blocks - 1 - b) * kRegion + static_cast<MPI_Aint>(b % 2);
        displs[b] = region * static_cast<MPI_Aint>(sizeof(int));
    }
    return displs;
}

/// The arguments of one rank's call. `origin[i]`: the rank and send block that fill receive
/// slot i (rank MPI_PROC_NULL: a Cartesian boundary, whose count would overrun if used).
struct WCall {
    std::vector<int> send, send_counts, recv_counts;
    std::vector<MPI_Aint> send_displs, recv_displs;
    std::vector<MPI_Datatype> send_types, recv_types;
    std::vector<std::array<int, 2>> origin;
    std::vector<int> out;  // destination of send block j (MPI_PROC_NULL at boundaries)

    [[nodiscard]] std::vector<int> fresh_recv() const {
        return std::vector<int>(origin.size() * kRegion + 2, kSentinel);
    }
};

WCall make_call(const Palette& palette, const std::vector<std::array<int, 2>>& origin, const std::vector<int>& out,
                int seed) {
    const int r = world_rank();
    WCall c;
    c.origin = origin;
    c.out = out;
    c.send.resize(out.size() * kRegion + 2);
    for (std::size_t i = 0; i < c.send.size(); ++i) c.send[i] = seed * 100000 + r * 1000 + static_cast<int>(i);
    c.send_displs = byte_displs(out.size());
    c.recv_displs = byte_displs(origin.size());
    for (std::size_t j = 0; j < out.size(); ++j) {
        const int choice = (r + static_cast<int>(j)) % 4;
        c.send_types.push_back(palette.type(choice));
        c.send_counts.push_back(palette.count(choice, ints_of(r, static_cast<int>(j))));
    }
    for (std::size_t i = 0; i < origin.size(); ++i) {
        const int choice = (r + 2 * static_cast<int>(i) + 1) % 4;
        c.recv_types.push_back(palette.type(choice));
        const auto [from, block] = origin[i];
        c.recv_counts.push_back(from == MPI_PROC_NULL ? 1000 : palette.count(choice, ints_of(from, block)));
    }
    // One entry past the slots: a rank without neighbors still passes arrays (MPICH 4.0's
    // MPI_Neighbor_alltoallw reads them).
    c.send_counts.push_back(0), c.recv_counts.push_back(0);
    c.send_displs.push_back(0), c.recv_displs.push_back(0);
    c.send_types.push_back(MPI_INT), c.recv_types.push_back(MPI_INT);
    return c;
}

/// The slots' origins on a dist-graph: the k-th edge from s is s's k-th edge to this rank.
std::vector<std::array<int, 2>> graph_origins(const nbr::Topology& t) {
    const auto me = static_cast<std::uint32_t>(world_rank());
    const auto in = t.in_neighbors(me);
    std::vector<std::array<int, 2>> origin;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto k = std::count(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(i), in[i]);
        const auto out = t.out_neighbors(in[i]);
        std::ptrdiff_t seen = 0;
        for (std::size_t j = 0; j < out.size(); ++j) {
            if (out[j] == me && seen++ == k) origin.push_back({static_cast<int>(in[i]), static_cast<int>(j)});
        }
    }
    return origin;
}

/// The slots' origins on a Cartesian grid: slot 2d holds what the negative neighbor sent
/// towards its positive side (its block 2d+1), slot 2d+1 the positive neighbor's block 2d.
std::vector<std::array<int, 2>> cart_origins(MPI_Comm cart, std::vector<int>& out) {
    int ndims = 0;
    MPI_Cartdim_get(cart, &ndims);
    std::vector<std::array<int, 2>> origin;
    out.clear();
    for (int d = 0; d < ndims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        MPI_Cart_shift(cart, d, 1, &source, &dest);
        origin.push_back({source, 2 * d + 1});
        origin.push_back({dest, 2 * d});
        out.insert(out.end(), {source, dest});
    }
    return origin;
}

/// Point-to-point reference: block j goes to out[j] with tag j; slot i receives its origin's.
std::vector<int> reference(MPI_Comm topo, const WCall& c) {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(topo, &comm);
    auto recv = c.fresh_recv();
    std::vector<MPI_Request> requests;
    for (std::size_t i = 0; i < c.origin.size(); ++i) {
        if (c.origin[i][0] == MPI_PROC_NULL) continue;
        requests.emplace_back();
        MPI_Irecv(reinterpret_cast<char*>(recv.data()) + c.recv_displs[i], c.recv_counts[i], c.recv_types[i],
                  c.origin[i][0], c.origin[i][1], comm, &requests.back());
    }
    for (std::size_t j = 0; j < c.out.size(); ++j) {
        if (c.out[j] == MPI_PROC_NULL) continue;
        requests.emplace_back();
        MPI_Isend(reinterpret_cast<const char*>(c.send.data()) + c.send_displs[j], c.send_counts[j], c.send_types[j],
                  c.out[j], static_cast<int>(j), comm, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    MPI_Comm_free(&comm);
    return recv;
}

std::vector<int> native(MPI_Comm topo, const WCall& c) {
    auto recv = c.fresh_recv();
    MPI_Neighbor_alltoallw(c.send.data(), c.send_counts.data(), c.send_displs.data(), c.send_types.data(), recv.data(),
                           c.recv_counts.data(), c.recv_displs.data(), c.recv_types.data(), topo);
    return recv;
}

enum class Mode { blocking, nonblocking, persistent };

const char* mode_name(Mode mode) {
    return mode == Mode::blocking ? "blocking" : mode == Mode::nonblocking ? "nonblocking" : "persistent";
}

/// nbr's result; persistent: started twice, the send data rewritten (as `again`) between.
std::vector<int> replay(WCall& c, const WCall& again, nbr_pattern_t p, Mode mode) {
    auto recv = c.fresh_recv();
    const int *sc = c.send_counts.data(), *rc = c.recv_counts.data();
    const MPI_Aint *sd = c.send_displs.data(), *rd = c.recv_displs.data();
    const MPI_Datatype *st = c.send_types.data(), *rt = c.recv_types.data();
    nbr_request_t request = NBR_REQUEST_NULL;
    if (mode == Mode::blocking) {
        EXPECT_EQ(nbr_neighbor_alltoallw(c.send.data(), sc, sd, st, recv.data(), rc, rd, rt, p), NBR_SUCCESS)
            << nbr_last_error();
    } else if (mode == Mode::nonblocking) {
        EXPECT_EQ(nbr_ineighbor_alltoallw(c.send.data(), sc, sd, st, recv.data(), rc, rd, rt, p, &request), NBR_SUCCESS)
            << nbr_last_error();
        EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
    } else {
        EXPECT_EQ(nbr_neighbor_alltoallw_init(c.send.data(), sc, sd, st, recv.data(), rc, rd, rt, p, 0, &request),
                  NBR_SUCCESS)
            << nbr_last_error();
        EXPECT_EQ(nbr_start(&request), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
        std::copy(again.send.begin(), again.send.end(), c.send.begin());
        EXPECT_EQ(nbr_start(&request), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(nbr_wait(&request), NBR_SUCCESS) << nbr_last_error();
        EXPECT_EQ(nbr_request_free(&request), NBR_SUCCESS);
    }
    return recv;
}

/// Loads each pattern on `topo` and replays in every mode against the reference.
void check_patterns(MPI_Comm topo, const std::vector<std::filesystem::path>& dirs, const Palette& palette,
                    const std::vector<std::array<int, 2>>& origin, const std::vector<int>& out, bool native_checked,
                    std::size_t& checked) {
    WCall first = make_call(palette, origin, out, 1);
    const WCall second = make_call(palette, origin, out, 2);
    const auto expected = reference(topo, first);
    const auto expected_again = reference(topo, second);
    int delivered = expected != first.fresh_recv() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &delivered, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(delivered, 1) << "nothing delivered anywhere: the test checks nothing";
    if (native_checked) {
        EXPECT_EQ(native(topo, first), expected)
            << "MPI's own alltoallw differs from the reference on rank " << world_rank();
    }
    for (const auto& dir : dirs) {
        nbr_pattern_t pattern = nullptr;
        ASSERT_EQ(nbr_load_pattern(dir.c_str(), topo, &pattern), NBR_SUCCESS) << nbr_last_error();
        for (Mode mode : {Mode::blocking, Mode::nonblocking, Mode::persistent}) {
            WCall call = first;
            EXPECT_EQ(replay(call, second, pattern, mode), mode == Mode::persistent ? expected_again : expected)
                << dir.filename().string() << " " << mode_name(mode) << " on rank " << world_rank();
            ++checked;
        }
        nbr_pattern_free(&pattern);
    }
}

TEST(Alltoallw, DerivedTypePerNeighborOnTheCorpus) {
    nbr::test::SharedTempDir tmp;
    const Palette derived, predefined(true);
    const auto cases = nbr::test::corpus_topologies();
    const std::size_t others = nbr::test::corpus_algorithms().size() - 1;
    std::size_t checked = 0;
    for (std::size_t k = 0; k < cases.size(); ++k) {
        SCOPED_TRACE(cases[k].name);
        const auto dirs = nbr::test::compile_algorithms(tmp.path(), cases[k].name, cases[k].topology,
                                                        {0, 1 + 2 * k % others, 1 + (2 * k + 1) % others});
        MPI_Comm graph = nbr::test::dist_graph(cases[k].topology);
        const auto origin = graph_origins(cases[k].topology);
        const auto out_list = cases[k].topology.out_neighbors(static_cast<std::uint32_t>(world_rank()));
        const std::vector<int> out(out_list.begin(), out_list.end());
        // MPICH 4.0's own alltoallw mismatches blocks where a rank's in- and out-degree differ
        // (pmodels/mpich#6233) or edges repeat (pmodels/mpich#7945).
        int irregular = origin.size() != out.size() || nbr::test::has_duplicate_in_edges(graph) ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &irregular, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (const Palette* palette : {&derived, &predefined}) {
            check_patterns(graph, dirs, *palette, origin, out, !(irregular && nbr::test::is_mpich()), checked);
        }
        MPI_Comm_free(&graph);
    }
    EXPECT_EQ(checked, cases.size() * 3 * 3 * 2);
}

TEST(Alltoallw, CartesianGridsOfEveryKind) {
    nbr::test::SharedTempDir tmp;
    const Palette derived, predefined(true);
    std::vector<int> dims2(2, 0);
    MPI_Dims_create(world_size(), 2, dims2.data());
    // Non-periodic (boundaries and corners), periodic, mixed, a crosswise line of 2 and a 3-D
    // grid with an extent-1 periodic dimension.
    const std::vector<std::pair<std::vector<int>, std::vector<int>>> grids = {{dims2, {0, 0}},
                                                                              {dims2, {1, 1}},
                                                                              {dims2, {1, 0}},
                                                                              {{world_size() / 2, 2}, {0, 1}},
                                                                              {{2, 1, world_size() / 2}, {0, 1, 0}}};
    const std::size_t others = nbr::test::corpus_algorithms().size() - 1;
    std::size_t checked = 0;
    for (std::size_t g = 0; g < grids.size(); ++g) {
        auto [dims, periods] = grids[g];
        if (world_size() % 2 != 0 && g >= 3) continue;
        MPI_Comm cart = MPI_COMM_NULL;
        MPI_Cart_create(MPI_COMM_WORLD, static_cast<int>(dims.size()), dims.data(), periods.data(), 0, &cart);
        nbr::CartParams params;
        params.dims.assign(dims.begin(), dims.end());
        params.periods.assign(periods.begin(), periods.end());
        const std::string name = "cart" + std::to_string(g);
        SCOPED_TRACE(name);
        const auto dirs = nbr::test::compile_algorithms(tmp.path(), name, nbr::generate_cart(params),
                                                        {0, 1 + 2 * g % others, 1 + (2 * g + 1) % others});
        std::vector<int> out;
        const auto origin = cart_origins(cart, out);
        bool crosswise = false;
        for (std::size_t d = 0; d < dims.size(); ++d) crosswise = crosswise || (periods[d] != 0 && dims[d] <= 2);
        // MPICH 4.0 delivers crosswise dimensions in list order (see test_cartesian).
        for (const Palette* palette : {&derived, &predefined}) {
            check_patterns(cart, dirs, *palette, origin, out, !(crosswise && nbr::test::is_mpich()), checked);
        }
        MPI_Comm_free(&cart);
    }
    EXPECT_EQ(checked, (world_size() % 2 != 0 ? 3 : grids.size()) * 3 * 3 * 2);
}

TEST(Alltoallw, BadArgumentsNameTheSlot) {
    nbr::test::SharedTempDir tmp;
    const auto n = static_cast<std::uint32_t>(world_size());
    const auto topology = nbr::generate_moore({n, 1, 1});
    nbr::test::compile_to(MPI_COMM_WORLD, topology, tmp.path() / "ring");
    MPI_Comm ring = nbr::test::dist_graph(topology);
    nbr_pattern_t pattern = nullptr;
    ASSERT_EQ(nbr_load_pattern((tmp.path() / "ring").c_str(), ring, &pattern), NBR_SUCCESS) << nbr_last_error();
    int send[4] = {1, 2, 3, 4}, recv[4] = {};
    int counts[2] = {1, 1};
    const MPI_Aint displs[2] = {0, sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Datatype uncommitted = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    const auto call = [&](const int* c, const MPI_Datatype* t) {
        return nbr_neighbor_alltoallw(send, c, displs, t, recv, counts, displs, types, pattern);
    };
    int negative[2] = {1, -1};
    EXPECT_EQ(call(negative, types), NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("sendcounts[1] is negative"), std::string::npos) << nbr_last_error();
    MPI_Datatype with_null[2] = {MPI_DATATYPE_NULL, MPI_INT};
    EXPECT_EQ(call(counts, with_null), NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("sendtypes[0] is MPI_DATATYPE_NULL"), std::string::npos);
    MPI_Datatype with_uncommitted[2] = {MPI_INT, uncommitted};
    EXPECT_EQ(call(counts, with_uncommitted), NBR_ERR_ARG);
    EXPECT_NE(std::string(nbr_last_error()).find("sendtypes[1] is not committed"), std::string::npos);
    EXPECT_EQ(call(counts, nullptr), NBR_ERR_ARG);
    EXPECT_EQ(call(counts, types), NBR_SUCCESS) << nbr_last_error();  // every rank: the last call matches
    MPI_Type_free(&uncommitted);
    nbr_pattern_free(&pattern);
    MPI_Comm_free(&ring);
}

}  // namespace
