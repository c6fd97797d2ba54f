#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "plan.hpp"

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

/// @brief A buffer argument of a collective: base, count and datatype of one block.
struct BlockBuffer {
    char* base = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Aint stride = 0;      ///< bytes between consecutive blocks (count * extent)
    std::size_t bytes = 0;    ///< packed bytes of one block (count * type size)
    bool contiguous = false;  ///< block is `bytes` contiguous bytes at its address

    [[nodiscard]] char* block(std::uint32_t index) const { return base + static_cast<MPI_Aint>(index) * stride; }
};

/// @brief Describes (base, count, type) as a BlockBuffer. @throws NbrError on MPI failure.
[[nodiscard]] BlockBuffer describe_buffer(const void* base, int count, MPI_Datatype type);

/// @brief One in-flight execution of a plan with bound buffers.
///
/// Data-driven: start() posts every receive and every send whose data is local; each
/// completed receive is unpacked and releases the sends that waited for it. There is no
/// step-wide wait. Messages are matched by (peer, tag) where the tag is the message's
/// sequence number between the two ranks, so out-of-step progress cannot mismatch them.
class Execution {
public:
    Execution(const Plan& plan, MPI_Comm comm, const BlockBuffer& send, const BlockBuffer& recv);

    /// @brief Posts receives and ready sends.
    void start();
    /// @brief Progresses; returns true when complete. Blocks until done if `block`.
    bool progress(bool block);
    [[nodiscard]] bool active() const noexcept { return active_; }

private:
    void post_send(std::uint32_t index);
    void complete_recv(std::uint32_t index);
    [[nodiscard]] const char* unit_source(std::uint32_t unit, const BlockBuffer** typed) const;

    const Plan* plan_;
    MPI_Comm comm_;
    BlockBuffer send_;
    BlockBuffer recv_;
    std::size_t unit_bytes_;
    std::vector<char> recv_staging_;
    std::vector<std::size_t> recv_offsets_;
    std::vector<char> send_staging_;
    std::vector<std::size_t> send_offsets_;
    std::vector<MPI_Request> requests_;   // receives, then sends
    std::vector<std::uint32_t> waiting_;  // per send: receives still missing
    std::vector<int> completed_;
    std::size_t outstanding_ = 0;
    bool active_ = false;
};

}  // namespace nbr::internal
