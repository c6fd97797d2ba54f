#pragma once

#include <cstdint>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/placement.hpp"

namespace nbr::compiler::internal {

/// @brief Topology- and load-aware distance halving (Sharifian, Sojoodi, Afsahi): Alg. 1
/// (pattern by recursive halving of the ranks, in placement order), Alg. 2/3 (agent and
/// origin selection, a matching negotiated in supersteps), Alg. 4 (the replay as multi-hop
/// pattern items). See docs/algorithms.md for how each step maps to supersteps.
class DistanceHalvingAlgorithm final : public Algorithm {
public:
    /// @param placement where the ranks run; halving stops at ranges of at most as many
    /// ranks as the fullest socket holds (L)
    explicit DistanceHalvingAlgorithm(Placement placement);

    [[nodiscard]] std::string name() const override { return "distance-halving"; }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;

private:
    Placement placement_;
};

}  // namespace nbr::compiler::internal
