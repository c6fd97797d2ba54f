#pragma once
// What MPI reports of a communicator's neighborhood, in its buffer order. One implementation
// for libnbr's loader (which checks a pattern against it) and the interposition libraries
// (which capture it and match patterns by it).
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace nbr::internal {

enum class CommKind { plain, dist_graph, graph, cartesian };

/// @brief Where a pattern's neighbors sit in the communicator's buffers.
///
/// A pattern lists real neighbors only; a Cartesian communicator's buffers also hold the
/// MPI_PROC_NULL slots of non-periodic boundaries (nothing is sent from or written to them),
/// and in a periodic dimension of extent 1 or 2, where both directions reach one rank, MPI
/// delivers the block sent towards the negative neighbor into that neighbor's positive slot
/// and vice versa (MPI-4.1 §8.6), while a pattern matches repeated neighbors in list order:
/// there the dimension's two receive slots are exchanged. Empty maps: block i is slot i.
struct BufferSlots {
    std::vector<std::uint32_t> in;   ///< receive-buffer block of the pattern's in-neighbor i
    std::vector<std::uint32_t> out;  ///< send-buffer block of the pattern's out-neighbor j
    std::uint32_t in_blocks = 0;     ///< blocks in the receive buffer (MPI's in-degree)
    std::uint32_t out_blocks = 0;    ///< blocks in the send buffer (MPI's out-degree)
    bool exchanged = false;          ///< some receive slots exchanged (periodic extent 1 or 2)

    [[nodiscard]] bool identity() const noexcept { return in.empty() && out.empty(); }
};

struct CommNeighbors {
    CommKind kind = CommKind::plain;
    std::vector<int> in;   ///< in-neighbors in receive-buffer order, MPI_PROC_NULL left out
    std::vector<int> out;  ///< out-neighbors in send-buffer order, MPI_PROC_NULL left out
    BufferSlots slots;     ///< where they sit in the buffers
};

/// The calling rank's lists: dist-graph as MPI_Dist_graph_neighbors reports them; graph, the
/// neighbor list both ways; Cartesian, per dimension the negative then the positive neighbor
/// (MPI-4.1 §8.6), boundaries of non-periodic dimensions left out (docs/format.md, Cartesian
/// communicators). A plain communicator has empty lists.
CommNeighbors comm_neighbors(MPI_Comm comm, int rank);

}  // namespace nbr::internal
