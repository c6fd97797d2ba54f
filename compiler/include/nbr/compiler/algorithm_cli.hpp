// Command-line options of the algorithms, shared by nbrc and the benchmarks (header-only,
// needs CLI11).
#pragma once

#include <CLI/CLI.hpp>

#include "nbr/compiler/algorithm.hpp"

namespace nbr::compiler {

/// @brief Adds --threshold, the kgroup options (--k, --topology-aware, --max-hyperedges,
/// --max-combinations) and hierarchical's --intra-node, --radix, --across-nodes and --node-radix to
/// `app`, bound to `options`.
inline void add_algorithm_options(CLI::App* app, AlgorithmOptions& options) {
    app->add_option("--threshold", options.threshold,
                    "Θ. common-neighbor: friends share at least Θ out-neighbors (default 4); "
                    "kgroup: a group's common out-neighbors exceed Θ (default k)")
        ->check(CLI::PositiveNumber);
    app->add_option("--k", options.group_size, "kgroup: ranks per group, itself included")
        ->check(CLI::Range(2U, 1024U))
        ->capture_default_str();
    app->add_flag("--topology-aware", options.topology_aware,
                  "kgroup: friends only on the same node (needs --ranks-per-node or --placement)");
    app->add_option("--max-hyperedges", options.max_hyperedges, "kgroup: candidate groups kept per rank (the best)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_option("--max-combinations", options.max_combinations,
                    "kgroup: partial intersections one rank's group search may compute")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_option("--intra-node", options.intra_node,
                    "hierarchical: blocks inside a node directly (default), or in ⌈log_r n⌉ combined rounds "
                    "(bruck, r = --radix)")
        ->transform(CLI::CheckedTransformer(intra_node_names()));
    app->add_option("--radix", options.intra_radix, "hierarchical --intra-node bruck: ranks a round reaches (≥ 2)")
        ->check(CLI::Range(2U, 1024U))
        ->capture_default_str();
    app->add_option("--across-nodes", options.across_nodes,
                    "hierarchical: between nodes in lanes, one message per node pair (default), or along a "
                    "virtual k-ary n-cube of nodes (cube, k = --node-radix)")
        ->transform(CLI::CheckedTransformer(across_nodes_names()));
    app->add_option("--node-radix", options.node_radix,
                    "hierarchical --across-nodes cube: nodes a round reaches (≥ 2; 0: every node in one round)")
        ->check(CLI::Range(0U, 1U << 24))
        ->check(CLI::Validator(
            [](const std::string& value) {
                return value == "1" ? std::string("must be 0 or at least 2") : std::string();
            },
            "0|>=2"))
        ->capture_default_str();
}

}  // namespace nbr::compiler
