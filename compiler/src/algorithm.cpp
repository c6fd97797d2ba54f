#include "nbr/compiler/algorithm.hpp"

#include <stdexcept>

#include "../algorithms/naive.hpp"

namespace nbr::compiler {

const std::map<std::string, AlgorithmKind>& algorithm_names() {
    static const std::map<std::string, AlgorithmKind> names{{"naive", AlgorithmKind::naive}};
    return names;
}

std::string to_string(AlgorithmKind kind) {
    for (const auto& [name, value] : algorithm_names()) {
        if (value == kind) return name;
    }
    throw std::invalid_argument("unknown algorithm kind");
}

std::unique_ptr<Algorithm> make_algorithm(AlgorithmKind kind, const AlgorithmOptions& /*options*/) {
    switch (kind) {
        case AlgorithmKind::naive: return std::make_unique<internal::NaiveAlgorithm>();
    }
    throw std::invalid_argument("unknown algorithm kind");
}

}  // namespace nbr::compiler
