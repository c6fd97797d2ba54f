#pragma once
// The hand-off of blocking calls to MPI's own collective, from one small record per pattern.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <mpi.h>

#include "handle_table.hpp"

namespace nbr::internal {

struct PatternState;

/// @brief What a blocking call needs to go straight to MPI's collective: one cache line per
/// pattern, in a static table indexed by the handle's slot (HandOffPage).
///
/// Where the pattern's plan for a call is MPI's own naive schedule, libnbr hands the call to
/// MPI's collective (see settle_collectively in nbr.cpp). Finding that out through the pattern's
/// state touches the handle table, the pattern, its bands and variants and the argument checks'
/// datatype queries: a few cache lines, which between the processes that share a core are cold at every call,
/// and there cost as much as several percent of a call (docs/performance.md). The record holds
/// the answer for the common calls in one line; every other call takes the full path.
struct alignas(64) HandOff {
    std::atomic<std::uintptr_t> handle{0};  ///< the live pattern's handle, 0 when the slot has none
    MPI_Comm comm = MPI_COMM_NULL;          ///< the pattern's private communicator
    /// Per collective (allgather, alltoall): fixed-size calls whose blocks have at least this
    /// many bytes are handed to MPI's collective (every band from there on is native);
    /// UINT64_MAX when none is.
    std::uint64_t native_from[2] = {UINT64_MAX, UINT64_MAX};
    bool variable_native[2] = {false, false};  ///< v-variant calls are handed to MPI's collective
    int indegree = 0;
    int outdegree = 0;
};

/// Patterns in the first kHandOffs handle slots have a record.
inline constexpr std::size_t kHandOffs = 63;

/// @brief What a blocking call reads before it hands off, on one page of its own: between
/// processes that share a core each page is one more TLB and cache miss at every call.
struct alignas(4096) HandOffPage {
    /// The number of registered executions (progress.hpp; written by progress.cpp only, under its lock).
    std::atomic<std::size_t> registered{0};
    /// The records, indexed by handle slot − 1 (hand_off.cpp writes them, at load and free).
    HandOff records[kHandOffs];
};
static_assert(sizeof(HandOffPage) == 4096, "the hand-off's data is one page");
extern HandOffPage hand_off_page;

/// The record of the slot `handle` names, live or not; nullptr for NULL and slots beyond the table.
inline HandOff* hand_off_record(std::uintptr_t handle) {
    const std::size_t slot = HandleTable<PatternState>::slot_of(handle);
    return slot == 0 || slot > kHandOffs ? nullptr : &hand_off_page.records[slot - 1];
}

/// The record of `handle` if it is the live pattern's, else nullptr (NULL, stale, freed, or a
/// slot beyond the table). Inline, like everything the hand-off reads: every function and page
/// it touches is one more that is cold after a switch between processes.
inline const HandOff* hand_off_of(std::uintptr_t handle) {
    const HandOff* record = hand_off_record(handle);
    return record != nullptr && record->handle.load(std::memory_order_acquire) == handle ? record : nullptr;
}

/// Fills the record of a loaded pattern (its handle, communicator, bands and variants settled).
void publish_hand_off(const PatternState& pattern);

/// Clears the record of a pattern about to be freed.
void retract_hand_off(std::uintptr_t handle);

}  // namespace nbr::internal
