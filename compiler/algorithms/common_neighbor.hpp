#pragma once

#include <cstdint>

#include "nbr/compiler/algorithm.hpp"

namespace nbr::compiler::internal {

/// @brief Pairwise message combining over common out-neighbors (Mirsadeghi, Träff, Balaji,
/// Afsahi, HiPC 2017): Alg. 1 (pattern), Alg. 2 (distributed friend matching), Alg. 3
/// (schedule). See docs/algorithms.md for how each step maps to supersteps.
class CommonNeighborAlgorithm final : public Algorithm {
public:
    /// @param threshold Θ: two ranks are friends if they share at least Θ active out-neighbors
    explicit CommonNeighborAlgorithm(std::uint32_t threshold);

    [[nodiscard]] std::string name() const override { return "common-neighbor"; }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;

private:
    std::uint32_t threshold_;
};

}  // namespace nbr::compiler::internal
