// The neighborhood collectives of the example applications, on a topology communicator.
//
// The ordinary build calls MPI's collectives: that is the program an application developer
// writes, which runs natively or, unmodified, under nbr's drop-in library (LD_PRELOAD). The
// `-nbr` build links the same object code with neighbor_exchange_nbr.cpp and libnbr instead of
// neighbor_exchange_mpi.cpp, which adds the option `--nbr DIR`: the program loads the compiled
// pattern DIR on its communicator and calls the nbr_* collectives, which is how a developer who
// would rather change the code uses nbr.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace example {

/// @brief The collectives of a compiled pattern loaded on a communicator (libnbr's, in the
/// -nbr build: neighbor_exchange_nbr.cpp). Errors abort the run with libnbr's message.
class PatternReplay {
public:
    virtual ~PatternReplay() = default;
    /// "nbr (ALGORITHM)".
    [[nodiscard]] virtual std::string backend() const = 0;
    virtual void allgather(const void* send, int count, MPI_Datatype type, void* recv) = 0;
    virtual void alltoall(const void* send, int count, MPI_Datatype type, void* recv) = 0;
    virtual void alltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv,
                           const int* recvcounts, const int* rdispls, MPI_Datatype type) = 0;
    virtual void ialltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv,
                            const int* recvcounts, const int* rdispls, MPI_Datatype type) = 0;
    virtual void wait() = 0;
};

/// @brief Adds `--nbr DIR` in the -nbr build; the native build has no such option.
void add_nbr_option(CLI::App& app, std::string& pattern_dir);

/// @brief The pattern `pattern_dir` loaded on `comm` (the -nbr build); the native build, or a
/// pattern libnbr rejects, aborts the run with a message.
std::unique_ptr<PatternReplay> load_pattern_replay(MPI_Comm comm, const std::string& pattern_dir);

/// @brief MPI's collectives on `comm`, or a loaded pattern's when the run names one.
class NeighborExchange {
public:
    /// `pattern_dir` empty: MPI's collectives on `comm`. Otherwise the pattern loaded on `comm`
    /// (load_pattern_replay).
    NeighborExchange(MPI_Comm comm, const std::string& pattern_dir)
        : comm_(comm), replay_(pattern_dir.empty() ? nullptr : load_pattern_replay(comm, pattern_dir)) {}

    /// "MPI" or "nbr (ALGORITHM)".
    [[nodiscard]] std::string backend() const { return replay_ ? replay_->backend() : "MPI"; }

    void allgather(const void* send, int count, MPI_Datatype type, void* recv) {
        if (replay_) return replay_->allgather(send, count, type, recv);
        MPI_Neighbor_allgather(send, count, type, recv, count, type, comm_);
    }

    void alltoall(const void* send, int count, MPI_Datatype type, void* recv) {
        if (replay_) return replay_->alltoall(send, count, type, recv);
        MPI_Neighbor_alltoall(send, count, type, recv, count, type, comm_);
    }

    void alltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv, const int* recvcounts,
                   const int* rdispls, MPI_Datatype type) {
        if (replay_) return replay_->alltoallv(send, sendcounts, sdispls, recv, recvcounts, rdispls, type);
        MPI_Neighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, comm_);
    }

    /// Starts MPI_Ineighbor_alltoallv; complete it with wait() before touching the buffers.
    void ialltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv, const int* recvcounts,
                    const int* rdispls, MPI_Datatype type) {
        if (replay_) return replay_->ialltoallv(send, sendcounts, sdispls, recv, recvcounts, rdispls, type);
        MPI_Ineighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, comm_, &request_);
    }

    void wait() {
        if (replay_) return replay_->wait();
        MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }

private:
    MPI_Comm comm_;
    MPI_Request request_ = MPI_REQUEST_NULL;
    std::unique_ptr<PatternReplay> replay_;
};

}  // namespace example
