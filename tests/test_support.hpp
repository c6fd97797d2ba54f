#pragma once

// Helpers shared by the tests.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "nbr/graphs/topology.hpp"
#include "nbr_pattern.pb.h"

namespace nbr::test {

/// @brief Directory of the shared SuiteSparse matrices (../shared/matrices beside the repo).
inline std::filesystem::path matrices_dir() {
    if (const char* dir = std::getenv("NBR_SHARED_DIR"); dir != nullptr && *dir != '\0') {
        return std::filesystem::path(dir) / "matrices";
    }
    return std::filesystem::path(NBR_SOURCE_DIR) / ".." / "shared" / "matrices";
}

/// @brief A small topology with everything MPI allows: duplicate edges, self-loops, ranks
/// without in- or out-neighbors, interleaved edge order. Works for any n >= 1.
inline Topology awkward_topology(std::uint32_t n) {
    std::vector<Edge> edges;
    for (std::uint32_t r = 0; r < n; ++r) {
        if (r % 4 == 3) continue;  // rank without out-neighbors
        edges.push_back({r, (r + 1) % n});
        edges.push_back({r, r});            // self-loop
        edges.push_back({r, (r + 1) % n});  // duplicate edge
        if (n > 2) edges.push_back({r, (r + n - 1) % n});
        if (n > 5 && r % 2 == 0) edges.push_back({r, (r * 7 + 3) % n});
    }
    // Rank n-1 (if n % 4 != 0) and every 4th rank get extra traffic; rank 2 none in when n > 8.
    if (n > 8) {
        std::vector<Edge> kept;
        for (const Edge& e : edges) {
            if (e.dst != 2 || e.src == 2) kept.push_back(e);
        }
        edges.swap(kept);
    }
    // Interleave: reverse so in-lists are not sorted by source.
    std::reverse(edges.begin(), edges.end());
    return Topology::from_edges(n, edges);
}

/// @brief One operation of a schedule, as tests write and compare them: items are (origin, slot).
struct Op {
    std::uint32_t step;
    schema::Operation::Kind kind;
    std::uint32_t peer;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> items;
    friend bool operator==(const Op&, const Op&) = default;
};

}  // namespace nbr::test
