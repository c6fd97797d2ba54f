// Fuzz target: the edge-list reader. Any input either parses or throws InputError; nothing
// else may escape, crash, or allocate beyond what the input and the rank limit justify.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nbr/graphs/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)nbr::parse_edge_list(text, "fuzz.el", std::nullopt, 1u << 16);
    } catch (const nbr::InputError&) {
    }
    return 0;
}
