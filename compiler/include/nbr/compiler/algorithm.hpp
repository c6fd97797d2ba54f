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
    naive,             ///< one message per edge, what MPI libraries do today
    common_neighbor,   ///< pairwise message combining over common out-neighbors (HiPC 2017)
    distance_halving,  ///< topology- and load-aware recursive halving with agents (Sharifian et al.)
    kgroup,            ///< groups of k friends by hypergraph matching (Ghazimirsaeed et al.)
    hierarchical       ///< node-aware aggregation: one message per node pair, roles spread by load
};

/// @brief Command-line names of the algorithms (shared by the CLI and the manifest).
[[nodiscard]] const std::map<std::string, AlgorithmKind>& algorithm_names();
[[nodiscard]] std::string to_string(AlgorithmKind kind);

/// @brief hierarchical: how blocks move inside a node, before and after the node pair's message.
enum class IntraNode {
    direct,  ///< one message per rank pair: to the forwarder, from the receiver to each destination
    bruck    ///< ⌈log_r n⌉ combined rounds over the node's n ranks (Bruck's index scheme, radix r)
};

/// @brief Names of IntraNode (`--intra-node`, the manifest).
[[nodiscard]] const std::map<std::string, IntraNode>& intra_node_names();
[[nodiscard]] std::string to_string(IntraNode intra);

/// @brief hierarchical: how blocks cross between nodes.
enum class AcrossNodes {
    lanes,  ///< one message per lane of a node pair: hand-off to a forwarder, then straight to the node
    cube    ///< store and forward along a virtual k-ary n-cube of nodes, rank index to rank index
};

/// @brief Names of AcrossNodes (`--across-nodes`, the manifest).
[[nodiscard]] const std::map<std::string, AcrossNodes>& across_nodes_names();
[[nodiscard]] std::string to_string(AcrossNodes across);

/// @brief hierarchical: what a lane joins, the ranks of a node or of a socket.
enum class AggregateBy {
    node,   ///< one lane per node pair (more where a node has few node pairs); hand-off and delivery span the node
    socket  ///< every socket is treated as a node: lanes per socket pair, hand-off and delivery inside the socket
};

/// @brief Names of AggregateBy (`--aggregate-by`, the manifest).
[[nodiscard]] const std::map<std::string, AggregateBy>& aggregate_by_names();
[[nodiscard]] std::string to_string(AggregateBy by);

/// @brief The largest radix `--radix`, `--node-radix` and configuration names accept.
inline constexpr std::uint32_t kMaxRadix = 1U << 24;
/// @brief The group sizes k that `--k` and `kgroup-kK` accept.
inline constexpr std::uint32_t kMinGroupSize = 2;
inline constexpr std::uint32_t kMaxGroupSize = 1024;

/// @brief Tunables of the algorithms; each algorithm reads the ones it needs.
struct AlgorithmOptions {
    /// Θ. common-neighbor: friends share at least Θ out-neighbors (default 4, the paper's);
    /// kgroup: a group's common out-neighbors exceed Θ (default k, the paper's Eq. 2).
    std::optional<std::uint32_t> threshold;
    /// Where the ranks run (distance-halving, hierarchical and topology-aware kgroup require it); recorded
    /// in the manifest.
    std::optional<Placement> placement;
    /// kgroup: ranks per group, the rank itself included (k >= 2).
    std::uint32_t group_size = 3;
    /// kgroup: friends only on the rank's own node (the paper's topology-aware design).
    bool topology_aware = false;
    /// kgroup: candidate groups (hyperedges) kept per rank, the best ones.
    std::uint32_t max_hyperedges = 256;
    /// kgroup: partial intersections a rank's search may compute.
    std::uint64_t max_combinations = 100'000;
    /// hierarchical: the hand-off and the delivery inside a node, direct or in Bruck rounds.
    IntraNode intra_node = IntraNode::direct;
    /// hierarchical, Bruck rounds: the radix r (a rank sends up to r − 1 messages per round).
    std::uint32_t intra_radix = 2;
    /// hierarchical: aggregation by node or by socket (every socket treated as a node).
    AggregateBy aggregate_by = AggregateBy::node;
    /// hierarchical: across nodes in lanes (one message per lane of a node pair) or along a cube.
    AcrossNodes across_nodes = AcrossNodes::lanes;
    /// hierarchical, cube: its radix k (a rank sends up to k − 1 messages per round across nodes);
    /// 0: one round, every node reached directly.
    std::uint32_t node_radix = 2;
    /// hierarchical: `--radix machine` (Bruck rounds or direct, and the radix) and `--node-radix
    /// machine`: chosen by resolve_model_radices (radix_model.hpp) from a machine model, for blocks of
    /// `model_bytes`, before the algorithm is made; make_algorithm rejects options still asking.
    bool intra_radix_from_machine = false;
    bool node_radix_from_machine = false;
    std::uint64_t model_bytes = 8;
};

/// @brief A configuration name (`nbrc compile --algo`, the names auto gives its candidates): an
/// algorithm name, `kgroup-kK[-aware]` or `hierarchical[-socket][-cube-kK][-bruck-rR]`, and the options it
/// spells. What a name does not spell keeps its option's value.
struct Configuration {
    AlgorithmKind kind = AlgorithmKind::naive;
    std::optional<std::uint32_t> group_size;   ///< kgroup-kK: groups of K
    bool topology_aware = false;               ///< kgroup-kK-aware: friends on the own node only
    std::optional<std::uint32_t> node_radix;   ///< -cube-kK: across nodes along a cube of radix K (0: one round)
    std::optional<std::uint32_t> intra_radix;  ///< -bruck-rR: inside the node in Bruck rounds of radix R
    bool by_socket = false;                    ///< hierarchical-socket: aggregation by socket
    /// -segSIZE (last, any algorithm but naive): segmented forwarding in segments of SIZE bytes
    /// (K, M, G suffixes; CompileOptions::segment_bytes, `nbrc compile --segment`).
    std::optional<std::uint64_t> segment_bytes;

    /// @brief Sets the options the name spells.
    void apply(AlgorithmOptions& options) const;
};

/// @brief The configuration a name spells; nullopt if `name` follows none of the forms.
/// @throws std::invalid_argument for a form with a number out of range (`hierarchical-bruck-r1`).
[[nodiscard]] std::optional<Configuration> parse_configuration(const std::string& name);

/// @brief The name of an algorithm in a configuration, the inverse of parse_configuration: kgroup
/// spells k and awareness, hierarchical aggregation by socket, the cube's radix and the Bruck
/// radix where used.
[[nodiscard]] std::string configuration_name(AlgorithmKind kind, const AlgorithmOptions& options);

/// @brief The configuration name of a compiled pattern, from its manifest's algorithm and
/// parameters (`nbrc inspect`): the `--algo` that builds it again (the parameters a name does
/// not spell, such as Θ and the placement, are options of their own). The algorithm's name
/// where its parameters are missing or unreadable.
[[nodiscard]] std::string configuration_of(const std::string& algorithm,
                                           const std::vector<std::pair<std::string, std::string>>& parameters);

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
    /// @brief Warnings about the last build (e.g. a limit that bound), identical on every
    /// process; compile() prints them unless quiet.
    [[nodiscard]] virtual std::vector<std::string> notes() const { return {}; }
};

/// @brief One configuration `nbrc compile --algo auto` tries.
struct Candidate {
    std::string name;  ///< unique, file-name safe: the variant's subdirectory if it wins
    AlgorithmKind kind = AlgorithmKind::naive;
    AlgorithmOptions options;
    /// Segmented forwarding (Manifest.segment_bytes): 0 whole messages. auto adds each
    /// forwarding candidate once more with its machine's segment size (segmented_candidates).
    std::uint64_t segment_bytes = 0;
};

/// @brief The configurations auto tries for every registered algorithm, in a fixed order
/// (naive first): each kind contributes its own (kgroup: k = 2..4, agnostic and, with a
/// placement, topology-aware). `base` supplies the placement and the limits.
[[nodiscard]] std::vector<Candidate> auto_candidates(const AlgorithmOptions& base);

/// @brief `candidates` with, right after each but naive, the same configuration forwarding in
/// segments of `segment_bytes` (named NAME-segSIZE, SIZE as 16K or 1M); none when 0.
[[nodiscard]] std::vector<Candidate> segmented_candidates(const std::vector<Candidate>& candidates,
                                                          std::uint64_t segment_bytes);

/// @brief The candidates `selectors` name, in their order among `candidates` (`--candidates`):
/// a selector is a candidate's name, or a prefix followed by `*` (`kgroup*`, `hierarchical-cube*`,
/// `*` for all). Naive (the first candidate) is always kept: auto falls back to it. No
/// selectors: all of them.
/// @throws std::invalid_argument naming a selector that matches no candidate, and the names.
[[nodiscard]] std::vector<Candidate> select_candidates(std::vector<Candidate> candidates,
                                                       const std::vector<std::string>& selectors);

/// @brief `nbrc candidates --json`: each candidate's name, algorithm and parameters as the
/// manifest of its pattern records them.
[[nodiscard]] std::string format_candidates_json(const std::vector<Candidate>& candidates);

/// @brief Creates the algorithm of the given kind.
[[nodiscard]] std::unique_ptr<Algorithm> make_algorithm(AlgorithmKind kind, const AlgorithmOptions& options);

}  // namespace nbr::compiler
