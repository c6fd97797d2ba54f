// Fuzz target: the capture's calls file (calls.txt). Any input either parses or throws
// InputError; what parses is written out again and read back unchanged, and its v-call range
// (what `nbrc compile --algo auto` judges v-calls at) is ordered.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nbr/graphs/captured_calls.hpp"
#include "nbr/graphs/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    nbr::CapturedCalls calls;
    try {
        calls = nbr::parse_captured_calls(text, "fuzz/calls.txt");
    } catch (const nbr::InputError&) {
        return 0;
    }
    if (nbr::parse_captured_calls(nbr::format_captured_calls(calls), "fuzz/written.txt") != calls) std::abort();
    if (const auto range = calls.variable_bytes(); range && range->first > range->second) std::abort();
    return 0;
}
