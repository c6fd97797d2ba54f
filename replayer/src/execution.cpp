#include "execution.hpp"

#include <cstring>
#include <string>

#include "nbr.h"

namespace nbr::internal {

namespace {

void check(int code, const char* what) {
    if (code != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0;
        MPI_Error_string(code, text, &length);
        throw NbrError(NBR_ERR_MPI,
                       std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
    }
}

/// Packs one block into `dst` (exactly buffer.bytes bytes).
void pack_block(const BlockBuffer& buffer, const char* src, char* dst, MPI_Comm comm) {
    if (buffer.bytes == 0) return;  // zero counts: buffers may be NULL
    if (buffer.contiguous) {
        std::memcpy(dst, src, buffer.bytes);
        return;
    }
    int position = 0;
    check(MPI_Pack(src, buffer.count, buffer.type, dst, static_cast<int>(buffer.bytes), &position, comm), "MPI_Pack");
    if (static_cast<std::size_t>(position) != buffer.bytes) {
        throw NbrError(NBR_ERR_DATATYPE,
                       "MPI_Pack produced a representation of another size than the type's; "
                       "heterogeneous packing is not supported");
    }
}

/// Unpacks one block from `src` into `dst`.
void unpack_block(const BlockBuffer& buffer, const char* src, char* dst, MPI_Comm comm) {
    if (buffer.bytes == 0) return;
    if (buffer.contiguous) {
        std::memcpy(dst, src, buffer.bytes);
        return;
    }
    int position = 0;
    check(MPI_Unpack(src, static_cast<int>(buffer.bytes), &position, dst, buffer.count, buffer.type, comm),
          "MPI_Unpack");
}

}  // namespace

BlockBuffer describe_buffer(const void* base, int count, MPI_Datatype type) {
    BlockBuffer buffer;
    buffer.base = static_cast<char*>(const_cast<void*>(base));
    buffer.count = count;
    buffer.type = type;
    int size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    check(MPI_Type_size(type, &size), "MPI_Type_size");
    check(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
    check(MPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
    buffer.stride = extent * count;
    buffer.bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
    buffer.contiguous = true_lb == 0 && lb == 0 && true_extent == size && extent == size;
    return buffer;
}

Execution::Execution(const Plan& plan, MPI_Comm comm, const BlockBuffer& send, const BlockBuffer& recv)
    : plan_(&plan), comm_(comm), send_(send), recv_(recv), unit_bytes_(recv.bytes) {
    if (send.bytes != recv.bytes) {
        throw NbrError(NBR_ERR_DATATYPE, "send block has " + std::to_string(send.bytes) + " bytes, receive block " +
                                             std::to_string(recv.bytes) + ": type signatures must match");
    }
    std::size_t total = 0;
    recv_offsets_.resize(plan.recvs.size());
    for (std::size_t r = 0; r < plan.recvs.size(); ++r) {
        recv_offsets_[r] = total;
        if (!plan.recvs[r].direct) total += plan.recvs[r].units.size() * unit_bytes_;
    }
    recv_staging_.resize(total);
    total = 0;
    send_offsets_.resize(plan.sends.size());
    for (std::size_t s = 0; s < plan.sends.size(); ++s) {
        send_offsets_[s] = total;
        if (!plan.sends[s].direct) total += plan.sends[s].units.size() * unit_bytes_;
    }
    send_staging_.resize(total);
    requests_.assign(plan.recvs.size() + plan.sends.size(), MPI_REQUEST_NULL);
    completed_.resize(requests_.size());
}

const char* Execution::unit_source(std::uint32_t unit, const BlockBuffer** typed) const {
    const UnitHome& home = plan_->homes[unit];
    switch (home.kind) {
        case UnitHome::Kind::send_block:
            *typed = &send_;
            return send_.block(plan_->collective == Collective::allgather ? 0 : home.index);
        case UnitHome::Kind::recv_slot: *typed = &recv_; return recv_.block(home.index);
        case UnitHome::Kind::staging:
            *typed = nullptr;
            return recv_staging_.data() + recv_offsets_[home.index] + home.position * unit_bytes_;
    }
    throw NbrError(NBR_ERR_INTERNAL, "unknown unit home");
}

void Execution::start() {
    if (active_) throw NbrError(NBR_ERR_STATE, "request is already active");
    active_ = true;
    outstanding_ = requests_.size();
    const auto recv_count = plan_->recvs.size();
    for (std::size_t r = 0; r < recv_count; ++r) {
        const RecvPlan& recv = plan_->recvs[r];
        if (recv.direct) {
            check(MPI_Irecv(recv_.block(recv.deliveries[0].second), recv_.count, recv_.type,
                            static_cast<int>(recv.peer), recv.tag, comm_, &requests_[r]),
                  "MPI_Irecv");
        } else {
            check(MPI_Irecv(recv_staging_.data() + recv_offsets_[r], static_cast<int>(recv.units.size() * unit_bytes_),
                            MPI_BYTE, static_cast<int>(recv.peer), recv.tag, comm_, &requests_[r]),
                  "MPI_Irecv");
        }
    }
    waiting_.resize(plan_->sends.size());
    for (std::size_t s = 0; s < plan_->sends.size(); ++s) {
        waiting_[s] = plan_->sends[s].dependencies;
        if (waiting_[s] == 0) post_send(static_cast<std::uint32_t>(s));
    }
}

void Execution::post_send(std::uint32_t index) {
    const SendPlan& send = plan_->sends[index];
    MPI_Request* request = &requests_[plan_->recvs.size() + index];
    if (send.direct) {
        const BlockBuffer* typed = nullptr;
        const char* source = unit_source(send.units[0], &typed);
        check(MPI_Isend(source, send_.count, send_.type, static_cast<int>(send.peer), send.tag, comm_, request),
              "MPI_Isend");
        return;
    }
    char* message = send_staging_.data() + send_offsets_[index];
    for (std::size_t i = 0; i < send.units.size(); ++i) {
        const BlockBuffer* typed = nullptr;
        const char* source = unit_source(send.units[i], &typed);
        char* target = message + i * unit_bytes_;
        if (typed != nullptr) {
            pack_block(*typed, source, target, comm_);
        } else if (unit_bytes_ > 0) {
            std::memcpy(target, source, unit_bytes_);
        }
    }
    check(MPI_Isend(message, static_cast<int>(send.units.size() * unit_bytes_), MPI_BYTE, static_cast<int>(send.peer),
                    send.tag, comm_, request),
          "MPI_Isend");
}

void Execution::complete_recv(std::uint32_t index) {
    const RecvPlan& recv = plan_->recvs[index];
    if (recv.direct) {
        // Arrived in the first delivered slot; duplicate edges of an allgather get copies.
        char* first = recv_.block(recv.deliveries[0].second);
        if (recv.deliveries.size() > 1) {
            std::vector<char> packed(unit_bytes_);
            pack_block(recv_, first, packed.data(), comm_);
            for (std::size_t d = 1; d < recv.deliveries.size(); ++d) {
                unpack_block(recv_, packed.data(), recv_.block(recv.deliveries[d].second), comm_);
            }
        }
    } else {
        const char* message = recv_staging_.data() + recv_offsets_[index];
        for (const auto& [position, slot] : recv.deliveries) {
            unpack_block(recv_, message + position * unit_bytes_, recv_.block(slot), comm_);
        }
    }
    for (const std::uint32_t s : recv.dependents) {
        if (--waiting_[s] == 0) post_send(s);
    }
}

bool Execution::progress(bool block) {
    if (!active_) throw NbrError(NBR_ERR_STATE, "request is not active");
    const auto recv_count = plan_->recvs.size();
    while (outstanding_ > 0) {
        int done = 0;
        if (block) {
#if defined(NBR_SMPI)
            // SimGrid's MPI_Waitsome is far slower to simulate than MPI_Waitany.
            int index = MPI_UNDEFINED;
            check(MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index, MPI_STATUS_IGNORE),
                  "MPI_Waitany");
            done = index == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
            if (index != MPI_UNDEFINED) completed_[0] = index;
#else
            check(MPI_Waitsome(static_cast<int>(requests_.size()), requests_.data(), &done, completed_.data(),
                               MPI_STATUSES_IGNORE),
                  "MPI_Waitsome");
#endif
        } else {
            check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &done, completed_.data(),
                               MPI_STATUSES_IGNORE),
                  "MPI_Testsome");
        }
        if (done == MPI_UNDEFINED) break;  // only inactive requests left (cannot happen while outstanding)
        if (done == 0) return false;
        outstanding_ -= static_cast<std::size_t>(done);
        for (int i = 0; i < done; ++i) {
            const auto index = static_cast<std::size_t>(completed_[static_cast<std::size_t>(i)]);
            if (index < recv_count) complete_recv(static_cast<std::uint32_t>(index));
        }
    }
    active_ = false;
    return true;
}

}  // namespace nbr::internal
