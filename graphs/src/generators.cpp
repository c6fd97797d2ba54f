#include "nbr/graphs/generators.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace nbr {

namespace {

/// splitmix64: portable, well-mixed 64-bit stream.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    std::uint64_t state_;
};

}  // namespace

std::vector<std::uint32_t> balanced_dims(std::uint32_t n, std::uint32_t dims) {
    if (dims == 0) throw InputError("number of dimensions must be positive");
    if (n == 0) throw InputError("number of ranks must be positive");
    std::vector<std::uint32_t> primes;
    std::uint32_t rest = n;
    for (std::uint32_t p = 2; static_cast<std::uint64_t>(p) * p <= rest; ++p) {
        while (rest % p == 0) {
            primes.push_back(p);
            rest /= p;
        }
    }
    if (rest > 1) primes.push_back(rest);
    std::sort(primes.rbegin(), primes.rend());
    std::vector<std::uint32_t> result(dims, 1);
    for (auto p : primes) {
        // Largest prime factor first onto the currently smallest dimension.
        *std::min_element(result.begin(), result.end()) *= p;
    }
    std::sort(result.rbegin(), result.rend());
    return result;
}

Topology generate_moore(const MooreParams& params) {
    const auto grid = balanced_dims(params.ranks, params.dims);
    if (params.radius == 0) throw InputError("Moore radius must be at least 1");
    for (auto extent : grid) {
        if (params.periodic && extent < 2 * params.radius + 1) {
            std::string shape;
            for (std::size_t k = 0; k < grid.size(); ++k) {
                if (k > 0) shape += 'x';
                shape += std::to_string(grid[k]);
            }
            throw InputError("Moore radius " + std::to_string(params.radius) +
                             " needs every grid dimension >= " + std::to_string(2 * params.radius + 1) + ", but " +
                             std::to_string(params.ranks) + " ranks in " + std::to_string(params.dims) +
                             " dimensions form a " + shape + " grid (wrap-around would duplicate neighbors)");
        }
    }
    const std::uint32_t d = params.dims;
    const std::int64_t r = params.radius;
    // Offsets in lexicographic order, skipping the origin.
    std::vector<std::vector<std::int64_t>> offsets;
    std::vector<std::int64_t> offset(d, -r);
    while (true) {
        if (std::any_of(offset.begin(), offset.end(), [](std::int64_t v) { return v != 0; })) {
            offsets.push_back(offset);
        }
        std::int64_t k = static_cast<std::int64_t>(d) - 1;
        while (k >= 0 && offset[static_cast<std::size_t>(k)] == r) {
            offset[static_cast<std::size_t>(k)] = -r;
            --k;
        }
        if (k < 0) break;
        ++offset[static_cast<std::size_t>(k)];
    }
    std::vector<Edge> edges;
    edges.reserve(static_cast<std::size_t>(params.ranks) * offsets.size());
    std::vector<std::int64_t> coord(d);
    for (std::uint32_t rank = 0; rank < params.ranks; ++rank) {
        std::uint32_t rest = rank;
        for (std::int64_t k = static_cast<std::int64_t>(d) - 1; k >= 0; --k) {
            const auto kk = static_cast<std::size_t>(k);
            coord[kk] = rest % grid[kk];
            rest /= grid[kk];
        }
        for (const auto& off : offsets) {
            std::uint64_t neighbor = 0;
            bool inside = true;
            for (std::size_t k = 0; k < d; ++k) {
                const std::int64_t extent = grid[k];
                inside = inside && coord[k] + off[k] >= 0 && coord[k] + off[k] < extent;
                const std::int64_t c = ((coord[k] + off[k]) % extent + extent) % extent;
                neighbor = neighbor * static_cast<std::uint64_t>(extent) + static_cast<std::uint64_t>(c);
            }
            if (inside || params.periodic) edges.push_back({rank, static_cast<std::uint32_t>(neighbor)});
        }
    }
    return Topology::from_edges(params.ranks, edges);
}

namespace {

/// The grid's rank count, checked.
std::uint32_t cart_ranks(const CartParams& params) {
    if (params.dims.empty()) throw InputError("a Cartesian grid needs at least one dimension");
    if (params.periods.size() != params.dims.size()) {
        throw InputError("a Cartesian grid needs one period flag per dimension (" + std::to_string(params.dims.size()) +
                         " dimensions, " + std::to_string(params.periods.size()) + " flags)");
    }
    std::uint64_t ranks = 1;
    for (const auto extent : params.dims) {
        if (extent == 0) throw InputError("a Cartesian grid's extents must be positive");
        ranks *= extent;
        if (ranks > (std::uint64_t{1} << 31)) throw InputError("a Cartesian grid of more than 2^31 ranks");
    }
    return static_cast<std::uint32_t>(ranks);
}

}  // namespace

Topology generate_cart(const CartParams& params) {
    const std::uint32_t ranks = cart_ranks(params);
    std::vector<std::vector<std::uint32_t>> lists(ranks);
    std::uint64_t stride = ranks;  // of dimension k: the product of the extents after it
    for (std::size_t k = 0; k < params.dims.size(); ++k) {
        const std::uint64_t extent = params.dims[k];
        stride /= extent;
        for (std::uint32_t rank = 0; rank < ranks; ++rank) {
            const std::uint64_t coord = rank / stride % extent;
            const std::uint64_t base = rank - coord * stride;
            if (params.periods[k] || coord > 0) lists[rank].push_back(base + (coord + extent - 1) % extent * stride);
            if (params.periods[k] || coord + 1 < extent) lists[rank].push_back(base + (coord + 1) % extent * stride);
        }
    }
    // The same lists both ways: each direction's neighbor sends along the opposite one.
    return Topology::from_adjacency(lists, lists);
}

Topology generate_random(const RandomParams& params) {
    if (params.ranks == 0) throw InputError("number of ranks must be positive");
    if (!(params.density >= 0.0 && params.density <= 1.0)) {
        throw InputError("density must be in [0, 1]");
    }
    // Threshold on 53-bit uniforms: exact and platform-independent.
    const auto threshold = static_cast<std::uint64_t>(std::ldexp(params.density, 53));
    SplitMix64 rng(params.seed);
    std::vector<Edge> edges;
    edges.reserve(static_cast<std::size_t>(static_cast<double>(params.ranks) * params.ranks * params.density * 1.05) +
                  16);
    for (std::uint32_t i = 0; i < params.ranks; ++i) {
        for (std::uint32_t j = 0; j < params.ranks; ++j) {
            const std::uint64_t draw = rng.next() >> 11;
            if (i != j && draw < threshold) edges.push_back({i, j});
        }
    }
    return Topology::from_edges(params.ranks, edges);
}

Topology generate_pairs(const PairsParams& params) {
    if (params.ranks == 0) throw InputError("number of ranks must be positive");
    if (params.edges == 0) throw InputError("number of parallel edges must be positive");
    std::vector<Edge> edges;
    edges.reserve(std::size_t{params.ranks} / 2 * 2 * params.edges);
    for (std::uint32_t a = 0; a + 1 < params.ranks; a += 2) {
        for (std::uint32_t e = 0; e < params.edges; ++e) {
            edges.push_back({a, a + 1});
            edges.push_back({a + 1, a});
        }
    }
    return Topology::from_edges(params.ranks, edges);
}

std::string describe(const MooreParams& params) {
    std::ostringstream out;
    const auto grid = balanced_dims(params.ranks, params.dims);
    out << "moore ranks=" << params.ranks << " dims=" << params.dims << " radius=" << params.radius << " grid=";
    for (std::size_t k = 0; k < grid.size(); ++k) out << (k ? "x" : "") << grid[k];
    if (!params.periodic) out << " non-periodic";
    return out.str();
}

std::string describe(const RandomParams& params) {
    std::ostringstream out;
    out << "random ranks=" << params.ranks << " density=" << params.density << " seed=" << params.seed;
    return out.str();
}

}  // namespace nbr

namespace nbr {

std::string describe(const PairsParams& params) {
    std::ostringstream out;
    out << "pairs ranks=" << params.ranks << " edges=" << params.edges;
    return out.str();
}

std::string describe(const CartParams& params) {
    std::ostringstream out;
    out << "cart dims=";
    for (std::size_t k = 0; k < params.dims.size(); ++k) out << (k ? "," : "") << params.dims[k];
    out << " periods=";
    for (std::size_t k = 0; k < params.periods.size(); ++k) out << (k ? "," : "") << (params.periods[k] ? 1 : 0);
    return out.str();
}

}  // namespace nbr
