#pragma once
/// @file
/// @brief The replayer's staging memory: page-aligned, so that a variant's copies between its
/// staging and the application's buffers run at the same speed in every handle and launch
/// (a heap address's offset in its page would otherwise differ from one allocation to the
/// next, and with it how copies into the same application buffer alias in the caches).

#include <cstddef>
#include <new>
#include <vector>

namespace nbr::internal {

/// Allocator of page-aligned storage (std::vector's allocator for Staging).
template <class T>
struct PageAlignedAllocator {
    using value_type = T;
    static constexpr std::size_t kAlignment = 4096;

    PageAlignedAllocator() = default;
    template <class U>
    PageAlignedAllocator(const PageAlignedAllocator<U>& /*other*/) noexcept {}

    T* allocate(std::size_t count) {
        return static_cast<T*>(::operator new (count * sizeof(T), std::align_val_t{kAlignment}));
    }
    void deallocate(T* pointer, std::size_t /*count*/) noexcept {
        ::operator delete (pointer, std::align_val_t{kAlignment});
    }
    template <class U>
    bool operator==(const PageAlignedAllocator<U>& /*other*/) const noexcept {
        return true;
    }
};

/// Staging bytes of a handle's messages.
using Staging = std::vector<char, PageAlignedAllocator<char>>;

}  // namespace nbr::internal
