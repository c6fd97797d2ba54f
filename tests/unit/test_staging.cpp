// libnbr's staging memory: every buffer starts on a page boundary whatever was allocated
// before it, and growing one keeps its bytes.
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "staging.hpp"

namespace {

using nbr::internal::Staging;

bool page_aligned(const Staging& staging) {
    return reinterpret_cast<std::uintptr_t>(staging.data()) % 4096 == 0;
}

TEST(Staging, EveryBufferStartsOnAPageWhateverCameBefore) {
    std::vector<std::unique_ptr<char[]>> others;
    std::vector<Staging> buffers;
    for (std::size_t bytes : {1, 17, 4095, 4096, 16384, 70000, 600000}) {
        others.push_back(std::make_unique<char[]>(bytes % 977 + 1));  // moves the heap's next address
        buffers.emplace_back(bytes);
        EXPECT_TRUE(page_aligned(buffers.back())) << bytes << " bytes";
    }
}

TEST(Staging, GrowingKeepsTheBytesAndTheAlignment) {
    Staging staging(100);
    for (std::size_t i = 0; i < staging.size(); ++i) staging[i] = static_cast<char>(i);
    staging.resize(1 << 20);
    EXPECT_TRUE(page_aligned(staging));
    for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(staging[i], static_cast<char>(i));
    EXPECT_EQ(staging[100], 0) << "new bytes are zeroed, as std::vector<char> does";
}

}  // namespace
