// nbr::common::broadcast_strings: rank 0's strings on every process, its limit reached on
// every process at once, and MPI's errors as MpiError.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr/common/mpi_program.hpp"

namespace {

int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/// What this process passes: rank 0 the strings, the others something else (never read).
std::vector<std::string> mine(const std::vector<std::string>& root) {
    return world_rank() == 0 ? root : std::vector<std::string>{"not", "rank", "0's"};
}

TEST(BroadcastStrings, EveryProcessGetsRankZerosStringsEmptyOnesAndNoneIncluded) {
    const std::vector<std::string> root{"nbr_algo", "", std::string("a\0b", 3), std::string(100000, 'x'), ""};
    EXPECT_EQ(nbr::common::broadcast_strings(MPI_COMM_WORLD, mine(root)), root);
    EXPECT_TRUE(nbr::common::broadcast_strings(MPI_COMM_WORLD, mine({})).empty());
    EXPECT_EQ(nbr::common::broadcast_string(MPI_COMM_WORLD, world_rank() == 0 ? "dir/out" : "other"), "dir/out");
}

TEST(BroadcastStrings, OverTheLimitEveryProcessThrowsAndTheNextBroadcastStillMatches) {
    const std::vector<std::string> root{"0123456789", "abcdef"};  // 16 bytes
    EXPECT_EQ(nbr::common::internal::broadcast_strings(MPI_COMM_WORLD, mine(root), 16), root);
    EXPECT_THROW((void)nbr::common::internal::broadcast_strings(MPI_COMM_WORLD, mine(root), 15), std::length_error);
    EXPECT_EQ(nbr::common::broadcast_strings(MPI_COMM_WORLD, mine({"after"})), std::vector<std::string>{"after"});
}

TEST(BroadcastStrings, AnMpiErrorIsThrownAsMpiErrorNamingTheCall) {
    // MPI_COMM_NULL: MPI reports MPI_ERR_COMM through MPI_COMM_WORLD's error handler (no
    // communicator of its own), which returns here.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    try {
        (void)nbr::common::broadcast_strings(MPI_COMM_NULL, {"x"});
        ADD_FAILURE() << "no error";
    } catch (const nbr::common::MpiError& error) {
        EXPECT_NE(error.code(), MPI_SUCCESS);
        EXPECT_NE(std::string(error.what()).find("MPI_Comm_rank failed"), std::string::npos) << error.what();
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace
