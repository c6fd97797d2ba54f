#include "nbr/compiler/engine.hpp"

#include <algorithm>
#include <iterator>
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

// Tag of the engine's point-to-point routing messages on its private communicator.
constexpr int kRouteTag = 1;

namespace {

int size_of(MPI_Comm comm) {
    int size = 1;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    return size;
}

}  // namespace

Engine::Engine(MPI_Comm comm, std::uint32_t num_ranks)
    : processes_(size_of(comm)), num_ranks_(num_ranks), blocks_(num_ranks, processes_) {
    check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_rank(comm_, &process_), "MPI_Comm_rank");
}

Engine::~Engine() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::span<const Message> Engine::inbox(std::uint32_t v) const {
    const auto [lo, hi] = std::equal_range(message_dsts_.begin(), message_dsts_.end(), v);
    return {messages_.data() + (lo - message_dsts_.begin()), static_cast<std::size_t>(hi - lo)};
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

void Engine::Outbox::publish(std::span<const std::uint32_t> payload) {
    published_.push_back(source_);
    published_.push_back(static_cast<std::uint32_t>(payload.size()));
    published_.insert(published_.end(), payload.begin(), payload.end());
}

void Engine::route_published(Outbox& outbox, std::span<const int> counts) {
    auto& mine = outbox.published_;
    if (processes_ == 1) {
        published_words_ = std::move(mine);
        mine.clear();
    } else {
        const auto p = static_cast<std::size_t>(processes_);
        std::vector<int> displs(p);
        std::size_t total = 0;
        for (std::size_t q = 0; q < p; ++q) {
            displs[q] = static_cast<int>(total);
            total += static_cast<std::size_t>(counts[q]);
            if (q != static_cast<std::size_t>(process_)) remote_words_ += static_cast<std::size_t>(counts[q]);
        }
        published_words_.resize(total);
        // Every process knows every count, so all take the same branch. Few publishers: one
        // broadcast each (k log P messages per process) beats an allgatherv (P steps).
        std::size_t publishers = 0, log_p = 0;
        for (std::size_t q = 0; q < p; ++q) publishers += counts[q] > 0 ? 1 : 0;
        while ((std::size_t{1} << log_p) < p) ++log_p;
        if (publishers * log_p < p) {
            std::copy(mine.begin(), mine.end(), published_words_.begin() + displs[static_cast<std::size_t>(process_)]);
            for (std::size_t q = 0; q < p; ++q) {
                if (counts[q] == 0) continue;
                check_mpi(
                    MPI_Bcast(published_words_.data() + displs[q], counts[q], MPI_UINT32_T, static_cast<int>(q), comm_),
                    "MPI_Bcast");
            }
        } else {
            check_mpi(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT32_T, published_words_.data(),
                                     counts.data(), displs.data(), MPI_UINT32_T, comm_),
                      "MPI_Allgatherv");
        }
        mine.clear();
    }
    published_messages_.clear();
    for (std::size_t pos = 0; pos < published_words_.size();) {
        const std::uint32_t source = published_words_[pos];
        const std::uint32_t length = published_words_[pos + 1];
        published_messages_.push_back(Message{source, {published_words_.data() + pos + 2, length}});
        pos += 2 + length;
    }
}

void Engine::begin_posting(Outbox& outbox) {
    outbox.scratch_.assign(static_cast<std::size_t>(processes_), {});
    outbox.groups_.assign(static_cast<std::size_t>(processes_), {});
}

void Engine::route(Outbox& outbox) {
    ++supersteps_;
    received_ = exchange(outbox);
    unpack_records();
    sort_by_destination();
}

std::vector<std::uint32_t> Engine::exchange(Outbox& outbox) {
    auto& streams = outbox.scratch_;
    const auto p = static_cast<std::size_t>(processes_);
    if (processes_ == 1) {
        route_published(outbox, {});
        return std::move(streams[0]);
    }
    std::vector<std::uint32_t> received;
    // One collective tells every process what it receives point-to-point from each
    // process and how much every process published.
    constexpr auto kLimit = static_cast<std::size_t>(std::numeric_limits<int>::max());
    if (outbox.published_.size() > kLimit) {
        throw std::runtime_error("engine: more than 2^31 published words in a superstep");
    }
    std::vector<int> send_header(2 * p), recv_header(2 * p);
    for (std::size_t q = 0; q < p; ++q) {
        if (streams[q].size() > kLimit) {
            throw std::runtime_error("engine: more than 2^31 words for one process in a superstep");
        }
        send_header[2 * q] = static_cast<int>(streams[q].size());
        send_header[2 * q + 1] = static_cast<int>(outbox.published_.size());
    }
    check_mpi(MPI_Alltoall(send_header.data(), 2, MPI_INT, recv_header.data(), 2, MPI_INT, comm_), "MPI_Alltoall");
    std::vector<int> recv_displs(p), published_counts(p);
    std::size_t total_recv = 0;
    for (std::size_t q = 0; q < p; ++q) {
        published_counts[q] = recv_header[2 * q + 1];
        if (q != static_cast<std::size_t>(process_)) remote_words_ += streams[q].size();
        recv_displs[q] = static_cast<int>(total_recv);
        total_recv += static_cast<std::size_t>(recv_header[2 * q]);
        if (total_recv > kLimit) throw std::runtime_error("engine: more than 2^31 words received in a superstep");
    }
    // Point-to-point between the processes that exchange something: with P close to N
    // most pairs have nothing to say, which an MPI_Alltoallv would still visit.
    received.resize(total_recv);
    requests_.clear();
    for (std::size_t q = 0; q < p; ++q) {
        const int count = recv_header[2 * q];
        if (count == 0 || q == static_cast<std::size_t>(process_)) continue;
        requests_.emplace_back();
        check_mpi(MPI_Irecv(received.data() + recv_displs[q], count, MPI_UINT32_T, static_cast<int>(q), kRouteTag,
                            comm_, &requests_.back()),
                  "MPI_Irecv");
    }
    for (std::size_t q = 0; q < p; ++q) {
        if (streams[q].empty() || q == static_cast<std::size_t>(process_)) continue;
        requests_.emplace_back();
        check_mpi(MPI_Isend(streams[q].data(), static_cast<int>(streams[q].size()), MPI_UINT32_T, static_cast<int>(q),
                            kRouteTag, comm_, &requests_.back()),
                  "MPI_Isend");
    }
    const auto& own = streams[static_cast<std::size_t>(process_)];
    std::copy(own.begin(), own.end(), received.begin() + recv_displs[static_cast<std::size_t>(process_)]);
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    route_published(outbox, published_counts);
    return received;
}

// Streams arrive in process order and records in posting order, so a stable bucketing by
// destination orders every inbox by (source, posting order).
void Engine::unpack_records() {
    messages_.clear();
    message_dsts_.clear();
    for (std::size_t pos = 0; pos < received_.size();) {
        const std::uint32_t count = received_[pos];
        const std::uint32_t source = received_[pos + 1 + count];
        const std::uint32_t length = received_[pos + 2 + count];
        const std::span<const std::uint32_t> payload(received_.data() + pos + kRecordHeader + count, length);
        for (std::uint32_t k = 0; k < count; ++k) {
            message_dsts_.push_back(received_[pos + 1 + k]);
            messages_.push_back(Message{source, payload});
        }
        pos += kRecordHeader + count + length;
    }
}

void Engine::sort_by_destination() {
    const std::size_t m = messages_.size();
    if (m * 8 < local_count()) {
        // Few messages: sort them instead of sweeping every local rank.
        std::vector<std::uint32_t> order(m);
        for (std::uint32_t i = 0; i < m; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return message_dsts_[a] < message_dsts_[b]; });
        std::vector<Message> sorted(m);
        std::vector<std::uint32_t> dsts(m);
        for (std::size_t i = 0; i < m; ++i) {
            sorted[i] = messages_[order[i]];
            dsts[i] = message_dsts_[order[i]];
        }
        messages_.swap(sorted);
        message_dsts_.swap(dsts);
    } else {
        const std::uint32_t first = local_begin();
        std::vector<std::size_t> offsets(std::size_t{local_count()} + 1, 0);
        for (auto d : message_dsts_) ++offsets[d - first + 1];
        for (std::size_t v = 0; v < local_count(); ++v) offsets[v + 1] += offsets[v];
        std::vector<Message> sorted(m);
        std::vector<std::uint32_t> dsts(m);
        for (std::size_t i = 0; i < m; ++i) {
            const std::size_t at = offsets[message_dsts_[i] - first]++;
            sorted[at] = messages_[i];
            dsts[at] = message_dsts_[i];
        }
        messages_.swap(sorted);
        message_dsts_.swap(dsts);
    }
}

std::vector<std::uint32_t> Engine::receivers() const {
    std::vector<std::uint32_t> result;
    std::unique_copy(message_dsts_.begin(), message_dsts_.end(), std::back_inserter(result));
    return result;
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
