#pragma once

#include <stdexcept>
#include <string>

namespace nbr::internal {

/// @brief Error with an nbr error code, raised inside libnbr and turned into a return code
/// at the C boundary.
class NbrError : public std::runtime_error {
public:
    NbrError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
    [[nodiscard]] int code() const noexcept { return code_; }

private:
    int code_;
};

/// @brief Throws NbrError(NBR_ERR_MPI) naming `what` and MPI's error string for `code`.
[[noreturn]] void throw_mpi_error(int code, const char* what);

/// @brief Throws NbrError(NBR_ERR_MPI) naming `what` and MPI's error string unless `code` is
/// MPI_SUCCESS (0 in every MPI library). Inline: it guards every point-to-point call.
inline void check_mpi(int code, const char* what) {
    if (code != 0) [[unlikely]]
        throw_mpi_error(code, what);
}

}  // namespace nbr::internal
