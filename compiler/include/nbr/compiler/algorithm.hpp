#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nbr/compiler/engine.hpp"
#include "nbr/compiler/pattern_builder.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"

namespace nbr::compiler {

/// @brief Pattern construction algorithms (`nbrc compile --algo`).
enum class AlgorithmKind {
    naive,            ///< one message per edge, what MPI libraries do today
    common_neighbor,  ///< pairwise message combining over common out-neighbors (HiPC 2017)
    distance_halving  ///< topology- and load-aware recursive halving with agents (Sharifian et al.)
};

/// @brief Command-line names of the algorithms (shared by the CLI and the manifest).
[[nodiscard]] const std::map<std::string, AlgorithmKind>& algorithm_names();
[[nodiscard]] std::string to_string(AlgorithmKind kind);

/// @brief Tunables of the algorithms; each algorithm reads the ones it needs.
struct AlgorithmOptions {
    /// Θ of common-neighbor: friends share at least this many out-neighbors (paper: 4).
    std::uint32_t threshold = 4;
    /// Where the ranks run (distance-halving requires it); recorded in the manifest.
    std::optional<Placement> placement;
};

/// @brief A distributed pattern construction, written per virtual rank.
///
/// build() runs collectively on every compiler process. It may only use a local rank's own
/// neighbor lists from `topology` (what an MPI process knows of a dist-graph communicator)
/// and learn everything else through engine messages. It adds the rank's sends to `out`;
/// receives are derived afterwards.
class Algorithm {
public:
    virtual ~Algorithm() = default;
    /// @brief Name recorded in the manifest and the rank files.
    [[nodiscard]] virtual std::string name() const = 0;
    /// @brief Parameters as recorded in the manifest.
    [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> parameters() const { return {}; }
    virtual void build(Engine& engine, const Topology& topology, PatternBuilder& out) = 0;
};

/// @brief Creates the algorithm of the given kind.
[[nodiscard]] std::unique_ptr<Algorithm> make_algorithm(AlgorithmKind kind, const AlgorithmOptions& options);

}  // namespace nbr::compiler
