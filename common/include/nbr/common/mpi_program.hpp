#pragma once

// Shared plumbing of nbr's MPI programs (nbrc and the benchmarks) and of libnbr (broadcast_strings).
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>

namespace nbr::common {

/// @brief Initializes MPI, runs `body(argc, argv)`, prints an uncaught exception once (rank 0)
/// prefixed with `program`, and finalizes MPI on every path. Returns the exit status.
int run_mpi_program(int argc, char** argv, const std::string& program, const std::function<int(int, char**)>& body);

/// @brief What the programs say when an allocation fails (instead of "std::bad_alloc").
inline constexpr const char* kOutOfMemory =
    "out of memory: the input needs more memory than this process could allocate";

/// @brief An MPI call returned an error (a communicator whose error handler returns): what()
/// names the call and MPI's error string.
class MpiError : public std::runtime_error {
public:
    MpiError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
    [[nodiscard]] int code() const noexcept { return code_; }

private:
    int code_;
};

/// @brief Returns rank 0's `values` on every process of `comm` (collective: three broadcasts,
/// the count, the lengths, the bytes; only rank 0's `values` are read). Throws MpiError when
/// MPI returns an error, and std::length_error on every process when rank 0's strings hold
/// more than INT_MAX bytes in all (rank 0 says so in the first broadcast: no process waits).
[[nodiscard]] std::vector<std::string> broadcast_strings(MPI_Comm comm, const std::vector<std::string>& values);

/// @brief Returns rank 0's `value` on every process of `comm`. Collective; as broadcast_strings.
[[nodiscard]] std::string broadcast_string(MPI_Comm comm, std::string value);

namespace internal {

/// @brief broadcast_strings with the limit on rank 0's bytes in all as a parameter (INT_MAX
/// there), so that a test can reach it.
[[nodiscard]] std::vector<std::string> broadcast_strings(MPI_Comm comm, const std::vector<std::string>& values,
                                                         std::size_t max_bytes);

}  // namespace internal

}  // namespace nbr::common
