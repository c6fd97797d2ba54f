#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "execution.hpp"
#include "hand_off.hpp"

namespace nbr::internal {

/// @brief Progress of every started nonblocking and persistent request of the process.
///
/// MPI lets requests complete in any order: a rank waiting on one request must still forward
/// the data of its other requests that its peers wait on, or two ranks waiting in opposite
/// orders would block each other. So started executions are registered here, and every nbr
/// call that waits or tests (and every blocking collective while some are registered)
/// progresses all of them. A wait with nothing else registered blocks in MPI directly.
/// Threads (nbr.h): the registry is locked while it progresses, blocking waits do not hold
/// it, and an execution's `active` flag is atomic, so threads working on different patterns
/// may progress each other's executions.
namespace progress {

/// @brief Registers a started execution; it leaves the registry when it completes or fails.
void add(Execution& execution);

/// @brief Waits until every execution is complete. Failures are left in the executions.
void wait_all(std::span<Execution* const> executions);

/// @brief Progresses every registered execution once.
void poll();
/// @brief Progresses every registered execution until none is left that no thread blocks on
/// (what a blocking call does before it hands off to a native collective, which progresses
/// nothing of nbr's).
void complete_registered();

/// @brief Whether no execution is registered (then a blocking call needs to progress none).
/// The count lives on the hand-off's page (hand_off.hpp), which a blocking call reads anyway.
inline bool none_registered() {
    return hand_off_page.registered.load() == 0;
}

/// @brief Drives an unregistered, started execution (a blocking call) to completion; while
/// others are registered it progresses them too.
void run_blocking(Execution& execution);

}  // namespace progress

}  // namespace nbr::internal
