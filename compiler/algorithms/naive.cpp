#include "naive.hpp"

namespace nbr::compiler::internal {

void NaiveAlgorithm::build(Engine& engine, const Topology& topology, PatternBuilder& out) {
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        const auto targets = topology.out_neighbors(v);
        for (std::uint32_t slot = 0; slot < targets.size(); ++slot) {
            out.add_send(v, 0, targets[slot], {Item{v, slot}});
        }
    }
}

}  // namespace nbr::compiler::internal
