#pragma once
// A hand-built auto (multi-variant) pattern directory whose bands the test chooses.
#include <cstdint>
#include <filesystem>
#include <vector>

#include <mpi.h>

#include "nbr/schema/pattern_io.hpp"
#include "replay_corpus.hpp"

namespace nbr::test {

struct BandSpec {
    nbr::schema::Collective collective;
    std::uint64_t from_bytes;
    std::uint32_t variant;
    std::vector<std::uint32_t> alternatives = {};  // kept for measured selection
};

/// Compiles naive, the relay test algorithm and common-neighbor (Θ = 2) into dir/<name> and
/// writes (rank 0) a format-2 manifest with the given bands over them.
inline void assemble_auto(const nbr::Topology& topology, const std::filesystem::path& dir,
                          const std::vector<BandSpec>& bands, std::uint32_t allgatherv, std::uint32_t alltoallv,
                          const std::vector<std::uint32_t>& allgatherv_alternatives = {},
                          const std::vector<std::uint32_t>& alltoallv_alternatives = {}) {
    if (nbr::test::world_rank() == 0) std::filesystem::create_directories(dir);
    MPI_Barrier(MPI_COMM_WORLD);
    nbr::test::compile_to(MPI_COMM_WORLD, topology, dir / "naive");
    nbr::test::compile_relay(topology, dir / "relay");
    nbr::compiler::compile(MPI_COMM_WORLD, topology, nbr::test::common_neighbor_options(dir / "cn2", 2));
    if (nbr::test::world_rank() == 0) {
        nbr::schema::Manifest manifest;
        manifest.set_format_version(nbr::kMultiVariantFormatVersion);
        manifest.set_num_ranks(topology.num_ranks());
        manifest.set_num_edges(topology.num_edges());
        manifest.set_algorithm("auto");
        manifest.set_topology_hash(topology.hash());
        for (const char* name : {"naive", "relay", "cn2"}) {
            auto* variant = manifest.add_variants();
            variant->set_name(name);
            variant->set_compile_id(nbr::read_manifest(dir / name).compile_id());
        }
        for (const auto& spec : bands) {
            auto* band = manifest.add_bands();
            band->set_collective(spec.collective);
            band->set_from_bytes(spec.from_bytes);
            band->set_variant(spec.variant);
            for (const auto a : spec.alternatives) band->add_alternatives(a);
            if (!spec.alternatives.empty()) manifest.set_format_version(nbr::kCandidatesFormatVersion);
        }
        manifest.set_allgatherv_variant(allgatherv);
        manifest.set_alltoallv_variant(alltoallv);
        for (const auto a : allgatherv_alternatives) manifest.add_allgatherv_alternatives(a);
        for (const auto a : alltoallv_alternatives) manifest.add_alltoallv_alternatives(a);
        if (!allgatherv_alternatives.empty() || !alltoallv_alternatives.empty()) {
            manifest.set_format_version(nbr::kCandidatesFormatVersion);
        }
        manifest.set_compile_id(12345);
        nbr::write_file(dir / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace nbr::test
