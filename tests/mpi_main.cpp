// GoogleTest main for MPI tests: initializes MPI, lets rank 0 print the usual report,
// prints failures of other ranks prefixed with their rank, and fails every rank's exit
// code if any rank failed.
#include <cstdio>

#include <gtest/gtest.h>
#include <mpi.h>

namespace {

class RankFailurePrinter : public testing::EmptyTestEventListener {
public:
    explicit RankFailurePrinter(int rank) : rank_(rank) {}
    void OnTestPartResult(const testing::TestPartResult& result) override {
        if (!result.failed()) return;
        std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                     result.line_number(), result.summary());
    }

private:
    int rank_;
};

}  // namespace

// The thread level a test executable asks for (nbr_add_mpi_test(... THREAD_MULTIPLE)).
#ifndef NBR_TEST_THREAD_LEVEL
#define NBR_TEST_THREAD_LEVEL MPI_THREAD_SINGLE
#endif

int main(int argc, char** argv) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, NBR_TEST_THREAD_LEVEL, &provided);
    testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        auto& listeners = testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new RankFailurePrinter(rank));
    }
    const int local = RUN_ALL_TESTS();
    int global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return global;
}
