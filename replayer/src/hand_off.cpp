#include "hand_off.hpp"

#include "handles.hpp"

namespace nbr::internal {

HandOffPage hand_off_page;

namespace {

/// The smallest block size from which every band of `collective` runs a native variant.
std::uint64_t native_from(const PatternState& pattern, int collective) {
    const auto& bands = pattern.bands[collective];  // never empty: the first starts at 0
    std::uint64_t from = UINT64_MAX;
    for (auto band = bands.rbegin(); band != bands.rend(); ++band) {
        if (!pattern.variants[band->variant].native[collective]) break;
        from = band->from_bytes;
    }
    return from;
}

}  // namespace

void publish_hand_off(const PatternState& pattern) {
    HandOff* record = hand_off_record(pattern.handle);
    if (record == nullptr) return;
    record->comm = pattern.comm;
    for (int c = 0; c < 2; ++c) {
        record->native_from[c] = native_from(pattern, c);
        record->variable_native[c] = pattern.variants[pattern.variable_variant[c]].native[c];
    }
    record->indegree = static_cast<int>(pattern.slots.in_blocks);  // the arrays MPI reads
    record->outdegree = static_cast<int>(pattern.slots.out_blocks);
    record->handle.store(pattern.handle, std::memory_order_release);
}

void retract_hand_off(std::uintptr_t handle) {
    if (HandOff* record = hand_off_record(handle)) record->handle.store(0, std::memory_order_release);
}

}  // namespace nbr::internal
