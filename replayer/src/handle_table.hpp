#pragma once
// The handles of nbr.h: values that name a slot and its generation, never addresses.

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace nbr::internal {

/// @brief Objects behind opaque C handles, so that a stale copy of a released handle is
/// recognized as such even after its slot has been reused.
///
/// A handle value is (generation << kSlotBits) | (slot + 1): never 0 (the NULL handle), and a
/// released slot's generation is advanced, so every copy of the released handle stops
/// resolving. Objects are kept in their slots after release when the owner asks
/// (`keep_object`), and reused by the next acquire: a request created after another was
/// released allocates nothing.
///
/// Handles cross threads. `acquire` and `release` lock a mutex; `find`, which every call
/// makes, does not: slots live in chunks that never move (chunk k holds 64 · 2^k slots), and
/// each slot publishes its live handle in one atomic word, written last by `acquire` and
/// first by `release`. A find that races with the release of the same handle is the
/// application's error (using a handle while freeing it), as in MPI.
template <class T>
class HandleTable {
public:
    static constexpr unsigned kSlotBits = 24;  ///< up to 2^24 - 1 live handles of one kind

    HandleTable() = default;
    HandleTable(const HandleTable&) = delete;
    HandleTable& operator=(const HandleTable&) = delete;
    ~HandleTable() {
        for (auto& chunk : chunks_) delete[] chunk.load();
    }

    /// @brief A live slot's object and its handle; the object is `object` if given, else new
    /// or a kept one.
    std::pair<T*, std::uintptr_t> acquire(std::unique_ptr<T> object = nullptr) {
        std::unique_ptr<T> dropped;  // a kept object that `object` replaces, destroyed outside the lock
        const std::lock_guard lock(mutex_);
        std::size_t index = 0;
        if (!free_.empty()) {
            index = free_.back();
            free_.pop_back();
        } else {
            if (used_ + 1 >= (std::size_t{1} << kSlotBits)) throw std::bad_alloc();
            index = used_;
            add_chunk_for(index);
            ++used_;
        }
        Slot& slot = slot_at(index);
        if (object) {
            dropped = std::move(slot.object);
            slot.object = std::move(object);
        } else if (!slot.object) {
            slot.object = std::make_unique<T>();
        }
        const std::uintptr_t handle = encode(index, slot.generation);
        slot.handle.store(handle, std::memory_order_release);
        return {slot.object.get(), handle};
    }

    /// @brief The 1-based slot number a handle names (0 for the NULL handle); a stale handle
    /// names its slot too.
    static std::size_t slot_of(std::uintptr_t handle) { return handle & kSlotMask; }

    /// @brief The live object of `handle`, or nullptr (NULL, stale, or never issued). Lock-free.
    [[nodiscard]] T* find(std::uintptr_t handle) const {
        const std::size_t slot = slot_of(handle);
        if (slot == 0) return nullptr;
        const auto [chunk, offset] = place_of(slot - 1);
        const Slot* slots = chunks_[chunk].load(std::memory_order_acquire);
        if (slots == nullptr || slots[offset].handle.load(std::memory_order_acquire) != handle) return nullptr;
        return slots[offset].object.get();
    }

    /// @brief Ends `handle` (it must be live); its object is destroyed unless `keep_object`.
    void release(std::uintptr_t handle, bool keep_object) {
        std::unique_ptr<T> dropped;  // destroyed outside the lock
        const std::lock_guard lock(mutex_);
        const std::size_t index = slot_of(handle) - 1;
        Slot& slot = slot_at(index);
        slot.handle.store(0, std::memory_order_release);
        ++slot.generation;
        if (!keep_object) dropped = std::move(slot.object);
        free_.push_back(index);
    }

private:
    static constexpr std::uintptr_t kSlotMask = (std::uintptr_t{1} << kSlotBits) - 1;
    static constexpr std::uintptr_t kGenerationMask = ~std::uintptr_t{0} >> kSlotBits;
    static constexpr unsigned kFirstChunkBits = 6;  ///< chunk 0 holds 64 slots
    /// Chunks enough for 2^kSlotBits slots: 64 · (2^k − 1) slots fill chunks 0..k−1.
    static constexpr std::size_t kChunks = kSlotBits - kFirstChunkBits + 1;

    struct Slot {
        std::unique_ptr<T> object;
        std::uintptr_t generation = 1;          ///< written under the lock
        std::atomic<std::uintptr_t> handle{0};  ///< the live handle, 0 while released
    };

    static std::uintptr_t encode(std::size_t index, std::uintptr_t generation) {
        return ((generation & kGenerationMask) << kSlotBits) | (index + 1);
    }

    /// The chunk of slot `index` and its place in it.
    static std::pair<std::size_t, std::size_t> place_of(std::size_t index) {
        const std::size_t group = (index >> kFirstChunkBits) + 1;  // chunk k: groups 2^k .. 2^(k+1) − 1
        const auto chunk = static_cast<std::size_t>(std::bit_width(group)) - 1;
        return {chunk, index - ((std::size_t{1} << (chunk + kFirstChunkBits)) - (std::size_t{1} << kFirstChunkBits))};
    }

    Slot& slot_at(std::size_t index) {
        const auto [chunk, offset] = place_of(index);
        return chunks_[chunk].load(std::memory_order_relaxed)[offset];
    }

    /// Allocates the chunk of slot `index` if it is the chunk's first (under the lock), and
    /// the free list's room for every slot up to its end, so that release never allocates.
    void add_chunk_for(std::size_t index) {
        const auto [chunk, offset] = place_of(index);
        if (offset != 0) return;
        const std::size_t size = std::size_t{1} << (chunk + kFirstChunkBits);
        chunks_[chunk].store(new Slot[size], std::memory_order_release);
        free_.reserve(index + size);
    }

    mutable std::mutex mutex_;
    std::array<std::atomic<Slot*>, kChunks> chunks_{};
    std::size_t used_ = 0;  ///< slots ever handed out (under the lock)
    std::vector<std::size_t> free_;
};

}  // namespace nbr::internal
