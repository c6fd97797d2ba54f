#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "block_buffer.hpp"
#include "error.hpp"
#include "nbr/plan/plan.hpp"
#include "staging.hpp"

namespace nbr::internal {

/// @brief How an execution knows the byte size of every unit it handles.
enum class SizeMode {
    uniform,  ///< fixed-size collectives: every unit has the size of one receive block
    table,    ///< sizes given at bind (persistent v-variants: exchanged once at init)
    in_band   ///< v-variants: every staged message is preceded by a header of unit sizes
};

/// @brief One execution of a plan with bound buffers; reusable (bind, start, progress, ...).
///
/// Data-driven: start() posts every receive and every send whose data is local; each
/// completed receive is unpacked and releases the sends that waited for it. There is no
/// step-wide wait. Messages are matched by (peer, tag) where the tag is the message's
/// sequence number between the two ranks (plus the tag offset), so out-of-step progress
/// cannot mismatch them.
///
/// Staged messages (several units, or units that are not the sender's own typed block) are
/// packed bytes. In SizeMode::in_band a staged message travels as two MPI messages with the
/// same tag: a header of one uint64 per unit (its byte size) and, if not empty, the payload;
/// the receiver posts the payload receive when the header has arrived. Direct messages are
/// typed and carry no header in any mode.
class Execution {
public:
    /// `step_synchronized` (NBR_LOAD_STEP_SYNC, for benchmarks): a send of the pattern's step
    /// t is posted only once every receive of this rank's steps before t has completed (the
    /// step rule of libnbc's rounds), besides the receives that feed it.
    Execution(const Plan& plan, MPI_Comm comm, bool step_synchronized = false);
    Execution(const Execution&) = delete;
    Execution& operator=(const Execution&) = delete;
    ~Execution();

    /// @brief Binds the buffers of a fixed-size collective (SizeMode::uniform).
    /// @throws NbrError(NBR_ERR_DATATYPE) if send and receive blocks differ in size.
    void bind(const BlockBuffer& send, const BlockBuffer& recv);
    /// @brief Binds the buffers of a v-variant; the sizes learned from messages (in_band), or,
    /// for an all-direct plan, none needed (its typed messages take the call's counts).
    void bind_in_band(const BlockBuffer& send, const BlockBuffer& recv);
    /// @brief Binds the buffers of a v-variant with every unit's byte size known (table).
    /// @throws NbrError(NBR_ERR_DATATYPE) naming the in-neighbor whose block does not fit.
    void bind_sized(const BlockBuffer& send, const BlockBuffer& recv, std::vector<std::uint64_t> unit_bytes);
    /// @brief Hands over a native persistent collective request (MPI_Neighbor_*_init) that
    /// start() and progress() drive instead of the plan's messages; freed with the execution.
    void bind_native(MPI_Request persistent) { native_ = persistent; }
    /// @brief Added to every tag (nonblocking calls use a window of tags each).
    void set_tag_offset(int offset) { tag_offset_ = offset; }
    /// @brief Whether start() and the progress that completes the execution take the time
    /// (measured selection, tuner.hpp); off: no clock is read.
    void set_timed(bool timed) { timed_ = timed; }
    /// @brief Microseconds from start() to the progress call that found the execution complete
    /// (timed executions; 0 otherwise).
    [[nodiscard]] double elapsed_us() const noexcept { return timed_ ? (finished_at_ - started_at_) * 1e6 : 0.0; }

    /// @brief Posts receives and ready sends. @throws NbrError(NBR_ERR_STATE) if active.
    void start();
    /// @brief Progresses; returns true when complete. Blocks until done if `block`.
    /// On an exception the execution is no longer active (see fail()).
    bool progress(bool block);
    [[nodiscard]] bool active() const noexcept { return active_.load(); }

    /// @brief Records that the execution failed (called by whoever caught its exception).
    void fail(int code, std::string message);
    [[nodiscard]] int error_code() const noexcept { return error_code_; }
    [[nodiscard]] const std::string& error_message() const noexcept { return error_message_; }
    /// @brief Forgets a failure once it has been reported.
    void clear_error() noexcept {
        error_code_ = 0;
        error_message_.clear();
    }

    /// @brief The plan it runs.
    [[nodiscard]] const Plan& plan() const noexcept { return *plan_; }

    /// @brief Where unit `unit` is after completion (SizeMode::uniform): own, received or staged.
    [[nodiscard]] const char* unit_address(std::uint32_t unit) const;

private:
    void bind_buffers(const BlockBuffer& send, const BlockBuffer& recv, SizeMode mode);
    void layout_uniform();
    void layout_sized();
    void check_delivery_sizes() const;
    void post_direct();
    /// post_direct where block addresses need no lookup (the common cases): `Blocks` is the
    /// fixed-size/v-variant accessor or alltoallw's typed one, MPI called inline.
    template <typename Blocks>
    void post_direct_blocks(const Blocks& recv, const Blocks& send);
    void post_recv(std::uint32_t index);
    void post_send(std::uint32_t index);
    void post_staged_send(std::uint32_t index, char* message, std::size_t bytes);
    void header_arrived(std::uint32_t index);
    void complete_recv(std::uint32_t index);
    /// A send whose receives are in: posted, or held until its step may start (step rule).
    void send_ready(std::uint32_t index);
    /// Step rule: a receive of `step` completed; posts the held sends of the steps it opens.
    void step_received(std::uint32_t step);
    /// Step rule: opens the steps after the current one while every receive of it is in.
    void open_complete_steps();
    void handle_completion(std::uint32_t request);
    bool progress_untimed(bool block);
    bool progress_all_at_once(bool block);
    bool progress_native(bool block);
    /// Waits for (block) or tests the posted messages, posting what they free; true once none
    /// is left.
    bool progress_requests(bool block);
    /// start(): posts the native request, the direct messages, or every receive and the sends
    /// that wait for nothing.
    void post_all();
    /// Runs `action`; a failure is recorded (fail) before it propagates.
    template <class Action>
    auto recording_failure(Action&& action) -> decltype(action());

    [[nodiscard]] std::size_t unit_size(std::uint32_t unit) const {
        return mode_ == SizeMode::uniform ? unit_bytes_ : unit_sizes_[unit];
    }
    [[nodiscard]] char* staged_unit(std::uint32_t recv, std::uint32_t position) const;
    void copy_unit(std::uint32_t unit, char* target) const;
    [[nodiscard]] int tag(int plan_tag) const { return plan_tag + tag_offset_; }

    const Plan* plan_;
    MPI_Comm comm_;
    BlockBuffer send_;
    BlockBuffer recv_;
    SizeMode mode_ = SizeMode::uniform;
    int tag_offset_ = 0;
    std::size_t unit_bytes_ = 0;             // uniform: every unit's size
    std::size_t layout_bytes_ = SIZE_MAX;    // uniform: unit size the staging layout is for
    std::vector<std::uint64_t> unit_sizes_;  // table, in_band: per unit
    std::vector<std::size_t> unit_offset_;   // table, in_band: per receive unit, offset in its message
    Staging recv_staging_;                   // uniform, table
    std::vector<std::size_t> recv_offsets_;
    Staging send_staging_;
    std::vector<std::size_t> send_offsets_;        // uniform, table: per send, staging offset (size at index + 1)
    std::vector<std::vector<char>> recv_payload_;  // in_band: per receive
    std::vector<std::vector<char>> send_payload_;  // in_band: per send
    std::vector<std::uint64_t> recv_headers_;      // in_band: per receive unit
    std::vector<std::uint64_t> send_headers_;      // in_band: per send unit
    std::vector<char> header_pending_;             // in_band: per receive, header not yet arrived
    std::vector<char> skipped_slots_;              // in_band: per receive slot, size mismatched
    int deferred_code_ = 0;                        // in_band: a mismatch, reported at completion
    std::string deferred_message_;
    Staging scratch_;                     // one block, for duplicate deliveries
    std::vector<MPI_Request> requests_;   // receives, sends, headers of sends (in_band)
    std::vector<std::uint32_t> waiting_;  // per send: receives still missing
    bool step_synchronized_ = false;
    std::uint32_t open_step_ = 0;                   // step rule: sends of steps <= this may go
    std::vector<std::uint32_t> step_left_;          // step rule: per step, receives not yet completed
    std::vector<std::vector<std::uint32_t>> held_;  // step rule: per step, sends ready but held
    std::vector<int> completed_;
    std::size_t posted_ = 0;                 // MPI requests in flight
    MPI_Request native_ = MPI_REQUEST_NULL;  // a native persistent collective, if bound
    std::atomic<bool> active_{false};        // read by other threads' progress sweeps and tests (nbr.h, Threads)
    bool timed_ = false;
    double started_at_ = 0;   // MPI_Wtime at start() (timed)
    double finished_at_ = 0;  // MPI_Wtime when progress found it complete (timed)
    int error_code_ = 0;
    std::string error_message_;
};

}  // namespace nbr::internal
