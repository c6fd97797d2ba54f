#include "nbr/common/mpi_program.hpp"

#include <cstdio>
#include <exception>
#include <new>

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

std::string broadcast_string(MPI_Comm comm, std::string value) {
    int length = static_cast<int>(value.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, comm);
    value.resize(static_cast<std::size_t>(length));
    MPI_Bcast(value.data(), length, MPI_CHAR, 0, comm);
    return value;
}

}  // namespace nbr::common
