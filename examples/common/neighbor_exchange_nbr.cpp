// The -nbr build of the example applications: `--nbr DIR` loads a compiled pattern and the
// collectives replay it through libnbr's API (neighbor_exchange.hpp).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "common/neighbor_exchange.hpp"
#include "nbr.h"

namespace example {

namespace {

class LibnbrReplay final : public PatternReplay {
public:
    LibnbrReplay(MPI_Comm comm, const std::string& pattern_dir) : comm_(comm) {
        check(nbr_load_pattern(pattern_dir.c_str(), comm, &pattern_), "nbr_load_pattern");
    }
    LibnbrReplay(const LibnbrReplay&) = delete;
    LibnbrReplay& operator=(const LibnbrReplay&) = delete;
    ~LibnbrReplay() override {
        if (pattern_ != NBR_PATTERN_NULL) nbr_pattern_free(&pattern_);
    }

    [[nodiscard]] std::string backend() const override {
        const char* name = "";
        nbr_pattern_algorithm(pattern_, &name);
        return std::string("nbr (") + name + ")";
    }

    void allgather(const void* send, int count, MPI_Datatype type, void* recv) override {
        check(nbr_neighbor_allgather(send, count, type, recv, count, type, pattern_), "allgather");
    }

    void alltoall(const void* send, int count, MPI_Datatype type, void* recv) override {
        check(nbr_neighbor_alltoall(send, count, type, recv, count, type, pattern_), "alltoall");
    }

    void alltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv, const int* recvcounts,
                   const int* rdispls, MPI_Datatype type) override {
        check(nbr_neighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, pattern_),
              "alltoallv");
    }

    void ialltoallv(const void* send, const int* sendcounts, const int* sdispls, void* recv, const int* recvcounts,
                    const int* rdispls, MPI_Datatype type) override {
        check(nbr_ineighbor_alltoallv(send, sendcounts, sdispls, type, recv, recvcounts, rdispls, type, pattern_,
                                      &request_),
              "ialltoallv");
    }

    void wait() override { check(nbr_wait(&request_), "wait"); }

private:
    void check(int code, const char* what) const {
        if (code == NBR_SUCCESS) return;
        std::fprintf(stderr, "nbr %s: %s: %s\n", what, nbr_strerror(code), nbr_last_error());
        MPI_Abort(comm_, 2);
        std::abort();  // not reached
    }

    MPI_Comm comm_;
    nbr_pattern_t pattern_ = NBR_PATTERN_NULL;
    nbr_request_t request_ = NBR_REQUEST_NULL;
};

}  // namespace

void add_nbr_option(CLI::App& app, std::string& pattern_dir) {
    app.add_option("--nbr", pattern_dir, "Replay with libnbr: the pattern directory nbrc compiled for this run");
}

std::unique_ptr<PatternReplay> load_pattern_replay(MPI_Comm comm, const std::string& pattern_dir) {
    return std::make_unique<LibnbrReplay>(comm, pattern_dir);
}

}  // namespace example
