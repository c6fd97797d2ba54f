#include "comm_neighbors.hpp"

#include "error.hpp"
#include "nbr.h"

namespace nbr::internal {

#if !defined(NBR_SMPI)  // SimGrid SMPI has no process topologies: comm_neighbors uses none of these
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

/// Appends one direction's neighbor, unless it is MPI_PROC_NULL, with its buffer slot.
void add_neighbor(int peer, std::uint32_t slot, std::vector<int>& list, std::vector<std::uint32_t>& slots) {
    if (peer == MPI_PROC_NULL) return;
    list.push_back(peer);
    slots.push_back(slot);
}

void cartesian_lists(MPI_Comm comm, CommNeighbors& lists) {
    int dims = 0;
    check(MPI_Cartdim_get(comm, &dims), "MPI_Cartdim_get");
    std::vector<int> extent(static_cast<std::size_t>(dims) + 1), periodic(extent.size()), coords(extent.size());
    check(MPI_Cart_get(comm, dims, extent.data(), periodic.data(), coords.data()), "MPI_Cart_get");
    BufferSlots& slots = lists.slots;
    for (int d = 0; d < dims; ++d) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        check(MPI_Cart_shift(comm, d, 1, &source, &dest), "MPI_Cart_shift");
        const auto negative = static_cast<std::uint32_t>(2 * d);
        // Periodic extent 1 or 2: one rank both ways; its two blocks land crosswise (BufferSlots).
        const auto k = static_cast<std::size_t>(d);
        const bool crosswise = periodic[k] != 0 && extent[k] <= 2;
        slots.exchanged = slots.exchanged || crosswise;
        add_neighbor(source, crosswise ? negative + 1 : negative, lists.in, slots.in);
        add_neighbor(dest, crosswise ? negative : negative + 1, lists.in, slots.in);
        add_neighbor(source, negative, lists.out, slots.out);
        add_neighbor(dest, negative + 1, lists.out, slots.out);
    }
    slots.in_blocks = slots.out_blocks = static_cast<std::uint32_t>(2 * dims);
    if (!slots.exchanged && lists.in.size() == slots.in_blocks) {  // every slot a neighbor, in order
        slots.in.clear();
        slots.out.clear();
    }
}

}  // namespace
#endif

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
        return lists;
    }
#else
    (void)comm;
    (void)rank;
#endif
    lists.slots.in_blocks = static_cast<std::uint32_t>(lists.in.size());
    lists.slots.out_blocks = static_cast<std::uint32_t>(lists.out.size());
    return lists;
}

}  // namespace nbr::internal
