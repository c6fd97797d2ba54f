#pragma once
// What MPI reports of a communicator's neighborhood, in its buffer order. One implementation
// for libnbr's loader (which checks a pattern against it) and the interposition libraries
// (which capture it and match patterns by it).
#include <mpi.h>

#include <string>
#include <vector>

namespace nbr::internal {

enum class CommKind { plain, dist_graph, graph, cartesian };

struct CommNeighbors {
    CommKind kind = CommKind::plain;
    std::vector<int> in;        ///< in-neighbors in receive-buffer order
    std::vector<int> out;       ///< out-neighbors in send-buffer order
    std::string inexpressible;  ///< why a pattern cannot describe these lists, or ""
};

/// The calling rank's lists: dist-graph as MPI_Dist_graph_neighbors reports them; graph, the
/// neighbor list both ways; Cartesian, per dimension the negative then the positive neighbor
/// (MPI-4.1 §8.6). A Cartesian communicator is expressible only if every dimension is periodic
/// with extent ≥ 3 (docs/format.md): MPI_PROC_NULL neighbors occupy buffer slots, which
/// patterns cannot express, and in a periodic dimension of extent 1 or 2 both directions reach
/// the same rank, and MPI matches those messages by direction, not in list order as patterns do.
/// A plain communicator has empty lists.
CommNeighbors comm_neighbors(MPI_Comm comm, int rank);

}  // namespace nbr::internal
