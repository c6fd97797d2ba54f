#pragma once
// The 15 neighborhood collectives of MPI-4.1 section 8.6, listed once. The drop-in library's C
// wrappers (preload.cpp), its Fortran wrappers, their f08 aliases and the declarations of the
// MPI library's Fortran profiling entries (preload_fortran.cpp) are all generated from this
// table, so the bindings cannot drift apart.
//
// NBR_NEIGHBOR_COLLECTIVES(X) calls X(mode, shape, Cname, fname) once per collective:
//   mode   BLOCKING, NONBLOCKING or PERSISTENT: the trailing arguments (comm; comm, request;
//          comm, info, request) and how libnbr replays the call;
//   shape  FIXED, ALLGATHERV, ALLTOALLV or ALLTOALLW: the buffer arguments;
//   Cname  the C name after its prefix (MPI_, or for persistent ones the MPI library's: MPIX_
//          on Open MPI 4.1, MPI_ on MPI-4 libraries), e.g. Ineighbor_allgather;
//   fname  the same in lower case: libnbr's function is nbr_<fname>, the Fortran entry point
//          <prefix><fname>_ in gfortran's naming.
#define NBR_NEIGHBOR_COLLECTIVES(X)                                               \
    X(BLOCKING, FIXED, Neighbor_allgather, neighbor_allgather)                    \
    X(BLOCKING, FIXED, Neighbor_alltoall, neighbor_alltoall)                      \
    X(BLOCKING, ALLGATHERV, Neighbor_allgatherv, neighbor_allgatherv)             \
    X(BLOCKING, ALLTOALLV, Neighbor_alltoallv, neighbor_alltoallv)                \
    X(BLOCKING, ALLTOALLW, Neighbor_alltoallw, neighbor_alltoallw)                \
    X(NONBLOCKING, FIXED, Ineighbor_allgather, ineighbor_allgather)               \
    X(NONBLOCKING, FIXED, Ineighbor_alltoall, ineighbor_alltoall)                 \
    X(NONBLOCKING, ALLGATHERV, Ineighbor_allgatherv, ineighbor_allgatherv)        \
    X(NONBLOCKING, ALLTOALLV, Ineighbor_alltoallv, ineighbor_alltoallv)           \
    X(NONBLOCKING, ALLTOALLW, Ineighbor_alltoallw, ineighbor_alltoallw)           \
    X(PERSISTENT, FIXED, Neighbor_allgather_init, neighbor_allgather_init)        \
    X(PERSISTENT, FIXED, Neighbor_alltoall_init, neighbor_alltoall_init)          \
    X(PERSISTENT, ALLGATHERV, Neighbor_allgatherv_init, neighbor_allgatherv_init) \
    X(PERSISTENT, ALLTOALLV, Neighbor_alltoallv_init, neighbor_alltoallv_init)    \
    X(PERSISTENT, ALLTOALLW, Neighbor_alltoallw_init, neighbor_alltoallw_init)

// MPI-4's large-count forms (counts as MPI_Count, displacements as MPI_Aint), wrapped where the
// MPI library has them (NBR_WRAP_LARGE_COUNT: MPICH 4; Open MPI 4.1 has none). libnbr offers
// them under the same condition (NBR_HAVE_LARGE_COUNT in nbr.h).
#if MPI_VERSION >= 4
#define NBR_WRAP_LARGE_COUNT 1
#else
#define NBR_WRAP_LARGE_COUNT 0
#endif
#define NBR_LARGE_COUNT_COLLECTIVES(X)                                                  \
    X(BLOCKING, FIXED_C, Neighbor_allgather_c, neighbor_allgather_c)                    \
    X(BLOCKING, FIXED_C, Neighbor_alltoall_c, neighbor_alltoall_c)                      \
    X(BLOCKING, ALLGATHERV_C, Neighbor_allgatherv_c, neighbor_allgatherv_c)             \
    X(BLOCKING, ALLTOALLV_C, Neighbor_alltoallv_c, neighbor_alltoallv_c)                \
    X(BLOCKING, ALLTOALLW_C, Neighbor_alltoallw_c, neighbor_alltoallw_c)                \
    X(NONBLOCKING, FIXED_C, Ineighbor_allgather_c, ineighbor_allgather_c)               \
    X(NONBLOCKING, FIXED_C, Ineighbor_alltoall_c, ineighbor_alltoall_c)                 \
    X(NONBLOCKING, ALLGATHERV_C, Ineighbor_allgatherv_c, ineighbor_allgatherv_c)        \
    X(NONBLOCKING, ALLTOALLV_C, Ineighbor_alltoallv_c, ineighbor_alltoallv_c)           \
    X(NONBLOCKING, ALLTOALLW_C, Ineighbor_alltoallw_c, ineighbor_alltoallw_c)           \
    X(PERSISTENT, FIXED_C, Neighbor_allgather_init_c, neighbor_allgather_init_c)        \
    X(PERSISTENT, FIXED_C, Neighbor_alltoall_init_c, neighbor_alltoall_init_c)          \
    X(PERSISTENT, ALLGATHERV_C, Neighbor_allgatherv_init_c, neighbor_allgatherv_init_c) \
    X(PERSISTENT, ALLTOALLV_C, Neighbor_alltoallv_init_c, neighbor_alltoallv_init_c)    \
    X(PERSISTENT, ALLTOALLW_C, Neighbor_alltoallw_init_c, neighbor_alltoallw_init_c)

#define NBR_COUNT_COLLECTIVE(mode, shape, Cname, fname) +1
static_assert(0 NBR_NEIGHBOR_COLLECTIVES(NBR_COUNT_COLLECTIVE) == 15,
              "MPI-4.1 has 15 neighborhood collectives: 5 blocking, 5 nonblocking, 5 persistent");

#define NBR_CAT_(a, b) a##b
#define NBR_CAT(a, b) NBR_CAT_(a, b)
#define NBR_STR_(a) #a
#define NBR_STR(a) NBR_STR_(a)
/// NBR_CAT(NBR_WHEN_, flag)(text): the text if flag is 1, nothing if 0.
#define NBR_WHEN_0(...)
#define NBR_WHEN_1(...) __VA_ARGS__

// ---- C binding ---------------------------------------------------------------------------------

// Persistent collectives: MPI-4's MPI_Neighbor_*_init (MPICH 4), or Open MPI 4.1's MPIX_
// extension (mpi-ext.h, included before this header). Without either, none are wrapped.
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_C_PREFIX_PERSISTENT MPIX_
#define NBR_HAVE_PERSISTENT 1
#elif MPI_VERSION >= 4
#define NBR_C_PREFIX_PERSISTENT MPI_
#define NBR_HAVE_PERSISTENT 1
#else
#define NBR_HAVE_PERSISTENT 0
#endif
#define NBR_C_PREFIX_BLOCKING MPI_
#define NBR_C_PREFIX_NONBLOCKING MPI_
#define NBR_HAVE_BLOCKING 1
#define NBR_HAVE_NONBLOCKING 1

/// The C entry point of a row, and the MPI library's profiling entry it passes through to.
#define NBR_C_NAME(mode, Cname) NBR_CAT(NBR_C_PREFIX_##mode, Cname)
#define NBR_PMPI_NAME(mode, Cname) NBR_CAT(P, NBR_C_NAME(mode, Cname))

#define NBR_C_PARAMS_FIXED \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype
#define NBR_C_ARGS_FIXED sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype
#define NBR_C_PARAMS_ALLGATHERV                                                                       \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], \
        const int displs[], MPI_Datatype recvtype
#define NBR_C_ARGS_ALLGATHERV sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype
#define NBR_C_PARAMS_ALLTOALLV                                                                              \
    const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, \
        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype
#define NBR_C_ARGS_ALLTOALLV sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype
#define NBR_C_PARAMS_ALLTOALLW                                                                             \
    const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], \
        void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]
#define NBR_C_ARGS_ALLTOALLW sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes

#define NBR_C_PARAMS_FIXED_C                                                                             \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, \
        MPI_Datatype recvtype
#define NBR_C_ARGS_FIXED_C NBR_C_ARGS_FIXED
#define NBR_C_PARAMS_ALLGATHERV_C                                                                                 \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], \
        const MPI_Aint displs[], MPI_Datatype recvtype
#define NBR_C_ARGS_ALLGATHERV_C NBR_C_ARGS_ALLGATHERV
#define NBR_C_PARAMS_ALLTOALLV_C                                                                                       \
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, \
        const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype
#define NBR_C_ARGS_ALLTOALLV_C NBR_C_ARGS_ALLTOALLV
#define NBR_C_PARAMS_ALLTOALLW_C                                                                                 \
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], \
        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]
#define NBR_C_ARGS_ALLTOALLW_C NBR_C_ARGS_ALLTOALLW

#define NBR_C_TAIL_PARAMS_BLOCKING MPI_Comm comm
#define NBR_C_TAIL_ARGS_BLOCKING comm
#define NBR_C_TAIL_PARAMS_NONBLOCKING MPI_Comm comm, MPI_Request *request
#define NBR_C_TAIL_ARGS_NONBLOCKING comm, request
#define NBR_C_TAIL_PARAMS_PERSISTENT MPI_Comm comm, MPI_Info info, MPI_Request *request
#define NBR_C_TAIL_ARGS_PERSISTENT comm, info, request

// ---- Fortran binding (gfortran's names; Open MPI builds) -----------------------------------------

#define NBR_F_PREFIX_BLOCKING mpi_
#define NBR_F_PREFIX_NONBLOCKING mpi_
#define NBR_F_PREFIX_PERSISTENT mpix_  // Open MPI 4.1's Fortran names of the MPIX_ extension

/// The Fortran entry point of a row, its f08 alias and the MPI library's profiling entry.
#define NBR_F_NAME(mode, fname) NBR_CAT(NBR_CAT(NBR_F_PREFIX_##mode, fname), _)
#define NBR_F08_NAME(mode, fname) NBR_CAT(NBR_CAT(NBR_F_PREFIX_##mode, fname), _f08_)
#define NBR_PF_NAME(mode, fname) NBR_CAT(p, NBR_F_NAME(mode, fname))

#define NBR_F_PARAMS_FIXED Buffer sb, F *sc, F *st, Buffer rb, F *rc, F *rt
#define NBR_F_ARGS_FIXED sb, sc, st, rb, rc, rt
#define NBR_F_NBR_ARGS_FIXED buffer(sb), *sc, type(st), buffer(rb), *rc, type(rt)
#define NBR_F_PARAMS_ALLGATHERV Buffer sb, F *sc, F *st, Buffer rb, F *rcs, F *rds, F *rt
#define NBR_F_ARGS_ALLGATHERV sb, sc, st, rb, rcs, rds, rt
#define NBR_F_NBR_ARGS_ALLGATHERV buffer(sb), *sc, type(st), buffer(rb), rcs, rds, type(rt)
#define NBR_F_PARAMS_ALLTOALLV Buffer sb, F *scs, F *sds, F *st, Buffer rb, F *rcs, F *rds, F *rt
#define NBR_F_ARGS_ALLTOALLV sb, scs, sds, st, rb, rcs, rds, rt
#define NBR_F_NBR_ARGS_ALLTOALLV buffer(sb), scs, sds, type(st), buffer(rb), rcs, rds, type(rt)
// alltoallw: displacements are INTEGER(KIND=MPI_ADDRESS_KIND), datatypes an array of handles.
#define NBR_F_PARAMS_ALLTOALLW Buffer sb, F *scs, MPI_Aint *sds, F *sts, Buffer rb, F *rcs, MPI_Aint *rds, F *rts
#define NBR_F_ARGS_ALLTOALLW sb, scs, sds, sts, rb, rcs, rds, rts
#define NBR_F_NBR_ARGS_ALLTOALLW \
    buffer(sb), scs, sds, types(comm, sts, Side::send), buffer(rb), rcs, rds, types(comm, rts, Side::recv)

#define NBR_F_TAIL_PARAMS_BLOCKING F *comm, F *ierr
#define NBR_F_TAIL_ARGS_BLOCKING comm
#define NBR_F_TAIL_PARAMS_NONBLOCKING F *comm, F *request, F *ierr
#define NBR_F_TAIL_ARGS_NONBLOCKING comm, request
#define NBR_F_TAIL_PARAMS_PERSISTENT F *comm, F *info, F *request, F *ierr
#define NBR_F_TAIL_ARGS_PERSISTENT comm, info, request
