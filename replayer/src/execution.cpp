#include "execution.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <string>

#include "nbr.h"

namespace nbr::internal {

namespace {

/// A staged message's byte count: above INT_MAX only with MPI-4's large-count functions.
MPI_Count message_count(std::size_t bytes) {
    if (bytes > static_cast<std::size_t>(INT_MAX) && !kLargeMessages) {
        throw NbrError(NBR_ERR_ARG, "a combined message would hold " + std::to_string(bytes) +
                                        " bytes, more than an MPI count can describe (this MPI library has no "
                                        "large-count functions)");
    }
    return static_cast<MPI_Count>(bytes);
}

}  // namespace

Execution::Execution(const Plan& plan, MPI_Comm comm, bool step_synchronized)
    : plan_(&plan), comm_(comm), step_synchronized_(step_synchronized) {
    const std::size_t operations = plan.recvs.size() + 2 * plan.sends.size();
    requests_.assign(operations, MPI_REQUEST_NULL);
    completed_.resize(operations);
    waiting_.resize(plan.sends.size());
    if (step_synchronized_) {
        std::uint32_t steps = 1;
        for (const auto& r : plan.recvs) steps = std::max(steps, r.step + 1);
        for (const auto& s : plan.sends) steps = std::max(steps, s.step + 1);
        step_left_.resize(steps);
        held_.resize(steps);
    }
}

Execution::~Execution() {
    if (native_ != MPI_REQUEST_NULL) MPI_Request_free(&native_);
}

void Execution::bind_buffers(const BlockBuffer& send, const BlockBuffer& recv, SizeMode mode) {
    if (active_) throw NbrError(NBR_ERR_STATE, "request is already active");
    send_ = send;
    recv_ = recv;
    mode_ = mode;
}

void Execution::bind(const BlockBuffer& send, const BlockBuffer& recv) {
    bind_buffers(send, recv, SizeMode::uniform);
    check_block_sizes(send, recv);
    unit_bytes_ = recv.bytes(0);
    if (layout_bytes_ != unit_bytes_) layout_uniform();
}

void Execution::layout_uniform() {
    // Staging offsets of the staged messages (direct ones take none), one unit size each.
    const auto lay_out = [this](const auto& messages, std::vector<std::size_t>& offsets, Staging& staging) {
        offsets.assign(messages.size() + 1, 0);
        for (std::size_t m = 0; m < messages.size(); ++m) {
            const std::size_t bytes = messages[m].direct ? 0 : messages[m].units.size() * unit_bytes_;
            (void)message_count(bytes);
            offsets[m + 1] = offsets[m] + bytes;
        }
        staging.resize(offsets.back());
    };
    lay_out(plan_->recvs, recv_offsets_, recv_staging_);
    lay_out(plan_->sends, send_offsets_, send_staging_);
    scratch_.resize(std::max(scratch_.size(), unit_bytes_));
    layout_bytes_ = unit_bytes_;
}

void Execution::bind_sized(const BlockBuffer& send, const BlockBuffer& recv, std::vector<std::uint64_t> unit_bytes) {
    bind_buffers(send, recv, SizeMode::table);
    if (unit_bytes.size() != plan_->homes.size()) throw NbrError(NBR_ERR_INTERNAL, "unit size table has wrong length");
    unit_sizes_ = std::move(unit_bytes);
    layout_sized();
    check_delivery_sizes();
}

void Execution::layout_sized() {
    const Plan& plan = *plan_;
    layout_bytes_ = SIZE_MAX;
    unit_offset_.assign(plan.recv_units, 0);
    recv_offsets_.assign(plan.recvs.size() + 1, 0);
    for (std::size_t r = 0; r < plan.recvs.size(); ++r) {
        const RecvPlan& recv = plan.recvs[r];
        std::size_t end = recv_offsets_[r];
        if (!recv.direct) {
            for (std::size_t p = 0; p < recv.units.size(); ++p) {
                unit_offset_[recv.first + p] = end;
                end += unit_sizes_[recv.units[p]];
            }
        }
        (void)message_count(end - recv_offsets_[r]);
        recv_offsets_[r + 1] = end;
    }
    recv_staging_.resize(recv_offsets_.back());
    send_offsets_.assign(plan.sends.size() + 1, 0);
    for (std::size_t s = 0; s < plan.sends.size(); ++s) {
        std::size_t bytes = 0;
        if (!plan.sends[s].direct) {
            for (const std::uint32_t u : plan.sends[s].units) bytes += unit_sizes_[u];
        }
        (void)message_count(bytes);
        send_offsets_[s + 1] = send_offsets_[s] + bytes;
    }
    send_staging_.resize(send_offsets_.back());
}

void Execution::check_delivery_sizes() const {
    std::size_t largest = 0;
    for (const RecvPlan& recv : plan_->recvs) {
        for (const auto& [position, slot] : recv.deliveries) {
            const std::uint64_t sent = unit_sizes_[recv.units[position]];
            if (sent != recv_.bytes(slot)) {
                throw NbrError(NBR_ERR_DATATYPE, "receive block " + std::to_string(slot) + " (from rank " +
                                                     std::to_string(recv.peer) + "'s message) holds " +
                                                     std::to_string(recv_.bytes(slot)) + " bytes, its origin sends " +
                                                     std::to_string(sent) + ": type signatures must match");
            }
            largest = std::max(largest, recv_.bytes(slot));
        }
    }
    const_cast<Execution*>(this)->scratch_.resize(std::max(scratch_.size(), largest));
}

void Execution::bind_in_band(const BlockBuffer& send, const BlockBuffer& recv) {
    if (plan_->all_direct) {
        // Typed messages only, each sized by the caller's counts: no size travels in band and
        // nothing is staged, so there is nothing to lay out (completion unpacks nothing).
        bind_buffers(send, recv, SizeMode::uniform);
        return;
    }
    bind_buffers(send, recv, SizeMode::in_band);
    const Plan& plan = *plan_;
    layout_bytes_ = SIZE_MAX;
    unit_sizes_.assign(plan.homes.size(), 0);
    std::size_t largest = 0;
    for (std::size_t u = 0; u < plan.homes.size(); ++u) {
        const UnitHome& home = plan.homes[u];
        if (home.kind == UnitHome::Kind::send_block) unit_sizes_[u] = send.bytes(home.index);
        if (home.kind == UnitHome::Kind::recv_slot) unit_sizes_[u] = recv.bytes(home.index);
    }
    std::size_t slots = 0;
    for (const RecvPlan& r : plan.recvs) {
        for (const auto& delivery : r.deliveries) {
            largest = std::max(largest, recv.bytes(delivery.second));
            slots = std::max<std::size_t>(slots, delivery.second + 1);
        }
    }
    scratch_.resize(std::max(scratch_.size(), largest));
    unit_offset_.assign(plan.recv_units, 0);
    recv_headers_.assign(plan.recv_units, 0);
    send_headers_.assign(plan.send_units, 0);
    recv_payload_.resize(plan.recvs.size());
    send_payload_.resize(plan.sends.size());
    header_pending_.assign(plan.recvs.size(), 0);
    skipped_slots_.assign(slots, 0);
}

char* Execution::staged_unit(std::uint32_t recv, std::uint32_t position) const {
    const std::uint32_t flat = plan_->recvs[recv].first + position;
    switch (mode_) {
        case SizeMode::uniform:
            return const_cast<char*>(recv_staging_.data()) + recv_offsets_[recv] + position * unit_bytes_;
        case SizeMode::table: return const_cast<char*>(recv_staging_.data()) + unit_offset_[flat];
        case SizeMode::in_band: return const_cast<char*>(recv_payload_[recv].data()) + unit_offset_[flat];
    }
    throw NbrError(NBR_ERR_INTERNAL, "unknown size mode");
}

const char* Execution::unit_address(std::uint32_t unit) const {
    const UnitHome& home = plan_->homes[unit];
    switch (home.kind) {
        case UnitHome::Kind::send_block: return send_.address(home.index);
        case UnitHome::Kind::recv_slot: return recv_.address(home.index);
        case UnitHome::Kind::staging: return staged_unit(home.index, home.position);
    }
    throw NbrError(NBR_ERR_INTERNAL, "unknown unit home");
}

void Execution::copy_unit(std::uint32_t unit, char* target) const {
    const UnitHome& home = plan_->homes[unit];
    switch (home.kind) {
        case UnitHome::Kind::send_block: pack_block(send_, home.index, target, comm_); return;
        case UnitHome::Kind::recv_slot: pack_block(recv_, home.index, target, comm_); return;
        case UnitHome::Kind::staging: {
            const std::size_t bytes = unit_size(unit);
            if (bytes > 0) std::memcpy(target, staged_unit(home.index, home.position), bytes);
            return;
        }
    }
    throw NbrError(NBR_ERR_INTERNAL, "unknown unit home");
}

void Execution::start() {
    if (active_) throw NbrError(NBR_ERR_STATE, "request is already active");
    active_ = true;
    posted_ = 0;
    error_code_ = 0;
    error_message_.clear();
    deferred_code_ = 0;
    if (mode_ == SizeMode::in_band) std::fill(skipped_slots_.begin(), skipped_slots_.end(), 0);
    if (timed_) started_at_ = finished_at_ = MPI_Wtime();
    recording_failure([&] { post_all(); });
}

template <class Action>
auto Execution::recording_failure(Action&& action) -> decltype(action()) {
    try {
        return action();
    } catch (const NbrError& error) {
        fail(error.code(), error.what());
        throw;
    } catch (const std::bad_alloc&) {
        fail(NBR_ERR_NOMEM, "out of memory");
        throw;
    }
}

void Execution::post_all() {
    if (native_ != MPI_REQUEST_NULL) {
        check_mpi(MPI_Start(&native_), "MPI_Start");
        return;
    }
    if (plan_->all_direct) {
        post_direct();
        return;
    }
    if (step_synchronized_) {
        std::fill(step_left_.begin(), step_left_.end(), 0);
        for (const auto& r : plan_->recvs) ++step_left_[r.step];
        open_step_ = 0;
        open_complete_steps();
    }
    for (std::size_t r = 0; r < plan_->recvs.size(); ++r) post_recv(static_cast<std::uint32_t>(r));
    for (std::size_t s = 0; s < plan_->sends.size(); ++s) {
        waiting_[s] = plan_->sends[s].dependencies;
        if (waiting_[s] == 0) send_ready(static_cast<std::uint32_t>(s));
    }
}

void Execution::send_ready(std::uint32_t index) {
    const auto step = plan_->sends[index].step;
    if (!step_synchronized_ || step <= open_step_) {
        post_send(index);
    } else {
        held_[step].push_back(index);
    }
}

void Execution::open_complete_steps() {
    while (open_step_ + 1 < step_left_.size() && step_left_[open_step_] == 0) ++open_step_;
}

void Execution::step_received(std::uint32_t step) {
    if (--step_left_[step] != 0 || step != open_step_) return;
    const auto before = open_step_;
    open_complete_steps();
    for (auto t = before + 1; t <= open_step_; ++t) {
        for (const auto s : held_[t]) post_send(s);
        held_[t].clear();
    }
}

namespace {

/// The blocks of a buffer whose addresses need no lookup beyond MPI's own int arrays: equal
/// consecutive blocks of `count` elements (fixed-size calls), or the v-variants' int counts and
/// displacements, one datatype, on a layout without remapped slots (the common cases).
struct PlainBlocks {
    char* base;
    MPI_Aint extent;
    MPI_Aint count;     // per block, without counts
    const int* counts;  // v-variants
    const int* displs;  // v-variants, in extents
    MPI_Datatype type;

    [[nodiscard]] char* address(std::uint32_t block) const {
        return base + (counts != nullptr ? displs[block] : static_cast<MPI_Aint>(block) * count) * extent;
    }
    [[nodiscard]] int count_of(std::uint32_t block) const {
        return counts != nullptr ? counts[block] : static_cast<int>(count);
    }
    [[nodiscard]] MPI_Datatype type_of(std::uint32_t /*block*/) const { return type; }
};

/// alltoallw's blocks: int counts, byte displacements and a datatype per block.
struct TypedBlocks {
    char* base;
    const int* counts;
    const MPI_Aint* byte_displs;
    const MPI_Datatype* types;

    [[nodiscard]] char* address(std::uint32_t block) const { return base + byte_displs[block]; }
    [[nodiscard]] int count_of(std::uint32_t block) const { return counts[block]; }
    [[nodiscard]] MPI_Datatype type_of(std::uint32_t block) const { return types[block]; }
};

bool plain(const BlockBuffer& buffer) {
    return buffer.slots == nullptr && buffer.counts_c == nullptr && buffer.displs_c == nullptr &&
           buffer.types == nullptr && buffer.byte_displs == nullptr && buffer.count <= INT_MAX;
}

PlainBlocks plain_blocks(const BlockBuffer& buffer) {
    return PlainBlocks{buffer.base,   buffer.extent, static_cast<MPI_Aint>(buffer.count),
                       buffer.counts, buffer.displs, buffer.type};
}

/// alltoallw's blocks whose addresses need no lookup either: int counts, byte displacements
/// and a datatype per block, on a layout without remapped slots (the common alltoallw call).
bool typed_plain(const BlockBuffer& buffer) {
    return buffer.types != nullptr && buffer.counts != nullptr && buffer.byte_displs != nullptr &&
           buffer.slots == nullptr && buffer.counts_c == nullptr;
}

TypedBlocks typed_blocks(const BlockBuffer& buffer) {
    return TypedBlocks{buffer.base, buffer.counts, buffer.byte_displs, buffer.types};
}

}  // namespace

void Execution::post_direct() {
    if (plain(recv_) && plain(send_)) {
        post_direct_blocks(plain_blocks(recv_), plain_blocks(send_));
        return;
    }
    if (typed_plain(recv_) && typed_plain(send_)) {
        post_direct_blocks(typed_blocks(recv_), typed_blocks(send_));
        return;
    }
    MPI_Request* request = requests_.data();
    for (const DirectOp& op : plan_->direct_recvs) {
        irecv(recv_.address(op.block), recv_.count_of(op.block), recv_.type_of(op.block), op.peer, tag(op.tag), comm_,
              request);
        ++request;
        ++posted_;
    }
    for (const DirectOp& op : plan_->direct_sends) {
        isend(send_.address(op.block), send_.count_of(op.block), send_.type_of(op.block), op.peer, tag(op.tag), comm_,
              request);
        ++request;
        ++posted_;
    }
}

template <typename Blocks>
void Execution::post_direct_blocks(const Blocks& recv, const Blocks& send) {
    MPI_Request* request = requests_.data();
    for (const DirectOp& op : plan_->direct_recvs) {
        const int code = MPI_Irecv(recv.address(op.block), recv.count_of(op.block), recv.type_of(op.block), op.peer,
                                   tag(op.tag), comm_, request++);
        if (code != MPI_SUCCESS) check_mpi(code, "MPI_Irecv");
        ++posted_;
    }
    for (const DirectOp& op : plan_->direct_sends) {
        const int code = MPI_Isend(send.address(op.block), send.count_of(op.block), send.type_of(op.block), op.peer,
                                   tag(op.tag), comm_, request++);
        if (code != MPI_SUCCESS) check_mpi(code, "MPI_Isend");
        ++posted_;
    }
}

void Execution::post_recv(std::uint32_t index) {
    const RecvPlan& recv = plan_->recvs[index];
    MPI_Request* request = &requests_[index];
    const int peer = static_cast<int>(recv.peer);
    if (recv.direct) {
        const std::uint32_t slot = recv.deliveries[0].second;
        irecv(recv_.address(slot), recv_.count_of(slot), recv_.type_of(slot), peer, tag(recv.tag), comm_, request);
    } else if (mode_ == SizeMode::in_band) {
        header_pending_[index] = 1;
        irecv(&recv_headers_[recv.first], message_count(recv.units.size() * sizeof(std::uint64_t)), MPI_BYTE, peer,
              tag(recv.tag), comm_, request);
    } else {
        irecv(recv_staging_.data() + recv_offsets_[index],
              message_count(recv_offsets_[index + 1] - recv_offsets_[index]), MPI_BYTE, peer, tag(recv.tag), comm_,
              request);
    }
    ++posted_;
}

void Execution::post_send(std::uint32_t index) {
    const SendPlan& send = plan_->sends[index];
    if (send.direct) {
        const std::uint32_t block = plan_->homes[send.units[0]].index;
        isend(send_.address(block), send_.count_of(block), send_.type_of(block), static_cast<int>(send.peer),
              tag(send.tag), comm_, &requests_[plan_->recvs.size() + index]);
        ++posted_;
        return;
    }
    if (mode_ != SizeMode::in_band) {
        post_staged_send(index, send_staging_.data() + send_offsets_[index],
                         send_offsets_[index + 1] - send_offsets_[index]);
        return;
    }
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < send.units.size(); ++i) {
        send_headers_[send.first + i] = unit_size(send.units[i]);
        bytes += unit_size(send.units[i]);
    }
    (void)message_count(bytes);
    std::vector<char>& payload = send_payload_[index];
    payload.resize(bytes);
    isend(&send_headers_[send.first], static_cast<int>(send.units.size() * sizeof(std::uint64_t)), MPI_BYTE,
          static_cast<int>(send.peer), tag(send.tag), comm_,
          &requests_[plan_->recvs.size() + plan_->sends.size() + index]);
    ++posted_;
    if (bytes > 0) post_staged_send(index, payload.data(), bytes);
}

void Execution::post_staged_send(std::uint32_t index, char* message, std::size_t bytes) {
    const SendPlan& send = plan_->sends[index];
    char* target = message;
    for (const std::uint32_t unit : send.units) {
        copy_unit(unit, target);
        target += unit_size(unit);
    }
    isend(message, message_count(bytes), MPI_BYTE, static_cast<int>(send.peer), tag(send.tag), comm_,
          &requests_[plan_->recvs.size() + index]);
    ++posted_;
}

void Execution::header_arrived(std::uint32_t index) {
    const RecvPlan& recv = plan_->recvs[index];
    header_pending_[index] = 0;
    std::size_t bytes = 0;
    for (std::uint32_t p = 0; p < recv.units.size(); ++p) {
        const std::uint64_t size = recv_headers_[recv.first + p];
        if (size > static_cast<std::uint64_t>(INT_MAX)) (void)message_count(size);
        unit_offset_[recv.first + p] = bytes;
        bytes += size;
        const UnitHome& home = plan_->homes[recv.units[p]];
        if (home.kind == UnitHome::Kind::staging && home.index == index) unit_sizes_[recv.units[p]] = size;
    }
    (void)message_count(bytes);
    for (const auto& [position, slot] : recv.deliveries) {
        const std::uint64_t sent = recv_headers_[recv.first + position];
        if (sent == recv_.bytes(slot)) continue;
        // Not delivered, reported at completion: the units this rank forwards still go on,
        // so no peer waits forever for them.
        skipped_slots_[slot] = 1;
        if (deferred_code_ == 0) {
            deferred_code_ = NBR_ERR_DATATYPE;
            deferred_message_ = "receive block " + std::to_string(slot) + " holds " +
                                std::to_string(recv_.bytes(slot)) + " bytes, rank " + std::to_string(recv.peer) +
                                "'s message carries " + std::to_string(sent) + " for it: type signatures must match";
        }
    }
    std::vector<char>& payload = recv_payload_[index];
    payload.resize(bytes);
    if (bytes == 0) {
        complete_recv(index);
        return;
    }
    irecv(payload.data(), message_count(bytes), MPI_BYTE, static_cast<int>(recv.peer), tag(recv.tag), comm_,
          &requests_[index]);
    ++posted_;
}

void Execution::complete_recv(std::uint32_t index) {
    const RecvPlan& recv = plan_->recvs[index];
    if (recv.direct) {
        // Arrived in the first delivered slot; duplicate edges of an allgather get copies.
        const std::uint32_t first = recv.deliveries[0].second;
        if (recv.deliveries.size() > 1) {
            pack_block(recv_, first, scratch_.data(), comm_);
            for (std::size_t d = 1; d < recv.deliveries.size(); ++d) {
                unpack_block(recv_, recv.deliveries[d].second, scratch_.data(), comm_);
            }
        }
    } else {
        for (const auto& [position, slot] : recv.deliveries) {
            if (mode_ == SizeMode::in_band && skipped_slots_[slot]) continue;
            unpack_block(recv_, slot, staged_unit(index, position), comm_);
        }
    }
    for (const std::uint32_t s : recv.dependents) {
        if (--waiting_[s] == 0) send_ready(s);
    }
    if (step_synchronized_) step_received(recv.step);
}

void Execution::handle_completion(std::uint32_t request) {
    --posted_;
    if (request >= plan_->recvs.size()) return;
    if (mode_ == SizeMode::in_band && header_pending_[request]) {
        header_arrived(request);
    } else {
        complete_recv(request);
    }
}

bool Execution::progress_all_at_once(bool block) {
    // In band, the sends' size headers complete here too (a rank may send staged messages
    // while receiving only direct ones).
    const int count =
        static_cast<int>(plan_->recvs.size() + plan_->sends.size() * (mode_ == SizeMode::in_band ? 2 : 1));
    if (block) {
        check_mpi(MPI_Waitall(count, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    } else {
        int flag = 0;
        check_mpi(MPI_Testall(count, requests_.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
        if (!flag) return false;
    }
    posted_ = 0;
    if (!plan_->all_direct) {  // all-direct plans received every block in place
        for (std::size_t r = 0; r < plan_->recvs.size(); ++r) complete_recv(static_cast<std::uint32_t>(r));
    }
    active_ = false;
    return true;
}

bool Execution::progress_native(bool block) {
    int done = 1;
    if (block) {
        check_mpi(MPI_Wait(&native_, MPI_STATUS_IGNORE), "MPI_Wait");
    } else {
        check_mpi(MPI_Test(&native_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    }
    if (done != 0) active_ = false;
    return done != 0;
}

bool Execution::progress(bool block) {
    if (!timed_) return progress_untimed(block);
    const bool done = progress_untimed(block);
    if (done) finished_at_ = MPI_Wtime();
    return done;
}

bool Execution::progress_untimed(bool block) {
    if (!active_) throw NbrError(NBR_ERR_STATE, "request is not active");
    if (native_ != MPI_REQUEST_NULL) return recording_failure([&] { return progress_native(block); });
    // Naive-like plans (nothing waits for a receive, no header phase): one MPI call, as native.
    // Not under the step rule, which holds sends of later steps back until receives complete.
    if (plan_->independent && !step_synchronized_ && !(mode_ == SizeMode::in_band && plan_->staged_recvs)) {
        return recording_failure([&] { return progress_all_at_once(block); });
    }
    if (!recording_failure([&] { return progress_requests(block); })) return false;
    if (deferred_code_ != 0) {
        fail(deferred_code_, deferred_message_);  // the failure is recorded before the execution turns inactive
        throw NbrError(deferred_code_, deferred_message_);
    }
    active_ = false;  // last: another thread that sees it inactive may reuse the execution at once
    return true;
}

bool Execution::progress_requests(bool block) {
    const int count =
        static_cast<int>(plan_->recvs.size() + plan_->sends.size() * (mode_ == SizeMode::in_band ? 2 : 1));
    while (posted_ > 0) {
        int done = 0;
        if (block) {
#if defined(NBR_SMPI)
            // SimGrid's MPI_Waitsome is far slower to simulate than MPI_Waitany.
            int index = MPI_UNDEFINED;
            check_mpi(MPI_Waitany(count, requests_.data(), &index, MPI_STATUS_IGNORE), "MPI_Waitany");
            done = index == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
            if (index != MPI_UNDEFINED) completed_[0] = index;
#else
            check_mpi(MPI_Waitsome(count, requests_.data(), &done, completed_.data(), MPI_STATUSES_IGNORE),
                      "MPI_Waitsome");
#endif
        } else {
            check_mpi(MPI_Testsome(count, requests_.data(), &done, completed_.data(), MPI_STATUSES_IGNORE),
                      "MPI_Testsome");
        }
        if (done == MPI_UNDEFINED) throw NbrError(NBR_ERR_INTERNAL, "requests outstanding but none active");
        if (done == 0) return false;
        for (int i = 0; i < done; ++i)
            handle_completion(static_cast<std::uint32_t>(completed_[static_cast<std::size_t>(i)]));
    }
    return true;
}

void Execution::fail(int code, std::string message) {
    error_code_ = code;
    error_message_ = std::move(message);
    // Receives still posted are cancelled; sends are left to complete on their own.
    for (std::size_t i = 0; i < requests_.size(); ++i) {
        if (requests_[i] == MPI_REQUEST_NULL) continue;
        if (i < plan_->recvs.size()) {
            MPI_Cancel(&requests_[i]);
            MPI_Wait(&requests_[i], MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&requests_[i]);
        }
    }
    posted_ = 0;
    active_ = false;
}

}  // namespace nbr::internal
