// Fuzz target: the pattern loader's checks and planner on manifest and rank-file bytes.
//
// Input: a 2-byte little-endian manifest length, a byte choosing the rank (modulo the
// manifest's number of ranks), the manifest bytes, then the rank file's bytes. The rank file is checked once against
// the manifest as given (checksum, compile id) and once with the manifest's checksum made to match, so that the checks
// behind the checksum and the planner see arbitrary schedules too. Everything must end in a result or in PatternError /
// PlanError.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "nbr/plan/plan.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace {

void plan_both(const nbr::schema::RankPattern& pattern) {
    for (auto collective : {nbr::internal::Collective::allgather, nbr::internal::Collective::alltoall}) {
        try {
            (void)nbr::internal::build_plan(pattern, collective);
        } catch (const nbr::internal::PlanError&) {
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    const std::size_t length = std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8), size - 3);
    const std::uint8_t rank_choice = data[2];
    const std::string manifest_bytes(reinterpret_cast<const char*>(data + 3), length);
    const std::string rank_bytes(reinterpret_cast<const char*>(data + 3 + length), size - 3 - length);
    nbr::schema::Manifest manifest;
    try {
        manifest = nbr::parse_manifest(manifest_bytes, "fuzz/manifest.pb");
    } catch (const nbr::PatternError&) {
        return 0;
    }
    if (manifest.num_ranks() == 0) return 0;
    const std::uint32_t rank = rank_choice % manifest.num_ranks();
    try {
        plan_both(nbr::parse_rank_pattern(rank_bytes, "fuzz/rank.pb", rank, manifest));
    } catch (const nbr::PatternError&) {
    }
    if (manifest.rank_checksums_size() == 0) return 0;  // packed or multi-variant: no rank checksums
    manifest.set_rank_checksums(static_cast<int>(rank), nbr::internal::checksum64(rank_bytes));
    try {
        plan_both(nbr::parse_rank_pattern(rank_bytes, "fuzz/rank.pb", rank, manifest));
    } catch (const nbr::PatternError&) {
    }
    return 0;
}
