// nbrc: the nbr pattern compiler. A thin CLI11 driver over the nbr_compiler library.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include <mpi.h>
#include <CLI/CLI.hpp>

#include "nbr/common/json_text.hpp"
#include "nbr/common/mpi_program.hpp"
#include "nbr/compiler/algorithm_cli.hpp"
#include "nbr/compiler/auto_compile.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/inspect.hpp"
#include "nbr/compiler/radix_model.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/adjacency.hpp"
#include "nbr/graphs/captured_calls.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/readers.hpp"
#include "nbr/schema/packed.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "nbr/simulator/simulate.hpp"
#include "nbr/simulator/sizes.hpp"

namespace {

using nbr::compiler::internal::collective_try;

/// A pattern directory, or AUTO/NAME naming a variant of an auto directory that shares
/// another variant's files (nbr::pattern_files).
const CLI::Validator kPatternDirectory(
    [](const std::string& path) -> std::string {
        if (std::filesystem::is_directory(path) || nbr::pattern_files(path) != std::filesystem::path(path)) return {};
        return "Pattern directory does not exist: " + path;
    },
    "DIR");

struct Options {
    // gen
    nbr::MooreParams moore;
    nbr::RandomParams random;
    nbr::PairsParams pairs;
    std::vector<std::uint32_t> cart_dims;
    std::vector<int> cart_periods;
    std::string gen_output;
    // compile / verify
    std::string input;
    std::string format = "auto";
    std::optional<std::uint32_t> ranks;
    std::uint32_t max_ranks = nbr::kDefaultMaxRanks;
    std::string algorithm = "naive";  // --algo as given: auto, an algorithm or a configuration name
    nbr::compiler::AlgorithmKind kind = nbr::compiler::AlgorithmKind::naive;  // --algo resolved (not auto)
    nbr::compiler::AlgorithmOptions algorithm_options;                        // placement is set from the options below
    std::string output;
    bool quiet = false;
    std::string auto_sizes;  // compile --algo auto: empty = 1 B to 4 MiB
    double margin = 0.01;
    std::size_t keep = 3;                 // compile --algo auto --keep
    std::string variable_bytes;           // compile --algo auto --v-bytes LO:HI
    std::vector<std::string> candidates;  // compile --algo auto --candidates
    nbr::compiler::PatternLayout layout = nbr::compiler::PatternLayout::automatic;
    std::string segment;          // compile --segment SIZE (single algorithms)
    bool whole_messages = false;  // compile --algo auto --whole-messages
    // inspect / verify
    std::string dir;
    std::optional<std::uint32_t> rank;
    bool json = false;
    std::string wisdom;  // inspect --wisdom FILE
    bool critical_path = false;
    std::string topology;
    // simulate
    std::string machine;
    std::string source;  // compile --source
    std::string sizes = "4,16,64,256,1K,4K,16K,64K,256K,1M,4M";
    std::vector<std::uint64_t> size_list;  // parsed --sizes
    std::string collective = "allgather";
    std::optional<std::uint32_t> ranks_per_node;
    std::optional<std::uint32_t> ranks_per_socket;
    std::string placement;
    std::string baseline;
    bool print_machine = false;
    // simulate: noise, skew, execution rule, back-to-back calls
    std::string rule = "event";
    std::string noise;  // FREQ_HZ:DURATION_US[:SPREAD]
    bool coscheduled = false;
    std::vector<std::uint32_t> noisy_ranks;
    std::optional<std::uint32_t> noisy_node;
    std::string detour_trace;
    std::string late;  // RANK:US
    std::string skew;  // US[:SPREAD]
    std::uint32_t iterations = 1;
    std::uint32_t seeds = 1;
    std::uint64_t seed = 1;
    bool rank_finish = false;
    nbr::simulator::Perturbation perturbation;  // parsed from the above
};

/// Parses --v-bytes: "LO:HI" or "N" (K, M suffixes), LO <= HI.
std::pair<std::uint64_t, std::uint64_t> parse_byte_range(const std::string& text) {
    const auto colon = text.find(':');
    const auto lo = text.substr(0, colon);
    const auto hi = colon == std::string::npos ? lo : text.substr(colon + 1);
    std::vector<std::uint64_t> bounds;
    try {
        bounds = nbr::simulator::parse_sizes(lo + "," + hi);
    } catch (const std::invalid_argument& error) {
        throw CLI::ValidationError("--v-bytes", error.what());
    }
    if (bounds.size() != 2 || bounds[0] > bounds[1]) {
        throw CLI::ValidationError("--v-bytes", "expected LO:HI with LO <= HI, got '" + text + "'");
    }
    return {bounds[0], bounds[1]};
}

/// Parses "4,1K,2M" (binary multiples K, M, G) into byte counts.
std::vector<std::uint64_t> parse_sizes(const std::string& text) {
    try {
        return nbr::simulator::parse_sizes(text);
    } catch (const std::invalid_argument& error) {
        throw CLI::ValidationError("--sizes", error.what());
    }
}

int process_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/// Runs `action` on process 0 only; every process learns whether it failed.
void on_root(const std::function<void()>& action) {
    collective_try(MPI_COMM_WORLD, [&] {
        if (process_rank() == 0) action();
    });
}

nbr::InputFormat input_format(const std::string& name) {
    return *nbr::parse_input_format(name);
}

int run_gen_moore(const Options& o) {
    on_root([&] {
        const auto topology = nbr::generate_moore(o.moore);
        nbr::write_edge_list(o.gen_output, topology, "nbr " + nbr::describe(o.moore));
        std::cout << "wrote " << o.gen_output << ": " << topology.num_ranks() << " ranks, " << topology.num_edges()
                  << " edges (" << nbr::describe(o.moore) << ")\n";
    });
    return 0;
}

int run_gen_cart(const Options& o) {
    on_root([&] {
        nbr::CartParams params;
        params.dims = o.cart_dims;
        params.periods.assign(o.cart_periods.begin(), o.cart_periods.end());
        if (params.periods.size() == 1 && params.dims.size() > 1)
            params.periods.resize(params.dims.size(), params.periods[0]);
        const auto topology = nbr::generate_cart(params);
        // An adjacency file: a Cartesian in-list is in direction order, not its sources' order.
        nbr::write_adjacency(o.gen_output, topology, "nbr " + nbr::describe(params));
        std::cout << "wrote " << o.gen_output << ": " << topology.num_ranks() << " ranks, " << topology.num_edges()
                  << " edges (" << nbr::describe(params) << ")\n";
    });
    return 0;
}

int run_gen_pairs(const Options& o) {
    on_root([&] {
        const auto topology = nbr::generate_pairs(o.pairs);
        nbr::write_edge_list(o.gen_output, topology, "nbr " + nbr::describe(o.pairs));
        std::cout << "wrote " << o.gen_output << ": " << topology.num_ranks() << " ranks, " << topology.num_edges()
                  << " edges (" << nbr::describe(o.pairs) << ")\n";
    });
    return 0;
}

int run_gen_random(const Options& o) {
    on_root([&] {
        const auto topology = nbr::generate_random(o.random);
        nbr::write_edge_list(o.gen_output, topology, "nbr " + nbr::describe(o.random));
        std::cout << "wrote " << o.gen_output << ": " << topology.num_ranks() << " ranks, " << topology.num_edges()
                  << " edges (" << nbr::describe(o.random) << ")\n";
    });
    return 0;
}

/// The placement file of a capture directory given as input, if it has one.
std::string capture_placement(const Options& o) {
    const auto file = std::filesystem::path(o.input) / nbr::kCapturePlacementFile;
    return nbr::is_capture_dir(o.input) && std::filesystem::is_regular_file(file) ? file.string() : std::string();
}

/// The placement given to compile, if any (block: ranks per socket default to per node); else
/// a capture's own.
std::optional<nbr::Placement> compile_placement(const Options& o, std::uint32_t ranks) {
    if (!o.placement.empty()) return nbr::Placement::read(o.placement, ranks);
    if (!o.ranks_per_node && !o.ranks_per_socket && !capture_placement(o).empty()) {
        return nbr::Placement::read(capture_placement(o), ranks);
    }
    if (!o.ranks_per_node && !o.ranks_per_socket) return std::nullopt;
    const auto per_node = o.ranks_per_node.value_or(*o.ranks_per_socket);
    return nbr::Placement::block(ranks, per_node, o.ranks_per_socket.value_or(per_node));
}

nbr::Placement simulation_placement(const Options& o, const nbr::simulator::Machine& machine, std::uint32_t ranks);

/// A note of compile on process 0, written in one piece so that mpirun does not interleave
/// it with the standard output.
void print_note(const std::string& note) {
    if (process_rank() != 0) return;
    std::cerr << ("nbrc compile: note: " + note + "\n") << std::flush;
}

/// compile --algo auto: the candidates on the given placement (else the capture's, else the
/// machine's block placement), simulated on --machine.
int run_compile_auto(const Options& o, const nbr::Topology& topology) {
    nbr::compiler::AutoOptions options;
    collective_try(MPI_COMM_WORLD, [&] {
        options.machine = nbr::simulator::load_machine(o.machine);
        options.placement = compile_placement(o, topology.num_ranks());
        if (!options.placement) options.placement = simulation_placement(o, options.machine, topology.num_ranks());
    });
    options.sizes = o.auto_sizes.empty() ? nbr::compiler::default_auto_sizes() : parse_sizes(o.auto_sizes);
    options.margin = o.margin;
    options.keep = o.keep;
    if (!o.variable_bytes.empty()) options.variable_bytes = parse_byte_range(o.variable_bytes);
    std::string captured_note;
    if (o.variable_bytes.empty() && nbr::is_capture_dir(o.input)) {
        collective_try(MPI_COMM_WORLD, [&] {
            const auto calls = nbr::read_captured_calls(o.input);
            if (calls && calls->variable_bytes()) {
                options.variable_bytes = calls->variable_bytes();
                options.variable_bytes_source = nbr::kCaptureCallsFile;
                captured_note = "the v-calls judged at " + std::to_string(options.variable_bytes->first) + ":" +
                                std::to_string(options.variable_bytes->second) +
                                " bytes per edge, what the application's v-calls moved (" + nbr::kCaptureCallsFile +
                                "; --v-bytes overrides)";
            }
        });
    }
    options.base = o.algorithm_options;
    options.candidates = o.candidates;
    options.output = o.output;
    options.quiet = o.quiet;
    options.source = o.source.empty() ? o.input : o.source;
    options.layout = o.layout;
    options.segmented_candidates = !o.whole_messages;
    const auto report = nbr::compiler::compile_auto(MPI_COMM_WORLD, topology, options);
    if (!captured_note.empty()) print_note(captured_note);
    for (const auto& note : report.notes) print_note(note);
    if (process_rank() == 0 && !o.quiet) {
        const std::string kept = nbr::common::internal::join(report.variants);
        std::cout << "compiled " << o.input << " -> " << o.output << ": " << report.ranks << " ranks, " << report.edges
                  << " edges (auto on " << options.machine.name << ": " << kept << ")\n";
    }
    return 0;
}

/// --segment's bytes (K, M, G suffixes); 0 when absent or not one size.
std::uint64_t segment_bytes(const Options& o) {
    if (o.segment.empty()) return 0;
    try {
        const auto sizes = nbr::simulator::parse_sizes(o.segment);
        return sizes.size() == 1 ? sizes[0] : 0;
    } catch (const std::invalid_argument&) {
        return 0;
    }
}

int run_compile(const Options& o) {
    const auto topology =
        nbr::compiler::read_topology_collective(MPI_COMM_WORLD, o.input, input_format(o.format), o.ranks, o.max_ranks);
    if (o.algorithm == "auto") return run_compile_auto(o, topology);
    nbr::compiler::CompileOptions options;
    options.algorithm = o.kind;
    options.algorithm_options = o.algorithm_options;
    options.algorithm_options.placement = compile_placement(o, topology.num_ranks());
    std::string radix_note;
    if (o.kind == nbr::compiler::AlgorithmKind::hierarchical && !o.machine.empty()) {
        collective_try(MPI_COMM_WORLD, [&] {
            radix_note = nbr::compiler::resolve_model_radices(options.algorithm_options, topology,
                                                              nbr::simulator::load_machine(o.machine));
        });
    }
    options.output = o.output;
    options.quiet = o.quiet;
    options.source = o.source.empty() ? o.input : o.source;
    options.layout = o.layout;
    options.segment_bytes = segment_bytes(o);
    if (const auto c = nbr::compiler::parse_configuration(o.algorithm); c && c->segment_bytes) {
        options.segment_bytes = *c->segment_bytes;  // --algo NAME-segSIZE (resolve_algorithm refused --segment too)
    }
    const auto report = nbr::compiler::compile(MPI_COMM_WORLD, topology, options);
    if (!radix_note.empty()) print_note(radix_note);
    for (const auto& note : report.notes) print_note(note);
    if (process_rank() == 0 && !o.quiet) {
        std::cout << "compiled " << o.input << " -> " << o.output << ": " << report.ranks << " ranks, " << report.edges
                  << " edges, " << report.messages << " messages (" << o.algorithm << ")\n";
    }
    return 0;
}

/// The usage error of compile's options that depend on each other, or nullptr.
const char* compile_option_error(const Options& o, bool placed) {
    using Kind = nbr::compiler::AlgorithmKind;
    const auto& a = o.algorithm_options;
    if (o.algorithm == "auto" && !o.segment.empty()) return "--segment is for one algorithm (auto chooses its own)";
    if (o.algorithm == "auto") return o.machine.empty() ? "--algo auto needs --machine NAME|FILE" : nullptr;
    if (!o.segment.empty() && segment_bytes(o) == 0) return "--segment needs one size above 0, e.g. 64K";
    if (!o.candidates.empty()) return "--candidates chooses among the candidates of --algo auto";
    if (o.kind == Kind::hierarchical && (a.intra_radix_from_machine || a.node_radix_from_machine) &&
        o.machine.empty()) {
        return "hierarchical --radix/--node-radix machine needs --machine NAME|FILE";
    }
    if (placed) return nullptr;
    if (o.kind == Kind::distance_halving) {
        return "distance-halving needs a placement: --ranks-per-node N --ranks-per-socket L, or --placement FILE";
    }
    if (o.kind == Kind::hierarchical) return "hierarchical needs a placement: --ranks-per-node N, or --placement FILE";
    if (o.kind == Kind::kgroup && a.topology_aware) {
        return "kgroup --topology-aware needs a placement: --ranks-per-node N, or --placement FILE";
    }
    return nullptr;
}

/// Usage errors of compile that depend on the input (placement needed, machine missing):
/// exit code 2 after a message on process 0, else 0.
int compile_usage_error(const Options& o) {
    const bool placed = !o.placement.empty() || o.ranks_per_node || o.ranks_per_socket || !capture_placement(o).empty();
    const char* error = compile_option_error(o, placed);
    if (error == nullptr) return 0;
    if (process_rank() == 0)
        std::cerr << "nbrc compile: " << error << (o.input.empty() ? "" : " (" + o.input + ")") << "\n";
    return 2;
}

/// compile CAPTURES_DIR (a run's NBR_CAPTURE directory): one pattern directory per capture,
/// OUTPUT/NNNNNN as the capture's name, each on the capture's own placement unless one is
/// given; NBR_PATTERNS=OUTPUT then finds each communicator's pattern.
int run_compile_captures(const Options& o, const std::vector<std::filesystem::path>& captures) {
    on_root([&] {
        const std::filesystem::path out(o.output);
        if (std::filesystem::exists(out / nbr::manifest_file_name())) {
            throw nbr::InputError(o.output + " is a pattern directory; the patterns of the " +
                                  std::to_string(captures.size()) + " captures in " + o.input +
                                  " go into a directory of their own");
        }
        std::filesystem::create_directories(out);
    });
    for (const auto& capture : captures) {
        Options one = o;
        one.input = capture.string();
        one.output = (std::filesystem::path(o.output) / capture.filename()).string();
        if (const int usage = compile_usage_error(one); usage != 0) return usage;
        if (const int status = run_compile(one); status != 0) return status;
    }
    if (process_rank() == 0 && !o.quiet) {
        std::cout << "compiled " << captures.size() << " captures of " << o.input << " into " << o.output << "\n";
    }
    return 0;
}

int run_inspect(const Options& o) {
    on_root([&] {
        const auto manifest = nbr::read_manifest(o.dir);
        if (nbr::is_multi_variant(manifest)) {
            if (o.rank) {
                throw nbr::InputError("--rank: " + o.dir +
                                      " is an auto directory; inspect a variant's schedule with "
                                      "nbrc inspect " +
                                      o.dir + "/NAME --rank R (NAME: the directory nbrc inspect " + o.dir +
                                      " names for the variant)");
            }
            std::cout << (o.json ? nbr::compiler::format_auto_json(manifest) : nbr::compiler::format_auto(manifest));
            if (!o.wisdom.empty()) std::cout << nbr::compiler::format_wisdom(manifest, nbr::read_wisdom(o.wisdom));
            return;
        }
        if (!o.wisdom.empty()) {
            throw nbr::InputError("--wisdom: " + o.dir +
                                  " holds one variant: measured selection has nothing to choose there, so wisdom "
                                  "holds nothing for it (--wisdom is for auto directories)");
        }
        const auto patterns = nbr::compiler::read_all_rank_patterns(o.dir, manifest);
        if (o.rank && *o.rank >= manifest.num_ranks()) {
            throw nbr::InputError("--rank " + std::to_string(*o.rank) + " out of range: " + o.dir + " has " +
                                  std::to_string(manifest.num_ranks()) + " ranks");
        }
        const auto summary = nbr::compiler::summarize(manifest, patterns);
        const auto* rank = o.rank ? &patterns[*o.rank] : nullptr;
        if (o.json) {
            std::cout << nbr::compiler::format_json(summary, rank);
        } else {
            std::cout << nbr::compiler::format_summary(summary);
            if (rank != nullptr) std::cout << "\n" << nbr::compiler::format_rank(*rank);
        }
    });
    return 0;
}

/// Every process reads its block of ranks and checks it (nbr::compiler::verify_directory over
/// the world); process 0 prints the report.
int run_verify(const Options& o) {
    std::optional<nbr::Topology> expected;
    if (!o.topology.empty()) {
        expected = nbr::compiler::read_topology_collective(MPI_COMM_WORLD, o.topology, input_format(o.format), o.ranks,
                                                           o.max_ranks);
    }
    const auto report = nbr::compiler::verify_directory(MPI_COMM_WORLD, o.dir, expected ? &*expected : nullptr);
    if (process_rank() != 0) return report.ok ? 0 : 1;
    if (!report.ok) {
        std::cerr << "nbrc verify: FAILED " << o.dir << ": " << report.violation << "\n";
        return 1;
    }
    std::cout << "OK " << o.dir << ": " << report.ranks << " ranks, " << report.edges
              << " edges each delivered exactly once; " << report.messages << " messages, " << report.items_moved
              << " items, " << report.steps << (report.steps == 1 ? " step" : " steps")
              << (expected ? "; matches " + o.topology : "");
    if (report.segment_forms > 0) {
        std::cout << "; in segments of 1 to " << (1U << (report.segment_forms - 1))
                  << " blocks: " << report.segment_forms << " forms proven";
    }
    if (!report.variants.empty()) {
        std::cout << "; " << report.variants.size()
                  << " variants, each proven: " << nbr::common::internal::join(report.variants);
    }
    std::cout << "\n";
    return 0;
}

nbr::Placement simulation_placement(const Options& o, const nbr::simulator::Machine& machine, std::uint32_t ranks) {
    if (!o.placement.empty()) return nbr::Placement::read(o.placement, ranks);
    const auto per_node = o.ranks_per_node.value_or(machine.ranks_per_node);
    return nbr::Placement::block(ranks, per_node,
                                 o.ranks_per_socket.value_or(std::min(machine.ranks_per_socket, per_node)));
}

/// simulate's --rule, --noise, --detour-trace, --late, --skew, ... as a Perturbation.
nbr::simulator::Perturbation parse_perturbation(const Options& o) {
    namespace sim = nbr::simulator;
    const auto parsed = [](const std::string& option, auto&& parse) {
        try {
            return parse();
        } catch (const nbr::InputError& error) {
            throw CLI::ValidationError(option, error.what());
        }
    };
    sim::Perturbation p;
    p.rule = sim::parse_execution_rule(o.rule);  // CLI11 checked the name
    if (!o.noise.empty()) p.detours = parsed("--noise", [&] { return sim::parse_detours(o.noise); });
    if (!o.detour_trace.empty()) {
        p.detours.trace = parsed("--detour-trace", [&] { return sim::read_detour_trace(o.detour_trace); });
    }
    p.detours.coscheduled = o.coscheduled;
    p.noisy_ranks = o.noisy_ranks;
    p.noisy_node = o.noisy_node;
    if (!o.late.empty()) std::tie(p.late_rank, p.late_us) = parsed("--late", [&] { return sim::parse_late(o.late); });
    if (!o.skew.empty()) std::tie(p.skew_us, p.skew_spread) = parsed("--skew", [&] { return sim::parse_skew(o.skew); });
    p.iterations = o.iterations;
    p.seed = o.seed;
    return p;
}

int run_simulate(const Options& o) {
    on_root([&] {
        const auto machine = nbr::simulator::load_machine(o.machine);
        if (o.print_machine) {
            std::cout << nbr::simulator::machine_to_json(machine.spec);
            return;
        }
        nbr::simulator::SimRequest request;
        request.pattern = o.dir;
        request.baseline = o.baseline;
        request.collective = o.collective.rfind("alltoall", 0) == 0 ? nbr::simulator::Collective::alltoall
                                                                    : nbr::simulator::Collective::allgather;
        request.variable = o.collective.back() == 'v';
        request.sizes = o.size_list;
        request.options.critical_path = o.critical_path;
        request.options.perturbation = o.perturbation;
        request.options.rank_finish = o.rank_finish;
        // A machine that states its noise has it unless the run gives its own.
        if (!o.perturbation.detours.any()) request.options.perturbation.detours = machine.noise;
        request.seeds = o.seeds;
        request.recorded_placement = o.placement.empty() && !o.ranks_per_node && !o.ranks_per_socket;
        const auto report = nbr::simulator::simulate_directory(
            request, machine, [&](std::uint32_t ranks) { return simulation_placement(o, machine, ranks); });
        std::cout << (o.json ? nbr::simulator::format_report_json(report) : nbr::simulator::format_report(report));
    });
    return 0;
}

/// Usage errors of candidates, or empty.
std::string candidates_usage_error(const Options& o) {
    if (o.placement.empty() && !o.ranks_per_node && !o.ranks_per_socket && o.machine.empty()) {
        return "give a placement (--ranks-per-node N, --placement FILE) or --machine";
    }
    if (*o.ranks > o.max_ranks) {
        return "--ranks " + std::to_string(*o.ranks) + " is above --max-ranks " + std::to_string(o.max_ranks);
    }
    return {};
}

/// candidates: the configurations --algo auto tries on the placement given (else --machine's
/// block placement, as auto), one --algo name a line, or as JSON with their parameters.
int run_candidates(const Options& o) {
    on_root([&] {
        nbr::compiler::AlgorithmOptions base = o.algorithm_options;
        base.placement = compile_placement(o, *o.ranks);
        if (!base.placement)
            base.placement = simulation_placement(o, nbr::simulator::load_machine(o.machine), *o.ranks);
        const auto candidates = nbr::compiler::auto_candidates(base);
        if (o.json) {
            std::cout << nbr::compiler::format_candidates_json(candidates);
            return;
        }
        for (const auto& candidate : candidates) std::cout << candidate.name << "\n";
    });
    return 0;
}

/// --ranks-per-node/--ranks-per-socket (block placement) or --placement FILE.
void add_placement_options(CLI::App* sub, Options& o, const std::string& note) {
    auto* per_node = sub->add_option("--ranks-per-node", o.ranks_per_node, "Block placement: ranks per node" + note)
                         ->check(CLI::PositiveNumber);
    auto* per_socket =
        sub->add_option("--ranks-per-socket", o.ranks_per_socket, "Block placement: ranks per socket" + note)
            ->check(CLI::PositiveNumber);
    sub->add_option("--placement", o.placement, "Placement file: 'rank node socket' lines" + note)
        ->check(CLI::ExistingFile)
        ->excludes(per_node)
        ->excludes(per_socket);
}

/// The subcommands, to dispatch on the one parsed.
struct Commands {
    CLI::App* moore = nullptr;
    CLI::App* random = nullptr;
    CLI::App* pairs = nullptr;
    CLI::App* cart = nullptr;
    CLI::App* compile = nullptr;
    CLI::App* candidates = nullptr;
    CLI::App* inspect = nullptr;
    CLI::App* verify = nullptr;
    CLI::App* simulate = nullptr;
};

const std::map<std::string, std::string>& input_formats() {
    static const std::map<std::string, std::string> formats{
        {"auto", "auto"}, {"edgelist", "edgelist"}, {"mtx", "mtx"}, {"adj", "adj"}};
    return formats;
}

std::string machine_names() {
    return nbr::common::internal::join(nbr::simulator::machine_preset_names());
}

void add_gen(CLI::App& app, Options& o, Commands& c) {
    auto* gen = app.add_subcommand("gen", "Generate a topology as an edge list");
    gen->require_subcommand(1);
    c.moore = gen->add_subcommand("moore", "Moore neighborhood on a balanced grid (periodic unless --non-periodic)");
    c.moore->add_option("--ranks", o.moore.ranks, "Number of ranks N")->required()->check(CLI::PositiveNumber);
    c.moore->add_option("--dims", o.moore.dims, "Dimensions d")->required()->check(CLI::PositiveNumber);
    c.moore->add_option("--radius", o.moore.radius, "Radius r")->required()->check(CLI::PositiveNumber);
    c.moore->add_flag("!--non-periodic", o.moore.periodic, "No wrap-around: boundary ranks have fewer neighbors");
    c.moore->add_option("-o,--output", o.gen_output, "Edge list to write")->required();
    c.cart = gen->add_subcommand("cart", "The neighborhood of MPI_Cart_create(dims, periods), as an adjacency file");
    c.cart->add_option("--dims", o.cart_dims, "Extent of every dimension, e.g. 8,4,2")
        ->required()
        ->delimiter(',')
        ->check(CLI::PositiveNumber);
    c.cart->add_option("--periods", o.cart_periods, "Per dimension 1 (periodic) or 0; one value: every dimension")
        ->required()
        ->delimiter(',')
        ->check(CLI::Range(0, 1));
    c.cart->add_option("-o,--output", o.gen_output, "Adjacency file to write")->required();
    c.random = gen->add_subcommand("random", "Erdős–Rényi random sparse digraph");
    c.random->add_option("--ranks", o.random.ranks, "Number of ranks N")->required()->check(CLI::PositiveNumber);
    c.random->add_option("--density", o.random.density, "Edge probability δ")->required()->check(CLI::Range(0.0, 1.0));
    c.random->add_option("--seed", o.random.seed, "Random seed")->capture_default_str();
    c.random->add_option("-o,--output", o.gen_output, "Edge list to write")->required();
    c.pairs = gen->add_subcommand("pairs", "Pairs of ranks joined by parallel edges (replay overhead)");
    c.pairs->add_option("--ranks", o.pairs.ranks, "Number of ranks N")->required()->check(CLI::PositiveNumber);
    c.pairs->add_option("--edges", o.pairs.edges, "Parallel edges each way per pair")
        ->required()
        ->check(CLI::PositiveNumber);
    c.pairs->add_option("-o,--output", o.gen_output, "Edge list to write")->required();
}

CLI::App* add_compile(CLI::App& app, Options& o) {
    auto* compile = app.add_subcommand("compile", "Compile a topology into a pattern directory");
    compile
        ->add_option("input", o.input,
                     "Topology: edge list, Matrix Market or adjacency file, or a capture directory "
                     "(libnbr-capture; its placement is used unless one is given), or a run's directory of "
                     "captures (NBR_CAPTURE): then -o gets one pattern directory per capture")
        ->required()
        ->check(CLI::ExistingPath);
    compile->add_option("--format", o.format, "Input format")
        ->transform(CLI::IsMember(input_formats()))
        ->capture_default_str();
    compile->add_option("--ranks", o.ranks, "Number of ranks (edge list) or processes a matrix is mapped to")
        ->check(CLI::PositiveNumber);
    compile->add_option("--max-ranks", o.max_ranks, "Largest rank count the input may name (checked before reading on)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    nbr::compiler::add_algorithm_name_option(compile, o.algorithm, {"auto"},
                                             "Pattern algorithm or configuration (a name nbrc candidates "
                                             "lists), or auto: the fastest per size on --machine");
    nbr::compiler::add_algorithm_options(compile, o.algorithm_options);
    compile->add_option("--machine", o.machine,
                        "auto: the machine to choose for; hierarchical --radix/--node-radix machine: the machine "
                        "whose model chooses the radices; a preset (" +
                            machine_names() + ") or a JSON machine file");
    compile->add_option("--sizes", o.auto_sizes, "auto: block sizes to simulate, increasing (default 1 B to 4 MiB)");
    compile->add_option("--v-bytes", o.variable_bytes,
                        "auto: bytes per edge of the application's blocking v-calls, LO:HI or N (the v choice "
                        "is judged there; default: a capture's calls.txt, else every size)");
    compile
        ->add_option("--candidates", o.candidates,
                     "auto: the candidates to try, comma-separated: names as nbrc candidates lists them, or a prefix "
                     "and * (kgroup*, hierarchical-cube*); naive always; default: all")
        ->delimiter(',');
    compile
        ->add_option("--margin", o.margin,
                     "auto: a candidate replaces naive only if it is this much faster (at least the machine file's "
                     "ratio_error)")
        ->check(CLI::Range(0.0, 10.0))
        ->capture_default_str();
    compile
        ->add_option("--keep", o.keep,
                     "auto: candidates kept per size band and for the v-calls, the winner and naive included, "
                     "for measured selection in the job (NBR_MEASURE=1, NBR_LOAD_MEASURE); 1: the winners only")
        ->check(CLI::Range(1, 16))
        ->capture_default_str();
    add_placement_options(compile, o,
                          " (distance-halving, hierarchical, kgroup --topology-aware; recorded in the manifest)");
    const std::map<std::string, nbr::compiler::PatternLayout> layouts{
        {"auto", nbr::compiler::PatternLayout::automatic},
        {"per-rank", nbr::compiler::PatternLayout::per_rank},
        {"packed", nbr::compiler::PatternLayout::packed}};
    compile
        ->add_option("--layout", o.layout,
                     "Rank patterns one file each (per-rank) or in one indexed file (packed); auto packs from " +
                         std::to_string(nbr::kPackedFromRanks) + " ranks")
        ->transform(CLI::CheckedTransformer(layouts, CLI::ignore_case))
        ->default_str("auto");
    compile->add_option("--segment", o.segment,
                        "Segmented forwarding: staged messages of more blocks than fit in SIZE bytes (K, M suffixes) "
                        "travel as segments of whole blocks, forwarded as they arrive; default: whole messages");
    compile->add_flag("--whole-messages", o.whole_messages,
                      "auto: no candidate forwards in segments (by default each one but naive is tried both ways, "
                      "in segments of the machine's size: docs/algorithms.md)");
    compile->add_option("-o,--output", o.output, "Pattern directory to write")->required();
    compile->add_option("--source", o.source,
                        "What the manifest records as the pattern's source (default: the input); with 'built in the "
                        "job by libnbr', the bytes an in-job build (NBR_CACHE) writes");
    compile->add_flag("-q,--quiet", o.quiet, "No progress output");

    return compile;
}

CLI::App* add_candidates(CLI::App& app, Options& o) {
    auto* candidates = app.add_subcommand(
        "candidates", "List the configurations --algo auto tries on a placement, by the names --algo takes");
    candidates->add_option("--ranks", o.ranks, "Number of ranks")->required()->check(CLI::PositiveNumber);
    candidates->add_option("--max-ranks", o.max_ranks, "Largest --ranks accepted (a placement is built for them)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    add_placement_options(candidates, o, "");
    candidates->add_option("--machine", o.machine, "Without a placement: this machine's block placement, as auto");
    candidates->add_flag("--json", o.json, "JSON output: each candidate's algorithm and parameters");

    return candidates;
}

CLI::App* add_inspect(CLI::App& app, Options& o) {
    auto* inspect = app.add_subcommand("inspect", "Summarize a pattern directory or dump a rank's schedule");
    inspect->add_option("dir", o.dir, "Pattern directory")->required()->check(kPatternDirectory);
    inspect->add_option("--rank", o.rank, "Dump this rank's schedule");
    inspect->add_flag("--json", o.json, "JSON output");
    inspect
        ->add_option("--wisdom", o.wisdom,
                     "auto directories: a wisdom file's measurements (NBR_WISDOM, nbr_wisdom_export) beside "
                     "the model's predictions")
        ->check(CLI::ExistingFile);

    return inspect;
}

CLI::App* add_verify(CLI::App& app, Options& o) {
    auto* verify = app.add_subcommand("verify", "Prove that a pattern delivers every edge exactly once");
    verify->add_option("dir", o.dir, "Pattern directory")->required()->check(kPatternDirectory);
    verify
        ->add_option("--topology", o.topology,
                     "Also prove the pattern belongs to this topology (a file or a capture directory)")
        ->check(CLI::ExistingPath);
    verify->add_option("--format", o.format, "Format of --topology")
        ->transform(CLI::IsMember(input_formats()))
        ->capture_default_str();
    verify->add_option("--ranks", o.ranks, "--ranks used when compiling --topology")->check(CLI::PositiveNumber);
    verify->add_option("--max-ranks", o.max_ranks, "--max-ranks for reading --topology")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();

    return verify;
}

/// simulate: noise, skew, execution rule, back-to-back calls (docs/simulate.md).
void add_noise_options(CLI::App* simulate, Options& o) {
    simulate->add_option("--rule", o.rule, "Execution rule: event (libnbr's), step (step-synchronized), bsp")
        ->check(CLI::IsMember({"event", "step", "bsp"}))
        ->capture_default_str();
    simulate->add_option(
        "--noise", o.noise,
        "CPU detours on every rank: FREQ_HZ:DURATION_US[:fixed|uniform|exponential] (e.g. 10:10000:uniform)");
    simulate->add_option("--detour-trace", o.detour_trace, "CPU detours from a file: 'start_us duration_us' lines")
        ->check(CLI::ExistingFile);
    simulate->add_flag("--coscheduled", o.coscheduled, "Detours at the same times on every noisy rank");
    auto* ranks = simulate->add_option("--noisy-ranks", o.noisy_ranks, "Detours only on these ranks")->delimiter(',');
    simulate->add_option("--noisy-node", o.noisy_node, "Detours only on the ranks of this node")->excludes(ranks);
    simulate->add_option("--late", o.late, "One late rank: RANK:DELAY_US, late for every call");
    simulate->add_option("--skew", o.skew, "Entry skew per rank and call: MEAN_US[:fixed|uniform|exponential]");
    simulate
        ->add_option("--iterations", o.iterations,
                     "Calls back to back (each rank starts call i+1 when its call i ends)")
        ->check(CLI::Range(1U, 100000U))
        ->capture_default_str();
    simulate->add_option("--seeds", o.seeds, "With noise or skew: seeds per size (the mean is reported)")
        ->check(CLI::Range(1U, 10000U))
        ->capture_default_str();
    simulate->add_option("--seed", o.seed, "First seed")->capture_default_str();
    simulate->add_flag("--rank-finish", o.rank_finish, "JSON: every rank's last completion (finish_us, first seed)");
}

CLI::App* add_simulate(CLI::App& app, Options& o) {
    auto* simulate = app.add_subcommand("simulate", "Predict a pattern's replay latency on a modeled cluster");
    simulate->add_option("dir", o.dir, "Pattern directory (required unless --print-machine)")->check(kPatternDirectory);
    simulate->add_option("--machine", o.machine, "Machine: a preset (" + machine_names() + ") or a JSON machine file")
        ->required();
    simulate->add_option("--sizes", o.sizes, "Block sizes in bytes per neighbor (K, M suffixes)")
        ->capture_default_str();
    const std::map<std::string, std::string> collectives{
        {"allgather", "allgather"}, {"alltoall", "alltoall"}, {"allgatherv", "allgatherv"}, {"alltoallv", "alltoallv"}};
    simulate
        ->add_option("--collective", o.collective,
                     "Collective to replay (v-variants: blocking, uniform blocks, with size headers)")
        ->transform(CLI::IsMember(collectives))
        ->capture_default_str();
    add_placement_options(simulate, o, " (default: the machine's)");
    simulate
        ->add_option("--baseline", o.baseline,
                     "Also simulate this pattern (e.g. the naive one) and report "
                     "the speedup")
        ->check(kPatternDirectory);
    simulate->add_flag("--json", o.json, "JSON output");
    simulate->add_flag("--critical-path", o.critical_path,
                       "Also show, per size, the chain of operations the last rank waited for (about 100 bytes "
                       "per message more memory)");
    simulate->add_flag("--print-machine", o.print_machine, "Print the machine's JSON and exit");
    add_noise_options(simulate, o);

    return simulate;
}

/// Checks of values CLI11 cannot check alone, after parsing (throw CLI::ParseError).
void check_parsed(const Commands& c, Options& o) {
    if (c.simulate->parsed()) {
        o.size_list = parse_sizes(o.sizes);
        o.perturbation = parse_perturbation(o);
    }
    if (!c.compile->parsed()) return;
    if (!o.auto_sizes.empty()) (void)parse_sizes(o.auto_sizes);
    if (!o.variable_bytes.empty()) (void)parse_byte_range(o.variable_bytes);
    if (o.algorithm != "auto") o.kind = nbr::compiler::resolve_algorithm(*c.compile, o.algorithm, o.algorithm_options);
}

/// Runs the subcommand parsed, after its usage checks.
int dispatch(const Commands& c, const Options& o) {
    const bool root = process_rank() == 0;
    if (c.moore->parsed()) return run_gen_moore(o);
    if (c.random->parsed()) return run_gen_random(o);
    if (c.pairs->parsed()) return run_gen_pairs(o);
    if (c.cart->parsed()) return run_gen_cart(o);
    if (c.compile->parsed()) {
        if (const auto captures = nbr::list_capture_dirs(o.input); !captures.empty()) {
            return run_compile_captures(o, captures);
        }
        if (const int usage = compile_usage_error(o); usage != 0) return usage;
        return run_compile(o);
    }
    if (c.inspect->parsed()) return run_inspect(o);
    if (c.candidates->parsed()) {
        const std::string error = candidates_usage_error(o);
        if (error.empty()) return run_candidates(o);
        if (root) std::cerr << "nbrc candidates: " << error << "\n";
        return 2;
    }
    if (c.simulate->parsed()) {
        if (o.dir.empty() && !o.print_machine) {
            if (root) std::cerr << "nbrc simulate: a pattern directory is required\n";
            return 2;
        }
        return run_simulate(o);
    }
    return run_verify(o);
}

int run(int argc, char** argv) {
    Options o;
    CLI::App app{"nbrc: compiles MPI neighborhood-collective patterns offline"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "nbrc " NBR_VERSION_STRING);
    Commands c;
    add_gen(app, o, c);
    c.compile = add_compile(app, o);
    c.candidates = add_candidates(app, o);
    c.inspect = add_inspect(app, o);
    c.verify = add_verify(app, o);
    c.simulate = add_simulate(app, o);
    try {
        app.parse(argc, argv);
        check_parsed(c, o);
    } catch (const CLI::ParseError& error) {
        std::ostringstream sink;
        const int code = process_rank() == 0 ? app.exit(error) : app.exit(error, sink, sink);
        return code == 0 ? 0 : 2;  // --help / --version succeed; usage errors exit 2
    }
    return dispatch(c, o);
}

}  // namespace

int main(int argc, char** argv) {
    return nbr::common::run_mpi_program(argc, argv, "nbrc", run);
}
