#include "nbr/common/mpi_program.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <utility>

namespace nbr::common {

int run_mpi_program(int argc, char** argv, const std::string& program, const std::function<int(int, char**)>& body) {
    MPI_Init(&argc, &argv);
    int status = 0;
    try {
        status = body(argc, argv);
    } catch (const std::exception& error) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        const bool memory = dynamic_cast<const std::bad_alloc*>(&error) != nullptr;
        if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", program.c_str(), memory ? kOutOfMemory : error.what());
        status = 1;
    }
    MPI_Finalize();
    return status;
}

namespace {

void check(int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
    throw MpiError(code, std::string(call) + " failed: " +
                             (length > 0 ? std::string(text, length) : "MPI error " + std::to_string(code)));
}

/// Rank 0's lengths of `values` (their sum at most max_bytes), or none if they exceed it.
std::optional<std::vector<int>> lengths_within(const std::vector<std::string>& values, std::size_t max_bytes) {
    std::vector<int> lengths;
    std::size_t total = 0;
    for (const auto& value : values) {
        if (value.size() > max_bytes - total) return std::nullopt;
        total += value.size();
        lengths.push_back(static_cast<int>(value.size()));
    }
    return lengths;
}

}  // namespace

namespace internal {

std::vector<std::string> broadcast_strings(MPI_Comm comm, const std::vector<std::string>& values,
                                           std::size_t max_bytes) {
    max_bytes = std::min<std::size_t>(max_bytes, INT_MAX);
    int rank = 0;
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    std::vector<int> lengths;
    int count = 0;  // -1: rank 0's strings are over the limit
    if (rank == 0) {
        auto within = lengths_within(values, max_bytes);
        count = within ? static_cast<int>(within->size()) : -1;
        if (within) lengths = std::move(*within);
    }
    check(MPI_Bcast(&count, 1, MPI_INT, 0, comm), "MPI_Bcast");
    if (count < 0)
        throw std::length_error("broadcast_strings: rank 0's strings hold more than " + std::to_string(max_bytes) +
                                " bytes in all");
    lengths.resize(static_cast<std::size_t>(count));
    check(MPI_Bcast(lengths.data(), count, MPI_INT, 0, comm), "MPI_Bcast");
    std::size_t total = 0;
    for (const int length : lengths) total += static_cast<std::size_t>(length);
    std::string bytes;
    if (rank == 0) {
        bytes.reserve(total);
        for (const auto& value : values) bytes += value;
    }
    bytes.resize(total);
    check(MPI_Bcast(bytes.data(), static_cast<int>(total), MPI_CHAR, 0, comm), "MPI_Bcast");
    std::vector<std::string> result;
    result.reserve(lengths.size());
    std::size_t at = 0;
    for (const int length : lengths) {
        result.push_back(bytes.substr(at, static_cast<std::size_t>(length)));
        at += static_cast<std::size_t>(length);
    }
    return result;
}

}  // namespace internal

std::vector<std::string> broadcast_strings(MPI_Comm comm, const std::vector<std::string>& values) {
    return internal::broadcast_strings(comm, values, INT_MAX);
}

std::string broadcast_string(MPI_Comm comm, std::string value) {
    return broadcast_strings(comm, {std::move(value)}).front();
}

}  // namespace nbr::common
