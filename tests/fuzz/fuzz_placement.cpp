// Fuzz target: the placement-file reader, for 1 to 64 ranks (the first byte chooses). Any
// input either parses into a placement of every rank or throws InputError; a placement's
// socket groups (aggregation by socket) keep every rank, each group within one node.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint32_t ranks = 1u + data[0] % 64u;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        const auto placement = nbr::Placement::parse(text, "fuzz.placement", ranks);
        if (placement.num_ranks() != ranks || placement.max_ranks_per_node() == 0) std::abort();
        const auto groups = placement.socket_groups();
        if (groups.num_ranks() != ranks || groups.num_nodes() < placement.num_nodes()) std::abort();
        for (std::uint32_t a = 0; a < ranks; ++a) {
            for (std::uint32_t b = 0; b < ranks; ++b) {
                if (groups.same_node(a, b) && !placement.same_node(a, b)) std::abort();
                if (placement.same_socket(a, b) && !groups.same_node(a, b)) std::abort();
            }
        }
    } catch (const nbr::InputError&) {
    }
    return 0;
}
