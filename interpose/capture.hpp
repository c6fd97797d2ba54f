#pragma once
// libnbr-capture's internals shared by its C wrappers (capture.cpp) and, where the MPI library's
// Fortran binding bypasses the C wrappers, its Fortran wrappers (capture_fortran.cpp): counting
// the neighborhood collectives called on captured communicators, and writing them out.
#include <string_view>

#include "nbr/graphs/captured_calls.hpp"
#include "neighbors.hpp"

namespace nbr::interpose {

/// @brief The shape of a collective from its name in collective_table.hpp (at compile time).
constexpr CallKind kind_of(std::string_view name) {
    if (name.ends_with("_c")) name.remove_suffix(2);  // the large-count forms
    // alltoallw counts as alltoallv: the same plan, blocks of their own sizes.
    const bool v = name.back() == 'v' || name.ends_with("v_init") || name.back() == 'w' || name.ends_with("w_init");
    if (name.find("alltoall") != std::string_view::npos) return v ? CallKind::alltoallv : CallKind::alltoall;
    return v ? CallKind::allgatherv : CallKind::allgather;
}

/// @brief Counts one call on `comm` if it is a captured communicator (no-op otherwise). Never
/// throws. A fixed-size call's block is the larger of its send and receive block (MPI
/// requires them to agree; libnbr picks its band the same way); an allgatherv rank sends its
/// one block on every out-edge; an alltoallv rank sends sendcounts[j] on out-edge j.
void record_fixed(MPI_Comm comm, CallKind kind, MPI_Count sendcount, MPI_Datatype sendtype, MPI_Count recvcount,
                  MPI_Datatype recvtype);
void record_allgatherv(MPI_Comm comm, CallKind kind, MPI_Count sendcount, MPI_Datatype sendtype);
void record_alltoallv(MPI_Comm comm, CallKind kind, const int sendcounts[], MPI_Datatype sendtype);
void record_alltoallv(MPI_Comm comm, CallKind kind, const MPI_Count sendcounts[], MPI_Datatype sendtype);
/// @brief An alltoallw rank sends sendcounts[j] elements of sendtypes[j] on out-edge j.
void record_alltoallw(MPI_Comm comm, CallKind kind, const int sendcounts[], const MPI_Datatype sendtypes[]);
void record_alltoallw(MPI_Comm comm, CallKind kind, const MPI_Count sendcounts[], const MPI_Datatype sendtypes[]);
/// @brief The same with the datatypes' Fortran handles.
void record_alltoallw_fortran(MPI_Comm comm, CallKind kind, const int sendcounts[], const MPI_Fint sendtypes[]);

/// @brief Before MPI_Comm_free: writes a captured communicator's calls (collective over it) and
/// forgets it. Never throws.
void on_comm_free(MPI_Comm comm);

/// @brief Before MPI_Finalize: the calls of the captured communicators still alive. Never throws.
void on_finalize();

}  // namespace nbr::interpose
