#include "nbr/compiler/engine.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace nbr::compiler {

namespace {

void check_mpi(int code, const char* what) {
    if (code != MPI_SUCCESS) {
        throw std::runtime_error(std::string("MPI error in ") + what);
    }
}

// Record layout in a per-process stream:
//   [count, dst_1 .. dst_count, source, length, payload_1 .. payload_length]
constexpr std::size_t kRecordHeader = 3;

}  // namespace

Engine::Engine(MPI_Comm comm, std::uint32_t num_ranks) : comm_(comm), num_ranks_(num_ranks) {
    check_mpi(MPI_Comm_rank(comm, &process_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &processes_), "MPI_Comm_size");
    begin_.resize(static_cast<std::size_t>(processes_) + 1);
    const std::uint64_t base = num_ranks / static_cast<std::uint64_t>(processes_);
    const std::uint64_t extra = num_ranks % static_cast<std::uint64_t>(processes_);
    std::uint64_t next = 0;
    for (int q = 0; q < processes_; ++q) {
        begin_[static_cast<std::size_t>(q)] = static_cast<std::uint32_t>(next);
        next += base + (static_cast<std::uint64_t>(q) < extra ? 1 : 0);
    }
    begin_[static_cast<std::size_t>(processes_)] = num_ranks;
    inbox_offsets_.assign(std::size_t{local_count()} + 1, 0);
}

int Engine::owner(std::uint32_t v) const {
    const auto it = std::upper_bound(begin_.begin(), begin_.end(), v);
    return static_cast<int>(it - begin_.begin()) - 1;
}

std::span<const Message> Engine::inbox(std::uint32_t v) const {
    const std::size_t local = v - local_begin();
    return {messages_.data() + inbox_offsets_[local], messages_.data() + inbox_offsets_[local + 1]};
}

void Engine::Outbox::post(std::uint32_t dst, std::span<const std::uint32_t> payload) {
    multicast(std::span<const std::uint32_t>(&dst, 1), payload);
}

void Engine::Outbox::multicast(std::span<const std::uint32_t> dsts, std::span<const std::uint32_t> payload) {
    // Destinations are grouped by owning process; each group gets one copy of the payload.
    touched_.clear();
    for (const std::uint32_t dst : dsts) {
        if (dst >= engine_->num_ranks_) {
            throw std::out_of_range("message to virtual rank " + std::to_string(dst) + " of " +
                                    std::to_string(engine_->num_ranks_));
        }
        const auto q = static_cast<std::size_t>(engine_->owner(dst));
        if (groups_[q].empty()) touched_.push_back(q);
        groups_[q].push_back(dst);
    }
    for (const std::size_t q : touched_) {
        auto& stream = scratch_[q];
        stream.push_back(static_cast<std::uint32_t>(groups_[q].size()));
        stream.insert(stream.end(), groups_[q].begin(), groups_[q].end());
        stream.push_back(source_);
        stream.push_back(static_cast<std::uint32_t>(payload.size()));
        stream.insert(stream.end(), payload.begin(), payload.end());
        groups_[q].clear();
    }
}

void Engine::begin_posting(Outbox& outbox) {
    outbox.scratch_.assign(static_cast<std::size_t>(processes_), {});
    outbox.groups_.assign(static_cast<std::size_t>(processes_), {});
}

void Engine::route(Outbox& outbox) {
    ++supersteps_;
    auto& streams = outbox.scratch_;
    const auto p = static_cast<std::size_t>(processes_);
    std::vector<std::uint32_t> received;
    std::vector<std::size_t> stream_begin(p + 1, 0);
    if (processes_ == 1) {
        received = std::move(streams[0]);
        stream_begin[1] = received.size();
    } else {
        std::vector<int> send_counts(p), recv_counts(p), send_displs(p), recv_displs(p);
        std::size_t total_send = 0;
        for (std::size_t q = 0; q < p; ++q) {
            if (streams[q].size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
                throw std::runtime_error("engine: more than 2^31 words for one process in a superstep");
            }
            send_counts[q] = static_cast<int>(streams[q].size());
            total_send += streams[q].size();
        }
        check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_), "MPI_Alltoall");
        std::vector<std::uint32_t> send_buffer;
        send_buffer.reserve(total_send);
        std::size_t total_recv = 0;
        for (std::size_t q = 0; q < p; ++q) {
            send_displs[q] = static_cast<int>(send_buffer.size());
            send_buffer.insert(send_buffer.end(), streams[q].begin(), streams[q].end());
            if (q != static_cast<std::size_t>(process_)) remote_words_ += streams[q].size();
            streams[q] = {};
            recv_displs[q] = static_cast<int>(total_recv);
            total_recv += static_cast<std::size_t>(recv_counts[q]);
            if (total_recv > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
                throw std::runtime_error("engine: more than 2^31 words received in a superstep");
            }
        }
        received.resize(total_recv);
        check_mpi(MPI_Alltoallv(send_buffer.data(), send_counts.data(), send_displs.data(), MPI_UINT32_T,
                                received.data(), recv_counts.data(), recv_displs.data(), MPI_UINT32_T, comm_),
                  "MPI_Alltoallv");
        for (std::size_t q = 0; q < p; ++q)
            stream_begin[q + 1] = stream_begin[q] + static_cast<std::size_t>(recv_counts[q]);
    }

    // Bucket messages by local destination; streams arrive in process order and records in
    // posting order, so every inbox ends up ordered by (source, posting order).
    const std::uint32_t first = local_begin();
    std::vector<std::size_t> counts(std::size_t{local_count()} + 1, 0);
    std::size_t pos = 0;
    while (pos < received.size()) {
        const std::uint32_t count = received[pos];
        for (std::uint32_t k = 0; k < count; ++k) ++counts[received[pos + 1 + k] - first + 1];
        const std::uint32_t length = received[pos + 1 + count + 1];
        pos += kRecordHeader + count + length;
    }
    for (std::size_t v = 0; v < local_count(); ++v) counts[v + 1] += counts[v];
    inbox_offsets_ = counts;
    messages_.assign(counts.back(), Message{});
    received_ = std::move(received);
    pos = 0;
    while (pos < received_.size()) {
        const std::uint32_t count = received_[pos];
        const std::uint32_t source = received_[pos + 1 + count];
        const std::uint32_t length = received_[pos + 2 + count];
        const std::span<const std::uint32_t> payload(received_.data() + pos + kRecordHeader + count, length);
        for (std::uint32_t k = 0; k < count; ++k) {
            messages_[counts[received_[pos + 1 + k] - first]++] = Message{source, payload};
        }
        pos += kRecordHeader + count + length;
    }
}

bool Engine::any(bool local) const {
    int value = local ? 1 : 0;
    int result = 0;
    check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce");
    return result != 0;
}

std::uint64_t Engine::sum(std::uint64_t local) const {
    std::uint64_t result = 0;
    check_mpi(MPI_Allreduce(&local, &result, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
    return result;
}

std::uint64_t Engine::max(std::uint64_t local) const {
    std::uint64_t result = 0;
    check_mpi(MPI_Allreduce(&local, &result, 1, MPI_UINT64_T, MPI_MAX, comm_), "MPI_Allreduce");
    return result;
}

}  // namespace nbr::compiler
