// matching: half-approximate maximum weight matching by locally dominant edges, in the
// neighborhood-collective variant of Ghosh et al. (graph-matching-mpi-models.txt, §IV):
// vertices block-distributed, a dist-graph communicator of the processes that share cross
// edges, and once per round the outgoing data of each neighbor aggregated and exchanged with
// MPI_Neighbor_alltoall (counts) and MPI_Neighbor_alltoallv (data).
//
// A round: every unmatched vertex points at its heaviest neighbor not known to be matched;
// boundary vertices whose (pointer, matched) state changed send it to the processes that hold
// them as ghosts; two vertices pointing at each other are matched. Edges are ordered strictly
// (weight, then a hash of the endpoint pair, then the pair), so the locally dominant matching is
// unique: it is the matching the serial greedy algorithm builds from the heaviest edge down.
// Rounds end when no rank changed anything (MPI_Allreduce), as in the paper.
//
//   mpirun -np P matching [--geometric N [--distance d] | --rmat SCALE | --matrix FILE | ...]
//   matching ... --write-topology N FILE    (the process graph at N ranks; no run)
//
// Check: the result is a matching (mate of mate is self, across ranks), and it is the serial
// greedy matching vertex by vertex, so its weight is the serial one.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/app_support.hpp"
#include "common/neighbor_exchange.hpp"

namespace {

using example::Block;

struct Options {
    example::MatrixChoice matrix;
    std::int64_t geometric = 0;
    double distance = 0.0;
    example::TopologyRequest topology;
    std::string nbr_dir;
};

/// An undirected weighted graph: sorted adjacency without self-loops or duplicates.
struct Graph {
    std::int64_t n = 0;
    std::vector<std::int64_t> ptr{0}, adj;
    std::vector<double> weight;
    std::string name;
};

Graph from_edges(std::int64_t n, std::vector<std::pair<std::int64_t, std::int64_t>> at, std::vector<double> w,
                 std::string name) {
    const example::Csr c = example::csr_from_triplets(n, n, std::move(at), std::move(w), name);
    return Graph{n, c.row_ptr, c.col, c.val, name};
}

/// The graph of A + Aᵀ: weight |a_ij| + |a_ji|, the diagonal dropped.
Graph graph_of(const example::Csr& a) {
    if (a.rows != a.cols) throw example::InputError(a.name + ": matching needs a square matrix");
    std::vector<std::pair<std::int64_t, std::int64_t>> at;
    std::vector<double> w;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
            if (a.col[e] == i) continue;
            const double v = std::abs(a.val[e]);  // both directions: |a_ij| + |a_ji| per pair
            at.emplace_back(i, a.col[e]);
            w.push_back(v);
            at.emplace_back(a.col[e], i);
            w.push_back(v);
        }
    }
    return from_edges(a.rows, std::move(at), std::move(w), a.name);
}

/// n points uniform in the unit square, numbered by x; an edge between points closer than d,
/// weight 1 − distance/d (bucketed by cells of side d).
Graph geometric_graph(std::int64_t n, double d, std::uint64_t seed) {
    if (d <= 0.0) d = std::sqrt(10.0 / (3.14159265358979 * static_cast<double>(n)));  // mean degree ≈ 10
    std::vector<std::pair<double, double>> p(static_cast<std::size_t>(n));
    std::uint64_t state = seed;
    for (auto& [x, y] : p) {
        x = example::uniform(state);
        y = example::uniform(state);
    }
    std::sort(p.begin(), p.end());
    const auto cells = static_cast<std::int64_t>(std::max(1.0, std::floor(1.0 / d)));
    std::vector<std::vector<std::int64_t>> cell(static_cast<std::size_t>(cells * cells));
    const auto cell_of = [&](double v) { return std::min(cells - 1, static_cast<std::int64_t>(v * cells)); };
    for (std::int64_t i = 0; i < n; ++i) cell[cell_of(p[i].first) * cells + cell_of(p[i].second)].push_back(i);
    std::vector<std::pair<std::int64_t, std::int64_t>> at;
    std::vector<double> w;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t cx = cell_of(p[i].first), cy = cell_of(p[i].second);
        for (std::int64_t x = std::max<std::int64_t>(0, cx - 1); x <= std::min(cells - 1, cx + 1); ++x) {
            for (std::int64_t y = std::max<std::int64_t>(0, cy - 1); y <= std::min(cells - 1, cy + 1); ++y) {
                for (std::int64_t j : cell[x * cells + y]) {
                    const double dist = std::hypot(p[i].first - p[j].first, p[i].second - p[j].second);
                    if (j == i || dist >= d) continue;
                    at.emplace_back(i, j);
                    w.push_back(1.0 - dist / d);
                }
            }
        }
    }
    return from_edges(n, std::move(at), std::move(w), "geometric-" + std::to_string(n));
}

Graph build_graph(const Options& o) {
    if (o.geometric > 0) return geometric_graph(o.geometric, o.distance, o.matrix.seed);
    if (o.matrix.file.empty() && o.matrix.stencil == 0 && o.matrix.random == 0 && o.matrix.rmat == 0) {
        return geometric_graph(2000, o.distance, o.matrix.seed);
    }
    return graph_of(example::build_matrix(o.matrix, 10, true));
}

/// The strict order of edges: weight, then a hash of the pair, then the pair.
struct EdgeKey {
    double w;
    std::uint64_t hash;
    std::int64_t lo, hi;
    static EdgeKey of(std::int64_t u, std::int64_t v, double w) {
        const std::int64_t lo = std::min(u, v), hi = std::max(u, v);
        std::uint64_t s = static_cast<std::uint64_t>(lo) * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(hi);
        return {w, example::splitmix64(s), lo, hi};
    }
    bool operator>(const EdgeKey& o) const {
        if (w != o.w) return w > o.w;
        if (hash != o.hash) return hash > o.hash;
        return std::make_pair(lo, hi) > std::make_pair(o.lo, o.hi);
    }
};

/// The serial greedy matching (heaviest edge first): mate per vertex, −1 if unmatched.
std::vector<std::int64_t> greedy(const Graph& g) {
    std::vector<std::pair<EdgeKey, std::pair<std::int64_t, std::int64_t>>> edges;
    for (std::int64_t u = 0; u < g.n; ++u) {
        for (std::int64_t e = g.ptr[u]; e < g.ptr[u + 1]; ++e) {
            if (u < g.adj[e]) edges.push_back({EdgeKey::of(u, g.adj[e], g.weight[e]), {u, g.adj[e]}});
        }
    }
    std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::int64_t> mate(static_cast<std::size_t>(g.n), -1);
    for (const auto& [key, uv] : edges) {
        if (mate[uv.first] < 0 && mate[uv.second] < 0) {
            mate[uv.first] = uv.second;
            mate[uv.second] = uv.first;
        }
    }
    return mate;
}

/// A vertex's state as its neighbors see it.
struct State {
    std::int64_t pointer = -1;
    bool matched = false;
    bool operator==(const State&) const = default;
};

/// One rank's part of the distributed algorithm.
class Matcher {
public:
    Matcher(const Graph& g, int rank, int size, MPI_Comm world, const std::string& nbr_dir)
        : g_(g), rows_{g.n, size}, rank_(rank), lo_(rows_.lo(rank)) {
        mate_.assign(static_cast<std::size_t>(rows_.size(rank)), -1);
        state_.assign(mate_.size(), State{});
        std::vector<std::vector<std::int64_t>> boundary(size);
        for (std::int64_t v = lo_; v < rows_.hi(rank); ++v) {
            for (std::int64_t e = g.ptr[v]; e < g.ptr[v + 1]; ++e) {
                const int q = rows_.owner(g.adj[e]);
                if (q == rank) continue;
                boundary[q].push_back(v);
                ghost_.emplace(g.adj[e], State{});
            }
        }
        for (int q = 0; q < size; ++q) {
            if (boundary[q].empty()) continue;
            std::sort(boundary[q].begin(), boundary[q].end());
            boundary[q].erase(std::unique(boundary[q].begin(), boundary[q].end()), boundary[q].end());
            neighbors_.push_back(q);
            boundary_.push_back(boundary[q]);
            sent_.emplace_back(boundary[q].size(), State{-2, false});  // never sent
        }
        const int degree = static_cast<int>(neighbors_.size());
        MPI_Dist_graph_create_adjacent(world, degree, neighbors_.data(), MPI_UNWEIGHTED, degree, neighbors_.data(),
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm_);
        exchange_.emplace(comm_, nbr_dir);
    }
    ~Matcher() {
        exchange_.reset();
        MPI_Comm_free(&comm_);
    }
    std::string backend() const { return exchange_->backend(); }
    const std::vector<std::int64_t>& mates() const { return mate_; }
    int rounds = 0;

    /// One round; returns whether anything changed here (pointers, mates or received states).
    bool round() {
        ++rounds;
        bool changed = point();
        changed = exchange() || changed;
        return match() || changed;
    }

private:
    bool is_matched(std::int64_t u) const {
        return rows_.owner(u) == rank_ ? mate_[u - lo_] >= 0 : ghost_.at(u).matched;
    }
    State state_of(std::int64_t u) const { return rows_.owner(u) == rank_ ? state_[u - lo_] : ghost_.at(u); }

    /// Every unmatched vertex points at its heaviest neighbor not known to be matched.
    bool point() {
        bool changed = false;
        for (std::int64_t v = lo_; v < rows_.hi(rank_); ++v) {
            if (mate_[v - lo_] >= 0) continue;
            std::int64_t best = -1;
            EdgeKey best_key{};
            for (std::int64_t e = g_.ptr[v]; e < g_.ptr[v + 1]; ++e) {
                if (is_matched(g_.adj[e])) continue;
                const EdgeKey key = EdgeKey::of(v, g_.adj[e], g_.weight[e]);
                if (best < 0 || key > best_key) {
                    best = g_.adj[e];
                    best_key = key;
                }
            }
            changed = changed || state_[v - lo_].pointer != best;
            state_[v - lo_].pointer = best;
        }
        return changed;
    }

    /// Changed boundary states to the ranks that hold them as ghosts: counts by
    /// MPI_Neighbor_alltoall, (vertex, pointer, matched) triples by MPI_Neighbor_alltoallv.
    bool exchange() {
        const std::size_t degree = neighbors_.size();
        std::vector<int> sendcounts(degree + 1, 0), recvcounts(degree + 1, 0), sdispls(degree + 1, 0),
            rdispls(degree + 1, 0);
        std::vector<std::int64_t> out;
        for (std::size_t n = 0; n < degree; ++n) {
            sdispls[n] = static_cast<int>(out.size());
            for (std::size_t k = 0; k < boundary_[n].size(); ++k) {
                const std::int64_t v = boundary_[n][k];
                if (state_[v - lo_] == sent_[n][k]) continue;
                sent_[n][k] = state_[v - lo_];
                out.insert(out.end(), {v, state_[v - lo_].pointer, state_[v - lo_].matched ? 1 : 0});
            }
            sendcounts[n] = static_cast<int>(out.size()) - sdispls[n];
        }
        exchange_->alltoall(sendcounts.data(), 1, MPI_INT, recvcounts.data());
        for (std::size_t n = 1; n < degree; ++n) rdispls[n] = rdispls[n - 1] + recvcounts[n - 1];
        std::vector<std::int64_t> in(
            static_cast<std::size_t>(degree ? rdispls[degree - 1] + recvcounts[degree - 1] : 0) + 1);
        out.push_back(0);
        exchange_->alltoallv(out.data(), sendcounts.data(), sdispls.data(), in.data(), recvcounts.data(),
                             rdispls.data(), MPI_INT64_T);
        const std::size_t received = in.size() - 1;
        for (std::size_t k = 0; k + 3 <= received; k += 3) {
            ghost_.at(in[k]) = State{in[k + 1], in[k + 2] != 0};
        }
        return received > 0;
    }

    /// Two unmatched vertices pointing at each other are matched.
    bool match() {
        bool changed = false;
        for (std::int64_t v = lo_; v < rows_.hi(rank_); ++v) {
            const std::int64_t u = state_[v - lo_].pointer;
            if (mate_[v - lo_] >= 0 || u < 0) continue;
            const State s = state_of(u);
            if (s.pointer != v || s.matched) continue;
            mate_[v - lo_] = u;
            state_[v - lo_] = State{u, true};
            if (rows_.owner(u) == rank_) {
                mate_[u - lo_] = v;
                state_[u - lo_] = State{v, true};
            }
            changed = true;
        }
        return changed;
    }

    const Graph& g_;
    Block rows_;
    int rank_;
    std::int64_t lo_;
    std::vector<std::int64_t> mate_;
    std::vector<State> state_;
    std::unordered_map<std::int64_t, State> ghost_;
    std::vector<int> neighbors_;
    std::vector<std::vector<std::int64_t>> boundary_;
    std::vector<std::vector<State>> sent_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    std::optional<example::NeighborExchange> exchange_;
};

/// --write-topology: the process graph of the owner-computes rounds, the adjacency's pattern.
int write_topology(const Graph& g, const Options& o, MPI_Comm world) {
    example::Csr a;
    a.rows = a.cols = g.n;
    a.row_ptr = g.ptr;
    a.col = g.adj;
    a.name = g.name;
    // The first round sends every boundary vertex's triple to each rank holding it as a
    // ghost: as many triples as the product's halo entries (the adjacency is symmetric).
    const auto traffic = [&](std::size_t edges) {
        const std::int64_t halo = example::product_halo_entries(a, o.topology.ranks);
        const auto bytes = edges == 0 ? 0 : static_cast<std::int64_t>(std::llround(24.0 * halo / edges));
        return example::Traffic{"round",
                                {{"alltoall", 4}, {"alltoallv", bytes}},
                                "alltoallv: mean per edge in the first round; later rounds send only changes"};
    };
    return example::write_product_topology(a, o.topology, "matching", "process graph", "MPI_Neighbor_alltoall(v)",
                                           world, traffic);
}

int run(const Options& o, MPI_Comm world) {
    const Graph g = build_graph(o);
    if (o.topology.wanted()) return write_topology(g, o, world);
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    Matcher matcher(g, rank, size, world, o.nbr_dir);
    MPI_Barrier(world);
    const double t0 = MPI_Wtime();
    int busy = 1;
    while (busy != 0) {
        int mine = matcher.round() ? 1 : 0;
        MPI_Allreduce(&mine, &busy, 1, MPI_INT, MPI_MAX, world);
    }
    const double seconds = MPI_Wtime() - t0;

    const Block rows{g.n, size};
    std::vector<int> counts(size), displs(size);
    for (int q = 0; q < size; ++q) {
        counts[q] = static_cast<int>(rows.size(q));
        displs[q] = static_cast<int>(rows.lo(q));
    }
    std::vector<std::int64_t> mate(static_cast<std::size_t>(g.n) + 1);
    MPI_Allgatherv(matcher.mates().data(), counts[rank], MPI_INT64_T, mate.data(), counts.data(), displs.data(),
                   MPI_INT64_T, world);
    const std::vector<std::int64_t> want = greedy(g);
    long wrong = 0, matched = 0;
    double weight = 0.0;
    for (std::int64_t v = 0; v < g.n; ++v) {
        wrong += mate[v] != want[v] || (mate[v] >= 0 && mate[mate[v]] != v);
        if (mate[v] > v) {
            ++matched;
            for (std::int64_t e = g.ptr[v]; e < g.ptr[v + 1]; ++e) {
                if (g.adj[e] == mate[v]) weight += g.weight[e];
            }
        }
    }
    if (rank == 0) {
        std::printf("matching: %s, %lld vertices, %lld edges, %d ranks, %s\n", g.name.c_str(),
                    static_cast<long long>(g.n), static_cast<long long>(g.adj.size() / 2), size,
                    matcher.backend().c_str());
        std::printf("matching: %ld edges matched, weight %.17g, %d rounds, %.2f us per round\n", matched, weight,
                    matcher.rounds, seconds / matcher.rounds * 1e6);
        if (wrong == 0) {
            std::printf("matching: check OK: a matching, equal to the serial greedy one vertex by vertex\n");
        } else {
            std::printf("matching: check FAILED: %ld vertices differ from the serial greedy matching\n", wrong);
        }
    }
    return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"matching: half-approximate weighted matching, rounds exchanged by neighborhood collectives",
                 "matching"};
    example::add_matrix_options(app, o.matrix);
    app.add_option("--geometric", o.geometric, "Random geometric graph with N points (the default: 2000)")
        ->check(CLI::PositiveNumber);
    app.add_option("--distance", o.distance, "Random geometric graph: edge length limit (default: mean degree 10)")
        ->check(CLI::Range(0.0, 1.0));
    example::add_topology_option(app, o.topology);
    example::add_nbr_option(app, o.nbr_dir);
    return example::run_program(argc, argv, app, [&](MPI_Comm world) { return run(o, world); });
}
