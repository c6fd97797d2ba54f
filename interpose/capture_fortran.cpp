// libnbr-capture's Fortran wrappers of the calls it counts, for MPI libraries whose Fortran
// binding calls PMPI_* directly and so bypasses the C wrappers (Open MPI 4.1: `use mpi`,
// mpif.h and `use mpi_f08`). MPICH's Fortran binding calls the C binding, so there the C
// wrappers serve Fortran programs as they are and this file adds nothing. (The topology
// constructors are wrapped for both libraries in constructors.cpp.)
//
// Each wrapper counts the call as the C wrapper does, then calls the MPI library's own Fortran
// profiling entry (pmpi_..._, weak: absent in a program without Fortran) with the arguments
// untouched. `mpi_f08`'s `_f08_` names are aliases (Open MPI 4.1's f08 procedures take the same
// arguments).
#include "capture.hpp"

#if defined(OPEN_MPI) && OPEN_MPI

#include <mpi-ext.h>

#include "collective_table.hpp"

using F = MPI_Fint;
using Buffer = void*;

extern "C" {
#define NBR_PF_DECLARATION(mode, shape, Cname, fname) \
    void NBR_PF_NAME(mode, fname)(NBR_F_PARAMS_##shape, NBR_F_TAIL_PARAMS_##mode) __attribute__((weak));
NBR_NEIGHBOR_COLLECTIVES(NBR_PF_DECLARATION)
void pmpi_comm_free_(F*, F*) __attribute__((weak));
void pmpi_finalize_(F*) __attribute__((weak));
}

namespace {

using nbr::CallKind;
using nbr::interpose::kind_of;

MPI_Comm comm_of(const F* comm) {
    return PMPI_Comm_f2c(*comm);
}
MPI_Datatype type_of(const F* type) {
    return PMPI_Type_f2c(*type);
}

// The Fortran binding's arguments to the recorders (counts are Fortran INTEGERs).
void record_f_FIXED(const F* comm, CallKind kind, NBR_F_PARAMS_FIXED) {
    (void)sb, (void)rb;
    nbr::interpose::record_fixed(comm_of(comm), kind, *sc, type_of(st), *rc, type_of(rt));
}
void record_f_ALLGATHERV(const F* comm, CallKind kind, NBR_F_PARAMS_ALLGATHERV) {
    (void)sb, (void)rb, (void)rcs, (void)rds, (void)rt;
    nbr::interpose::record_allgatherv(comm_of(comm), kind, *sc, type_of(st));
}
void record_f_ALLTOALLV(const F* comm, CallKind kind, NBR_F_PARAMS_ALLTOALLV) {
    (void)sb, (void)sds, (void)rb, (void)rcs, (void)rds, (void)rt;
    static_assert(sizeof(F) == sizeof(int), "Fortran INTEGER counts are read as int");
    nbr::interpose::record_alltoallv(comm_of(comm), kind, reinterpret_cast<const int*>(scs), type_of(st));
}

void record_f_ALLTOALLW(const F* comm, CallKind kind, NBR_F_PARAMS_ALLTOALLW) {
    (void)sb, (void)sds, (void)rb, (void)rcs, (void)rds, (void)rts;
    nbr::interpose::record_alltoallw_fortran(comm_of(comm), kind, reinterpret_cast<const int*>(scs), sts);
}

}  // namespace

extern "C" {

// The 15 neighborhood collectives (collective_table.hpp).
#define NBR_F_CAPTURE_WRAPPER(mode, shape, Cname, fname)                            \
    void NBR_F_NAME(mode, fname)(NBR_F_PARAMS_##shape, NBR_F_TAIL_PARAMS_##mode) {  \
        record_f_##shape(comm, kind_of(NBR_STR(Cname)), NBR_F_ARGS_##shape);        \
        NBR_PF_NAME(mode, fname)(NBR_F_ARGS_##shape, NBR_F_TAIL_ARGS_##mode, ierr); \
    }
NBR_NEIGHBOR_COLLECTIVES(NBR_F_CAPTURE_WRAPPER)

void mpi_comm_free_(F* comm, F* ierr) {
    nbr::interpose::on_comm_free(comm_of(comm));
    pmpi_comm_free_(comm, ierr);
}

void mpi_finalize_(F* ierr) {
    nbr::interpose::on_finalize();
    pmpi_finalize_(ierr);
}

// mpi_f08.
#define NBR_F08_CAPTURE_ALIAS(mode, shape, Cname, fname)                                                          \
    __attribute__((alias(NBR_STR(NBR_F_NAME(mode, fname))))) void NBR_F08_NAME(mode, fname)(NBR_F_PARAMS_##shape, \
                                                                                            NBR_F_TAIL_PARAMS_##mode);
NBR_NEIGHBOR_COLLECTIVES(NBR_F08_CAPTURE_ALIAS)
__attribute__((alias("mpi_comm_free_"))) void mpi_comm_free_f08_(F*, F*);
__attribute__((alias("mpi_finalize_"))) void mpi_finalize_f08_(F*);

}  // extern "C"

#endif  // OPEN_MPI
