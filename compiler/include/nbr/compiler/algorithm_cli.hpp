// Command-line options of the algorithms, shared by nbrc and the benchmarks (header-only,
// needs CLI11).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nbr/common/json_text.hpp"
#include "nbr/compiler/algorithm.hpp"

namespace nbr::compiler {

namespace internal {

/// A radix option's number: `lowest` (0 or 2) or at least 2, up to 2^24.
inline std::uint32_t parse_radix(const std::string& value, const char* option, std::uint32_t lowest) {
    std::uint64_t radix = 0;
    std::size_t used = 0;
    try {
        radix = std::stoull(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const bool ok = used == value.size() && !value.empty() && value[0] != '-' && radix <= kMaxRadix &&
                    (radix >= 2 || radix == lowest);
    if (!ok) {
        throw CLI::ValidationError(option, std::string("must be ") + (lowest == 0 ? "0 or " : "") +
                                               "at least 2 (up to " + std::to_string(kMaxRadix) +
                                               "), or machine; got '" + value + "'");
    }
    return static_cast<std::uint32_t>(radix);
}

}  // namespace internal

/// @brief Adds --threshold, the kgroup options (--k, --topology-aware, --max-hyperedges,
/// --max-combinations) and hierarchical's --aggregate-by, --intra-node, --radix, --across-nodes, --node-radix and
/// --model-bytes to `app`, bound to `options`.
inline void add_algorithm_options(CLI::App* app, AlgorithmOptions& options) {
    app->add_option("--threshold", options.threshold,
                    "Θ. common-neighbor: friends share at least Θ out-neighbors (default 4); "
                    "kgroup: a group's common out-neighbors exceed Θ (default k)")
        ->check(CLI::PositiveNumber);
    app->add_option("--k", options.group_size, "kgroup: ranks per group, itself included")
        ->check(CLI::Range(kMinGroupSize, kMaxGroupSize))
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
    app->add_option("--aggregate-by", options.aggregate_by,
                    "hierarchical: lanes join the ranks of a node (default), or of a socket (socket: every socket "
                    "treated as a node)")
        ->transform(CLI::CheckedTransformer(aggregate_by_names()));
    app->add_option("--intra-node", options.intra_node,
                    "hierarchical: blocks inside a node directly (default), or in ⌈log_r n⌉ combined rounds "
                    "(bruck, r = --radix)")
        ->transform(CLI::CheckedTransformer(intra_node_names()));
    app->add_option_function<std::string>(
           "--radix",
           [&options](const std::string& value) {
               options.intra_radix_from_machine = value == "machine";
               if (!options.intra_radix_from_machine) options.intra_radix = internal::parse_radix(value, "--radix", 2);
           },
           "hierarchical --intra-node bruck: ranks a round reaches (≥ 2); machine: Bruck rounds or direct and "
           "the radix from the --machine model")
        ->type_name("N|machine")
        ->default_str("2");
    app->add_option("--across-nodes", options.across_nodes,
                    "hierarchical: between nodes in lanes, one message per node pair (default), or along a "
                    "virtual k-ary n-cube of nodes (cube, k = --node-radix)")
        ->transform(CLI::CheckedTransformer(across_nodes_names()));
    app->add_option_function<std::string>(
           "--node-radix",
           [&options](const std::string& value) {
               options.node_radix_from_machine = value == "machine";
               if (!options.node_radix_from_machine)
                   options.node_radix = internal::parse_radix(value, "--node-radix", 0);
           },
           "hierarchical --across-nodes cube: nodes a round reaches (≥ 2; 0: every node in one round; machine: "
           "from the --machine model)")
        ->type_name("N|machine")
        ->default_str("2");
    app->add_option("--model-bytes", options.model_bytes,
                    "hierarchical --radix/--node-radix machine: the bytes per block the radices are chosen for")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
}

/// @brief Adds `--algo NAME` to `app`: an algorithm, a configuration name (parse_configuration:
/// `kgroup-k3-aware`, `hierarchical-cube-k0-bruck-r7`, `hierarchical-seg16K`, the names auto
/// gives its candidates) or
/// one of `extra` (nbrc's `auto`). Resolve it after parsing with resolve_algorithm.
inline CLI::Option* add_algorithm_name_option(CLI::App* app, std::string& name, const std::vector<std::string>& extra,
                                              const std::string& description) {
    const std::string names =
        common::internal::join(algorithm_names(), ", ", [](const auto& entry) { return entry.first; }) +
        (extra.empty() ? "" : ", " + common::internal::join(extra));
    auto check = [extra, names](const std::string& value) -> std::string {
        if (std::find(extra.begin(), extra.end(), value) != extra.end()) return {};
        try {
            if (parse_configuration(value)) return {};
        } catch (const std::invalid_argument& error) {
            return error.what();
        }
        return "unknown algorithm '" + value + "': one of " + names +
               ", or a configuration kgroup-kK[-aware], hierarchical[-socket][-cube-kK][-bruck-rR], each "
               "with -segSIZE for segmented forwarding";
    };
    return app->add_option("--algo", name, description)->check(CLI::Validator(check, "NAME"))->capture_default_str();
}

/// @brief The algorithm `name` (add_algorithm_name_option) names, its configuration applied to
/// `options`. A configuration fixes what it spells: giving the same option again (`--algo
/// hierarchical-bruck-r3 --radix 4`) is a usage error.
/// @throws CLI::ValidationError on such a conflict, or for a name that is no configuration
/// (`auto`, which the caller handles itself).
inline AlgorithmKind resolve_algorithm(const CLI::App& app, const std::string& name, AlgorithmOptions& options) {
    const auto configuration = parse_configuration(name);  // checked by the option's validator
    if (!configuration) throw CLI::ValidationError("--algo", "'" + name + "' names no algorithm here");
    auto refuse = [&](bool spelled, std::initializer_list<const char*> flags) {
        for (const char* flag : flags) {
            const CLI::Option* given = app.get_option_no_throw(flag);  // a program may not offer it
            if (spelled && given != nullptr && given->count() > 0) {
                throw CLI::ValidationError("--algo", name + " already sets " + flag + "; give one of them");
            }
        }
    };
    refuse(configuration->group_size.has_value(), {"--k"});
    refuse(configuration->by_socket, {"--aggregate-by"});
    refuse(configuration->node_radix.has_value(), {"--across-nodes", "--node-radix"});
    refuse(configuration->intra_radix.has_value(), {"--intra-node", "--radix"});
    refuse(configuration->segment_bytes.has_value(), {"--segment"});
    configuration->apply(options);
    return configuration->kind;
}

}  // namespace nbr::compiler
