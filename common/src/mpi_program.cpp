#include "nbr/common/mpi_program.hpp"

#include <climits>
#include <cstdio>
#include <exception>
#include <new>
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
    if (code != MPI_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed (MPI error " + std::to_string(code) + ")");
}

}  // namespace

std::vector<std::string> broadcast_strings(MPI_Comm comm, const std::vector<std::string>& values) {
    int rank = 0;
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    std::vector<int> lengths;
    std::string bytes;
    if (rank == 0) {
        for (const auto& value : values) {
            if (value.size() > static_cast<std::size_t>(INT_MAX) - bytes.size())
                throw std::runtime_error("broadcast_strings: more than INT_MAX bytes");
            lengths.push_back(static_cast<int>(value.size()));
            bytes += value;
        }
    }
    int count = static_cast<int>(lengths.size());
    check(MPI_Bcast(&count, 1, MPI_INT, 0, comm), "MPI_Bcast");
    lengths.resize(static_cast<std::size_t>(count));
    check(MPI_Bcast(lengths.data(), count, MPI_INT, 0, comm), "MPI_Bcast");
    std::size_t total = 0;
    for (const int length : lengths) total += static_cast<std::size_t>(length);
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

std::string broadcast_string(MPI_Comm comm, std::string value) {
    return broadcast_strings(comm, {std::move(value)}).front();
}

}  // namespace nbr::common
