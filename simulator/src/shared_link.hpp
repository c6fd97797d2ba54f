// A link whose bandwidth the messages crossing it share equally (processor sharing), for the
// simulator's fair NIC model (docs/simulate.md, "nic_sharing").
#pragma once

#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

namespace nbr::simulator::internal {

/// @brief Processor sharing with equal shares: a message needs `work` picoseconds of the link
/// alone, and while n messages are on the link each progresses at 1/n of its rate.
///
/// Kept in virtual time: V grows by dt / n over real time dt with n messages on the link, a
/// message that joins at V needs until V + work, and messages leave in the order of those
/// finish tags (ties: the earlier joined). Joining and leaving are O(log n); the caller asks
/// for the real time of the next departure after each change and schedules it, and discards
/// a scheduled departure whose `version` is no longer the link's.
class SharedLink {
public:
    using Time = std::int64_t;  ///< picoseconds

    struct Job {
        double finish = 0;  ///< virtual finish tag
        std::uint64_t order = 0;
        std::uint32_t message = 0;
        Time aux = 0;  ///< carried for the caller
    };

    /// @brief `message` joins at real time `now` (not before the last change).
    void join(Time now, double work, std::uint32_t message, Time aux) {
        advance(now);
        jobs_.push(Job{virtual_ + work, order_++, message, aux});
        ++version_;
    }

    [[nodiscard]] bool empty() const noexcept { return jobs_.empty(); }
    [[nodiscard]] std::uint64_t version() const noexcept { return version_; }

    /// @brief Real time at which the first message leaves if no other joins first.
    /// @pre !empty()
    [[nodiscard]] Time next_departure() const {
        const double left = std::max(0.0, jobs_.top().finish - virtual_);
        return updated_ + static_cast<Time>(std::ceil(left * static_cast<double>(jobs_.size())));
    }

    /// @brief The first message leaves at real time `now` (its next_departure()).
    /// @pre !empty()
    Job leave(Time now) {
        advance(now);
        const Job job = jobs_.top();
        jobs_.pop();
        virtual_ = std::max(virtual_, job.finish);  // the rounding up of next_departure
        ++version_;
        return job;
    }

private:
    struct Later {
        bool operator()(const Job& a, const Job& b) const {
            return a.finish != b.finish ? a.finish > b.finish : a.order > b.order;
        }
    };

    void advance(Time now) {
        if (!jobs_.empty() && now > updated_) {
            virtual_ += static_cast<double>(now - updated_) / static_cast<double>(jobs_.size());
        }
        updated_ = std::max(updated_, now);
    }

    std::priority_queue<Job, std::vector<Job>, Later> jobs_;
    double virtual_ = 0;
    Time updated_ = 0;
    std::uint64_t order_ = 0;
    std::uint64_t version_ = 0;
};

}  // namespace nbr::simulator::internal
