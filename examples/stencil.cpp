// stencil: Jacobi sweeps of a d-dimensional Moore (box) stencil of radius r on a periodic
// grid (--non-periodic: a grid with a fixed zero boundary): every point becomes the mean of
// the (2r+1)^d points around it. Each rank owns an L^d box of a process grid
// (MPI_Dims_create) and keeps a halo of width r.
//
// Halo exchange, one of:
//  - default: MPI_Neighbor_alltoall on a dist-graph communicator of every rank whose box the
//    halo touches (process radius ⌈r/L⌉; the Moore (d, ⌈r/L⌉) neighborhood of the papers). A
//    neighbor that appears at several offsets (small process grids) gets one block holding all
//    of them; blocks are padded to the largest, as alltoall needs equal blocks. Non-periodic:
//    ranks on the boundary have fewer neighbors.
//  - --cartesian: dimension by dimension on d one-dimensional Cartesian communicators
//    (MPI_Cart_create on the ranks that share the other coordinates; non-periodic ones give the
//    boundary ranks MPI_PROC_NULL neighbors, whose receive slots MPI leaves untouched), each
//    exchange carrying the halos received before it, so corners arrive in d steps (r ≤ L).
//
//   mpirun -np P stencil [--dims d] [--radius r] [--local L] [--iterations k] [--cartesian]
//                        [--non-periodic]
//   stencil ... --write-topology N FILE    (the dist-graph neighborhood at N ranks; no run)
//
// Check: every rank's box after k sweeps is bitwise equal to a serial sweep of the whole grid
// (the same summation order).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/app_support.hpp"
#include "common/neighbor_exchange.hpp"

namespace {

struct Options {
    int dims = 2;
    int radius = 1;
    int local = 6;
    int iterations = 5;
    bool cartesian = false;
    bool periodic = true;
    example::TopologyRequest topology;
    std::string nbr_dir;
};

using Index = std::vector<int>;

/// Calls fn for every multi-index lo ≤ i < hi, the last dimension fastest.
void for_each_index(const Index& lo, const Index& hi, const std::function<void(const Index&)>& fn) {
    for (std::size_t k = 0; k < lo.size(); ++k) {
        if (lo[k] >= hi[k]) return;
    }
    Index i = lo;
    while (true) {
        fn(i);
        std::size_t k = i.size();
        while (k > 0 && ++i[k - 1] == hi[k - 1]) {
            i[k - 1] = lo[k - 1];
            --k;
        }
        if (k == 0) return;
    }
}

/// Row-major flat index of i in an array of the given extents.
std::size_t flat(const Index& i, const Index& extent) {
    std::size_t f = 0;
    for (std::size_t k = 0; k < i.size(); ++k) f = f * static_cast<std::size_t>(extent[k]) + i[k];
    return f;
}

int wrap(int x, int n) {
    return ((x % n) + n) % n;
}

/// The process grid: extents and the rank ↔ coordinates map of MPI_Cart_create (last fastest).
struct Grid {
    Index dims;
    bool periodic = true;
    /// Whether c lies in the process grid (always, if periodic).
    bool contains(const Index& c) const {
        for (std::size_t k = 0; k < dims.size(); ++k) {
            if (!periodic && (c[k] < 0 || c[k] >= dims[k])) return false;
        }
        return true;
    }
    Index coords_of(int rank) const {
        Index c(dims.size());
        for (std::size_t k = dims.size(); k-- > 0;) {
            c[k] = rank % dims[k];
            rank /= dims[k];
        }
        return c;
    }
    int rank_of(const Index& c) const {
        int rank = 0;
        for (std::size_t k = 0; k < dims.size(); ++k) rank = rank * dims[k] + wrap(c[k], dims[k]);
        return rank;
    }
};

Grid make_grid(int ranks, int d, bool periodic) {
    Grid g{Index(d, 0), periodic};
    MPI_Dims_create(ranks, d, g.dims.data());
    return g;
}

/// The initial value at a global grid point.
double initial(const Index& x) {
    int s = 0;
    for (std::size_t k = 0; k < x.size(); ++k) s += x[k] * static_cast<int>(k + 3);
    return static_cast<double>(s % 11);
}

/// The box stencil's offsets, lexicographic: the summation order of every sweep.
std::vector<Index> box_offsets(int d, int r) {
    std::vector<Index> offsets;
    for_each_index(Index(d, -r), Index(d, r + 1), [&](const Index& o) { offsets.push_back(o); });
    return offsets;
}

/// One part of the halo: the sub-box [lo, hi) of the sender's box (local coordinates), which
/// the receiver at offset −o from the sender stores at its halo coordinates + shift.
struct Region {
    Index lo, hi, shift;
    std::size_t size() const {
        std::size_t s = 1;
        for (std::size_t k = 0; k < lo.size(); ++k) s *= static_cast<std::size_t>(hi[k] - lo[k]);
        return s;
    }
};

/// What a rank needs from the rank at process offset o (o ≠ 0), in the sender's coordinates.
Region region_for(const Index& o, int local, int r) {
    Region g{Index(o.size()), Index(o.size()), Index(o.size())};
    for (std::size_t k = 0; k < o.size(); ++k) {
        g.lo[k] = o[k] < 0 ? std::max(0, -o[k] * local - r) : 0;
        g.hi[k] = o[k] > 0 ? std::min(local, r - (o[k] - 1) * local) : local;
        g.shift[k] = o[k] * local + r;
    }
    return g;
}

/// The dist-graph exchange's plan: neighbor ranks (sorted; sources = destinations) and, per
/// neighbor, the offsets o whose sender is that neighbor, lexicographic.
struct GraphPlan {
    std::vector<int> neighbors;
    std::vector<std::vector<Index>> offsets;  ///< per neighbor
    std::vector<Index> self;                  ///< offsets that wrap onto this rank
};

GraphPlan graph_plan(const Grid& grid, int rank, int process_radius) {
    const int d = static_cast<int>(grid.dims.size());
    const Index me = grid.coords_of(rank);
    std::vector<std::pair<int, Index>> all;
    for_each_index(Index(d, -process_radius), Index(d, process_radius + 1), [&](const Index& o) {
        if (std::all_of(o.begin(), o.end(), [](int x) { return x == 0; })) return;
        Index c = me;
        for (int k = 0; k < d; ++k) c[k] += o[k];
        if (grid.contains(c)) all.emplace_back(grid.rank_of(c), o);  // beyond a fixed boundary: none
    });
    GraphPlan plan;
    for (const auto& [q, o] : all) {
        if (q == rank) {
            plan.self.push_back(o);
            continue;
        }
        auto at = std::lower_bound(plan.neighbors.begin(), plan.neighbors.end(), q);
        const auto slot = at - plan.neighbors.begin();
        if (at == plan.neighbors.end() || *at != q) {
            plan.neighbors.insert(at, q);
            plan.offsets.insert(plan.offsets.begin() + slot, std::vector<Index>{});
        }
        plan.offsets[slot].push_back(o);
    }
    return plan;
}

/// The local state: the box with its halo, extent L + 2r per dimension.
struct Field {
    int d, local, r;
    Index extent;
    std::vector<double> u, next;

    Field(int d_, int local_, int r_) : d(d_), local(local_), r(r_), extent(d_, local_ + 2 * r_) {
        std::size_t n = 1;
        for (int e : extent) n *= static_cast<std::size_t>(e);
        u.assign(n, 0.0);
        next.assign(n, 0.0);
    }
    /// Halo-array index of local coordinate x (0 ≤ x < L) plus shift.
    std::size_t at(const Index& x, const Index& shift) const {
        Index h(x.size());
        for (std::size_t k = 0; k < x.size(); ++k) h[k] = x[k] + shift[k];
        return flat(h, extent);
    }
};

/// Copies region g of the box (sender side) to or from a packed buffer.
void pack(const Field& f, const Region& g, double* out) {
    for_each_index(g.lo, g.hi, [&](const Index& x) { *out++ = f.u[f.at(x, Index(x.size(), f.r))]; });
}
void unpack(Field& f, const Region& g, const double* in) {
    for_each_index(g.lo, g.hi, [&](const Index& x) { f.u[f.at(x, g.shift)] = *in++; });
}

/// The sweep over the box: each point the mean of its (2r+1)^d neighbors, in box_offsets order.
void sweep(Field& f, const std::vector<Index>& offsets) {
    std::vector<std::ptrdiff_t> delta;
    Index stride(f.d, 1);
    for (int k = f.d - 1; k > 0; --k) stride[k - 1] = stride[k] * f.extent[k];
    for (const Index& o : offsets) {
        std::ptrdiff_t s = 0;
        for (int k = 0; k < f.d; ++k) s += static_cast<std::ptrdiff_t>(o[k]) * stride[k];
        delta.push_back(s);
    }
    const double scale = 1.0 / static_cast<double>(offsets.size());
    for_each_index(Index(f.d, f.r), Index(f.d, f.r + f.local), [&](const Index& h) {
        const std::size_t p = flat(h, f.extent);
        double sum = 0.0;
        for (std::ptrdiff_t s : delta) sum += f.u[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(p) + s)];
        f.next[p] = sum * scale;
    });
    std::swap(f.u, f.next);
}

/// The dist-graph halo exchange with MPI_Neighbor_alltoall.
class GraphHalo {
public:
    GraphHalo(Field& f, const Grid& grid, MPI_Comm world, const std::string& nbr_dir) : f_(f) {
        int rank = 0;
        MPI_Comm_rank(world, &rank);
        plan_ = graph_plan(grid, rank, (f.r + f.local - 1) / f.local);
        std::size_t most = 0;
        for (const auto& offsets : plan_.offsets) {
            std::size_t size = 0;
            for (const Index& o : offsets) size += region_for(o, f.local, f.r).size();
            most = std::max(most, size);
        }
        unsigned long mine = most, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG, MPI_MAX, world);
        block_ = all;
        const int degree = static_cast<int>(plan_.neighbors.size());
        MPI_Dist_graph_create_adjacent(world, degree, plan_.neighbors.data(), MPI_UNWEIGHTED, degree,
                                       plan_.neighbors.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm_);
        exchange_.emplace(comm_, nbr_dir);
        send_.assign(block_ * plan_.neighbors.size() + 1, 0.0);
        recv_.assign(send_.size(), 0.0);
    }
    ~GraphHalo() {
        exchange_.reset();
        MPI_Comm_free(&comm_);
    }
    std::string backend() const { return exchange_->backend(); }

    void exchange() {
        // To neighbor q the regions it needs from me: its offsets to me are the negated ones
        // of mine to it, and it takes them in increasing order, which is mine reversed.
        for (std::size_t n = 0; n < plan_.neighbors.size(); ++n) {
            double* out = send_.data() + n * block_;
            for (auto o = plan_.offsets[n].rbegin(); o != plan_.offsets[n].rend(); ++o) {
                const Region g = region_for(negate(*o), f_.local, f_.r);
                pack(f_, g, out);
                out += g.size();
            }
        }
        exchange_->alltoall(send_.data(), static_cast<int>(block_), MPI_DOUBLE, recv_.data());
        for (std::size_t n = 0; n < plan_.neighbors.size(); ++n) {
            const double* in = recv_.data() + n * block_;
            for (const Index& o : plan_.offsets[n]) {
                const Region g = region_for(o, f_.local, f_.r);
                unpack(f_, g, in);
                in += g.size();
            }
        }
        for (const Index& o : plan_.self) {
            const Region g = region_for(o, f_.local, f_.r);
            std::vector<double> copy(g.size());
            pack(f_, g, copy.data());
            unpack(f_, g, copy.data());
        }
    }

private:
    static Index negate(Index o) {
        for (int& x : o) x = -x;
        return o;
    }
    Field& f_;
    GraphPlan plan_;
    std::size_t block_ = 0;
    MPI_Comm comm_ = MPI_COMM_NULL;
    std::optional<example::NeighborExchange> exchange_;
    std::vector<double> send_, recv_;
};

/// The dimension-by-dimension exchange on one-dimensional periodic Cartesian communicators.
class CartesianHalo {
public:
    CartesianHalo(Field& f, const Grid& grid, MPI_Comm world) : f_(f) {
        int rank = 0;
        MPI_Comm_rank(world, &rank);
        const Index me = grid.coords_of(rank);
        for (int k = 0; k < f.d; ++k) {
            Index others = me;
            others[k] = 0;
            MPI_Comm line, ring;
            MPI_Comm_split(world, grid.rank_of(others), me[k], &line);
            const int extent = grid.dims[k], periodic = grid.periodic ? 1 : 0;
            MPI_Cart_create(line, 1, &extent, &periodic, 0, &ring);
            MPI_Comm_free(&line);
            rings_.push_back(ring);
        }
    }
    ~CartesianHalo() {
        for (MPI_Comm& ring : rings_) MPI_Comm_free(&ring);
    }

    void exchange() {
        for (int k = 0; k < f_.d; ++k) exchange_dimension(k);
    }

private:
    /// In dimension k: my low slab to the negative neighbor, my high slab to the positive one;
    /// dimensions before k with their halos (already exchanged), those after without.
    void exchange_dimension(int k) {
        const int r = f_.r, local = f_.local;
        Index lo(f_.d), hi(f_.d);
        for (int j = 0; j < f_.d; ++j) {
            lo[j] = j < k ? 0 : r;
            hi[j] = j < k ? local + 2 * r : r + local;
        }
        const auto slab = [&](int from) {
            Index a = lo, b = hi;
            a[k] = from;
            b[k] = from + r;
            return std::make_pair(a, b);
        };
        const auto [low_a, low_b] = slab(r);
        const auto [high_a, high_b] = slab(local);
        std::size_t count = 1;
        for (int j = 0; j < f_.d; ++j) count *= static_cast<std::size_t>(j == k ? r : hi[j] - lo[j]);
        send_.resize(2 * count);
        recv_.assign(2 * count, 0.0);  // an MPI_PROC_NULL side stays untouched: the zero boundary
        copy_out(low_a, low_b, send_.data());
        copy_out(high_a, high_b, send_.data() + count);
        MPI_Neighbor_alltoall(send_.data(), static_cast<int>(count), MPI_DOUBLE, recv_.data(), static_cast<int>(count),
                              MPI_DOUBLE, rings_[k]);
        copy_in(slab(0).first, slab(0).second, recv_.data());
        copy_in(slab(local + r).first, slab(local + r).second, recv_.data() + count);
    }
    void copy_out(const Index& a, const Index& b, double* out) {
        for_each_index(a, b, [&](const Index& h) { *out++ = f_.u[flat(h, f_.extent)]; });
    }
    void copy_in(const Index& a, const Index& b, const double* in) {
        for_each_index(a, b, [&](const Index& h) { f_.u[flat(h, f_.extent)] = *in++; });
    }

    Field& f_;
    std::vector<MPI_Comm> rings_;
    std::vector<double> send_, recv_;
};

/// k sweeps of the whole grid (beyond a fixed boundary: zeros); returns it.
std::vector<double> serial(const Grid& grid, const Options& o, const std::vector<Index>& offsets) {
    Index size(o.dims);
    for (int k = 0; k < o.dims; ++k) size[k] = grid.dims[k] * o.local;
    std::vector<double> u, next;
    for_each_index(Index(o.dims, 0), size, [&](const Index& x) { u.push_back(initial(x)); });
    next.resize(u.size());
    const double scale = 1.0 / static_cast<double>(offsets.size());
    for (int it = 0; it < o.iterations; ++it) {
        for_each_index(Index(o.dims, 0), size, [&](const Index& x) {
            double sum = 0.0;
            Index y(o.dims);
            for (const Index& off : offsets) {
                bool inside = true;
                for (int k = 0; k < o.dims; ++k) {
                    inside = inside && x[k] + off[k] >= 0 && x[k] + off[k] < size[k];
                    y[k] = wrap(x[k] + off[k], size[k]);
                }
                sum += inside || o.periodic ? u[flat(y, size)] : 0.0;  // the halo's zeros, in order
            }
            next[flat(x, size)] = sum * scale;
        });
        std::swap(u, next);
    }
    return u;
}

int write_topology(const Options& o, MPI_Comm world) {
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    if (rank != 0) return 0;
    const Grid grid = make_grid(o.topology.ranks, o.dims, o.periodic);
    const int process_radius = (o.radius + o.local - 1) / o.local;
    std::vector<std::pair<int, int>> edges;
    std::size_t block = 0;  // as GraphHalo pads it: the largest of any rank's blocks
    for (int p = 0; p < o.topology.ranks; ++p) {
        const GraphPlan plan = graph_plan(grid, p, process_radius);
        for (int q : plan.neighbors) edges.emplace_back(q, p);
        for (const auto& offsets : plan.offsets) {
            std::size_t size = 0;
            for (const Index& offset : offsets) size += region_for(offset, o.local, o.radius).size();
            block = std::max(block, size);
        }
    }
    const std::string what = "stencil: Moore (" + std::to_string(o.dims) + ", " + std::to_string(process_radius) +
                             ") process neighborhood, " + (o.periodic ? "periodic" : "non-periodic") +
                             " (MPI_Neighbor_alltoall)";
    example::write_edge_list(o.topology.file, o.topology.ranks, edges, what);
    std::printf("stencil: wrote the %s at %d ranks (%zu edges) to %s\n", what.substr(9).c_str(), o.topology.ranks,
                edges.size(), o.topology.file.c_str());
    example::print_traffic("stencil", o.topology.ranks,
                           {"iteration",
                            {{"alltoall", static_cast<std::int64_t>(block * sizeof(double))}},
                            "a block padded to the largest"});
    return 0;
}

/// This rank's point x in global coordinates.
Index global_of(const Index& x, const Index& me, const Options& o) {
    Index global(o.dims);
    for (int k = 0; k < o.dims; ++k) global[k] = me[k] * o.local + x[k];
    return global;
}

/// Points of this rank's block that differ from the serial sweeps.
long count_wrong(const Field& f, const Grid& grid, const Index& me, const Options& o,
                 const std::vector<Index>& offsets) {
    const std::vector<double> whole = serial(grid, o, offsets);
    Index global_size(o.dims);
    for (int k = 0; k < o.dims; ++k) global_size[k] = grid.dims[k] * o.local;
    long wrong = 0;
    for_each_index(Index(o.dims, 0), Index(o.dims, o.local), [&](const Index& x) {
        wrong += f.u[f.at(x, Index(o.dims, o.radius))] != whole[flat(global_of(x, me, o), global_size)];
    });
    return wrong;
}

int run(const Options& o, MPI_Comm world) {
    if (o.cartesian && o.radius > o.local) throw example::InputError("--cartesian needs --radius ≤ --local");
    if (o.cartesian && !o.nbr_dir.empty()) {
        throw example::InputError("--nbr replays the dist-graph exchange; the Cartesian one runs under the drop-in");
    }
    if (o.topology.wanted()) return write_topology(o, world);
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    const Grid grid = make_grid(size, o.dims, o.periodic);
    const Index me = grid.coords_of(rank);
    Field f(o.dims, o.local, o.radius);
    for_each_index(Index(o.dims, 0), Index(o.dims, o.local),
                   [&](const Index& x) { f.u[f.at(x, Index(o.dims, o.radius))] = initial(global_of(x, me, o)); });
    const std::vector<Index> offsets = box_offsets(o.dims, o.radius);

    std::optional<GraphHalo> graph;
    std::optional<CartesianHalo> cartesian;
    if (o.cartesian) {
        cartesian.emplace(f, grid, world);
    } else {
        graph.emplace(f, grid, world, o.nbr_dir);
    }
    std::vector<double> total, comm;
    for (int it = 0; it < o.iterations; ++it) {
        MPI_Barrier(world);
        const double t0 = MPI_Wtime();
        if (graph) graph->exchange();
        if (cartesian) cartesian->exchange();
        const double t1 = MPI_Wtime();
        sweep(f, offsets);
        total.push_back(MPI_Wtime() - t0);
        comm.push_back(t1 - t0);
    }

    const long wrong = example::count_failures(count_wrong(f, grid, me, o, offsets), world);
    const double per_iteration = example::max_over_ranks(example::median(total), world);
    const double per_exchange = example::max_over_ranks(example::median(comm), world);
    if (rank == 0) {
        std::string shape;
        for (int k = 0; k < o.dims; ++k) shape += (k ? "x" : "") + std::to_string(grid.dims[k]);
        const std::string lines = o.periodic ? "periodic Cartesian rings" : "non-periodic Cartesian lines";
        std::printf("stencil: %d-D, radius %d, %d^%d points per rank, process grid %s%s, %s\n", o.dims, o.radius,
                    o.local, o.dims, shape.c_str(), o.periodic ? "" : " (non-periodic)",
                    cartesian ? ("MPI_Neighbor_alltoall per dimension on " + lines).c_str()
                              : ("MPI_Neighbor_alltoall on a dist-graph, " + graph->backend()).c_str());
        std::printf("stencil: time per iteration %.2f us, halo exchange %.2f us (medians of %d, slowest rank)\n",
                    per_iteration * 1e6, per_exchange * 1e6, o.iterations);
        if (wrong == 0) {
            std::printf("stencil: check OK: %d sweeps bitwise equal to the serial sweeps\n", o.iterations);
        } else {
            std::printf("stencil: check FAILED: %ld points differ from the serial sweeps\n", wrong);
        }
    }
    return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"stencil: Jacobi sweeps of a Moore stencil, halos moved by MPI_Neighbor_alltoall", "stencil"};
    app.add_option("--dims", o.dims, "Dimensions of the grid")->check(CLI::Range(1, 6));
    app.add_option("--radius", o.radius, "Stencil radius r (points)")->check(CLI::Range(1, 64));
    app.add_option("--local", o.local, "Points per rank and dimension L")->check(CLI::Range(1, 4096));
    app.add_option("--iterations", o.iterations, "Sweeps")->check(CLI::Range(1, 1000000));
    app.add_flag("--cartesian", o.cartesian, "Exchange on Cartesian communicators, dimension by dimension");
    app.add_flag("!--non-periodic", o.periodic, "A fixed zero boundary instead of wrap-around");
    example::add_topology_option(app, o.topology);
    example::add_nbr_option(app, o.nbr_dir);
    return example::run_program(argc, argv, app, [&](MPI_Comm world) { return run(o, world); });
}
