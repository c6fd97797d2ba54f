#include "nbr/compiler/algorithm.hpp"

#include <stdexcept>

#include "nbr/common/json_text.hpp"
#include "nbr/simulator/sizes.hpp"

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

const std::map<std::string, AggregateBy>& aggregate_by_names() {
    static const std::map<std::string, AggregateBy> names{{"node", AggregateBy::node}, {"socket", AggregateBy::socket}};
    return names;
}

std::string to_string(AggregateBy by) {
    return name_in(aggregate_by_names(), by, "aggregation");
}

std::string to_string(AlgorithmKind kind) {
    return name_in(algorithm_names(), kind, "algorithm kind");
}

namespace {

/// Reads the number after `prefix` at the front of `rest` (1 to 8 digits) and drops both;
/// nullopt, `rest` untouched, if `rest` does not start with the prefix and a digit.
std::optional<std::uint32_t> take_number(std::string& rest, const std::string& prefix) {
    if (rest.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
    std::size_t end = prefix.size();
    while (end < rest.size() && end - prefix.size() < 9 && rest[end] >= '0' && rest[end] <= '9') ++end;
    const std::size_t digits = end - prefix.size();
    if (digits == 0 || digits > 8) return std::nullopt;
    const auto value = static_cast<std::uint32_t>(std::stoul(rest.substr(prefix.size(), digits)));
    rest.erase(0, end);
    return value;
}

/// Throws unless `value` is within [`lowest`, `highest`] or is `also`.
void check_range(const std::string& name, const char* what, std::uint32_t value, std::uint32_t lowest,
                 std::uint32_t highest, std::optional<std::uint32_t> also = std::nullopt) {
    if ((value >= lowest && value <= highest) || value == also) return;
    throw std::invalid_argument(name + ": " + what + " must be " + (also ? std::to_string(*also) + " or " : "") +
                                std::to_string(lowest) + " to " + std::to_string(highest) + ", got " +
                                std::to_string(value));
}

/// Takes a trailing "-segSIZE" (SIZE: 1 to 8 digits and an optional K, M or G, as
/// simulator::parse_sizes reads it) off `rest`: its bytes, or nullopt, `rest` untouched, if it
/// has none.
std::optional<std::uint64_t> take_segment(const std::string& name, std::string& rest) {
    const std::size_t at = rest.rfind("-seg");
    if (at == std::string::npos) return std::nullopt;
    const std::string size = rest.substr(at + 4);
    const std::size_t digits = std::min(size.find_first_not_of("0123456789"), size.size());
    const bool suffix =
        digits + 1 == size.size() && std::string_view("KMG").find(size.back()) != std::string_view::npos;
    if (digits == 0 || digits > 8 || (digits != size.size() && !suffix)) return std::nullopt;
    const std::uint64_t bytes = simulator::parse_sizes(size).front();
    if (bytes == 0) throw std::invalid_argument(name + ": the segment size must be above 0");
    rest.erase(at);
    return bytes;
}

/// The configuration after the algorithm's name: `rest` is what follows it.
std::optional<Configuration> parse_suffix(const std::string& name, AlgorithmKind kind, std::string rest) {
    Configuration out;
    out.kind = kind;
    out.segment_bytes = take_segment(name, rest);
    if (out.segment_bytes && kind == AlgorithmKind::naive) {
        throw std::invalid_argument(name + ": naive forwards nothing, so it has no segments");
    }
    if (kind == AlgorithmKind::kgroup && !rest.empty()) {
        out.group_size = take_number(rest, "-k");
        if (!out.group_size) return std::nullopt;
        check_range(name, "k", *out.group_size, kMinGroupSize, kMaxGroupSize);
        out.topology_aware = rest == "-aware";
        if (out.topology_aware) rest.clear();
    }
    if (kind == AlgorithmKind::hierarchical) {
        constexpr std::string_view by_socket = "-socket";
        out.by_socket = rest.starts_with(by_socket);
        if (out.by_socket) rest.erase(0, by_socket.size());
        out.node_radix = take_number(rest, "-cube-k");
        if (out.node_radix) check_range(name, "the cube's radix", *out.node_radix, 2, kMaxRadix, 0);
        out.intra_radix = take_number(rest, "-bruck-r");
        if (out.intra_radix) check_range(name, "the Bruck radix", *out.intra_radix, 2, kMaxRadix);
    }
    if (!rest.empty()) return std::nullopt;
    return out;
}

}  // namespace

void Configuration::apply(AlgorithmOptions& options) const {
    if (group_size) options.group_size = *group_size;
    if (topology_aware) options.topology_aware = true;
    if (by_socket) options.aggregate_by = AggregateBy::socket;
    if (node_radix) {
        options.across_nodes = AcrossNodes::cube;
        options.node_radix = *node_radix;
    }
    if (intra_radix) {
        options.intra_node = IntraNode::bruck;
        options.intra_radix = *intra_radix;
    }
}

std::optional<Configuration> parse_configuration(const std::string& name) {
    for (const auto& [algorithm, kind] : algorithm_names()) {
        if (name.compare(0, algorithm.size(), algorithm) != 0) continue;
        if (name.size() > algorithm.size() && name[algorithm.size()] != '-') continue;
        if (auto configuration = parse_suffix(name, kind, name.substr(algorithm.size()))) return configuration;
    }
    return std::nullopt;
}

std::string configuration_name(AlgorithmKind kind, const AlgorithmOptions& options) {
    std::string name = to_string(kind);
    if (kind == AlgorithmKind::kgroup) {
        return name + "-k" + std::to_string(options.group_size) + (options.topology_aware ? "-aware" : "");
    }
    if (kind != AlgorithmKind::hierarchical) return name;
    if (options.aggregate_by == AggregateBy::socket) name += "-socket";
    if (options.across_nodes == AcrossNodes::cube) name += "-cube-k" + std::to_string(options.node_radix);
    if (options.intra_node == IntraNode::bruck) name += "-bruck-r" + std::to_string(options.intra_radix);
    return name;
}

std::string configuration_of(const std::string& algorithm,
                             const std::vector<std::pair<std::string, std::string>>& parameters) {
    const auto kind = algorithm_names().find(algorithm);
    if (kind == algorithm_names().end()) return algorithm;
    std::map<std::string, std::string> p(parameters.begin(), parameters.end());
    auto number = [&](const char* name) { return static_cast<std::uint32_t>(std::stoul(p.at(name))); };
    AlgorithmOptions options;
    try {
        if (kind->second == AlgorithmKind::kgroup) {
            options.group_size = number("k");
            options.topology_aware = p.at("topology_aware") == "1";
        } else if (kind->second == AlgorithmKind::hierarchical) {
            // A manifest without aggregate_by aggregates by node.
            if (p.contains("aggregate_by")) options.aggregate_by = aggregate_by_names().at(p.at("aggregate_by"));
            options.intra_node = intra_node_names().at(p.at("intra_node"));
            if (options.intra_node == IntraNode::bruck) options.intra_radix = number("radix");
            options.across_nodes = across_nodes_names().at(p.at("across_nodes"));
            if (options.across_nodes == AcrossNodes::cube) options.node_radix = number("node_radix");
        }
    } catch (const std::exception&) {  // a parameter missing or not a number: no configuration
        return algorithm;
    }
    return configuration_name(kind->second, options);
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
/// and in Bruck rounds of radix 3; where the largest node needs a radix above 4 to be reached
/// in two rounds, that radix in lanes and with k0; and where nodes have several sockets, lanes
/// by socket in Bruck rounds of radix 3, 4 and the largest socket's two-round radix.
std::vector<Candidate> hierarchical_candidates(const AlgorithmOptions& base) {
    const std::uint32_t two_rounds = two_round_radix(base.placement->max_ranks_per_node());
    std::vector<std::uint32_t> radices{0, 2, 3, 4};                                             // 0: direct
    std::vector<std::pair<std::uint32_t, std::uint32_t>> cube{{4, 0}, {0, 0}, {4, 3}, {0, 3}};  // (k, radix or 0)
    if (two_rounds > 4) {
        radices.push_back(two_rounds);
        cube.emplace_back(0, two_rounds);
    }
    std::vector<Candidate> out;
    auto add = [&](AcrossNodes across, std::uint32_t node_radix, std::uint32_t radix,
                   AggregateBy by = AggregateBy::node) {
        Candidate candidate{"", AlgorithmKind::hierarchical, base};
        candidate.options.aggregate_by = by;
        candidate.options.across_nodes = across;
        candidate.options.node_radix = node_radix;
        candidate.options.intra_node = radix == 0 ? IntraNode::direct : IntraNode::bruck;
        if (radix != 0) candidate.options.intra_radix = radix;
        candidate.name = configuration_name(candidate.kind, candidate.options);
        out.push_back(std::move(candidate));
    };
    for (const std::uint32_t radix : radices) add(AcrossNodes::lanes, base.node_radix, radix);
    for (const auto& [node_radix, radix] : cube) add(AcrossNodes::cube, node_radix, radix);
    const Placement& placement = *base.placement;
    if (placement.max_ranks_per_socket() < placement.max_ranks_per_node()) {
        const std::uint32_t socket_two_rounds = two_round_radix(placement.socket_groups().max_ranks_per_node());
        std::vector<std::uint32_t> by_socket{3, 4};
        if (socket_two_rounds > 4) by_socket.push_back(socket_two_rounds);
        for (const std::uint32_t radix : by_socket)
            add(AcrossNodes::lanes, base.node_radix, radix, AggregateBy::socket);
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
            return hierarchical_candidates(base);
        case AlgorithmKind::kgroup: {
            std::vector<Candidate> out;
            for (std::uint32_t k = 2; k <= 4; ++k) {
                for (const bool aware : {false, true}) {
                    if (aware && !base.placement) continue;
                    Candidate candidate{"", kind, base};
                    candidate.options.group_size = k;
                    candidate.options.topology_aware = aware;
                    candidate.options.threshold.reset();  // the paper's default per k
                    candidate.name = configuration_name(kind, candidate.options);
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

/// "16K", "1M", or the bytes.
std::string size_name(std::uint64_t bytes) {
    if (bytes >= (1U << 20) && bytes % (1U << 20) == 0) return std::to_string(bytes >> 20) + "M";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "K";
    return std::to_string(bytes);
}

}  // namespace

std::vector<Candidate> segmented_candidates(const std::vector<Candidate>& candidates, std::uint64_t segment_bytes) {
    std::vector<Candidate> out;
    for (const auto& candidate : candidates) {
        out.push_back(candidate);
        if (segment_bytes == 0 || candidate.kind == AlgorithmKind::naive || candidate.segment_bytes != 0) continue;
        Candidate segmented = candidate;
        segmented.segment_bytes = segment_bytes;
        segmented.name += "-seg" + size_name(segment_bytes);
        out.push_back(std::move(segmented));
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
    const std::string names = common::internal::join(candidates, ", ", &Candidate::name);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
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
                *options.placement,
                internal::HierarchicalShape{options.intra_node, options.intra_radix, options.across_nodes,
                                            options.node_radix, options.aggregate_by});
    }
    throw std::invalid_argument("unknown algorithm kind");
}

std::string format_candidates_json(const std::vector<Candidate>& candidates) {
    using common::internal::json_string;
    std::string out = "{\"candidates\": [";
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& candidate = candidates[i];
        out += std::string(i == 0 ? "" : ",") + "\n  {\"name\": " + json_string(candidate.name) +
               ", \"algorithm\": " + json_string(to_string(candidate.kind)) + ", \"parameters\": {";
        const auto parameters = make_algorithm(candidate.kind, candidate.options)->parameters();
        for (std::size_t k = 0; k < parameters.size(); ++k) {
            out += (k == 0 ? "" : ", ") + json_string(parameters[k].first) + ": " + json_string(parameters[k].second);
        }
        out += "}}";
    }
    return out + "\n]}\n";
}

}  // namespace nbr::compiler
