#pragma once
// The replay corpus shared by the replay tests: topologies (Moore, random, real matrices,
// awkward ones with duplicate edges, self-loops and isolated ranks), every algorithm's
// patterns for them, dist-graph communicators, and the MPI-4.1 reference alltoall(v).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/readers.hpp"
#include "relay_algorithm.hpp"
#include "test_support.hpp"

namespace nbr::test {

inline bool is_mpich() {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    return std::string(version, static_cast<std::size_t>(length)).find("MPICH") != std::string::npos;
}

/// The calling rank's in- and out-neighbors on a dist-graph or Cartesian communicator, in buffer
/// order (Cartesian: per dimension the source, then the destination of a shift by +1).
struct Neighbors {
    std::vector<int> in;
    std::vector<int> out;
};

inline Neighbors neighbors_of(MPI_Comm graph) {
    int kind = MPI_UNDEFINED;
    MPI_Topo_test(graph, &kind);
    if (kind == MPI_CART) {
        int dims = 0;
        MPI_Cartdim_get(graph, &dims);
        Neighbors lists;
        for (int d = 0; d < dims; ++d) {
            int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
            MPI_Cart_shift(graph, d, 1, &source, &dest);
            lists.in.insert(lists.in.end(), {source, dest});
        }
        lists.out = lists.in;
        return lists;
    }
    int indegree = 0, outdegree = 0, weighted = 0;
    MPI_Dist_graph_neighbors_count(graph, &indegree, &outdegree, &weighted);
    std::vector<int> in(static_cast<std::size_t>(indegree) + 1), out(static_cast<std::size_t>(outdegree) + 1);
    MPI_Dist_graph_neighbors(graph, indegree, in.data(), MPI_UNWEIGHTED, outdegree, out.data(), MPI_UNWEIGHTED);
    in.pop_back();
    out.pop_back();
    return {in, out};
}

/// True if this rank receives more than one edge from some rank (duplicate edges).
inline bool has_duplicate_in_edges(MPI_Comm graph) {
    auto in = neighbors_of(graph).in;
    std::sort(in.begin(), in.end());
    return std::adjacent_find(in.begin(), in.end()) != in.end();
}

/// The MPI-4.1 (section 8.6) reference semantics of MPI_Neighbor_alltoallv on a dist-graph:
/// receives posted in source order, sends in destination order, one tag, so the k-th edge
/// to a process matches the k-th edge from it.
inline void reference_alltoallv(const void* send, const int send_counts[], const int send_displs[],
                                MPI_Datatype send_type, void* recv, const int recv_counts[], const int recv_displs[],
                                MPI_Datatype recv_type, MPI_Comm graph) {
    const auto [in, out] = neighbors_of(graph);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(graph, &comm);
    MPI_Aint lb = 0, send_extent = 0, recv_extent = 0;
    MPI_Type_get_extent(send_type, &lb, &send_extent);
    MPI_Type_get_extent(recv_type, &lb, &recv_extent);
    std::vector<MPI_Request> requests;
    for (std::size_t i = 0; i < in.size(); ++i) {
        requests.emplace_back();
        MPI_Irecv(static_cast<char*>(recv) + recv_displs[i] * recv_extent, recv_counts[i], recv_type, in[i], 0, comm,
                  &requests.back());
    }
    for (std::size_t j = 0; j < out.size(); ++j) {
        requests.emplace_back();
        MPI_Isend(static_cast<const char*>(send) + send_displs[j] * send_extent, send_counts[j], send_type, out[j], 0,
                  comm, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    MPI_Comm_free(&comm);
}

/// The reference MPI_Neighbor_alltoall: reference_alltoallv with consecutive equal blocks.
inline void reference_alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                               MPI_Datatype recv_type, MPI_Comm graph) {
    const auto [in, out] = neighbors_of(graph);
    std::vector<int> send_counts(out.size() + 1, send_count), send_displs(out.size() + 1);
    std::vector<int> recv_counts(in.size() + 1, recv_count), recv_displs(in.size() + 1);
    for (std::size_t j = 0; j < out.size(); ++j) send_displs[j] = static_cast<int>(j) * send_count;
    for (std::size_t i = 0; i < in.size(); ++i) recv_displs[i] = static_cast<int>(i) * recv_count;
    reference_alltoallv(send, send_counts.data(), send_displs.data(), send_type, recv, recv_counts.data(),
                        recv_displs.data(), recv_type, graph);
}

/// Arguments of one fixed-size collective call: counts and types on both sides.
struct Signature {
    std::string name;
    int send_count;
    MPI_Datatype send_type;
    int recv_count;
    MPI_Datatype recv_type;
};

/// Fills a buffer with bytes that depend on the rank, the position and `seed`.
inline void fill(std::vector<unsigned char>& buffer, int seed) {
    for (std::size_t i = 0; i < buffer.size(); ++i) {
        buffer[i] = static_cast<unsigned char>((world_rank() * 131 + static_cast<int>(i) * 7 + seed * 17) & 0xff);
    }
}

/// Test suites replaying with non-contiguous derived types: a strided vector of 6 ints over
/// 8 slots and one of 2 doubles over 3, committed once per suite.
class StridedTypesTest : public testing::Test {
protected:
    static void SetUpTestSuite() {
        MPI_Type_vector(3, 2, 3, MPI_INT, &strided_int6_);
        MPI_Type_commit(&strided_int6_);
        MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &strided_double2_);
        MPI_Type_commit(&strided_double2_);
    }
    static void TearDownTestSuite() {
        MPI_Type_free(&strided_int6_);
        MPI_Type_free(&strided_double2_);
    }
    static inline MPI_Datatype strided_int6_ = MPI_DATATYPE_NULL;
    static inline MPI_Datatype strided_double2_ = MPI_DATATYPE_NULL;
};

/// The topology with every rank's in-list reversed: MPI lets in-lists come in any order
/// (a captured application's need not follow source ranks), and duplicates pair up in order.
inline Topology with_reversed_in_lists(const Topology& t) {
    std::vector<std::vector<std::uint32_t>> in(t.num_ranks()), out(t.num_ranks());
    for (std::uint32_t r = 0; r < t.num_ranks(); ++r) {
        in[r].assign(t.in_neighbors(r).rbegin(), t.in_neighbors(r).rend());
        out[r].assign(t.out_neighbors(r).begin(), t.out_neighbors(r).end());
    }
    return Topology::from_adjacency(in, out);
}

struct CorpusCase {
    std::string name;
    Topology topology;
};

/// The replay corpus for the world's size.
inline std::vector<CorpusCase> corpus_topologies() {
    const auto n = static_cast<std::uint32_t>(world_size());
    std::vector<CorpusCase> cases;
    const auto dims = balanced_dims(n, 2);
    if (dims[1] >= 3) {
        cases.push_back({"moore-2d-r1", generate_moore({n, 2, 1})});
    } else if (n >= 3) {
        cases.push_back({"moore-1d-r" + std::to_string((n - 1) / 2), generate_moore({n, 1, (n - 1) / 2})});
    }
    cases.push_back({"random-0.3", generate_random({n, 0.3, 11})});
    cases.push_back({"random-0.8", generate_random({n, 0.8, 12})});
    for (const char* matrix : {"ash292.mtx", "dwt_193.mtx", "west0132.mtx", "D_10.mtx"}) {
        cases.push_back({matrix, read_matrix_market((matrices_dir() / matrix).string(), n)});
    }
    cases.push_back({"awkward", awkward_topology(n)});
    cases.push_back({"awkward-in-lists-reversed", with_reversed_in_lists(awkward_topology(n))});
    return cases;
}

/// A dist-graph communicator over MPI_COMM_WORLD with the topology's neighbor lists.
inline MPI_Comm dist_graph(const Topology& t) {
    const auto r = static_cast<std::uint32_t>(world_rank());
    std::vector<int> in(t.in_neighbors(r).begin(), t.in_neighbors(r).end());
    std::vector<int> out(t.out_neighbors(r).begin(), t.out_neighbors(r).end());
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(in.size()), in.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(out.size()), out.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
    return comm;
}
/// @brief Compiles `topology` with the test's relay algorithm (every process of the world) into `dir`.
inline void compile_relay(const Topology& topology, const std::filesystem::path& dir) {
    RelayAlgorithm relay;
    compiler::CompileOptions options;
    options.output = dir;
    options.quiet = true;
    compiler::compile(MPI_COMM_WORLD, topology, relay, options);
}

/// The topology whose every rank lists `mine` both ways (a Cartesian communicator's lists),
/// gathered over MPI_COMM_WORLD.
inline Topology topology_of_symmetric_lists(const std::vector<int>& mine) {
    const int degree = static_cast<int>(mine.size());
    std::vector<int> degrees(static_cast<std::size_t>(world_size())), displs(degrees.size());
    MPI_Allgather(&degree, 1, MPI_INT, degrees.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (std::size_t r = 1; r < degrees.size(); ++r) displs[r] = displs[r - 1] + degrees[r - 1];
    std::vector<int> all(static_cast<std::size_t>(displs.back() + degrees.back()) + 1);
    MPI_Allgatherv(mine.data(), degree, MPI_INT, all.data(), degrees.data(), displs.data(), MPI_INT, MPI_COMM_WORLD);
    std::vector<std::vector<std::uint32_t>> lists(degrees.size());
    for (std::size_t r = 0; r < lists.size(); ++r)
        lists[r].assign(all.begin() + displs[r], all.begin() + displs[r] + degrees[r]);
    return Topology::from_adjacency(lists, lists);
}

/// Every algorithm's configurations of the replay corpus: a file-name suffix and how to compile it.
inline std::vector<std::pair<std::string, std::function<void(const Topology&, const std::filesystem::path&)>>>
corpus_algorithms() {
    // cn4, dh2, kg4aware and hi3 are packed (ranks.pack), the others one file per rank: both
    // layouts replay on every topology of the corpus. cn2, dh1 and hi2 forward in segments
    // (segment_plan) of 64, 16 and 1 bytes: from several blocks per segment for small blocks to
    // every block alone, segments smaller than the blocks.
    const auto packed = [](compiler::CompileOptions options) {
        options.layout = compiler::PatternLayout::packed;
        return options;
    };
    const auto segmented = [](compiler::CompileOptions options, std::uint64_t bytes) {
        options.segment_bytes = bytes;
        return options;
    };
    const auto n = [](const Topology& t) { return t.num_ranks(); };
    using Path = std::filesystem::path;
    return {
        {".naive", [](const Topology& t, const Path& p) { compile_to(MPI_COMM_WORLD, t, p); }},
        {".relay", [](const Topology& t, const Path& p) { compile_relay(t, p); }},
        // common-neighbor with Θ = 2 so that small graphs combine too, and with the default.
        {".cn2",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t, segmented(common_neighbor_options(p, 2), 64));
         }},
        {".cn4", [=](const Topology& t,
                     const Path& p) { compiler::compile(MPI_COMM_WORLD, t, packed(common_neighbor_options(p, 4))); }},
        // distance halving with one rank per socket (every halving step) and 4/2 per node/socket.
        {".dh1",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t,
                               segmented(distance_halving_options(p, Placement::block(n(t), 1, 1)), 16));
         }},
        {".dh2",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t, packed(distance_halving_options(p, Placement::block(n(t), 4, 2))));
         }},
        // kgroup with Θ = 0 (any shared neighbor groups): k = 3 agnostic, k = 4 on nodes of 4.
        {".kg3",
         [](const Topology& t, const Path& p) { compiler::compile(MPI_COMM_WORLD, t, kgroup_options(p, 3, 0)); }},
        {".kg4aware",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t, packed(kgroup_options(p, 4, 0, Placement::block(n(t), 4, 2))));
         }},
        // hierarchical on nodes of 2 (three hops between most pairs) and of 3 (the last node
        // not full for most rank counts).
        {".hi2",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t, segmented(hierarchical_options(p, Placement::block(n(t), 2, 1)), 1));
         }},
        {".hi3",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t, packed(hierarchical_options(p, Placement::block(n(t), 3, 3))));
         }},
        // ... and aggregated by socket on nodes of 6 in sockets of 3, in Bruck rounds of radix 2
        // inside the socket (two rounds: blocks relayed inside the socket before and after the
        // socket pair message; a last socket of 1 joins the one before it).
        {".hb3",
         [=](const Topology& t, const Path& p) {
             auto by_socket = hierarchical_options(p, Placement::block(n(t), 6, 3), 2);
             by_socket.algorithm_options.aggregate_by = compiler::AggregateBy::socket;
             compiler::compile(MPI_COMM_WORLD, t, by_socket);
         }},
        // ... and across nodes of 2 along a cube of radix 2 (blocks forwarded node to node over
        // ⌈log2(n/2)⌉ rounds), delivered in a Bruck round inside the node.
        {".hc2",
         [=](const Topology& t, const Path& p) {
             compiler::compile(MPI_COMM_WORLD, t, cube_options(p, Placement::block(n(t), 2, 1), 2, 2));
         }},
    };
}

/// Compiles the corpus algorithms whose indices (into corpus_algorithms()) are given; returns
/// their directories, dir/NAME.SUFFIX, in that order.
inline std::vector<std::filesystem::path> compile_algorithms(const std::filesystem::path& dir, const std::string& name,
                                                             const Topology& topology,
                                                             const std::vector<std::size_t>& which) {
    const auto algorithms = corpus_algorithms();
    std::vector<std::filesystem::path> dirs;
    for (const std::size_t i : which) {
        dirs.push_back(dir / (name + algorithms.at(i).first));
        algorithms.at(i).second(topology, dirs.back());
    }
    return dirs;
}

/// Every corpus algorithm's pattern of the topology (12 directories).
inline std::vector<std::filesystem::path> compile_every_algorithm(const std::filesystem::path& dir,
                                                                  const std::string& name, const Topology& topology) {
    std::vector<std::size_t> all(corpus_algorithms().size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return compile_algorithms(dir, name, topology, all);
}

/// @brief The corpus algorithms (indices into corpus_algorithms()) that the replay tests' product
/// of every topology and every algorithm runs on topology number `t` of corpus_topologies().
///
/// Every one, unless NBR_TEST_CORPUS_STRIDE=S (S > 1) asks for every S-th pair of the product:
/// algorithm i on topology t when (t + i) % S == 0, so that every algorithm still runs on several
/// topologies and every topology with several algorithms. tests/CMakeLists.txt sets it for
/// MPICH's registrations above two ranks: MPICH busy-polls when its ranks outnumber the cores, and
/// every collective then costs scheduler time slices (the product took over a minute there); the
/// whole product runs against Open MPI.
inline std::vector<std::size_t> corpus_sample(std::size_t t) {
    const char* value = std::getenv("NBR_TEST_CORPUS_STRIDE");
    const std::size_t stride = value ? std::max<std::size_t>(1, std::strtoul(value, nullptr, 10)) : 1;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < corpus_algorithms().size(); ++i) {
        if ((t + i) % stride == 0) which.push_back(i);
    }
    return which;
}

/// @brief How many (topology, algorithm) pairs corpus_sample selects over `topologies` topologies.
inline std::size_t corpus_sample_size(std::size_t topologies) {
    std::size_t pairs = 0;
    for (std::size_t t = 0; t < topologies; ++t) pairs += corpus_sample(t).size();
    return pairs;
}

}  // namespace nbr::test
