#include "comm_neighbors.hpp"

#include "error.hpp"
#include "nbr.h"

namespace nbr::internal {

namespace {

/// NBR_ERR_MPI naming the call (header-only: the capture library compiles this file too).
void check(int code, const char* call) {
    if (code != MPI_SUCCESS)
        throw NbrError(NBR_ERR_MPI, std::string(call) + " failed (MPI error " + std::to_string(code) + ")");
}

void dist_graph_lists(MPI_Comm comm, CommNeighbors& lists) {
    int indegree = 0, outdegree = 0, weighted = 0;
    check(MPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted), "MPI_Dist_graph_neighbors_count");
    lists.in.resize(static_cast<std::size_t>(indegree) + 1);  // + 1: never a zero-length buffer
    lists.out.resize(static_cast<std::size_t>(outdegree) + 1);
    std::vector<int> in_weights(lists.in.size()), out_weights(lists.out.size());
    check(MPI_Dist_graph_neighbors(comm, indegree, lists.in.data(), in_weights.data(), outdegree, lists.out.data(),
                                   out_weights.data()),
          "MPI_Dist_graph_neighbors");
    lists.in.pop_back();
    lists.out.pop_back();
}

void graph_lists(MPI_Comm comm, int rank, CommNeighbors& lists) {
    int count = 0;
    check(MPI_Graph_neighbors_count(comm, rank, &count), "MPI_Graph_neighbors_count");
    lists.in.resize(static_cast<std::size_t>(count) + 1);
    check(MPI_Graph_neighbors(comm, rank, count, lists.in.data()), "MPI_Graph_neighbors");
    lists.in.pop_back();
    lists.out = lists.in;
}

/// Why one Cartesian dimension cannot be expressed as pattern lists, or "". It depends on the
/// dimension only, so every rank of the communicator gives the same answer.
const char* obstacle(int periodic, int extent) {
    if (periodic == 0) return "a non-periodic dimension (MPI_PROC_NULL neighbors)";
    if (extent < 3) return "a periodic dimension of extent below 3";
    return "";
}

void cartesian_lists(MPI_Comm comm, CommNeighbors& lists) {
    int dims = 0;
    check(MPI_Cartdim_get(comm, &dims), "MPI_Cartdim_get");
    std::vector<int> extent(static_cast<std::size_t>(dims) + 1), periodic(extent.size()), coords(extent.size());
    check(MPI_Cart_get(comm, dims, extent.data(), periodic.data(), coords.data()), "MPI_Cart_get");
    for (int d = 0; d < dims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        check(MPI_Cart_shift(comm, d, 1, &source, &dest), "MPI_Cart_shift");
        if (lists.inexpressible.empty())
            lists.inexpressible = obstacle(periodic[static_cast<std::size_t>(d)], extent[static_cast<std::size_t>(d)]);
        lists.in.insert(lists.in.end(), {source, dest});
        lists.out.insert(lists.out.end(), {source, dest});
    }
}

}  // namespace

CommNeighbors comm_neighbors(MPI_Comm comm, int rank) {
    CommNeighbors lists;
#if !defined(NBR_SMPI)  // SimGrid SMPI has no process topologies (MPI_Topo_test aborts)
    int kind = MPI_UNDEFINED;
    check(MPI_Topo_test(comm, &kind), "MPI_Topo_test");
    if (kind == MPI_DIST_GRAPH) {
        lists.kind = CommKind::dist_graph;
        dist_graph_lists(comm, lists);
    } else if (kind == MPI_GRAPH) {
        lists.kind = CommKind::graph;
        graph_lists(comm, rank, lists);
    } else if (kind == MPI_CART) {
        lists.kind = CommKind::cartesian;
        cartesian_lists(comm, lists);
    }
#else
    (void)comm;
    (void)rank;
#endif
    return lists;
}

}  // namespace nbr::internal
