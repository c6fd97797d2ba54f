// nbr-load-probe: what one rank's nbr_load_pattern reads and how long its file work takes,
// without MPI: the manifest, the rank's pattern (its file, or its slice of ranks.pack) with
// every check, and the plans of both collectives (of an auto directory: of every variant, as
// libnbr loads it). For patterns too large to launch here.
//
//   nbr-load-probe DIR [--ranks 0,500000,1048575] [--repeat 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <CLI/CLI.hpp>

#include "nbr/plan/plan.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace {

struct Probe {
    std::uint64_t bytes = 0;  ///< manifest + the rank's pattern (and index in a packed directory)
    double seconds = 0;
    std::size_t messages = 0;
};

/// Rank r's part of one single-algorithm directory with `manifest`: its pattern and both plans.
void probe_single(const std::filesystem::path& dir, const nbr::schema::Manifest& manifest, std::uint32_t rank,
                  Probe& result) {
    const auto pattern = nbr::read_rank_pattern(dir, rank, manifest, &result.bytes);
    for (auto collective : {nbr::internal::Collective::allgather, nbr::internal::Collective::alltoall}) {
        const auto plan = nbr::internal::build_plan(pattern, collective);
        result.messages += plan.sends.size() + plan.recvs.size();
    }
}

/// One load of rank r's part of `dir`, timed from the manifest's read to both plans; of an
/// auto directory, as libnbr loads it: every variant's manifest, the rank's pattern and plans.
Probe probe(const std::filesystem::path& dir, std::uint32_t rank) {
    const auto start = std::chrono::steady_clock::now();
    Probe result;
    const auto manifest = nbr::read_manifest(dir);
    result.bytes = std::filesystem::file_size(dir / nbr::manifest_file_name());
    if (!nbr::is_multi_variant(manifest)) {
        probe_single(dir, manifest, rank, result);
    } else {
        for (int i = 0; i < manifest.variants_size(); ++i) {
            const auto sub = nbr::variant_directory(dir, manifest, i);
            const auto variant_manifest = nbr::read_variant_manifest(dir, manifest, i);  // with libnbr's checks
            result.bytes += std::filesystem::file_size(sub / nbr::manifest_file_name());
            probe_single(sub, variant_manifest, rank, result);
        }
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"nbr-load-probe: bytes read and time of one rank's load, without MPI"};
    std::string dir;
    std::vector<std::uint32_t> ranks;
    int repeat = 5;
    app.add_option("dir", dir, "Pattern directory (single-algorithm or auto)")
        ->required()
        ->check(CLI::ExistingDirectory);
    app.add_option("--ranks", ranks, "Ranks to probe (default: first, middle, last)")->delimiter(',');
    app.add_option("--repeat", repeat, "Loads per rank; the median is reported")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);
    try {
        const auto manifest = nbr::read_manifest(dir);
        const auto n = manifest.num_ranks();
        if (ranks.empty()) ranks = {0, n / 2, n - 1};
        if (nbr::is_multi_variant(manifest)) {
            std::printf("%s: %u ranks, auto: %d variants\n", dir.c_str(), n, manifest.variants_size());
        } else {
            std::printf("%s: %u ranks, layout %s\n", dir.c_str(), n, nbr::is_packed(manifest) ? "packed" : "per-rank");
        }
        for (const auto r : ranks) {
            std::vector<double> times;
            Probe last;
            for (int i = 0; i < repeat; ++i) {
                last = probe(dir, r);
                times.push_back(last.seconds);
            }
            std::sort(times.begin(), times.end());
            std::printf("rank %u: read %llu bytes, load %.3f ms (median of %d), %zu plan messages (both collectives)\n",
                        r, static_cast<unsigned long long>(last.bytes), 1e3 * times[times.size() / 2], repeat,
                        last.messages);
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr-load-probe: %s\n", error.what());
        return 1;
    }
    return 0;
}
