// nbrc simulate's work: a pattern directory (and a baseline) simulated at several sizes.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <sys/resource.h>

#include "nbr/graphs/topology.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "nbr/simulator/lower_bound.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_memory_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

}  // namespace

namespace {

/// One pattern directory simulated at every size: its one program, or per size the variant
/// an auto directory's bands choose. Programs are loaded once each.
struct DirectoryRun {
    std::string algorithm;
    std::uint64_t messages = 0;  ///< of the program simulated at the first size
    std::vector<SimResult> results;
};

/// The variant an auto directory runs for one call (v-variants: the compiler's v choice).
std::uint32_t variant_for(const schema::Manifest& manifest, const SimRequest& request, std::uint64_t size) {
    const bool allgather = request.collective == Collective::allgather;
    if (request.variable) return allgather ? manifest.allgatherv_variant() : manifest.alltoallv_variant();
    return band_variant(manifest, allgather ? schema::ALLGATHER : schema::ALLTOALL, size);
}

DirectoryRun run_directory(const std::filesystem::path& dir, const schema::Manifest& manifest,
                           const SimRequest& request, const Machine& machine, const Placement& placement,
                           const SimOptions& options, double& load_seconds) {
    DirectoryRun run;
    run.algorithm = manifest.algorithm();
    // By variant (0 for a single-algorithm directory): its manifest, and its program for the
    // blocks per segment of the last size that ran it (segmented patterns: fewer as blocks grow).
    std::map<std::uint32_t, schema::Manifest> manifests;
    std::map<std::uint32_t, std::pair<std::uint32_t, SimProgram>> programs;
    std::optional<TopologyLoad> load;
    const bool multi = is_multi_variant(manifest);
    for (const auto size : request.sizes) {
        const std::uint32_t v = multi ? variant_for(manifest, request, size) : 0;
        auto known = manifests.find(v);
        if (known == manifests.end()) {
            known = manifests.emplace(v, multi ? read_variant_manifest(dir, manifest, static_cast<int>(v)) : manifest)
                        .first;
        }
        // v-calls replay whole messages (libnbr segments fixed-size calls only).
        const std::uint32_t units =
            request.variable ? internal::kWholeMessages : internal::segment_units(known->second.segment_bytes(), size);
        auto it = programs.find(v);
        if (it == programs.end() || it->second.first != units) {
            const auto start = std::chrono::steady_clock::now();
            const auto sub = multi ? variant_directory(dir, manifest, static_cast<int>(v)) : dir;
            programs.erase(v);
            it = programs.emplace(v, std::pair{units, load_program(sub, known->second, request.collective, units)})
                     .first;
            it->second.second.size_headers = request.variable;
            load_seconds += seconds_since(start);
        }
        const SimProgram& program = it->second.second;
        if (run.results.empty()) run.messages = program.num_messages();
        run.results.push_back(options.perturbation.quiet()
                                  ? simulate(program, machine, placement, size, options)
                                  : simulate_perturbed(program, machine, placement, size, options, request.seeds));
        run.results.back().segment_units = units;
        if (multi) run.results.back().variant = manifest.variants(static_cast<int>(v)).name();
        if (!load) load = topology_load(program, placement, machine);  // every variant's topology is the same
        run.results.back().bound = lower_bound(*load, machine, request.collective, size);
    }
    return run;
}

/// The placement file an auto directory's bands were chosen on ("file PATH", Placement's
/// description of a file placement), if it still exists; else "".
std::string placement_file_of(const schema::Manifest& manifest) {
    const std::string& placement = manifest.placement();
    constexpr std::string_view kFile = "file ";
    if (!is_multi_variant(manifest) || placement.rfind(kFile, 0) != 0) return "";
    const std::string path = placement.substr(kFile.size());
    return std::filesystem::is_regular_file(path) ? path : "";
}

}  // namespace

SimReport simulate_directory(const SimRequest& request, const Machine& machine,
                             const std::function<Placement(std::uint32_t)>& place) {
    SimReport report;
    const auto manifest = read_manifest(request.pattern);
    const std::string recorded = request.recorded_placement ? placement_file_of(manifest) : "";
    const auto placement =
        recorded.empty() ? place(manifest.num_ranks()) : Placement::read(recorded, manifest.num_ranks());
    report.pattern = request.pattern.string();
    report.collective = request.collective;
    report.variable = request.variable;
    report.ranks = manifest.num_ranks();
    report.machine = machine.name;
    report.placement = placement.description();
    report.nodes = placement.num_nodes();
    if (const auto& p = request.options.perturbation;
        !p.quiet() || p.rule != ExecutionRule::event || p.iterations > 1) {
        report.perturbation = p.describe();
    }
    if (is_multi_variant(manifest) &&
        (manifest.machine() != machine.name || manifest.placement() != report.placement)) {
        report.bands_chosen_for = manifest.machine() + ", placement " + manifest.placement();
    }
    auto run =
        run_directory(request.pattern, manifest, request, machine, placement, request.options, report.load_seconds);
    report.algorithm = run.algorithm;
    report.messages = run.messages;
    report.results = std::move(run.results);
    if (!request.baseline.empty()) {
        const auto base_manifest = read_manifest(request.baseline);
        if (base_manifest.num_ranks() != manifest.num_ranks()) {
            throw InputError("--baseline " + request.baseline.string() + " has " +
                             std::to_string(base_manifest.num_ranks()) + " ranks, " + request.pattern.string() + " " +
                             std::to_string(manifest.num_ranks()));
        }
        double ignored = 0;
        SimOptions base_options;  // the pattern's perturbation, nothing recorded beyond it
        base_options.perturbation = request.options.perturbation;
        auto base = run_directory(request.baseline, base_manifest, request, machine, placement, base_options, ignored);
        report.baseline = request.baseline.string();
        report.baseline_algorithm = base.algorithm;
        report.baseline_messages = base.messages;
        report.baseline_results = std::move(base.results);
    }
    report.peak_memory_mib = peak_memory_mib();
    return report;
}

}  // namespace nbr::simulator
