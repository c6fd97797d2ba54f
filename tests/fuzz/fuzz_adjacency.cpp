// Fuzz target: the adjacency reader (capture topologies). Any input either parses into a
// topology whose lists pair up, or throws InputError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nbr/graphs/adjacency.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto topology = nbr::parse_adjacency(text, "fuzz.adj", 1u << 16);
        std::uint64_t in_edges = 0;
        for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) in_edges += topology.in_degree(r);
        if (in_edges != topology.num_edges()) std::abort();
    } catch (const nbr::InputError&) {
    }
    return 0;
}
