// The topology constructors, wrapped for both interposition libraries: each calls MPI, then
// hands a successfully created communicator to the library's on_topology_created().
#include "neighbors.hpp"

extern "C" {

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
    const int code = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                                     destinations, destweights, info, reorder, comm_dist_graph);
    if (code == MPI_SUCCESS) nbr::interpose::on_topology_created(*comm_dist_graph, "MPI_Dist_graph_create_adjacent");
    return code;
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
    const int code =
        PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
    if (code == MPI_SUCCESS) nbr::interpose::on_topology_created(*comm_dist_graph, "MPI_Dist_graph_create");
    return code;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
    const int code = PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph);
    if (code == MPI_SUCCESS) nbr::interpose::on_topology_created(*comm_graph, "MPI_Graph_create");
    return code;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
    const int code = PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    if (code == MPI_SUCCESS) nbr::interpose::on_topology_created(*comm_cart, "MPI_Cart_create");
    return code;
}

}  // extern "C"
