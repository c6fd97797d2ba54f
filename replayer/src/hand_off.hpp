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
/// and there cost as much as several percent of a call (bench/overhead/README.md). The record holds
/// the answer for the common calls in one line; every other call takes the full path.
struct alignas(64) HandOff {
    std::atomic<std::uintptr_t> handle{0};  ///< the live pattern's handle, 0 when the slot has none
    MPI_Comm comm = MPI_COMM_NULL;          ///< the pattern's private communicator
    /// Per collective (allgather, alltoall): fixed-size calls whose blocks have at least this
    /// many bytes are handed to MPI's collective (every band from there on is native);
    /// UINT64_MAX when none is.
    std::uint64_t native_from[2] = {UINT64_MAX, UINT64_MAX};
    /// Measured patterns (NBR_LOAD_MEASURE): per collective, bit k set when fixed-size calls of
    /// size class k (tuner.hpp, size_class_of) are handed to MPI's collective: their shape chose
    /// a native variant. Such calls are counted in HandOffCounts.
    std::uint64_t native_classes[2] = {0, 0};
    bool variable_native[2] = {false, false};  ///< v-variant calls are handed to MPI's collective
    bool alltoallw_native = false;             ///< ... and alltoallw calls (on MPICH never: nbr.cpp)
    bool counted = false;                      ///< a measured pattern: handed-off calls are counted
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
    /// MPI_BYTE, MPI_CHAR, MPI_INT and MPI_DOUBLE (the first publish_hand_off fills them): the
    /// types most calls pass, told apart on the line a blocking call reads anyway instead of
    /// through MPI's symbols (one more cold line each).
    MPI_Datatype common_types[4] = {};
    /// The records, indexed by handle slot − 1 (hand_off.cpp writes them, at load and free).
    HandOff records[kHandOffs];
};
static_assert(sizeof(HandOffPage) == 4096, "the hand-off's data is one page");
static_assert(sizeof(HandOff) == 64, "a hand-off record is one cache line");
extern HandOffPage hand_off_page;

/// block_buffer.hpp's predefined_size, out of line.
int other_predefined_size(MPI_Datatype type);
/// The size of a predefined type, 0 for any other (predefined_size): the common types from the
/// hand-off page's first line (valid once a record is live), the others out of line.
inline int hand_off_type_size(MPI_Datatype type) {
    const auto& common = hand_off_page.common_types;
    int size = 0;  // compared without branches: one path through the common types
    size = type == common[0] ? 1 : size;
    size = type == common[1] ? 1 : size;
    size = type == common[2] ? static_cast<int>(sizeof(int)) : size;
    size = type == common[3] ? static_cast<int>(sizeof(double)) : size;
    if (size == 0) [[unlikely]]
        size = other_predefined_size(type);
    return size;
}

/// @brief The calls of a measured pattern that went straight to MPI's collective, per
/// collective and size class (v-calls: class kVariableClass), so that the report counts them
/// in their shapes, and one in kTimedEvery of them timed, so that its time per call covers the
/// whole run. Written only by the calls of the pattern (MPI orders the collective calls on a
/// communicator), read by the report.
struct HandOffCounts {
    static constexpr std::size_t kVariableClass = 64;
    static constexpr std::uint64_t kTimedEvery = 16;  ///< Tuner::kRunSample
    std::atomic<std::uint64_t> calls[2][kVariableClass + 1];
    std::atomic<std::uint64_t> timed_calls[2][kVariableClass + 1];
    std::atomic<double> timed_us[2][kVariableClass + 1];
};
extern HandOffCounts hand_off_counts[kHandOffs];

/// @brief Where a handed-off call's time goes, when it is one of those timed.
struct HandOffTiming {
    std::atomic<std::uint64_t>* calls = nullptr;  ///< nullptr: the call is not timed
    std::atomic<double>* us = nullptr;
};

/// Counts one handed-off call of a measured pattern's record (relaxed loads and stores: the
/// pattern's calls are never concurrent); the 1st, 17th, ... are timed (`timing`).
inline void count_hand_off(const HandOff* record, int collective, std::size_t size_class, HandOffTiming& timing) {
    auto& counts = hand_off_counts[record - hand_off_page.records];
    auto& count = counts.calls[collective][size_class];
    const std::uint64_t before = count.load(std::memory_order_relaxed);
    count.store(before + 1, std::memory_order_relaxed);
    if (before % HandOffCounts::kTimedEvery == 0) {
        timing = {&counts.timed_calls[collective][size_class], &counts.timed_us[collective][size_class]};
    }
}

/// Adds a timed handed-off call's time.
inline void add_hand_off_time(const HandOffTiming& timing, double us) {
    timing.calls->store(timing.calls->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    timing.us->store(timing.us->load(std::memory_order_relaxed) + us, std::memory_order_relaxed);
}

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
/// A measured pattern's record starts with nothing handed off; its shapes add to it as they
/// choose (hand_off_shape).
void publish_hand_off(const PatternState& pattern);

/// Hands a measured pattern's blocking shape to MPI's collective once it has chosen a native
/// variant and timed a call of it (the report's time per call), where every call of its size
/// class falls in the shape (a class that straddles a band boundary is two shapes and stays).
void hand_off_shape(const PatternState& pattern, int shape);

/// The calls of a measured pattern's shape that went straight to MPI's collective, and those of
/// them timed with their time.
struct HandedOff {
    std::uint64_t calls = 0;
    std::uint64_t timed_calls = 0;
    double timed_us = 0;
};
[[nodiscard]] HandedOff handed_off_calls(const PatternState& pattern, int shape);

/// Clears the record of a pattern about to be freed.
void retract_hand_off(std::uintptr_t handle);

}  // namespace nbr::internal
