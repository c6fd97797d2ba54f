#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "nbr/compiler/rank_blocks.hpp"

namespace nbr::compiler {

/// @brief A message delivered to a virtual rank.
struct Message {
    std::uint32_t source = 0;                ///< virtual rank that posted it
    std::span<const std::uint32_t> payload;  ///< valid until the next superstep
};

/// @brief Bulk-synchronous engine that hosts N virtual ranks on the P processes of a
/// communicator, block-distributed (process q hosts a contiguous range of ranks).
///
/// Algorithms are written per virtual rank: in a superstep each local virtual rank reads
/// its inbox (the messages posted to it in the previous superstep), computes, and posts
/// messages; the engine then routes them: one MPI_Alltoall of message sizes, then
/// point-to-point messages between the processes that have something to exchange (the
/// traffic is sparse when P approaches N), or moving buffers when everything is local.
///
/// Determinism: a virtual rank's inbox is ordered by source rank, then by posting order,
/// whatever P is, so algorithms that only depend on their inbox give identical results
/// for every process count.
class Engine {
public:
    /// @param comm the compiler processes; the engine works on a duplicate (collective)
    /// @param num_ranks N, the number of virtual ranks (may be smaller than P)
    Engine(MPI_Comm comm, std::uint32_t num_ranks);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    [[nodiscard]] std::uint32_t num_ranks() const noexcept { return num_ranks_; }
    [[nodiscard]] int process() const noexcept { return process_; }
    [[nodiscard]] int processes() const noexcept { return processes_; }
    [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }

    /// @brief First local virtual rank.
    [[nodiscard]] std::uint32_t local_begin() const noexcept { return blocks_.begin(process_); }
    /// @brief One past the last local virtual rank.
    [[nodiscard]] std::uint32_t local_end() const noexcept { return blocks_.end(process_); }
    /// @brief Number of local virtual ranks.
    [[nodiscard]] std::uint32_t local_count() const noexcept { return local_end() - local_begin(); }
    /// @brief Process hosting virtual rank v.
    [[nodiscard]] int owner(std::uint32_t v) const { return blocks_.owner(v); }
    /// @brief The blocks of virtual ranks, one per process.
    [[nodiscard]] const RankBlocks& blocks() const noexcept { return blocks_; }

    /// @brief Posting side of a superstep, bound to the virtual rank being computed.
    class Outbox {
    public:
        /// @brief Posts `payload` to virtual rank `dst`.
        void post(std::uint32_t dst, std::span<const std::uint32_t> payload);
        /// @brief Posts the same payload to several ranks; it travels once per process.
        void multicast(std::span<const std::uint32_t> dsts, std::span<const std::uint32_t> payload);
        /// @brief Publishes a small fact about this rank (e.g. its state) to every process.
        /// After routing every process sees it in Engine::published(); a virtual rank must
        /// only read the facts of ranks it is entitled to hear from (its peers). This is a
        /// notification to many peers whose cost no longer grows with the peer count.
        void publish(std::span<const std::uint32_t> payload);

    private:
        friend class Engine;
        explicit Outbox(Engine& engine) : engine_(&engine) {}
        Engine* engine_;
        std::uint32_t source_ = 0;
        std::vector<std::vector<std::uint32_t>> scratch_;  // stream per destination process
        std::vector<std::vector<std::uint32_t>> groups_;   // multicast destinations per process
        std::vector<std::size_t> touched_;                 // processes a multicast reaches
        std::vector<std::uint32_t> published_;             // [source, length, payload...]
    };

    /// @brief Runs one superstep: calls `compute(v, inbox, outbox)` for every local virtual
    /// rank in increasing order, then routes the posted messages. Collective over comm.
    template <class Compute>
    void superstep(Compute&& compute) {
        Outbox outbox(*this);
        begin_posting(outbox);
        for (std::uint32_t v = local_begin(); v < local_end(); ++v) {
            outbox.source_ = v;
            compute(v, inbox(v), outbox);
        }
        route(outbox);
    }

    /// @brief Like superstep(), but computes only the given local ranks (the others stay
    /// idle; messages to them are still delivered). For algorithms in which few ranks are
    /// active per superstep. Collective over comm.
    template <class Compute>
    void superstep(std::span<const std::uint32_t> active, Compute&& compute) {
        Outbox outbox(*this);
        begin_posting(outbox);
        for (const std::uint32_t v : active) {
            outbox.source_ = v;
            compute(v, inbox(v), outbox);
        }
        route(outbox);
    }

    /// @brief Messages delivered to local virtual rank v in the last routing.
    [[nodiscard]] std::span<const Message> inbox(std::uint32_t v) const;
    /// @brief Local ranks with a non-empty inbox after the last routing, sorted.
    [[nodiscard]] std::vector<std::uint32_t> receivers() const;
    /// @brief Facts published in the last superstep by all ranks, ordered by source rank.
    [[nodiscard]] std::span<const Message> published() const { return published_messages_; }

    /// @brief True on every process if `local` is true on any. Collective.
    [[nodiscard]] bool any(bool local) const;
    /// @brief Sum over processes. Collective.
    [[nodiscard]] std::uint64_t sum(std::uint64_t local) const;
    /// @brief Maximum over processes. Collective.
    [[nodiscard]] std::uint64_t max(std::uint64_t local) const;

    /// @brief Number of supersteps run so far.
    [[nodiscard]] std::uint64_t supersteps() const noexcept { return supersteps_; }
    /// @brief Payload words routed between processes so far (local traffic excluded).
    [[nodiscard]] std::uint64_t remote_words() const noexcept { return remote_words_; }

private:
    void begin_posting(Outbox& outbox);
    void route(Outbox& outbox);
    /// The records every process posted for this one, in process order (with several
    /// processes: one MPI_Alltoall of the counts, then point to point); publishes too.
    std::vector<std::uint32_t> exchange(Outbox& outbox);
    void route_published(Outbox& outbox, std::span<const int> counts);
    /// messages_ and message_dsts_ from the records in received_, in arrival order.
    void unpack_records();
    /// Orders the inbox by local destination, stably.
    void sort_by_destination();

    MPI_Comm comm_ = MPI_COMM_NULL;  // private duplicate
    int process_ = 0;
    int processes_ = 1;
    std::uint32_t num_ranks_;
    RankBlocks blocks_;

    // Inbox of the last routing: messages_ sorted by destination (message_dsts_), stably.
    std::vector<std::uint32_t> received_;
    std::vector<MPI_Request> requests_;  // reused across supersteps
    std::vector<std::uint32_t> message_dsts_;
    std::vector<Message> messages_;
    std::vector<std::uint32_t> published_words_;
    std::vector<Message> published_messages_;
    std::uint64_t supersteps_ = 0;
    std::uint64_t remote_words_ = 0;
};

}  // namespace nbr::compiler
