// What the example applications share: block distributions, sparse matrices (read from Matrix
// Market files or generated), the process graph of a row-block distributed product, a small
// command-line error type and the topology file written by --write-topology.
//
// The examples are ordinary MPI programs: this code uses MPI and the standard library only, as
// an application's own support code would. Every rank builds the whole matrix (the problems are
// sized for tests and this machine); --write-topology is how a program's process graph reaches
// cluster scale without running it there.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

namespace CLI {
class App;
}

namespace example {

/// A bad argument or input: the message names the file and line or the option.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// n items in `parts` contiguous blocks; block p is [lo(p), lo(p + 1)), lo(p) = ⌊n·p/parts⌋.
struct Block {
    std::int64_t n = 0;
    int parts = 1;

    std::int64_t lo(int p) const { return n * p / parts; }
    std::int64_t hi(int p) const { return lo(p + 1); }
    std::int64_t size(int p) const { return hi(p) - lo(p); }
    /// The block holding item i (0 ≤ i < n).
    int owner(std::int64_t i) const { return static_cast<int>(((i + 1) * parts - 1) / n); }
    /// The largest block: ⌈n / parts⌉.
    std::int64_t max_size() const { return (n + parts - 1) / parts; }
};

/// A sparse matrix in compressed rows; entries of a row in the order they were built (the
/// order every product of the examples sums in, serial or distributed).
struct Csr {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::int64_t> row_ptr{0};
    std::vector<std::int64_t> col;
    std::vector<double> val;
    bool symmetric = false;  ///< the file declared symmetric storage, or the generator is symmetric
    std::string name;

    std::int64_t entries() const { return static_cast<std::int64_t>(col.size()); }
};

/// Builds a Csr from (row, col, value) triplets: rows in order, columns sorted within a row,
/// duplicates summed.
Csr csr_from_triplets(std::int64_t rows, std::int64_t cols, std::vector<std::pair<std::int64_t, std::int64_t>> at,
                      std::vector<double> values, std::string name);

/// A Matrix Market coordinate file (real, integer or pattern; general or symmetric, both
/// triangles stored; pattern entries are 1). Errors name the file and line.
Csr read_matrix_market(const std::string& path);

/// The 3-D `points`-point stencil (7 or 27) on an n×n×n grid without wrap-around, rows in
/// lexicographic order: −1 per neighbor, the diagonal one more than the row's neighbors
/// (symmetric, strictly diagonally dominant, so positive definite).
Csr stencil_matrix(int n, int points);

/// Erdős–Rényi: every off-diagonal (i, j) present with probability `density`, values in
/// (−1, 1); the diagonal is n. Deterministic in `seed`.
Csr random_matrix(std::int64_t n, double density, std::uint64_t seed);

/// R-MAT (a, b, c, d = 0.57, 0.19, 0.19, 0.05; Chakrabarti et al., SDM 2004): 2^scale rows,
/// edge_factor·2^scale generated entries (duplicates summed, self-loops dropped), values in
/// (0, 1]. With `symmetric`, every entry is mirrored. Deterministic in `seed`.
Csr rmat_matrix(int scale, int edge_factor, std::uint64_t seed, bool symmetric);

/// The neighbors of `rank` in the process graph of a row-block product A·X: it receives X's
/// rows of every other block its rows touch (sources) and sends its own to every rank whose
/// rows touch its block (destinations). Both sorted, no duplicates, no self.
struct ProcessNeighbors {
    std::vector<int> sources;
    std::vector<int> destinations;
};
ProcessNeighbors product_neighbors(const Csr& a, const Block& rows, const Block& cols, int rank);

/// Calls edge(q, p) once per process-graph edge q → p (q sends to p) of the row-block product
/// over `ranks` ranks (rows and columns block-distributed), grouped by p in increasing order,
/// sources increasing within a group.
void for_each_product_edge(const Csr& a, int ranks, const std::function<void(int, int)>& edge);

/// Writes an edge list nbrc reads (`# ranks N`, then "source destination" lines, the in-lists
/// in the order the program creates them), atomically: a temporary file renamed into place.
void write_edge_list(const std::string& path, int ranks, const std::vector<std::pair<int, int>>& edges,
                     const std::string& comment);

/// The matrix options every example shares: a Matrix Market file or a generator.
struct MatrixChoice {
    std::string file;
    int stencil = 0;  ///< grid points per dimension of a 3-D stencil
    int points = 27;
    std::int64_t random = 0;  ///< rows of an Erdős–Rényi matrix
    double density = 0.01;
    int rmat = 0;  ///< scale of an R-MAT matrix
    int edge_factor = 8;
    std::uint64_t seed = 1;
};
/// Adds --matrix, --stencil, --points, --random, --density, --rmat, --edge-factor, --seed.
void add_matrix_options(CLI::App& app, MatrixChoice& choice);
/// The chosen matrix; R-MAT mirrored when `symmetric`. With no choice, the `points`-point
/// stencil on a `default_stencil`³ grid.
Csr build_matrix(const MatrixChoice& choice, int default_stencil, bool symmetric);

/// --write-topology N FILE: write the program's process graph at N ranks instead of running.
struct TopologyRequest {
    int ranks = 0;
    std::string file;
    bool wanted() const { return ranks > 0; }
};
void add_topology_option(CLI::App& app, TopologyRequest& request);

/// The halo of a row-block product over `ranks` ranks (rows and columns block-distributed):
/// the entries of X every rank receives, Σ_p |{columns its rows touch that another rank owns}|.
std::int64_t product_halo_entries(const Csr& a, int ranks);

/// What a program exchanges at a rank count, for --write-topology's second line: one
/// "COLLECTIVE BYTES B" per call of a step (an iteration or a round), with what BYTES means.
struct Traffic {
    std::string step = "iteration";                           ///< "iteration" or "round"
    std::vector<std::pair<std::string, std::int64_t>> calls;  ///< (collective, bytes per block)
    std::string note;                                         ///< e.g. "mean per edge"
};

/// Prints "PROGRAM: at N ranks, per STEP: COLLECTIVE BYTES B, ... (NOTE)": the line bench/apps/run.sh
/// reads to simulate the program's calls at that size.
void print_traffic(const std::string& program, int ranks, const Traffic& traffic);

/// --write-topology for a row-block product: rank 0 writes the process graph of `a` at
/// request.ranks ranks and prints "PROGRAM: wrote the GRAPH of NAME at N ranks (E edges) to FILE",
/// then the traffic `traffic(edges)` returns (print_traffic); the file's comment names
/// `collective`. Returns 0.
int write_product_topology(const Csr& a, const TopologyRequest& request, const std::string& program,
                           const std::string& graph, const std::string& collective, MPI_Comm comm,
                           const std::function<Traffic(std::size_t edges)>& traffic);

/// Runs an example: MPI_Init, the command line (errors and --help printed by rank 0), then
/// `body` on MPI_COMM_WORLD, whose InputError becomes a message from rank 0 and exit code 2;
/// MPI_Finalize. Returns the exit code.
int run_program(int argc, char** argv, CLI::App& app, const std::function<int(MPI_Comm)>& body);

/// Every rank's count of failures summed on all ranks.
long count_failures(long mine, MPI_Comm comm);

/// The largest of every rank's `mine`.
double max_over_ranks(double mine, MPI_Comm comm);

/// A splitmix64 step: the examples' portable random stream.
std::uint64_t splitmix64(std::uint64_t& state);
/// A double in [0, 1) from the stream.
double uniform(std::uint64_t& state);

/// Median of a copy of `v` (0 when empty).
double median(std::vector<double> v);

}  // namespace example
