#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nbr/graphs/topology.hpp"

namespace nbr {

/// @brief Factors `n` into `dims` balanced factors in non-increasing order, like
/// MPI_Dims_create with all dimensions free.
[[nodiscard]] std::vector<std::uint32_t> balanced_dims(std::uint32_t n, std::uint32_t dims);

/// @brief Parameters of a Moore neighborhood.
struct MooreParams {
    std::uint32_t ranks = 64;  ///< N
    std::uint32_t dims = 2;    ///< d
    std::uint32_t radius = 1;  ///< r
    bool periodic = true;      ///< wrap around; false: ranks near the boundary have fewer neighbors
};

/// @brief d-dimensional Moore neighborhood of radius r on a balanced grid.
///
/// Ranks are laid out row-major (last dimension fastest, as MPI_Cart_create). Every rank's
/// out- and in-neighbors are the ranks at offsets in [-r, r]^d \ {0}, in lexicographic offset
/// order: all (2r+1)^d - 1 of them on a periodic grid, those inside the grid otherwise.
/// @throws InputError if the grid is periodic and a dimension is below 2r+1 (wrap-around
/// would make the same rank a neighbor twice).
[[nodiscard]] Topology generate_moore(const MooreParams& params);

/// @brief Parameters of a Cartesian communicator's topology (MPI_Cart_create's dims and periods).
struct CartParams {
    std::vector<std::uint32_t> dims;  ///< extent of every dimension (their product is N)
    std::vector<bool> periods;        ///< per dimension: periodic
};

/// @brief The neighborhood MPI_Cart_create(dims, periods) gives, with MPI's lists (MPI-4.1
/// §8.6): per dimension the negative then the positive neighbor at distance 1; a non-periodic
/// boundary has none there, and a periodic dimension of extent 1 or 2 lists one rank (itself,
/// or the other) twice. Ranks row-major, as MPI_Cart_create without reordering.
/// @throws InputError if dims is empty, an extent is 0, periods has another length, or the
/// grid exceeds 2^31 ranks.
[[nodiscard]] Topology generate_cart(const CartParams& params);

/// @brief Parameters of an Erdős–Rényi random digraph.
struct RandomParams {
    std::uint32_t ranks = 64;  ///< N
    double density = 0.1;      ///< δ: probability of each ordered pair (i, j), i != j
    std::uint64_t seed = 1;    ///< same seed, same graph (on every platform)
};

/// @brief Erdős–Rényi G(N, δ) digraph without self-loops; neighbor lists sorted.
[[nodiscard]] Topology generate_random(const RandomParams& params);

/// @brief Parameters of the parallel-edge pairs topology.
struct PairsParams {
    std::uint32_t ranks = 2;   ///< N
    std::uint32_t edges = 32;  ///< parallel edges each way within a pair
};

/// @brief Ranks 2i and 2i+1 joined by `edges` parallel edges each way (an odd last rank is
/// isolated): every edge of a pair is its own block and, natively, its own message. With
/// N = 2 it isolates the per-message cost of a replayer from the network's.
/// @throws InputError if ranks or edges is 0.
[[nodiscard]] Topology generate_pairs(const PairsParams& params);

/// @brief One-line description of the generator call, for file headers and manifests.
[[nodiscard]] std::string describe(const MooreParams& params);
[[nodiscard]] std::string describe(const RandomParams& params);
[[nodiscard]] std::string describe(const PairsParams& params);
[[nodiscard]] std::string describe(const CartParams& params);

}  // namespace nbr
