// The topology constructors, wrapped for both interposition libraries: each calls MPI, then
// hands a successfully created communicator to the library's on_topology_created().
//
// C: through the profiling interface (MPI_... calls PMPI_...).
// Fortran (`use mpi`, mpif.h and, as aliases, `use mpi_f08`; gfortran's names): Open MPI
// 4.1's Fortran binding calls PMPI_* directly, so the C wrappers never see a Fortran
// program's calls there; MPICH 4.0's calls MPI_*, so they do. The Fortran wrappers call the
// MPI library's own Fortran profiling entry (pmpi_..._, weak: absent when no Fortran binding
// is loaded) with the arguments untouched, then hand over the new communicator only if the
// call did not already pass through a C wrapper (a counter tells).
//
// Also here, for both libraries: broadcast_text, one rank's text on every rank (neighbors.hpp).
#include "neighbors.hpp"

namespace {

/// Creations handed over by the C wrappers.
unsigned long creations_seen = 0;

void created(int code, MPI_Comm comm, const char* function) {
    ++creations_seen;
    if (code == MPI_SUCCESS) nbr::interpose::on_topology_created(comm, function);
}

}  // namespace

std::string nbr::interpose::broadcast_text(std::string text, MPI_Comm comm, int root) {
    int length = static_cast<int>(text.size());
    PMPI_Bcast(&length, 1, MPI_INT, root, comm);
    text.resize(static_cast<std::size_t>(length));
    PMPI_Bcast(text.data(), length, MPI_CHAR, root, comm);
    return text;
}

extern "C" {

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
    const int code = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                                     destinations, destweights, info, reorder, comm_dist_graph);
    created(code, *comm_dist_graph, "MPI_Dist_graph_create_adjacent");
    return code;
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
    const int code =
        PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
    created(code, *comm_dist_graph, "MPI_Dist_graph_create");
    return code;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
    const int code = PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph);
    created(code, *comm_graph, "MPI_Graph_create");
    return code;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
    const int code = PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    created(code, *comm_cart, "MPI_Cart_create");
    return code;
}

using FortranArg = void*;
void pmpi_dist_graph_create_adjacent_(FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg,
                                      FortranArg, FortranArg, FortranArg, MPI_Fint*, MPI_Fint*) __attribute__((weak));
void pmpi_dist_graph_create_(FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg,
                             FortranArg, MPI_Fint*, MPI_Fint*) __attribute__((weak));
void pmpi_graph_create_(FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, MPI_Fint*, MPI_Fint*)
    __attribute__((weak));
void pmpi_cart_create_(FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, MPI_Fint*, MPI_Fint*)
    __attribute__((weak));

}  // extern "C"

namespace {

/// Runs a Fortran constructor; hands its communicator over unless a C wrapper already did.
template <class Create>
void created_in_fortran(MPI_Fint* comm, MPI_Fint* ierr, const char* function, Create&& create) {
    const unsigned long seen = creations_seen;
    MPI_Fint code = MPI_SUCCESS;
    create(&code);
    if (ierr != nullptr) *ierr = code;  // `ierror` is optional in mpi_f08
    if (code == MPI_SUCCESS && creations_seen == seen) {
        nbr::interpose::on_topology_created(PMPI_Comm_f2c(*comm), function);
    }
}

}  // namespace

extern "C" {

void mpi_dist_graph_create_adjacent_(FortranArg comm_old, FortranArg indegree, FortranArg sources,
                                     FortranArg sourceweights, FortranArg outdegree, FortranArg destinations,
                                     FortranArg destweights, FortranArg info, FortranArg reorder, MPI_Fint* comm,
                                     MPI_Fint* ierr) {
    created_in_fortran(comm, ierr, "MPI_Dist_graph_create_adjacent", [&](MPI_Fint* e) {
        pmpi_dist_graph_create_adjacent_(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                         destweights, info, reorder, comm, e);
    });
}

void mpi_dist_graph_create_(FortranArg comm_old, FortranArg n, FortranArg sources, FortranArg degrees,
                            FortranArg destinations, FortranArg weights, FortranArg info, FortranArg reorder,
                            MPI_Fint* comm, MPI_Fint* ierr) {
    created_in_fortran(comm, ierr, "MPI_Dist_graph_create", [&](MPI_Fint* e) {
        pmpi_dist_graph_create_(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm, e);
    });
}

void mpi_graph_create_(FortranArg comm_old, FortranArg nnodes, FortranArg index, FortranArg edges, FortranArg reorder,
                       MPI_Fint* comm, MPI_Fint* ierr) {
    created_in_fortran(comm, ierr, "MPI_Graph_create",
                       [&](MPI_Fint* e) { pmpi_graph_create_(comm_old, nnodes, index, edges, reorder, comm, e); });
}

void mpi_cart_create_(FortranArg comm_old, FortranArg ndims, FortranArg dims, FortranArg periods, FortranArg reorder,
                      MPI_Fint* comm, MPI_Fint* ierr) {
    created_in_fortran(comm, ierr, "MPI_Cart_create",
                       [&](MPI_Fint* e) { pmpi_cart_create_(comm_old, ndims, dims, periods, reorder, comm, e); });
}

#if defined(OPEN_MPI) && OPEN_MPI
// mpi_f08 (Open MPI 4.1: the same arguments, the same implementation behind them).
__attribute__((alias("mpi_dist_graph_create_adjacent_"))) void mpi_dist_graph_create_adjacent_f08_(
    FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg, FortranArg,
    MPI_Fint*, MPI_Fint*);
__attribute__((alias("mpi_dist_graph_create_"))) void mpi_dist_graph_create_f08_(FortranArg, FortranArg, FortranArg,
                                                                                 FortranArg, FortranArg, FortranArg,
                                                                                 FortranArg, FortranArg, MPI_Fint*,
                                                                                 MPI_Fint*);
__attribute__((alias("mpi_graph_create_"))) void mpi_graph_create_f08_(FortranArg, FortranArg, FortranArg, FortranArg,
                                                                       FortranArg, MPI_Fint*, MPI_Fint*);
__attribute__((alias("mpi_cart_create_"))) void mpi_cart_create_f08_(FortranArg, FortranArg, FortranArg, FortranArg,
                                                                     FortranArg, MPI_Fint*, MPI_Fint*);
#endif

}  // extern "C"
