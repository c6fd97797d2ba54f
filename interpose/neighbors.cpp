#include "neighbors.hpp"

namespace nbr::interpose {

namespace {

/// Why a Cartesian communicator's lists cannot be expressed, or "" if they can. MPI_PROC_NULL neighbors
/// occupy buffer slots, which patterns cannot express; in a periodic dimension of extent 1 or 2
/// both directions reach the same rank, and MPI matches those messages by direction, not in
/// list order as patterns do.
std::string cart_lists(MPI_Comm comm, std::vector<int>& in, std::vector<int>& out) {
    int dims = 0;
    PMPI_Cartdim_get(comm, &dims);
    std::vector<int> extent(static_cast<std::size_t>(dims) + 1), periodic(extent.size()), coords(extent.size());
    PMPI_Cart_get(comm, dims, extent.data(), periodic.data(), coords.data());
    for (int d = 0; d < dims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        PMPI_Cart_shift(comm, d, 1, &source, &dest);
        if (source == MPI_PROC_NULL || dest == MPI_PROC_NULL)
            return "a non-periodic dimension (MPI_PROC_NULL neighbors)";
        if (extent[static_cast<std::size_t>(d)] < 3) return "a periodic dimension of extent below 3";
        in.insert(in.end(), {source, dest});
        out.insert(out.end(), {source, dest});
    }
    return {};
}

}  // namespace

std::string neighbor_lists(MPI_Comm comm, int rank, std::vector<int>& in, std::vector<int>& out) {
    int kind = MPI_UNDEFINED;
    PMPI_Topo_test(comm, &kind);
    if (kind == MPI_DIST_GRAPH) {
        int indegree = 0, outdegree = 0, weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted);
        in.resize(static_cast<std::size_t>(indegree) + 1);
        out.resize(static_cast<std::size_t>(outdegree) + 1);
        std::vector<int> in_weights(in.size()), out_weights(out.size());
        PMPI_Dist_graph_neighbors(comm, indegree, in.data(), in_weights.data(), outdegree, out.data(),
                                  out_weights.data());
        in.pop_back();
        out.pop_back();
        return {};
    }
    if (kind == MPI_GRAPH) {
        int count = 0;
        PMPI_Graph_neighbors_count(comm, rank, &count);
        in.resize(static_cast<std::size_t>(count) + 1);
        PMPI_Graph_neighbors(comm, rank, count, in.data());
        in.pop_back();
        out = in;
        return {};
    }
    if (kind == MPI_CART) return cart_lists(comm, in, out);
    return "not a topology communicator";
}

}  // namespace nbr::interpose
