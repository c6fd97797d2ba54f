#pragma once
// The handles of nbr.h: values that name a slot and its generation, never addresses.

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
/// released allocates nothing. All members lock one mutex (handles cross threads).
template <class T>
class HandleTable {
public:
    static constexpr unsigned kSlotBits = 24;  ///< up to 2^24 - 1 live handles of one kind

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
            if (slots_.size() + 1 >= (std::size_t{1} << kSlotBits)) throw std::bad_alloc();
            index = slots_.size();
            slots_.push_back(std::make_unique<Slot>());
            free_.reserve(slots_.capacity());  // release() then never allocates
        }
        Slot& slot = *slots_[index];
        if (object) {
            dropped = std::move(slot.object);
            slot.object = std::move(object);
        } else if (!slot.object) {
            slot.object = std::make_unique<T>();
        }
        slot.live = true;
        return {slot.object.get(), encode(index, slot.generation)};
    }

    /// @brief The 1-based slot number a handle names (0 for the NULL handle); a stale handle
    /// names its slot too.
    static std::size_t slot_of(std::uintptr_t handle) { return handle & kSlotMask; }

    /// @brief The live object of `handle`, or nullptr (NULL, stale, or never issued).
    [[nodiscard]] T* find(std::uintptr_t handle) const {
        const std::lock_guard lock(mutex_);
        const std::uintptr_t slot_bits = handle & kSlotMask;
        if (slot_bits == 0 || slot_bits > slots_.size()) return nullptr;
        const Slot& slot = *slots_[slot_bits - 1];
        if (!slot.live || (handle >> kSlotBits) != (slot.generation & kGenerationMask)) return nullptr;
        return slot.object.get();
    }

    /// @brief Ends `handle` (it must be live); its object is destroyed unless `keep_object`.
    void release(std::uintptr_t handle, bool keep_object) {
        std::unique_ptr<T> dropped;  // destroyed outside the lock
        {
            const std::lock_guard lock(mutex_);
            const std::size_t index = (handle & kSlotMask) - 1;
            Slot& slot = *slots_[index];
            slot.live = false;
            ++slot.generation;
            if (!keep_object) dropped = std::move(slot.object);
            free_.push_back(index);
        }
    }

private:
    static constexpr std::uintptr_t kSlotMask = (std::uintptr_t{1} << kSlotBits) - 1;
    static constexpr std::uintptr_t kGenerationMask = ~std::uintptr_t{0} >> kSlotBits;

    struct Slot {
        std::unique_ptr<T> object;
        std::uintptr_t generation = 1;
        bool live = false;
    };

    static std::uintptr_t encode(std::size_t index, std::uintptr_t generation) {
        return ((generation & kGenerationMask) << kSlotBits) | (index + 1);
    }

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<std::size_t> free_;
};

}  // namespace nbr::internal
