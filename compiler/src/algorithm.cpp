#include "nbr/compiler/algorithm.hpp"

#include <stdexcept>

#include "../algorithms/common_neighbor.hpp"
#include "../algorithms/distance_halving.hpp"
#include "../algorithms/hierarchical.hpp"
#include "../algorithms/kgroup.hpp"
#include "../algorithms/naive.hpp"

namespace nbr::compiler {

namespace {

/// The name of `value` in a name table.
template <class Enum>
std::string name_in(const std::map<std::string, Enum>& names, Enum value, const char* what) {
    for (const auto& [name, v] : names) {
        if (v == value) return name;
    }
    throw std::invalid_argument(std::string("unknown ") + what);
}

}  // namespace

const std::map<std::string, AlgorithmKind>& algorithm_names() {
    static const std::map<std::string, AlgorithmKind> names{{"naive", AlgorithmKind::naive},
                                                            {"common-neighbor", AlgorithmKind::common_neighbor},
                                                            {"distance-halving", AlgorithmKind::distance_halving},
                                                            {"kgroup", AlgorithmKind::kgroup},
                                                            {"hierarchical", AlgorithmKind::hierarchical}};
    return names;
}

const std::map<std::string, IntraNode>& intra_node_names() {
    static const std::map<std::string, IntraNode> names{{"direct", IntraNode::direct}, {"bruck", IntraNode::bruck}};
    return names;
}

std::string to_string(IntraNode intra) {
    return name_in(intra_node_names(), intra, "intra-node configuration");
}

const std::map<std::string, AcrossNodes>& across_nodes_names() {
    static const std::map<std::string, AcrossNodes> names{{"lanes", AcrossNodes::lanes}, {"cube", AcrossNodes::cube}};
    return names;
}

std::string to_string(AcrossNodes across) {
    return name_in(across_nodes_names(), across, "across-nodes configuration");
}

std::string to_string(AlgorithmKind kind) {
    return name_in(algorithm_names(), kind, "algorithm kind");
}

namespace {

/// The smallest radix whose Bruck rounds reach every rank of a node of `ranks` in two rounds.
std::uint32_t two_round_radix(std::uint32_t ranks) {
    std::uint32_t radix = 2;
    while (static_cast<std::uint64_t>(radix) * radix < ranks) ++radix;
    return radix;
}

/// The hierarchical configurations auto tries (docs/algorithms.md): in lanes, direct and in
/// Bruck rounds of radix 2-4; along a cube of radix 4 or every node in one round (k0), direct
/// and in Bruck rounds of radix 3; and where the largest node needs a radix above 4 to be
/// reached in two rounds, that radix in lanes and with k0.
std::vector<Candidate> hierarchical_candidates(const std::string& name, const AlgorithmOptions& base) {
    std::vector<Candidate> out{Candidate{name, AlgorithmKind::hierarchical, base}};
    out.back().options.intra_node = IntraNode::direct;
    const std::uint32_t two_rounds = two_round_radix(base.placement->max_ranks_per_node());
    std::vector<std::uint32_t> radices{2, 3, 4};
    std::vector<std::pair<std::uint32_t, std::uint32_t>> cube{{4, 0}, {0, 0}, {4, 3}, {0, 3}};  // (k, radix or 0)
    if (two_rounds > 4) {
        radices.push_back(two_rounds);
        cube.emplace_back(0, two_rounds);
    }
    for (const std::uint32_t radix : radices) {
        Candidate candidate{name + "-bruck-r" + std::to_string(radix), AlgorithmKind::hierarchical, base};
        candidate.options.intra_node = IntraNode::bruck;
        candidate.options.intra_radix = radix;
        out.push_back(std::move(candidate));
    }
    for (const auto& [node_radix, radix] : cube) {
        Candidate candidate{name + "-cube-k" + std::to_string(node_radix), AlgorithmKind::hierarchical, base};
        candidate.options.across_nodes = AcrossNodes::cube;
        candidate.options.node_radix = node_radix;
        candidate.options.intra_node = radix == 0 ? IntraNode::direct : IntraNode::bruck;
        if (radix != 0) {
            candidate.options.intra_radix = radix;
            candidate.name += "-bruck-r" + std::to_string(radix);
        }
        out.push_back(std::move(candidate));
    }
    return out;
}

/// The configurations of one algorithm that auto tries.
std::vector<Candidate> candidates_of(AlgorithmKind kind, const AlgorithmOptions& given) {
    const std::string name = to_string(kind);
    AlgorithmOptions base = given;  // auto sets every configuration's radices itself
    base.intra_radix_from_machine = false;
    base.node_radix_from_machine = false;
    switch (kind) {
        case AlgorithmKind::naive:
        case AlgorithmKind::common_neighbor: return {Candidate{name, kind, base}};
        case AlgorithmKind::distance_halving:
            if (!base.placement) return {};  // it needs to know where the ranks run
            return {Candidate{name, kind, base}};
        case AlgorithmKind::hierarchical:
            if (!base.placement) return {};
            return hierarchical_candidates(name, base);
        case AlgorithmKind::kgroup: {
            std::vector<Candidate> out;
            for (std::uint32_t k = 2; k <= 4; ++k) {
                for (const bool aware : {false, true}) {
                    if (aware && !base.placement) continue;
                    Candidate candidate{name + "-k" + std::to_string(k) + (aware ? "-aware" : ""), kind, base};
                    candidate.options.group_size = k;
                    candidate.options.topology_aware = aware;
                    candidate.options.threshold.reset();  // the paper's default per k
                    out.push_back(std::move(candidate));
                }
            }
            return out;
        }
    }
    throw std::invalid_argument("unknown algorithm kind");
}

}  // namespace

std::vector<Candidate> auto_candidates(const AlgorithmOptions& base) {
    std::vector<Candidate> out = candidates_of(AlgorithmKind::naive, base);
    for (const auto& [name, kind] : algorithm_names()) {
        if (kind == AlgorithmKind::naive) continue;
        for (auto& candidate : candidates_of(kind, base)) out.push_back(std::move(candidate));
    }
    return out;
}

namespace {

bool selects(const std::string& selector, const std::string& name) {
    if (!selector.empty() && selector.back() == '*') {
        return name.compare(0, selector.size() - 1, selector, 0, selector.size() - 1) == 0;
    }
    return name == selector;
}

}  // namespace

std::vector<Candidate> select_candidates(std::vector<Candidate> candidates, const std::vector<std::string>& selectors) {
    if (selectors.empty()) return candidates;
    std::vector<bool> matched(selectors.size(), false);
    std::vector<Candidate> kept;
    std::string names;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        names += (names.empty() ? "" : ", ") + candidates[i].name;
        bool chosen = i == 0;  // naive
        for (std::size_t k = 0; k < selectors.size(); ++k) {
            if (selects(selectors[k], candidates[i].name)) matched[k] = chosen = true;
        }
        if (chosen) kept.push_back(std::move(candidates[i]));
    }
    for (std::size_t k = 0; k < selectors.size(); ++k) {
        if (!matched[k]) {
            throw std::invalid_argument("--candidates: '" + selectors[k] +
                                        "' matches no candidate (they are: " + names + ")");
        }
    }
    return kept;
}

std::unique_ptr<Algorithm> make_algorithm(AlgorithmKind kind, const AlgorithmOptions& options) {
    switch (kind) {
        case AlgorithmKind::naive: return std::make_unique<internal::NaiveAlgorithm>();
        case AlgorithmKind::common_neighbor:
            return std::make_unique<internal::CommonNeighborAlgorithm>(options.threshold.value_or(4));
        case AlgorithmKind::distance_halving:
            if (!options.placement) {
                throw std::invalid_argument(
                    "distance-halving needs a placement (--ranks-per-node and --ranks-per-socket, or --placement)");
            }
            return std::make_unique<internal::DistanceHalvingAlgorithm>(*options.placement);
        case AlgorithmKind::kgroup: return std::make_unique<internal::KGroupAlgorithm>(options);
        case AlgorithmKind::hierarchical:
            if (!options.placement) {
                throw std::invalid_argument(
                    "hierarchical needs a placement (--ranks-per-node and --ranks-per-socket, or --placement)");
            }
            if (options.intra_radix_from_machine || options.node_radix_from_machine) {
                throw std::invalid_argument(
                    "hierarchical: the radices from the machine model need a machine (--machine)");
            }
            return std::make_unique<internal::HierarchicalAlgorithm>(
                *options.placement, internal::HierarchicalShape{options.intra_node, options.intra_radix,
                                                                options.across_nodes, options.node_radix});
    }
    throw std::invalid_argument("unknown algorithm kind");
}

}  // namespace nbr::compiler
