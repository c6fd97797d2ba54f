#include "nbr/compiler/algorithm.hpp"

#include <stdexcept>

#include "../algorithms/common_neighbor.hpp"
#include "../algorithms/distance_halving.hpp"
#include "../algorithms/kgroup.hpp"
#include "../algorithms/naive.hpp"

namespace nbr::compiler {

const std::map<std::string, AlgorithmKind>& algorithm_names() {
    static const std::map<std::string, AlgorithmKind> names{{"naive", AlgorithmKind::naive},
                                                            {"common-neighbor", AlgorithmKind::common_neighbor},
                                                            {"distance-halving", AlgorithmKind::distance_halving},
                                                            {"kgroup", AlgorithmKind::kgroup}};
    return names;
}

std::string to_string(AlgorithmKind kind) {
    for (const auto& [name, value] : algorithm_names()) {
        if (value == kind) return name;
    }
    throw std::invalid_argument("unknown algorithm kind");
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
    }
    throw std::invalid_argument("unknown algorithm kind");
}

}  // namespace nbr::compiler
