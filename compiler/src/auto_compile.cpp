// nbrc compile --algo auto: every candidate built once, simulated per size, the winners kept.
#include "nbr/compiler/auto_compile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/longest_first.hpp"
#include "nbr/schema/file_io.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "nbr/simulator/lower_bound.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::compiler {

namespace fs = std::filesystem;
using internal::collective_try;

namespace {

/// A candidate after its build, written to the staging directory. A search limit that bound
/// (kgroup) is noted; the pattern is exact all the same, and the simulation judges it.
struct Built {
    Candidate candidate;
    std::string algorithm;
    std::vector<std::pair<std::string, std::string>> parameters;
    std::uint64_t compile_id = 0;
    std::string note;             // the algorithm's notes (limits that bound)
    std::uint64_t sends = 0;      // the pattern's messages, what its simulations cost
    std::uint64_t schedule = 0;   // schedule_checksum (and segment size): equal ones are simulated once
    std::size_t base = SIZE_MAX;  // segmented copies: the candidate (index) they segment
    bool through_ranks_without_neighbors = false;  // Prediction's
};

int process_of(MPI_Comm comm) {
    int process = 0;
    MPI_Comm_rank(comm, &process);
    return process;
}

/// Whether the slowest process has spent the budget (collective; false without a budget).
bool over_budget(MPI_Comm comm, double seconds, std::optional<double> budget) {
    if (!budget) return false;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
    return seconds > *budget;
}

/// Builds one candidate and writes it to `dir` / its name; its segmented copies (same
/// schedules, their own segment size) share those files (Variant.files) and write none.
std::vector<Built> build_candidate(MPI_Comm comm, const Topology& topology, const Candidate& candidate,
                                   const std::vector<Candidate>& copies, const fs::path& dir,
                                   const AutoOptions& options, std::size_t index) {
    Built built{candidate, {}, {}, 0, {}, 0, 0, SIZE_MAX, false};
    auto algorithm = make_algorithm(candidate.kind, candidate.options);
    built.algorithm = algorithm->name();
    built.parameters = algorithm->parameters();
    Engine engine(comm, topology.num_ranks());
    PatternBuilder builder(engine);
    collective_try(comm, [&] { algorithm->build(engine, topology, builder); });
    auto algorithm_notes = algorithm->notes();
    builder.derive_receives(engine);
    built.sends = internal::count_messages(engine, builder);
    built.through_ranks_without_neighbors = internal::count_messages_without_neighbors(engine, builder, topology) > 0;
    if (built.through_ranks_without_neighbors) {
        algorithm_notes.push_back("routes blocks through ranks without neighbors: a candidate of the v-calls only");
    }
    for (const auto& note : algorithm_notes) built.note += (built.note.empty() ? "" : "; ") + note;
    built.schedule = internal::schedule_checksum(engine, builder, topology);
    std::vector<Built> out;
    const auto write = [&](const Candidate& written_as, std::size_t base) {
        Built written = built;
        written.candidate = written_as;
        written.base = base;
        if (written_as.segment_bytes != 0) {
            written.schedule = nbr::internal::checksum64(std::to_string(built.schedule) + "/segment " +
                                                         std::to_string(written_as.segment_bytes));
        }
        if (base == SIZE_MAX) {
            written.compile_id =
                internal::write_pattern_files(comm, engine, builder, topology, *algorithm, dir / written_as.name,
                                              options.source, options.layout, written_as.segment_bytes);
        } else {
            written.compile_id = out.front().compile_id;  // its base's files
        }
        out.push_back(std::move(written));
    };
    write(candidate, SIZE_MAX);
    for (const auto& copy : copies) write(copy, index);
    return out;
}

/// The subdirectory holding candidate i's pattern files: its own, or its base's (a segmented copy).
const std::string& files_of(const std::vector<Built>& built, std::size_t i) {
    return built[i].base == SIZE_MAX ? built[i].candidate.name : built[built[i].base].candidate.name;
}

/// For every candidate, the first candidate with the same schedules (itself if none): only
/// those are simulated, the others take their predictions.
std::vector<std::size_t> first_with_same_schedule(const std::vector<Built>& built, bool reuse) {
    std::vector<std::size_t> first(built.size());
    for (std::size_t i = 0; i < built.size(); ++i) {
        first[i] = i;
        for (std::size_t j = 0; reuse && j < i; ++j) {
            if (built[j].schedule == built[i].schedule) {
                first[i] = j;
                break;
            }
        }
    }
    return first;
}

/// A unit of simulation: one candidate's program for one collective, as the fixed-size call
/// and as the v-variant, at the sizes [first, end).
struct SimUnit {
    std::size_t candidate = 0;
    std::size_t collective = 0;  // 0 allgather, 1 alltoall
    std::size_t first = 0, end = 0;
    double cost = 0;  // in messages simulated, the load counted as one simulation
};

/// The units for `processes` processes: one per (candidate, collective), or, where that would
/// give fewer than `per_process` per process, each split into runs of sizes (never below one
/// size), so that the deal can balance them.
std::vector<SimUnit> plan_units(const std::vector<Built>& built, const std::vector<std::size_t>& simulated,
                                std::size_t sizes, int processes, std::size_t per_process) {
    const std::size_t pairs = 2 * simulated.size();
    const std::size_t wanted = std::max<std::size_t>(per_process, 1) * static_cast<std::size_t>(std::max(processes, 1));
    const std::size_t runs = std::clamp<std::size_t>((wanted + pairs - 1) / std::max<std::size_t>(pairs, 1), 1,
                                                     std::max<std::size_t>(sizes, 1));
    std::vector<SimUnit> units;
    for (const std::size_t i : simulated) {
        for (std::size_t c = 0; c < 2; ++c) {
            for (std::size_t k = 0; k < runs; ++k) {
                const std::size_t first = k * sizes / runs;
                const std::size_t end = (k + 1) * sizes / runs;
                if (first == end) continue;
                const double simulations = 1.0 + 2.0 * static_cast<double>(end - first);
                units.push_back(SimUnit{i, c, first, end, simulations * static_cast<double>(built[i].sends)});
            }
        }
    }
    return units;
}

/// A segmented copy's unit: its fixed-size call at the sizes where its segments split some
/// message (its program then has more messages than its base's) and the bound left it in
/// (`bounded`, per candidate, collective and size: 1 where segmented_bounds ruled it out,
/// which simulate_candidates marks); NaN elsewhere and for the v-variant, which
/// simulate_candidates fills with its base's predictions.
template <class Load>
void simulate_segmented(const SimUnit& unit, const Built& candidate, const AutoOptions& options, Load& load,
                        std::optional<simulator::SimProgram>& program, std::vector<double>& table,
                        const std::vector<char>& bounded) {
    constexpr std::size_t kKinds = 4;
    const std::size_t sizes = options.sizes.size();
    const double same = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t s = unit.first; s < unit.end; ++s) {
        table[(unit.candidate * kKinds + unit.collective + 2) * sizes + s] = same;
        if (bounded[(unit.candidate * 2 + unit.collective) * sizes + s] != 0) continue;
        const auto units = nbr::internal::segment_units(candidate.candidate.segment_bytes, options.sizes[s]);
        double& cell = table[(unit.candidate * kKinds + unit.collective) * sizes + s];
        cell = same;
        if (units == nbr::internal::kWholeMessages) continue;
        load(unit, units);
        if (program->num_messages() == candidate.sends) continue;  // nothing split: its base's program
        program->size_headers = false;
        cell = simulator::predicted_call_us(*program, options.machine, *options.placement, options.sizes[s]);
    }
}

/// What simulate_units records besides the latencies: per candidate its messages (allgather's
/// program), and per candidate and collective the blocks its busiest NIC carries
/// (simulator::busiest_nic_blocks), each by the process that simulated its first size.
struct ProgramFigures {
    std::vector<std::uint64_t> messages;
    std::vector<std::uint64_t> nic_blocks;  // candidate * 2 + collective
};

/// This process's simulations: its units in candidate order (a program loaded once for the
/// runs of sizes it holds), progress reported from process 0 every half minute.
double simulate_units(const fs::path& dir, const std::vector<Built>& built, const std::vector<SimUnit>& units,
                      const AutoOptions& options, std::vector<double>& table, ProgramFigures& figures,
                      const std::vector<char>& bounded, const internal::Progress& progress) {
    constexpr std::size_t kKinds = 4;
    const std::size_t sizes = options.sizes.size();
    const std::clock_t cpu = std::clock();  // the process's CPU time: its share even when oversubscribed
    auto reported = std::chrono::steady_clock::now();
    std::optional<simulator::SimProgram> program;
    std::tuple<std::size_t, std::size_t, std::uint32_t> loaded{SIZE_MAX, SIZE_MAX, 0};
    // The program of the unit's candidate and collective in segments of `units` blocks.
    const auto load = [&](const SimUnit& unit, std::uint32_t segment_units) {
        const std::tuple key{unit.candidate, unit.collective, segment_units};
        if (key == loaded) return;
        const auto collective =
            unit.collective == 0 ? simulator::Collective::allgather : simulator::Collective::alltoall;
        const auto path = dir / files_of(built, unit.candidate);
        program.reset();  // one program in memory at a time
        program = simulator::load_program(path, read_manifest(path), collective, segment_units);
        loaded = key;
    };
    for (std::size_t u = 0; u < units.size(); ++u) {
        const auto& unit = units[u];
        const auto& candidate = built[unit.candidate];
        if (candidate.base != SIZE_MAX) {
            simulate_segmented(unit, candidate, options, load, program, table, bounded);
        } else {
            load(unit, nbr::internal::kWholeMessages);
            if (unit.first == 0) {
                if (unit.collective == 0) figures.messages[unit.candidate] = program->num_messages();
                figures.nic_blocks[unit.candidate * 2 + unit.collective] =
                    simulator::busiest_nic_blocks(*program, *options.placement);
            }
            for (const std::size_t kind : {unit.collective, unit.collective + 2}) {  // fixed-size, then the v-variant
                program->size_headers = kind >= 2;
                for (std::size_t s = unit.first; s < unit.end; ++s) {
                    table[(unit.candidate * kKinds + kind) * sizes + s] =
                        simulator::predicted_call_us(*program, options.machine, *options.placement, options.sizes[s]);
                }
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (now - reported >= std::chrono::seconds(30) && u + 1 < units.size()) {
            reported = now;
            progress.say("simulating: " + std::to_string(u + 1) + " of " + std::to_string(units.size()) +
                         " units done on process 0");
        }
    }
    return static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
}

/// Deals `units` longest first over the processes of `comm`, simulates this process's share
/// into `table` and `figures` and sums both over the processes (one process computed each
/// entry, the others hold 0: the sums are exact); the CPU seconds are added to `report`.
void simulate_dealt(MPI_Comm comm, const fs::path& dir, const std::vector<Built>& built,
                    const std::vector<SimUnit>& units, const AutoOptions& options, std::vector<double>& table,
                    ProgramFigures& figures, const std::vector<char>& bounded, const internal::Progress& progress,
                    AutoReport& report) {
    int processes = 1;
    MPI_Comm_size(comm, &processes);
    std::vector<double> costs;
    for (const auto& unit : units) costs.push_back(unit.cost);
    const auto deal = internal::deal_longest_first(costs, processes);
    const int process = process_of(comm);
    std::vector<SimUnit> mine;
    for (std::size_t u = 0; u < units.size(); ++u) {
        if (deal[u] == process) mine.push_back(units[u]);
    }
    double seconds = 0;
    collective_try(comm,
                   [&] { seconds = simulate_units(dir, built, mine, options, table, figures, bounded, progress); });
    MPI_Allreduce(MPI_IN_PLACE, table.data(), static_cast<int>(table.size()), MPI_DOUBLE, MPI_SUM, comm);
    for (auto* figure : {&figures.messages, &figures.nic_blocks}) {
        MPI_Allreduce(MPI_IN_PLACE, figure->data(), static_cast<int>(figure->size()), MPI_UINT64_T, MPI_SUM, comm);
    }
    double busiest = 0, total = 0;
    MPI_Allreduce(&seconds, &busiest, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&seconds, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
    report.busiest_simulation_seconds += busiest;
    report.total_simulation_seconds += total;
    report.simulation_units += units.size();
}

/// Per segmented copy, collective and size (candidate * 2 + collective, then size): 1 where
/// the copy need not be simulated (docs/algorithms.md, "auto"): the time its busiest NIC needs
/// for the blocks of its base's program (segments carry the same blocks) exceeds the keep-th
/// smallest distinct prediction of the whole candidates there, so the model can neither choose
/// nor keep it.
std::vector<char> segmented_bounds(const std::vector<Built>& built, const std::vector<std::size_t>& first,
                                   const std::vector<double>& table, const ProgramFigures& figures,
                                   const AutoOptions& options) {
    constexpr std::size_t kKinds = 4;
    const std::size_t sizes = options.sizes.size();
    std::vector<double> kept(2 * sizes);  // per collective and size: what a copy must beat
    for (std::size_t cell = 0; cell < kept.size(); ++cell) {
        std::vector<double> whole;
        for (std::size_t j = 0; j < built.size(); ++j) {
            if (built[j].base == SIZE_MAX && first[j] == j) whole.push_back(table[j * kKinds * sizes + cell]);
        }
        kept[cell] = internal::kth_smallest_distinct(whole, std::max<std::size_t>(options.keep, 1));
    }
    std::vector<char> bounded(built.size() * 2 * sizes, 0);
    for (std::size_t i = 0; i < built.size(); ++i) {
        if (built[i].base == SIZE_MAX || first[i] != i) continue;
        const std::size_t base = first[built[i].base];
        for (std::size_t cell = 0; cell < kept.size(); ++cell) {
            const double bound = static_cast<double>(figures.nic_blocks[base * 2 + cell / sizes]) *
                                 static_cast<double>(options.sizes[cell % sizes]) * options.machine.nic_byte_ps * 1e-6;
            bounded[i * 2 * sizes + cell] = bound > kept[cell] ? 1 : 0;
        }
    }
    return bounded;
}

/// Simulates every written candidate for the four collectives at every size: the units
/// (plan_units) are dealt longest first over the processes, the whole candidates first, then
/// the segmented copies where segmented_bounds leaves them in (+infinity where it does not).
std::vector<Prediction> simulate_candidates(MPI_Comm comm, const fs::path& dir, const std::vector<Built>& built,
                                            const AutoOptions& options, std::vector<std::uint64_t>& messages,
                                            const internal::Progress& progress, AutoReport& report) {
    int processes = 1;
    MPI_Comm_size(comm, &processes);
    const std::size_t sizes = options.sizes.size();
    constexpr std::size_t kKinds = 4;
    std::vector<double> table(built.size() * kKinds * sizes, 0.0);
    ProgramFigures figures{std::vector<std::uint64_t>(built.size(), 0),
                           std::vector<std::uint64_t>(built.size() * 2, 0)};
    const auto first = first_with_same_schedule(built, options.reuse_same_schedules);
    std::vector<std::size_t> simulated;
    for (std::size_t i = 0; i < built.size(); ++i) {
        if (first[i] == i) simulated.push_back(i);
    }
    std::vector<SimUnit> whole, copies;
    for (const auto& unit : plan_units(built, simulated, sizes, processes, options.units_per_process)) {
        (built[unit.candidate].base == SIZE_MAX ? whole : copies).push_back(unit);
    }
    std::vector<char> bounded(built.size() * 2 * sizes, 0);
    simulate_dealt(comm, dir, built, whole, options, table, figures, bounded, progress, report);
    if (options.bound_segmented_copies) bounded = segmented_bounds(built, first, table, figures, options);
    for (auto& unit : copies) {  // what is left of them to simulate
        std::size_t left = 0;
        for (std::size_t s = unit.first; s < unit.end; ++s)
            left += bounded[(unit.candidate * 2 + unit.collective) * sizes + s] == 0 ? 1 : 0;
        unit.cost = static_cast<double>(left) * static_cast<double>(built[unit.candidate].sends);
    }
    std::vector<double> copy_table(table.size(), 0.0);
    ProgramFigures copy_figures{std::vector<std::uint64_t>(built.size(), 0),
                                std::vector<std::uint64_t>(built.size() * 2, 0)};
    simulate_dealt(comm, dir, built, copies, options, copy_table, copy_figures, bounded, progress, report);
    messages = figures.messages;
    for (std::size_t i = 0; i < built.size(); ++i) {
        if (built[i].base == SIZE_MAX) continue;
        std::copy_n(copy_table.begin() + static_cast<std::ptrdiff_t>(i * kKinds * sizes), kKinds * sizes,
                    table.begin() + static_cast<std::ptrdiff_t>(i * kKinds * sizes));
        for (std::size_t c = 0; c < 2; ++c) {
            for (std::size_t s = 0; s < sizes; ++s) {
                if (bounded[(i * 2 + c) * sizes + s] == 0) continue;
                table[(i * kKinds + c) * sizes + s] = std::numeric_limits<double>::infinity();
                ++report.bounded_cells;
            }
        }
    }
    // A segmented copy runs as its base where it splits nothing (its cells NaN), and messages
    // counts its base's (what it sends when nothing splits).
    for (std::size_t i = 0; i < built.size(); ++i) {
        const std::size_t b = built[i].base;
        if (b == SIZE_MAX || first[i] != i) continue;
        messages[i] = messages[first[b]];
        for (std::size_t cell = 0; cell < kKinds * sizes; ++cell) {
            double& own = table[i * kKinds * sizes + cell];
            if (std::isnan(own)) own = table[first[b] * kKinds * sizes + cell];
        }
    }
    std::vector<Prediction> out(built.size());
    for (std::size_t i = 0; i < built.size(); ++i) {
        const std::size_t source = first[i];
        out[i].name = built[i].candidate.name;
        messages[i] = messages[source];
        for (std::size_t c = 0; c < kKinds; ++c) {
            const auto row = table.begin() + static_cast<std::ptrdiff_t>((source * kKinds + c) * sizes);
            out[i].latency_us[c].assign(row, row + static_cast<std::ptrdiff_t>(sizes));
        }
        if (built[i].base != SIZE_MAX) out[i].segments_of = built[i].base;
        out[i].through_ranks_without_neighbors = built[i].through_ranks_without_neighbors;
        if (source != i) {
            out[i].same_schedules_as = source;
            report.same_schedules.emplace_back(built[i].candidate.name, built[source].candidate.name);
        }
    }
    return out;
}

/// "busiest process 12.3 s of 23.0 s CPU in all": how evenly the simulations were spread.
std::string balance_text(const AutoReport& report) {
    char text[96];
    std::snprintf(text, sizeof text, "busiest process %.1f s of %.1f s CPU in all", report.busiest_simulation_seconds,
                  report.total_simulation_seconds);
    return text;
}

std::uint32_t fastest_at(const std::vector<Prediction>& predictions, std::size_t c, std::size_t s, double margin) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < predictions.size(); ++i) {
        if (predictions[i].usable_fixed() && predictions[i].latency_us[c][s] < predictions[best].latency_us[c][s]) {
            best = i;
        }
    }
    return predictions[0].latency_us[c][s] >= (1.0 + margin) * predictions[best].latency_us[c][s] ? best : 0;
}

/// Sizes [first, end) of the v judgement within the predictions' sizes.
std::pair<std::size_t, std::size_t> judged_sizes(const std::vector<double>& naive,
                                                 std::pair<std::size_t, std::size_t> range) {
    const std::size_t end = naive.empty() ? 0 : std::min(range.second, naive.size() - 1) + 1;
    return {std::min(range.first, end), end};
}

/// Mean log speedup over naive of `mine` at sizes [first, end), and whether it is never slower.
std::pair<double, bool> variable_score(const std::vector<double>& naive, const std::vector<double>& mine,
                                       std::pair<std::size_t, std::size_t> sizes) {
    double log_sum = 0;
    bool never_slower = true;
    for (std::size_t s = sizes.first; s < sizes.second; ++s) {
        never_slower = never_slower && mine[s] <= naive[s];
        log_sum += naive[s] > 0 && mine[s] > 0 ? std::log(naive[s] / mine[s]) : 0.0;
    }
    const auto n = sizes.second - sizes.first;
    return {n > 0 ? log_sum / static_cast<double>(n) : 0.0, never_slower};
}

/// The v-variants' candidate (`c`: 2 allgatherv, 3 alltoallv), judged at sizes [first, last]:
/// never slower than naive, best geometric-mean speedup >= 1 + the largest margin there.
std::uint32_t variable_choice(const std::vector<Prediction>& predictions, std::size_t c,
                              const std::vector<double>& margins, std::pair<std::size_t, std::size_t> range) {
    const auto& naive = predictions[0].latency_us[c];
    const auto sizes = judged_sizes(naive, range);
    double margin = 0;  // the largest of the sizes judged
    for (std::size_t s = sizes.first; s < sizes.second; ++s) margin = std::max(margin, margins[s]);
    std::uint32_t chosen = 0;
    double best = std::log1p(margin) - 1e-12;
    for (std::uint32_t i = 1; i < predictions.size(); ++i) {
        if (!predictions[i].usable()) continue;
        const auto [mean, never_slower] = variable_score(naive, predictions[i].latency_us[c], sizes);
        if (never_slower && mean > best) {
            best = mean;
            chosen = i;
        }
    }
    return chosen;
}

void add_parameters(google::protobuf::RepeatedPtrField<schema::Parameter>* out,
                    const std::vector<std::pair<std::string, std::string>>& parameters) {
    for (const auto& [name, value] : parameters) {
        auto* parameter = out->Add();
        parameter->set_name(name);
        parameter->set_value(value);
    }
}

/// Bands of one collective from its per-size winners and their alternatives (candidate index
/// -> variant index): a band starts wherever either changes.
void add_bands(schema::Manifest& manifest, schema::Collective collective, const std::vector<std::uint64_t>& sizes,
               const std::vector<std::uint32_t>& winner, const std::vector<std::vector<std::uint32_t>>& alternatives,
               const std::vector<int>& variant_of) {
    const auto alternatives_at = [&](std::size_t s) {
        return s < alternatives.size() ? alternatives[s] : std::vector<std::uint32_t>{};
    };
    for (std::size_t s = 0; s < winner.size(); ++s) {
        if (s > 0 && winner[s] == winner[s - 1] && alternatives_at(s) == alternatives_at(s - 1)) continue;
        auto* band = manifest.add_bands();
        band->set_collective(collective);
        band->set_from_bytes(s == 0 ? 0 : sizes[s]);
        band->set_variant(static_cast<std::uint32_t>(variant_of[winner[s]]));
        for (const auto a : alternatives_at(s)) band->add_alternatives(static_cast<std::uint32_t>(variant_of[a]));
    }
}

/// Whether the choice keeps any candidate beside a winner.
bool keeps_alternatives(const AutoChoice& choice) {
    for (std::size_t c = 0; c < 2; ++c) {
        if (!choice.variable_alternatives[c].empty()) return true;
        for (const auto& list : choice.alternatives[c]) {
            if (!list.empty()) return true;
        }
    }
    return false;
}

schema::Manifest make_manifest(const Topology& topology, const AutoOptions& options, const std::vector<Built>& built,
                               const std::vector<Prediction>& predictions, const std::vector<std::uint64_t>& messages,
                               const AutoChoice& choice) {
    schema::Manifest manifest;
    manifest.set_format_version(keeps_alternatives(choice) ? kCandidatesFormatVersion : kMultiVariantFormatVersion);
    manifest.set_num_ranks(topology.num_ranks());
    manifest.set_num_edges(topology.num_edges());
    manifest.set_algorithm("auto");
    manifest.set_topology_hash(topology.hash());
    manifest.set_producer("nbrc " NBR_VERSION_STRING);
    manifest.set_source(options.source);
    manifest.set_machine(options.machine.name);
    manifest.set_placement(options.placement->description());
    for (auto size : options.sizes) manifest.add_sizes(size);
    const auto margins = effective_margins(options);
    manifest.set_margin(options.margin);
    for (const double m : margins) manifest.add_margins(m);
    const bool raised = std::any_of(margins.begin(), margins.end(), [&](double m) { return m > options.margin; });
    manifest.set_margin_source(raised ? "ratio_error" : "--margin");
    for (const auto& selector : options.candidates) manifest.add_candidate_selectors(selector);
    if (options.variable_bytes) {
        manifest.set_variable_from_bytes(options.variable_bytes->first);
        manifest.set_variable_to_bytes(options.variable_bytes->second);
        manifest.set_variable_bytes_source(options.variable_bytes_source);
    }
    if (options.keep > 1) manifest.set_keep(static_cast<std::uint32_t>(options.keep));
    std::vector<bool> used(built.size(), false);
    for (std::size_t c = 0; c < 2; ++c) {
        for (auto w : choice.winner[c]) used[w] = true;
        used[choice.variable[c]] = true;
        for (const auto& list : choice.alternatives[c]) {
            for (auto a : list) used[a] = true;
        }
        for (auto a : choice.variable_alternatives[c]) used[a] = true;
    }
    std::vector<int> variant_of(built.size(), -1);
    for (std::size_t i = 0; i < built.size(); ++i) {
        auto* candidate = manifest.add_candidates();
        candidate->set_name(built[i].candidate.name);
        candidate->set_algorithm(built[i].algorithm);
        add_parameters(candidate->mutable_parameters(), built[i].parameters);
        candidate->set_note(built[i].note);
        candidate->set_messages(messages[i]);
        candidate->set_through_ranks_without_neighbors(predictions[i].through_ranks_without_neighbors);
        for (auto v : predictions[i].latency_us[0]) candidate->add_allgather_us(v);
        for (auto v : predictions[i].latency_us[1]) candidate->add_alltoall_us(v);
        for (auto v : predictions[i].latency_us[2]) candidate->add_allgatherv_us(v);
        for (auto v : predictions[i].latency_us[3]) candidate->add_alltoallv_us(v);
        if (const auto same = predictions[i].same_schedules_as) {
            candidate->set_same_schedules_as(static_cast<std::uint32_t>(*same + 1));
        }
        if (!used[i]) continue;
        variant_of[i] = manifest.variants_size();
        auto* variant = manifest.add_variants();
        variant->set_name(built[i].candidate.name);
        variant->set_algorithm(built[i].algorithm);
        add_parameters(variant->mutable_parameters(), built[i].parameters);
        variant->set_compile_id(built[i].compile_id);
        if (built[i].base != SIZE_MAX) {
            variant->set_files(files_of(built, i));
            variant->set_segment_bytes(built[i].candidate.segment_bytes);
            manifest.set_format_version(kSharedFilesFormatVersion);
        }
    }
    add_bands(manifest, schema::ALLGATHER, options.sizes, choice.winner[0], choice.alternatives[0], variant_of);
    add_bands(manifest, schema::ALLTOALL, options.sizes, choice.winner[1], choice.alternatives[1], variant_of);
    manifest.set_allgatherv_variant(static_cast<std::uint32_t>(variant_of[choice.variable[0]]));
    manifest.set_alltoallv_variant(static_cast<std::uint32_t>(variant_of[choice.variable[1]]));
    for (auto a : choice.variable_alternatives[0]) {
        manifest.add_allgatherv_alternatives(static_cast<std::uint32_t>(variant_of[a]));
    }
    for (auto a : choice.variable_alternatives[1]) {
        manifest.add_alltoallv_alternatives(static_cast<std::uint32_t>(variant_of[a]));
    }
    // The compile id: a checksum of everything above (the variants' ids included).
    manifest.set_compile_id(nbr::internal::checksum64(serialize_deterministic(manifest)));
    return manifest;
}

void check_options(const Topology& topology, const AutoOptions& options) {
    if (topology.num_ranks() == 0) throw InputError("topology has no ranks");
    if (!options.placement) throw InputError("--algo auto needs a placement");
    if (options.placement->num_ranks() != topology.num_ranks()) {
        throw InputError("placement has " + std::to_string(options.placement->num_ranks()) + " ranks, topology " +
                         std::to_string(topology.num_ranks()));
    }
    if (options.sizes.empty()) throw InputError("--algo auto needs at least one size");
    for (std::size_t s = 1; s < options.sizes.size(); ++s) {
        if (options.sizes[s] <= options.sizes[s - 1]) throw InputError("--sizes must increase strictly");
    }
    if (!(options.margin >= 0 && options.margin < 10)) throw InputError("--margin must lie in [0, 10)");
    if (options.keep < 1 || options.keep > 16) throw InputError("--keep must lie in [1, 16]");
    if (options.variable_bytes &&
        (options.variable_bytes->first > options.variable_bytes->second || options.variable_bytes->second == 0)) {
        throw InputError("--v-bytes LO:HI needs LO <= HI and HI >= 1");
    }
}

}  // namespace

std::vector<double> effective_margins(const AutoOptions& options) {
    // The winner at sizes[s] runs the block sizes up to sizes[s + 1] (the bands start there),
    // the first from 0 bytes.
    const auto& sizes = options.sizes;
    std::vector<double> margins;
    for (std::size_t s = 0; s < sizes.size(); ++s) {
        const std::uint64_t from = s == 0 ? 0 : sizes[s];
        const std::uint64_t next = s + 1 < sizes.size() ? sizes[s + 1] : UINT64_MAX;
        margins.push_back(std::max(options.margin, options.machine.ratio_error_over(from, next)));
    }
    return margins;
}

std::vector<std::uint64_t> default_auto_sizes() {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t size = 1; size <= (std::uint64_t{4} << 20); size *= 2) sizes.push_back(size);
    return sizes;
}

std::pair<std::size_t, std::size_t> variable_size_range(
    const std::vector<std::uint64_t>& sizes, const std::optional<std::pair<std::uint64_t, std::uint64_t>>& bytes) {
    if (sizes.empty()) return {0, 0};
    if (!bytes) return {0, sizes.size() - 1};
    std::size_t first = 0;
    while (first + 1 < sizes.size() && sizes[first + 1] <= bytes->first) ++first;
    std::size_t last = first;
    while (last + 1 < sizes.size() && sizes[last] < bytes->second) ++last;
    return {first, last};
}

AutoChoice choose_variants(const std::vector<Prediction>& predictions, const std::vector<double>& margins,
                           std::pair<std::size_t, std::size_t> variable_sizes) {
    AutoChoice choice;
    const std::size_t sizes = predictions.at(0).latency_us[0].size();
    if (margins.size() != sizes) throw std::invalid_argument("choose_variants: a margin per size is needed");
    for (std::size_t c = 0; c < 2; ++c) {
        for (std::size_t s = 0; s < sizes; ++s) choice.winner[c].push_back(fastest_at(predictions, c, s, margins[s]));
    }
    for (std::size_t c = 0; c < 2; ++c) {
        choice.variable[c] = variable_choice(predictions, 2 + c, margins, variable_sizes);
    }
    return choice;
}

namespace {

/// Beside `winner`, up to keep − 1 candidates of `order` (fastest first by the model), naive
/// (0) always among them; returned in `order`'s order.
std::vector<std::uint32_t> kept_beside(std::uint32_t winner, const std::vector<std::uint32_t>& order,
                                       std::size_t keep) {
    std::vector<std::uint32_t> kept;
    if (keep <= 1) return kept;
    const std::size_t others = keep - 1 - (winner != 0 ? 1 : 0);  // places for candidates but naive
    for (const auto i : order) {
        if (i == winner || i == 0) continue;
        if (kept.size() >= others) break;
        kept.push_back(i);
    }
    if (winner != 0) kept.push_back(0);
    std::vector<std::uint32_t> ordered;
    for (const auto i : order) {
        if (std::find(kept.begin(), kept.end(), i) != kept.end()) ordered.push_back(i);
    }
    return ordered;
}

/// Usable candidates whose predictions no earlier candidate repeats exactly (equal schedules
/// predict alike, whether simulated once or twice), sorted by `better` (stable: ties by index).
template <class Better>
std::vector<std::uint32_t> ranked(const std::vector<Prediction>& predictions, Better better) {
    std::vector<std::uint32_t> order;
    for (std::uint32_t i = 0; i < predictions.size(); ++i) {
        const bool repeated = std::any_of(order.begin(), order.end(), [&](std::uint32_t j) {
            return predictions[j].latency_us == predictions[i].latency_us;
        });
        if (predictions[i].usable() && !repeated) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), better);
    return order;
}

/// `order` (sorted by `key`) without the candidates but naive whose key equals the winner's or
/// that of one kept before them: at this size the same schedule in the model (a segmented copy
/// whose messages are not cut there), which measurement could only tell apart by noise.
template <class Key>
std::vector<std::uint32_t> distinct_at(const std::vector<std::uint32_t>& order, std::uint32_t winner, Key key) {
    std::vector<std::uint32_t> out;
    for (const auto i : order) {
        const bool same = (i != winner && key(i) == key(winner)) ||
                          std::any_of(out.begin(), out.end(), [&](std::uint32_t j) { return key(j) == key(i); });
        if (i == 0 || !same) out.push_back(i);
    }
    return out;
}

/// Candidate i's other form: its base if it is a segmented copy, else its first segmented
/// copy; none if it has none.
std::optional<std::uint32_t> other_form(const std::vector<Prediction>& predictions, std::uint32_t i) {
    if (predictions[i].segments_of) return static_cast<std::uint32_t>(*predictions[i].segments_of);
    for (std::uint32_t j = 0; j < predictions.size(); ++j) {
        if (predictions[j].segments_of == i) return j;
    }
    return std::nullopt;
}

/// `kept` (beside `winner`, in `order`'s order) with the other form of each of them and of
/// the winner added where `order` holds it, no candidate kept has its key, and a segmented
/// copy's key is at most `copy_limit`; returned in `order`'s order.
template <class Key>
std::vector<std::uint32_t> with_other_forms(const std::vector<Prediction>& predictions, std::uint32_t winner,
                                            std::vector<std::uint32_t> kept, const std::vector<std::uint32_t>& order,
                                            Key key, double copy_limit) {
    if (kept.empty()) return kept;  // keep <= 1: the winners only
    std::vector<std::uint32_t> all{winner};
    all.insert(all.end(), kept.begin(), kept.end());
    const std::size_t forms_of = all.size();
    for (std::size_t k = 0; k < forms_of; ++k) {
        const auto other = other_form(predictions, all[k]);
        if (!other || std::find(order.begin(), order.end(), *other) == order.end()) continue;
        const bool seen = std::any_of(all.begin(), all.end(), [&](std::uint32_t j) { return key(j) == key(*other); });
        const double its = key(*other);
        const bool within = std::isfinite(its) && (!predictions[*other].segments_of || its <= copy_limit);
        if (!seen && within) all.push_back(*other);
    }
    std::vector<std::uint32_t> ordered;
    for (const auto i : order) {
        if (i != winner && std::find(all.begin(), all.end(), i) != all.end()) ordered.push_back(i);
    }
    return ordered;
}

/// The prediction a segmented copy must not exceed to join a band as another form: the
/// keep-th smallest distinct prediction of the whole candidates at that size, what the copies'
/// NIC bound compares with (segmented_bounds), so that a copy it leaves unsimulated is never
/// one that simulating would have kept.
double copy_limit(const std::vector<Prediction>& predictions, std::size_t collective, std::size_t size,
                  std::size_t keep) {
    std::vector<double> whole;
    for (const auto& p : predictions) {
        if (p.usable_fixed() && !p.segments_of) whole.push_back(p.latency_us[collective][size]);
    }
    return internal::kth_smallest_distinct(whole, std::max<std::size_t>(keep, 1));
}

}  // namespace

void keep_candidates(AutoChoice& choice, const std::vector<Prediction>& predictions, std::size_t keep,
                     std::pair<std::size_t, std::size_t> variable_sizes) {
    const std::size_t sizes = predictions.at(0).latency_us[0].size();
    for (std::size_t c = 0; c < 2; ++c) {
        choice.alternatives[c].assign(sizes, {});
        for (std::size_t s = 0; s < sizes && keep > 1; ++s) {
            const auto at = [&](std::uint32_t i) { return predictions[i].latency_us[c][s]; };
            auto order = ranked(predictions, [&](std::uint32_t a, std::uint32_t b) { return at(a) < at(b); });
            std::erase_if(order, [&](std::uint32_t i) { return !predictions[i].usable_fixed(); });
            const auto winner = choice.winner[c][s];
            choice.alternatives[c][s] =
                with_other_forms(predictions, winner, kept_beside(winner, distinct_at(order, winner, at), keep), order,
                                 at, copy_limit(predictions, c, s, keep));
        }
        const auto& naive = predictions[0].latency_us[2 + c];
        const auto judged = judged_sizes(naive, variable_sizes);
        std::vector<double> score(predictions.size(), 0.0);
        for (std::uint32_t i = 0; i < predictions.size(); ++i) {
            if (predictions[i].usable())
                score[i] = variable_score(naive, predictions[i].latency_us[2 + c], judged).first;
        }
        const auto order = ranked(predictions, [&](std::uint32_t a, std::uint32_t b) { return score[a] > score[b]; });
        const auto by_score = [&](std::uint32_t i) { return score[i]; };
        const auto winner = choice.variable[c];
        // A copy runs as its base in v-calls (the same score): no copy is added there.
        choice.variable_alternatives[c] =
            with_other_forms(predictions, winner, kept_beside(winner, distinct_at(order, winner, by_score), keep),
                             order, by_score, -std::numeric_limits<double>::infinity());
    }
}

AutoChoice choose_variants(const std::vector<Prediction>& predictions, double margin,
                           std::pair<std::size_t, std::size_t> variable_sizes) {
    const std::vector<double> margins(predictions.at(0).latency_us[0].size(), margin);
    return choose_variants(predictions, margins, variable_sizes);
}

AutoReport compile_auto(MPI_Comm comm, const Topology& topology, const AutoOptions& options) {
    const int process = process_of(comm);
    internal::Progress progress(!options.quiet && process == 0);
    check_options(topology, options);
    AutoReport report;
    report.ranks = topology.num_ranks();
    report.edges = topology.num_edges();
    AlgorithmOptions base = options.base;
    base.placement = options.placement;
    // MPI's clock for the budget: the job's time, also in a simulated one (SMPI).
    const double started = MPI_Wtime();
    auto candidates =
        segmented_candidates(select_candidates(auto_candidates(base), options.candidates),
                             options.segmented_candidates ? simulator::segment_size_for(options.machine) : 0);
    internal::check_output(comm, options.output, options.keep_existing);
    internal::StagedOutput staged(comm, options.output, options.keep_existing);
    std::vector<Built> built;
    for (std::size_t i = 0; i < candidates.size();) {
        const auto& candidate = candidates[i];
        std::size_t next = i + 1;  // its segmented copies follow it
        while (next < candidates.size() && candidates[next].segment_bytes != 0) ++next;
        if (!built.empty() && over_budget(comm, MPI_Wtime() - started, options.build_budget_seconds)) {
            for (std::size_t k = i; k < next; ++k) report.over_budget.push_back(candidates[k].name);
            i = next;
            continue;
        }
        const std::vector<Candidate> copies(candidates.begin() + static_cast<std::ptrdiff_t>(i + 1),
                                            candidates.begin() + static_cast<std::ptrdiff_t>(next));
        auto group = build_candidate(comm, topology, candidate, copies, staged.dir(), options, built.size());
        if (!group.front().note.empty()) report.notes.push_back(candidate.name + ": " + group.front().note);
        std::move(group.begin(), group.end(), std::back_inserter(built));
        progress.say("candidate " + candidate.name + " built");
        i = next;
    }
    AutoOptions chosen = options;
    if (!report.over_budget.empty()) {
        chosen.candidates.clear();
        for (const auto& b : built) {
            if (b.candidate.segment_bytes == 0) chosen.candidates.push_back(b.candidate.name);
        }
        candidates.resize(built.size());
    }
    std::vector<std::uint64_t> messages;
    const auto predictions = simulate_candidates(comm, staged.dir(), built, chosen, messages, progress, report);
    for (const auto& [name, same] : report.same_schedules) {
        progress.say("candidate " + name + " has the schedules of " + same + ": simulated once");
    }
    progress.say("simulated " + std::to_string(candidates.size()) + " candidates at " +
                 std::to_string(options.sizes.size()) + " sizes on " + options.machine.name + " (" +
                 std::to_string(report.simulation_units) + " units; " + balance_text(report) + ")");
    if (report.bounded_cells > 0) {
        progress.say(std::to_string(report.bounded_cells) +
                     " sizes of segmented copies not simulated: there their NIC bound exceeds the predictions of the " +
                     std::to_string(std::max<std::size_t>(options.keep, 1)) + " fastest whole candidates");
    }
    const auto variable_sizes = variable_size_range(options.sizes, options.variable_bytes);
    auto choice = choose_variants(predictions, effective_margins(options), variable_sizes);
    keep_candidates(choice, predictions, options.keep, variable_sizes);
    const auto manifest = make_manifest(topology, chosen, built, predictions, messages, choice);
    for (const auto& variant : manifest.variants()) report.variants.push_back(variant.name());
    collective_try(comm, [&] {
        if (process != 0) return;
        for (const auto& b : built) {
            bool kept = false;  // a variant's files, or those a variant shares
            for (const auto& v : manifest.variants())
                kept = kept || v.name() == b.candidate.name || v.files() == b.candidate.name;
            std::error_code ec;
            if (!kept) fs::remove_all(staged.dir() / b.candidate.name, ec);
        }
        write_file(staged.dir() / manifest_file_name(), serialize_deterministic(manifest));
    });
    staged.publish();
    report.kept_existing = staged.kept_existing();
    report.seconds = progress.seconds();
    progress.say("wrote " + std::to_string(report.variants.size()) + " variants to " + options.output.string());
    return report;
}

namespace internal {

double kth_smallest_distinct(std::vector<double> values, std::size_t k) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return k >= 1 && k <= values.size() ? values[k - 1] : std::numeric_limits<double>::infinity();
}

std::vector<int> deal_longest_first(const std::vector<double>& costs, int processes) {
    if (processes < 1) throw std::invalid_argument("deal_longest_first: no processes");
    std::vector<std::pair<double, std::size_t>> jobs;
    for (std::size_t u = 0; u < costs.size(); ++u) jobs.emplace_back(costs[u], u);
    std::vector<double> load(static_cast<std::size_t>(processes), 0.0);
    const auto chosen = longest_first(jobs, load);
    return {chosen.begin(), chosen.end()};
}

}  // namespace internal

}  // namespace nbr::compiler
