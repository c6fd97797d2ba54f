#pragma once
// Shared by the interposition libraries: MPI's C binding, what MPI reports of a topology
// communicator (comm_neighbors, replayer/src/comm_neighbors.hpp, shared with libnbr's loader),
// the hook the wrapped constructors call, and one rank's text broadcast to every rank.

// The C bindings only: the libraries must not need MPI's C++ binding libraries (their targets
// link nbr_mpi_c, which defines OMPI_SKIP_MPICXX and MPICH_SKIP_MPICXX for every file).
#include <mpi.h>

#include <string>

#include "comm_neighbors.hpp"

namespace nbr::interpose {

/// @brief Called by the wrapped topology constructors (constructors.cpp) after a successful
/// creation, on every rank of the new communicator (MPI_COMM_NULL on ranks outside it);
/// each interposition library defines it. Must not throw.
void on_topology_created(MPI_Comm comm, const char* function);

/// @brief Rank `root`'s `text` on every rank of `comm` (collective; the other ranks' `text` is
/// ignored): a launcher may give ranks different environments, and what one rank (rank 0 but
/// where said) decides from its own must hold for all. Defined with the constructors (constructors.cpp). It calls
/// PMPI_Bcast, as the libraries' own traffic does, where nbr::common::broadcast_string calls
/// MPI_Bcast (a profiling tool stacked on the drop-in would count it as the application's).
std::string broadcast_text(std::string text, MPI_Comm comm, int root = 0);

}  // namespace nbr::interpose
