// spmm: C = A·B, the seed papers' kernel. A sparse (rows block-distributed), B dense with n
// columns (rows block-distributed like A's columns). Each rank needs B's rows of every column
// block its rows touch; they move with MPI_Neighbor_allgather on a dist-graph communicator of
// that process graph (every rank sends its whole B block to each rank that needs part of it).
//
//   mpirun -np P spmm [--matrix FILE | --stencil N | --random N --density D | --rmat SCALE]
//                     [--columns n] [--iterations k]
//   spmm ... --write-topology N FILE    (the process graph at N ranks, for nbrc; no run)
//
// Check: every rank's rows of C are bitwise equal to the serial product (same summation
// order), so the same holds under nbr, which only moves B's bytes.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/app_support.hpp"
#include "common/neighbor_exchange.hpp"

namespace {

using example::Block;
using example::Csr;

struct Options {
    example::MatrixChoice matrix;
    int columns = 8;
    int iterations = 10;
    example::TopologyRequest topology;
    std::string nbr_dir;
};

/// B(j, c): small multiples of 1/4, so that the check is not blind to a moved block.
double b_value(std::int64_t j, int c) {
    return static_cast<double>((j * 7 + c * 13) % 17 - 8) / 4.0;
}

/// Row i of A·B into c[0..n), reading B's row j through `row_of`.
template <typename RowOf>
void multiply_row(const Csr& a, std::int64_t i, int n, const RowOf& row_of, double* c) {
    for (int k = 0; k < n; ++k) c[k] = 0.0;
    for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        const double* b = row_of(a.col[e]);
        for (int k = 0; k < n; ++k) c[k] += a.val[e] * b[k];
    }
}

/// The process graph at `o.topology.ranks` ranks, for nbrc (no run).
int write_topology(const Csr& a, const Options& o, MPI_Comm world) {
    const auto traffic = [&](std::size_t) {
        const std::int64_t block = Block{a.cols, o.topology.ranks}.max_size() * o.columns * 8;
        return example::Traffic{"iteration", {{"allgather", block}}, "B's block, padded to the largest"};
    };
    return example::write_product_topology(a, o.topology, "spmm", "process graph", "MPI_Neighbor_allgather", world,
                                           traffic);
}

/// Entries of this rank's rows of C (`c`, n per row) that differ from the serial product.
long count_wrong(const Csr& a, const Block& rows, int rank, int n, const std::vector<double>& c) {
    std::vector<double> b_serial(static_cast<std::size_t>(a.cols) * n), want(n);
    for (std::int64_t j = 0; j < a.cols; ++j) {
        for (int k = 0; k < n; ++k) b_serial[static_cast<std::size_t>(j) * n + k] = b_value(j, k);
    }
    const auto serial_row = [&](std::int64_t j) { return b_serial.data() + static_cast<std::size_t>(j) * n; };
    long wrong = 0;
    for (std::int64_t i = rows.lo(rank); i < rows.hi(rank); ++i) {
        multiply_row(a, i, n, serial_row, want.data());
        const double* got = c.data() + static_cast<std::size_t>(i - rows.lo(rank)) * n;
        for (int k = 0; k < n; ++k) wrong += got[k] != want[k];
    }
    return wrong;
}

int run(const Options& o, MPI_Comm world) {
    const Csr a = example::build_matrix(o.matrix, 10, false);
    if (o.topology.wanted()) return write_topology(a, o, world);
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    const Block rows{a.rows, size}, cols{a.cols, size};
    const example::ProcessNeighbors nb = example::product_neighbors(a, rows, cols, rank);
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(world, static_cast<int>(nb.sources.size()), nb.sources.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(nb.destinations.size()), nb.destinations.data(), MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph);
    example::NeighborExchange exchange(graph, o.nbr_dir);

    // My B block, padded to the largest block: allgather moves equal blocks.
    const int n = o.columns;
    const std::size_t block = static_cast<std::size_t>(cols.max_size()) * n;
    std::vector<double> mine(block, 0.0), halo(block * nb.sources.size() + 1);
    for (std::int64_t j = cols.lo(rank); j < cols.hi(rank); ++j) {
        for (int k = 0; k < n; ++k) mine[static_cast<std::size_t>(j - cols.lo(rank)) * n + k] = b_value(j, k);
    }
    std::vector<int> slot(size, -1);
    for (std::size_t s = 0; s < nb.sources.size(); ++s) slot[nb.sources[s]] = static_cast<int>(s);
    const auto b_row = [&](std::int64_t j) {
        const int q = cols.owner(j);
        const double* base = q == rank ? mine.data() : halo.data() + block * static_cast<std::size_t>(slot[q]);
        return base + static_cast<std::size_t>(j - cols.lo(q)) * n;
    };

    std::vector<double> c(static_cast<std::size_t>(rows.size(rank)) * n + 1);
    std::vector<double> total, comm;
    for (int it = 0; it < o.iterations; ++it) {
        MPI_Barrier(world);
        const double t0 = MPI_Wtime();
        exchange.allgather(mine.data(), static_cast<int>(block), MPI_DOUBLE, halo.data());
        const double t1 = MPI_Wtime();
        for (std::int64_t i = rows.lo(rank); i < rows.hi(rank); ++i) {
            multiply_row(a, i, n, b_row, c.data() + static_cast<std::size_t>(i - rows.lo(rank)) * n);
        }
        total.push_back(MPI_Wtime() - t0);
        comm.push_back(t1 - t0);
    }

    const long wrong = example::count_failures(count_wrong(a, rows, rank, n, c), world);
    const double per_iteration = example::max_over_ranks(example::median(total), world);
    const double per_exchange = example::max_over_ranks(example::median(comm), world);
    if (rank == 0) {
        std::printf("spmm: %s, %lld x %lld, %lld entries, %d columns, %d ranks, %s\n", a.name.c_str(),
                    static_cast<long long>(a.rows), static_cast<long long>(a.cols), static_cast<long long>(a.entries()),
                    n, size, exchange.backend().c_str());
        std::printf("spmm: time per iteration %.2f us, allgather %.2f us (medians of %d, slowest rank)\n",
                    per_iteration * 1e6, per_exchange * 1e6, o.iterations);
        if (wrong == 0) {
            std::printf("spmm: check OK: C = A*B bitwise equal to the serial product\n");
        } else {
            std::printf("spmm: check FAILED: %ld entries of C differ from the serial product\n", wrong);
        }
    }
    MPI_Comm_free(&graph);
    return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"spmm: sparse times dense matrix product, B's rows moved by MPI_Neighbor_allgather", "spmm"};
    example::add_matrix_options(app, o.matrix);
    app.add_option("--columns", o.columns, "Columns of B")->check(CLI::Range(1, 4096));
    app.add_option("--iterations", o.iterations, "Products to time")->check(CLI::Range(1, 1000000));
    example::add_topology_option(app, o.topology);
    example::add_nbr_option(app, o.nbr_dir);
    return example::run_program(argc, argv, app, [&](MPI_Comm world) { return run(o, world); });
}
