// The native build of the example applications: MPI's collectives only, no `--nbr`
// (neighbor_exchange.hpp).
#include <cstdio>
#include <cstdlib>

#include "common/neighbor_exchange.hpp"

namespace example {

void add_nbr_option(CLI::App&, std::string&) {}

std::unique_ptr<PatternReplay> load_pattern_replay(MPI_Comm comm, const std::string&) {
    std::fprintf(stderr, "--nbr needs the -nbr build of this program\n");
    MPI_Abort(comm, 2);
    std::abort();  // not reached
}

}  // namespace example
