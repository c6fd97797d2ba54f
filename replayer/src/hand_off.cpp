#include "hand_off.hpp"

#include <bit>

#include "block_buffer.hpp"
#include "handles.hpp"
#include "tuner.hpp"

namespace nbr::internal {

HandOffPage hand_off_page;
HandOffCounts hand_off_counts[kHandOffs];
static_assert(HandOffCounts::kTimedEvery == Tuner::kRunSample, "handed-off calls are timed as the tuner times");

namespace {

/// The smallest block size from which every band of `collective` runs a native variant.
std::uint64_t native_from(const PatternState& pattern, int collective) {
    const auto& bands = pattern.bands[collective];  // never empty: the first starts at 0
    std::uint64_t from = UINT64_MAX;
    for (auto band = bands.rbegin(); band != bands.rend(); ++band) {
        if (!fixed_native(pattern, pattern.variants[band->variant], collective)) break;
        from = band->from_bytes;
    }
    return from;
}

/// The size class of a shape's calls as the records and counts index it (v-calls: their own).
std::size_t class_of(const ShapeKey& key) {
    return key.variable ? HandOffCounts::kVariableClass : key.size_class;
}

/// Whether every block size of `key`'s class falls in the key's band (so the class alone says
/// the shape). Class 0 is 0 bytes; classes from 64 on are never handed off.
bool class_in_band(const PatternState& pattern, const ShapeKey& key) {
    if (key.size_class >= HandOffCounts::kVariableClass) return false;
    if (key.size_class == 0) return true;
    const auto collective = static_cast<Collective>(key.collective);
    const std::uint64_t low = std::uint64_t{1} << (key.size_class - 1);
    return band_index_of(pattern, collective, low) == key.band &&
           band_index_of(pattern, collective, low * 2 - 1) == key.band;
}

}  // namespace

int other_predefined_size(MPI_Datatype type) {
    return predefined_size(type);
}

void publish_hand_off(const PatternState& pattern) {
    // Once, before the first record is live (its handle's release store publishes them too).
    [[maybe_unused]] static const bool common_types = [] {
        auto& types = hand_off_page.common_types;
        types[0] = MPI_BYTE;
        types[1] = MPI_CHAR;
        types[2] = MPI_INT;
        types[3] = MPI_DOUBLE;
        return true;
    }();
    HandOff* record = hand_off_record(pattern.handle);
    if (record == nullptr) return;
    const bool measured = pattern.tuner != nullptr;  // its shapes say what is handed off
    record->comm = pattern.comm;
    record->counted = measured;
    for (int c = 0; c < 2; ++c) {
        record->native_from[c] = measured ? UINT64_MAX : native_from(pattern, c);
        record->variable_native[c] = !measured && pattern.variants[pattern.variable_variant[c]].native[c];
        record->native_classes[c] = 0;
        auto& counts = hand_off_counts[record - hand_off_page.records];
        for (auto& count : counts.calls[c]) count.store(0);
        for (auto& count : counts.timed_calls[c]) count.store(0);
        for (auto& us : counts.timed_us[c]) us.store(0);
    }
    const int alltoall = index_of(Collective::alltoall);
    record->alltoallw_native = !measured && pattern.variants[pattern.variable_variant[alltoall]].native_alltoallw;
    record->indegree = static_cast<int>(pattern.slots.in_blocks);  // the arrays MPI reads
    record->outdegree = static_cast<int>(pattern.slots.out_blocks);
    record->handle.store(pattern.handle, std::memory_order_release);
}

void hand_off_shape(const PatternState& pattern, int index) {
    HandOff* record = hand_off_record(pattern.handle);
    if (record == nullptr || !pattern.tuner) return;
    const Shape& shape = pattern.tuner->shapes[static_cast<std::size_t>(index)];
    const ShapeKey& key = shape.key;
    const bool decided = shape.state != Shape::State::trial && shape.run_calls >= Tuner::kHandOffSamples;
    const auto variant = shape.candidates[shape.chosen].variant;
    if (!decided || key.mode != CallMode::blocking || !pattern.variants[variant].native[key.collective]) return;
    if (key.variable) {
        record->variable_native[key.collective] = true;
        if (key.collective == index_of(Collective::alltoall)) {
            record->alltoallw_native = pattern.variants[variant].native_alltoallw;
        }
    } else if (fixed_native(pattern, pattern.variants[variant], key.collective) && class_in_band(pattern, key)) {
        record->native_classes[key.collective] |= std::uint64_t{1} << key.size_class;
    }
}

HandedOff handed_off_calls(const PatternState& pattern, int index) {
    const HandOff* record = hand_off_record(pattern.handle);
    if (record == nullptr || !pattern.tuner) return {};
    const ShapeKey& key = pattern.tuner->shapes[static_cast<std::size_t>(index)].key;
    if (key.mode != CallMode::blocking || (!key.variable && !class_in_band(pattern, key))) return {};
    const auto& counts = hand_off_counts[record - hand_off_page.records];
    const auto c = key.collective;
    const auto k = class_of(key);
    return {counts.calls[c][k].load(std::memory_order_relaxed),
            counts.timed_calls[c][k].load(std::memory_order_relaxed),
            counts.timed_us[c][k].load(std::memory_order_relaxed)};
}

void retract_hand_off(std::uintptr_t handle) {
    if (HandOff* record = hand_off_record(handle)) record->handle.store(0, std::memory_order_release);
}

}  // namespace nbr::internal
