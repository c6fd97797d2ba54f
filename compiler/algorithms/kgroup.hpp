#pragma once

#include <cstdint>
#include <optional>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/placement.hpp"

namespace nbr::compiler::internal {

/// @brief Groups of k friends (Ghazimirsaeed, Mirsadeghi, Afsahi, IPDPS 2019): Alg. 2
/// (friendship matrix and candidate groups), Alg. 3 (distributed matching on the k-uniform
/// friendship hypergraph), Alg. 1 (the loop), Alg. 4 (the schedule as pattern items),
/// topology-agnostic or topology-aware (friends on the same node only). See
/// docs/algorithms.md for how each step maps to supersteps.
class KGroupAlgorithm final : public Algorithm {
public:
    /// @throws std::invalid_argument for k < 2, zero limits, or topology-aware without placement
    explicit KGroupAlgorithm(const AlgorithmOptions& options);

    [[nodiscard]] std::string name() const override { return "kgroup"; }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
    void build(Engine& engine, const Topology& topology, PatternBuilder& out) override;
    [[nodiscard]] std::vector<std::string> notes() const override { return notes_; }

    /// @brief Settings of one build.
    struct Settings {
        std::uint32_t k = 3;
        std::uint32_t threshold = 3;  ///< groups need more than this many common out-neighbors
        bool topology_aware = false;
        std::uint32_t max_hyperedges = 256;
        std::uint64_t max_combinations = 100'000;
    };

private:
    Settings settings_;
    std::optional<Placement> placement_;
    std::vector<std::string> notes_;
};

}  // namespace nbr::compiler::internal
