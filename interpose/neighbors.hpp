#pragma once
// What MPI reports of a topology communicator, shared by the interposition libraries.

// The C bindings only: the libraries must not need MPI's C++ binding libraries.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <string>
#include <vector>

namespace nbr::interpose {

/// @brief The calling rank's neighbor lists in MPI's buffer order (dist-graph: as
/// MPI_Dist_graph_neighbors reports them; graph: the neighbor list both ways; Cartesian: per
/// dimension the negative then the positive neighbor). Returns why they cannot be expressed
/// as a pattern's lists, or "" (docs/format.md: Cartesian rules).
std::string neighbor_lists(MPI_Comm comm, int rank, std::vector<int>& in, std::vector<int>& out);

/// @brief Called by the wrapped topology constructors (constructors.cpp) after a successful
/// creation, on every rank of the new communicator (MPI_COMM_NULL on ranks outside it);
/// each interposition library defines it. Must not throw.
void on_topology_created(MPI_Comm comm, const char* function);

}  // namespace nbr::interpose
