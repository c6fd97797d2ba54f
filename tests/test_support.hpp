#pragma once

// Helpers shared by the tests.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/readers.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr_pattern.pb.h"
#include "temp_root.hpp"

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

/// @brief Named graphs that a construction must handle exactly: awkward_topology at two sizes,
/// then `more`, a real matrix (ash292 on 16 ranks), one rank with only two self-loops, and nine
/// ranks without any edge.
inline std::vector<std::pair<std::string, Topology>> irregular_graphs(
    std::vector<std::pair<std::string, Topology>> more = {}) {
    std::vector<std::pair<std::string, Topology>> graphs{{"awkward 13", awkward_topology(13)},
                                                         {"awkward 61", awkward_topology(61)}};
    for (auto& graph : more) graphs.push_back(std::move(graph));
    const std::vector<Edge> loops{{0, 0}, {0, 0}};
    graphs.emplace_back("ash292/16", read_matrix_market((matrices_dir() / "ash292.mtx").string(), 16));
    graphs.emplace_back("one rank", Topology::from_edges(1, loops));
    graphs.emplace_back("no edges", Topology::from_edges(9, std::span<const Edge>{}));
    return graphs;
}

/// @brief One operation of a schedule, as tests write and compare them: items are (origin, slot).
struct Op {
    std::uint32_t step;
    schema::Operation::Kind kind;
    std::uint32_t peer;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> items;
    friend bool operator==(const Op&, const Op&) = default;
};

/// @brief A rank pattern's operations in step order, as Op values.
inline std::vector<Op> ops_of(const schema::RankPattern& p) {
    std::vector<Op> ops;
    for (int s = 0; s < p.steps_size(); ++s) {
        for (const auto& op : p.steps(s).operations()) {
            Op o{static_cast<std::uint32_t>(s), op.kind(), op.peer(), {}};
            for (int i = 0; i < op.origins_size(); ++i) o.items.emplace_back(op.origins(i), op.slots(i));
            ops.push_back(o);
        }
    }
    return ops;
}

/// @brief Rank patterns for `edges` with the given schedules (ranks without one get none).
inline std::vector<schema::RankPattern> patterns(std::uint32_t n, const std::vector<Edge>& edges,
                                                 const std::map<std::uint32_t, std::vector<Op>>& schedules) {
    const auto t = Topology::from_edges(n, edges);
    std::vector<schema::RankPattern> out(n);
    for (std::uint32_t r = 0; r < n; ++r) {
        auto& p = out[r];
        p.set_rank(r);
        p.set_num_ranks(n);
        for (auto v : t.in_neighbors(r)) p.add_in_neighbors(v);
        for (auto v : t.out_neighbors(r)) p.add_out_neighbors(v);
        for (auto v : t.in_source_slots(r)) p.add_in_source_slots(v);
        const auto it = schedules.find(r);
        if (it == schedules.end()) continue;
        for (const auto& op : it->second) {
            while (p.steps_size() <= static_cast<int>(op.step)) p.add_steps();
            auto* o = p.mutable_steps(static_cast<int>(op.step))->add_operations();
            o->set_kind(op.kind);
            o->set_peer(op.peer);
            for (auto [origin, slot] : op.items) {
                o->add_origins(origin);
                o->add_slots(slot);
            }
        }
    }
    return out;
}

/// @brief Naive schedule: every edge one message in step 0.
inline std::vector<schema::RankPattern> naive(std::uint32_t n, const std::vector<Edge>& edges) {
    std::map<std::uint32_t, std::vector<Op>> s;
    const auto t = Topology::from_edges(n, edges);
    for (std::uint32_t r = 0; r < n; ++r) {
        const auto out = t.out_neighbors(r);
        for (std::uint32_t k = 0; k < out.size(); ++k) s[r].push_back({0, schema::Operation::SEND, out[k], {{r, k}}});
        const auto in = t.in_neighbors(r);
        const auto slots = t.in_source_slots(r);
        for (std::uint32_t k = 0; k < in.size(); ++k)
            s[r].push_back({0, schema::Operation::RECV, in[k], {{in[k], slots[k]}}});
    }
    return patterns(n, edges, s);
}

/// @brief How many Matrix Market files ../shared/matrices holds (sweeps assert they ran them all).
inline constexpr std::size_t kSharedMatrices = 22;

/// @brief The shared matrices (*.mtx) with the process counts the sweeps map them to: 16
/// and 64 for square matrices, 16 for rectangular ones.
inline std::vector<std::pair<std::filesystem::path, std::uint32_t>> shared_matrix_cases() {
    std::vector<std::pair<std::filesystem::path, std::uint32_t>> cases;
    for (const auto& entry : std::filesystem::directory_iterator(matrices_dir())) {
        if (entry.path().extension() != ".mtx") continue;
        std::ifstream in(entry.path());
        std::string line;
        while (std::getline(in, line) && line[0] == '%') {
        }
        std::uint64_t rows = 0, cols = 0;
        std::istringstream(line) >> rows >> cols;
        cases.emplace_back(entry.path(), 16);
        if (rows == cols) cases.emplace_back(entry.path(), 64);
    }
    std::sort(cases.begin(), cases.end());
    return cases;
}

/// @brief The topologies of shared_matrix_cases, each labelled "NAME.mtx at P".
inline std::vector<std::pair<std::string, Topology>> shared_matrix_topologies() {
    std::vector<std::pair<std::string, Topology>> out;
    for (const auto& [path, p] : shared_matrix_cases()) {
        out.emplace_back(path.filename().string() + " at " + std::to_string(p), read_matrix_market(path.string(), p));
    }
    return out;
}

/// @brief The sweeps' Moore neighborhoods: d = 2..4, r = 1..3 at N = 64..4096, leaving out
/// grids too small for the radius (the generator rejects those).
inline std::vector<MooreParams> moore_sweep_cases() {
    std::vector<MooreParams> cases;
    for (std::uint32_t d = 2; d <= 4; ++d) {
        for (std::uint32_t r = 1; r <= 3; ++r) {
            for (std::uint32_t n : {64u, 256u, 1024u, 4096u}) {
                if (balanced_dims(n, d).back() >= 2 * r + 1) cases.push_back({n, d, r});
            }
        }
    }
    return cases;
}

/// @brief "moore d=D r=R N=N".
inline std::string moore_label(const MooreParams& m) {
    return "moore d=" + std::to_string(m.dims) + " r=" + std::to_string(m.radius) + " N=" + std::to_string(m.ranks);
}

}  // namespace nbr::test
