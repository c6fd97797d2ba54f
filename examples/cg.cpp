// cg: conjugate gradients on a sparse symmetric positive definite matrix, rows block-
// distributed. The matrix-vector product exchanges only the vector entries each rank's rows
// touch (a sparse halo, different sizes per edge) with MPI_Ineighbor_alltoallv, overlapped with
// the part of the product that needs no halo: PETSc's PetscSF pattern (-sf_type neighbor).
//
// The matrix is made strictly diagonally dominant (diagonal = sum of |off-diagonals| + 1), so
// the shared symmetric matrices and the generators all give SPD systems; a general (non-
// symmetric) Matrix Market file is refused. Generated Erdős–Rényi matrices are symmetrized.
//
//   mpirun -np P cg [--matrix FILE | --stencil N | --random N --density D | --rmat SCALE]
//                   [--tolerance t] [--max-iterations k] [--permute SEED|time] [--solves K]
//
// --permute renumbers the rows (slabs in random order) so that every seed gives another process
// graph, as a partitioner that partitions differently every run does (DOLFINx's PT-Scotch);
// --solves K solves K times, each on a topology communicator created anew.
//   cg ... --write-topology N FILE    (the halo's process graph at N ranks; no run)
//
// Check: b = A·x* for a known x*; CG must converge, the true residual ‖b − A·x‖/‖b‖ must be
// below ten times the tolerance, and the iteration count within 1 + 5 % of a serial CG on the
// same system (rounding differs: the product splits each row in two, the dot products sum per
// rank; on ill-conditioned inputs such as bcsstk01 that moves convergence by a few iterations).
// Iteration count and residual print in full, so runs under nbr can be compared bitwise.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "common/app_support.hpp"
#include "common/neighbor_exchange.hpp"

namespace {

using example::Block;
using example::Csr;

struct Options {
    example::MatrixChoice matrix;
    double tolerance = 1e-8;
    int max_iterations = 2000;
    std::string permute;  ///< "", a seed, or "time": rows and columns renumbered at random
    int solves = 1;       ///< solves, each on a topology communicator of its own
    example::TopologyRequest topology;
    std::string nbr_dir;
};

/// A symmetric, strictly diagonally dominant version of a: A + Aᵀ where a is not symmetric
/// (generated only), then the diagonal set to the row's Σ|a_ij| + 1.
Csr make_spd(Csr a, bool from_file) {
    if (a.rows != a.cols) throw example::InputError(a.name + ": cg needs a square matrix");
    if (!a.symmetric && from_file) {
        throw example::InputError(a.name + ": cg needs a symmetric matrix (Matrix Market 'symmetric' storage)");
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> at;
    std::vector<double> values, off(static_cast<std::size_t>(a.rows), 0.0);
    const auto add = [&](std::int64_t i, std::int64_t j, double v) {
        at.emplace_back(i, j);
        values.push_back(v);
        off[i] += std::abs(v);
    };
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
            if (a.col[e] == i) continue;
            add(i, a.col[e], a.symmetric ? a.val[e] : 0.5 * a.val[e]);
            if (!a.symmetric) add(a.col[e], i, 0.5 * a.val[e]);
        }
    }
    for (std::int64_t i = 0; i < a.rows; ++i) add(i, i, off[i] + 1.0);  // Σ|off-diagonals| + 1
    Csr spd = example::csr_from_triplets(a.rows, a.cols, std::move(at), std::move(values), a.name);
    spd.symmetric = true;
    return spd;
}

/// The seed `--permute` gives: a number, or rank 0's clock (different every run), the same on
/// every rank.
std::uint64_t permutation_seed(const std::string& text, MPI_Comm world) {
    std::uint64_t seed = 0;
    if (text == "time") {
        seed = static_cast<std::uint64_t>(MPI_Wtime() * 1e6) ^ static_cast<std::uint64_t>(std::time(nullptr));
    } else {
        char* end = nullptr;
        seed = std::strtoull(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0') throw example::InputError("--permute: '" + text + "' is no seed (or 'time')");
    }
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, world);
    return seed;
}

/// P·A·Pᵀ for P a random order of `slabs` contiguous slabs of rows (Fisher–Yates on a 64-bit
/// LCG, deterministic in `seed`): the block partition then gives each rank slabs far apart in
/// the original order, so the halo's process graph changes with the seed and stays sparse, as
/// with a graph partitioner that partitions differently every run.
Csr permuted(const Csr& a, std::uint64_t seed, int slabs) {
    const Block cut{a.rows, slabs};
    std::vector<int> order(static_cast<std::size_t>(slabs));
    for (int i = 0; i < slabs; ++i) order[i] = i;
    std::uint64_t state = seed * 2 + 1;
    for (int i = slabs - 1; i > 0; --i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        std::swap(order[i], order[static_cast<int>((state >> 33) % static_cast<std::uint64_t>(i + 1))]);
    }
    std::vector<std::int64_t> to(static_cast<std::size_t>(a.rows));
    std::int64_t next = 0;
    for (const int slab : order) {
        for (std::int64_t i = cut.lo(slab); i < cut.hi(slab); ++i) to[i] = next++;
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> at;
    std::vector<double> values;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
            at.emplace_back(to[i], to[a.col[e]]);
            values.push_back(a.val[e]);
        }
    }
    Csr p = example::csr_from_triplets(a.rows, a.cols, std::move(at), std::move(values), a.name);
    p.symmetric = true;
    return p;
}

double x_star(std::int64_t j) {
    return 1.0 + static_cast<double>(j % 7) / 8.0;
}

/// The rows of one rank with columns renumbered: own columns 0..L−1, halo entries L.., split
/// into the part that needs no halo and the part that does, each in the row's entry order.
struct LocalRows {
    std::vector<std::int64_t> interior_ptr{0}, boundary_ptr{0};
    std::vector<int> interior_col, boundary_col;
    std::vector<double> interior_val, boundary_val;
};

/// The halo: per neighbor the global columns exchanged (sorted), counts and displacements.
struct Halo {
    std::vector<int> sources, destinations;
    std::vector<std::vector<std::int64_t>> receive, send;  ///< global columns, per neighbor
    std::vector<int> recvcounts, rdispls, sendcounts, sdispls;
};

/// The columns owned by q that rank p's rows touch, sorted.
std::vector<std::int64_t> needed(const Csr& a, const Block& rows, int p, int q) {
    std::vector<std::int64_t> cols;
    for (std::int64_t i = rows.lo(p); i < rows.hi(p); ++i) {
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
            if (rows.owner(a.col[e]) == q) cols.push_back(a.col[e]);
        }
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    return cols;
}

Halo make_halo(const Csr& a, const Block& rows, int rank) {
    const example::ProcessNeighbors nb = example::product_neighbors(a, rows, rows, rank);
    Halo h{nb.sources, nb.destinations, {}, {}, {}, {}, {}, {}};
    const auto lay_out = [](const std::vector<std::vector<std::int64_t>>& lists, std::vector<int>& counts,
                            std::vector<int>& displs) {
        int at = 0;
        for (const auto& list : lists) {
            counts.push_back(static_cast<int>(list.size()));
            displs.push_back(at);
            at += static_cast<int>(list.size());
        }
    };
    for (int q : h.sources) h.receive.push_back(needed(a, rows, rank, q));
    for (int p : h.destinations) h.send.push_back(needed(a, rows, p, rank));
    lay_out(h.receive, h.recvcounts, h.rdispls);
    lay_out(h.send, h.sendcounts, h.sdispls);
    return h;
}

LocalRows local_rows(const Csr& a, const Block& rows, int rank, const Halo& h) {
    const std::int64_t lo = rows.lo(rank), own = rows.size(rank);
    LocalRows m;
    for (std::int64_t i = lo; i < rows.hi(rank); ++i) {
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
            const std::int64_t j = a.col[e];
            const int q = rows.owner(j);
            if (q == rank) {
                m.interior_col.push_back(static_cast<int>(j - lo));
                m.interior_val.push_back(a.val[e]);
                continue;
            }
            const auto s = std::lower_bound(h.sources.begin(), h.sources.end(), q) - h.sources.begin();
            const auto& list = h.receive[s];
            const auto k = std::lower_bound(list.begin(), list.end(), j) - list.begin();
            m.boundary_col.push_back(static_cast<int>(own + h.rdispls[s] + k));
            m.boundary_val.push_back(a.val[e]);
        }
        m.interior_ptr.push_back(static_cast<std::int64_t>(m.interior_col.size()));
        m.boundary_ptr.push_back(static_cast<std::int64_t>(m.boundary_col.size()));
    }
    return m;
}

/// y = A·p with the halo exchange overlapped: p holds the own entries then room for the halo.
class Operator {
public:
    Operator(const Csr& a, const Block& rows, int rank, MPI_Comm world, const std::string& nbr_dir)
        : halo_(make_halo(a, rows, rank)), m_(local_rows(a, rows, rank, halo_)), own_(rows.size(rank)) {
        lo_ = rows.lo(rank);
        MPI_Dist_graph_create_adjacent(world, static_cast<int>(halo_.sources.size()), halo_.sources.data(),
                                       MPI_UNWEIGHTED, static_cast<int>(halo_.destinations.size()),
                                       halo_.destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm_);
        exchange_.emplace(comm_, nbr_dir);
        std::size_t out = 0;
        for (const auto& list : halo_.send) out += list.size();
        send_.resize(out + 1);
    }
    ~Operator() {
        exchange_.reset();
        MPI_Comm_free(&comm_);
    }
    std::string backend() const { return exchange_->backend(); }
    std::size_t extended_size() const { return static_cast<std::size_t>(own_) + halo_size() + 1; }
    double halo_seconds = 0.0;

    void apply(std::vector<double>& p, std::vector<double>& y) {
        std::size_t k = 0;
        for (const auto& list : halo_.send) {
            for (std::int64_t j : list) send_[k++] = p[static_cast<std::size_t>(j - lo_)];
        }
        exchange_->ialltoallv(send_.data(), halo_.sendcounts.data(), halo_.sdispls.data(), p.data() + own_,
                              halo_.recvcounts.data(), halo_.rdispls.data(), MPI_DOUBLE);
        for (std::int64_t i = 0; i < own_; ++i) {
            double sum = 0.0;
            for (std::int64_t e = m_.interior_ptr[i]; e < m_.interior_ptr[i + 1]; ++e) {
                sum += m_.interior_val[e] * p[m_.interior_col[e]];
            }
            y[i] = sum;
        }
        const double t0 = MPI_Wtime();
        exchange_->wait();
        halo_seconds += MPI_Wtime() - t0;
        for (std::int64_t i = 0; i < own_; ++i) {
            for (std::int64_t e = m_.boundary_ptr[i]; e < m_.boundary_ptr[i + 1]; ++e) {
                y[i] += m_.boundary_val[e] * p[m_.boundary_col[e]];
            }
        }
    }

private:
    std::size_t halo_size() const {
        std::size_t n = 0;
        for (const auto& list : halo_.receive) n += list.size();
        return n;
    }
    Halo halo_;
    LocalRows m_;
    std::int64_t own_, lo_ = 0;
    MPI_Comm comm_ = MPI_COMM_NULL;
    std::optional<example::NeighborExchange> exchange_;
    std::vector<double> send_;
};

double dot(const std::vector<double>& x, const std::vector<double>& y, std::int64_t n, MPI_Comm comm) {
    double local = 0.0, total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) local += x[i] * y[i];
    if (comm == MPI_COMM_NULL) return local;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
    return total;
}

struct Result {
    int iterations = 0;
    double residual = 0.0;  ///< the recurrence's ‖r‖/‖b‖
};

/// CG from x = 0. `apply(p, y)` is y = A·p; `n` entries are this process's own.
template <typename Apply>
Result conjugate_gradients(const std::vector<double>& b, std::vector<double>& x, std::vector<double>& p, std::int64_t n,
                           const Apply& apply, const Options& o, MPI_Comm comm) {
    std::vector<double> r(b.begin(), b.begin() + n), q(static_cast<std::size_t>(n) + 1);
    std::copy(r.begin(), r.end(), p.begin());
    const double bb = dot(b, b, n, comm);
    double rr = bb;
    Result result;
    while (result.iterations < o.max_iterations && std::sqrt(rr / bb) >= o.tolerance) {
        apply(p, q);
        const double alpha = rr / dot(p, q, n, comm);
        for (std::int64_t i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        const double next = dot(r, r, n, comm);
        for (std::int64_t i = 0; i < n; ++i) p[i] = r[i] + next / rr * p[i];
        rr = next;
        ++result.iterations;
    }
    result.residual = std::sqrt(rr / bb);
    return result;
}

/// ‖b − A·x‖ / ‖b‖ over the whole system, from every rank's rows of x gathered everywhere.
double true_residual(const Csr& a, const Block& rows, const std::vector<double>& x, MPI_Comm world) {
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    std::vector<int> counts(size), displs(size);
    for (int q = 0; q < size; ++q) {
        counts[q] = static_cast<int>(rows.size(q));
        displs[q] = static_cast<int>(rows.lo(q));
    }
    std::vector<double> whole(static_cast<std::size_t>(a.rows) + 1);
    MPI_Allgatherv(x.data(), static_cast<int>(rows.size(rank)), MPI_DOUBLE, whole.data(), counts.data(), displs.data(),
                   MPI_DOUBLE, world);
    double rr = 0.0, bb = 0.0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double ax = 0.0, bi = 0.0;
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
            ax += a.val[e] * whole[a.col[e]];
            bi += a.val[e] * x_star(a.col[e]);
        }
        rr += (bi - ax) * (bi - ax);
        bb += bi * bi;
    }
    return std::sqrt(rr / bb);
}

/// A serial CG on the whole system, for the iteration count to compare with.
Result serial_cg(const Csr& a, const Options& o) {
    std::vector<double> b(static_cast<std::size_t>(a.rows) + 1);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) b[i] += a.val[e] * x_star(a.col[e]);
    }
    std::vector<double> x(b.size(), 0.0), p(b.size());
    const auto apply = [&](std::vector<double>& v, std::vector<double>& y) {
        for (std::int64_t i = 0; i < a.rows; ++i) {
            y[i] = 0.0;
            for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) y[i] += a.val[e] * v[a.col[e]];
        }
    };
    return conjugate_gradients(b, x, p, a.rows, apply, o, MPI_COMM_NULL);
}

/// The process graph of the halo at `o.topology.ranks` ranks, for nbrc (no run).
int write_topology(const Csr& a, const Options& o, MPI_Comm world) {
    const auto traffic = [&](std::size_t edges) {
        const std::int64_t halo = example::product_halo_entries(a, o.topology.ranks);
        const auto bytes = edges == 0 ? 0 : static_cast<std::int64_t>(std::llround(8.0 * halo / edges));
        return example::Traffic{"iteration", {{"alltoallv", bytes}}, "mean per edge"};
    };
    return example::write_product_topology(a, o.topology, "cg", "halo process graph", "MPI_Ineighbor_alltoallv", world,
                                           traffic);
}

int run(const Options& o, MPI_Comm world) {
    Csr a = make_spd(example::build_matrix(o.matrix, 12, true), !o.matrix.file.empty());
    std::string permutation;
    if (!o.permute.empty()) {
        const std::uint64_t seed = permutation_seed(o.permute, world);
        int size = 1;
        MPI_Comm_size(world, &size);
        a = permuted(a, seed, 2 * size);
        permutation = ", rows permuted (seed " + std::to_string(seed) + ")";
    }
    if (o.topology.wanted()) return write_topology(a, o, world);
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    const Block rows{a.rows, size};
    const std::int64_t n = rows.size(rank), lo = rows.lo(rank);
    std::vector<double> b(static_cast<std::size_t>(n) + 1);
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t e = a.row_ptr[lo + i]; e < a.row_ptr[lo + i + 1]; ++e) b[i] += a.val[e] * x_star(a.col[e]);
    }
    const Result serial = serial_cg(a, o);
    bool ok = true;
    Result got;
    double seconds = 0, residual = 0, halo = 0;
    std::string backend;
    for (int solve = 0; solve < o.solves; ++solve) {  // each on a topology communicator of its own
        Operator op(a, rows, rank, world, o.nbr_dir);
        std::vector<double> x(static_cast<std::size_t>(n) + 1, 0.0), p(op.extended_size());
        MPI_Barrier(world);
        const double t0 = MPI_Wtime();
        got = conjugate_gradients(
            b, x, p, n, [&](std::vector<double>& v, std::vector<double>& y) { op.apply(v, y); }, o, world);
        seconds = MPI_Wtime() - t0;
        residual = true_residual(a, rows, x, world);
        ok = ok && got.iterations < o.max_iterations && residual < 10 * o.tolerance &&
             std::abs(got.iterations - serial.iterations) <= 1 + serial.iterations / 20;
        halo = example::max_over_ranks(op.halo_seconds, world);
        backend = op.backend();
    }
    if (rank == 0) {
        std::printf("cg: %s, %lld rows, %lld entries, %d ranks, %s%s%s\n", a.name.c_str(),
                    static_cast<long long>(a.rows), static_cast<long long>(a.entries()), size, backend.c_str(),
                    permutation.c_str(), o.solves > 1 ? (", " + std::to_string(o.solves) + " solves").c_str() : "");
        std::printf("cg: %d iterations, residual %.17e, true residual %.3e (serial CG: %d iterations)\n",
                    got.iterations, got.residual, residual, serial.iterations);
        std::printf("cg: time per iteration %.2f us, halo wait %.2f us (mean, slowest rank)\n",
                    seconds / std::max(1, got.iterations) * 1e6, halo / std::max(1, got.iterations) * 1e6);
        std::printf(
            "cg: check %s: converged to %.0e, true residual below 10x that, iterations within 1 + 5 %% of serial\n",
            ok ? "OK" : "FAILED", o.tolerance);
    }
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"cg: conjugate gradients, the halo moved by MPI_Ineighbor_alltoallv overlapped with the product",
                 "cg"};
    o.matrix.points = 7;
    example::add_matrix_options(app, o.matrix);
    app.add_option("--tolerance", o.tolerance, "Relative residual to reach")->check(CLI::Range(1e-15, 1.0));
    app.add_option("--max-iterations", o.max_iterations, "Iterations before giving up")->check(CLI::Range(1, 10000000));
    app.add_option("--permute", o.permute,
                   "Renumber the rows in 2 x ranks slabs put in random order (a seed, or 'time': different every "
                   "run), so the halo's process graph differs as with a partitioner that partitions differently "
                   "every run");
    app.add_option("--solves", o.solves, "Solves, each creating its topology communicator anew (the last one printed)")
        ->check(CLI::Range(1, 1000));
    example::add_topology_option(app, o.topology);
    example::add_nbr_option(app, o.nbr_dir);
    return example::run_program(argc, argv, app, [&](MPI_Comm world) { return run(o, world); });
}
