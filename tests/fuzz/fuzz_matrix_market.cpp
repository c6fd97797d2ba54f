// Fuzz target: the Matrix Market reader, with one rank per row and with rows block-mapped to a
// few ranks (the first byte chooses). Any input either parses or throws InputError.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "nbr/graphs/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::optional<std::uint32_t> ranks =
        data[0] % 4 == 0 ? std::nullopt : std::optional<std::uint32_t>(data[0] % 17);
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        (void)nbr::parse_matrix_market(text, "fuzz.mtx", ranks, 1u << 16);
    } catch (const nbr::InputError&) {
    }
    return 0;
}
