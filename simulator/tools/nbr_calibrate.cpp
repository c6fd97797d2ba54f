// nbr-calibrate: measures one distance class of a machine between two ranks and writes the
// machine file nbrc simulate reads (docs/simulate.md, "Calibration").
//
//   mpirun -np 2 --bind-to core nbr-calibrate -o machine.json                 # same socket
//   mpirun -np 2 --map-by socket nbr-calibrate --class node --base machine.json -o machine.json
//   mpirun -np 2 --map-by node nbr-calibrate --class network --base machine.json -o machine.json
//   taskset -c 0 mpirun -np 2 --bind-to none --mca mpi_yield_when_idle 1
//       nbr-calibrate --shared-core --base machine.json -o machine.json      (two ranks, one core)
//   mpirun -np 2 --bind-to core nbr-calibrate --recheck --base machine.json -o machine.json
//       (the pattern checks again, in another launch: their ratio errors join the file's)
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "nbr/common/mpi_program.hpp"
#include "nbr/simulator/calibrate.hpp"
#include "nbr/simulator/libnbr_call.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/measure.hpp"
#include "nbr/simulator/sizes.hpp"

namespace {

using nbr::simulator::DistanceClass;

struct Options {
    std::string output;
    std::string klass = "socket";
    std::string base;
    std::string name = "calibrated";
    std::string sizes = nbr::simulator::kCalibrationSizes;
    std::string check_sizes = nbr::simulator::kCheckSizes;
    std::uint32_t ranks_per_node = 0;
    std::uint32_t ranks_per_socket = 0;
    bool shared_core = false;
    bool recheck = false;
    nbr::simulator::MeasureOptions measure;
};

/// What the calibration measured, for the machine file's `sources`.
constexpr const char* kMeasured =
    "nbr-calibrate: ping-pong, bursts, streams, a late receiver, the sender's completion and libnbr's call between "
    "two ranks (ratio_error: libnbr's call over parallel edges, naive and combined, against the model)";

/// What a recheck measured, for the machine file's `sources`.
constexpr const char* kRechecked =
    "ratio_errors: also rechecked by nbr-calibrate --recheck (libnbr's call over parallel edges, naive and combined, "
    "in other launches than the fit)";

const std::map<std::string, DistanceClass> kClasses{{"socket", DistanceClass::socket},
                                                    {"node", DistanceClass::node},
                                                    {"leaf", DistanceClass::leaf},
                                                    {"network", DistanceClass::network}};

/// A measured value, or "-" where it was not measured (negative).
std::string measured_or_dash(double value) {
    if (value < 0) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", value);
    return text;
}

/// The exchanges behind the per-pair eager buffer.
void print_exchanges(const nbr::simulator::Calibration& c) {
    const auto& b = c.buffer;
    for (std::size_t i = 0; i < c.buffer_exchanges.size() && i < b.fitting.size(); ++i) {
        const auto& e = c.buffer_exchanges[i];
        std::printf("exchanges of %llu B: ", static_cast<unsigned long long>(e.bytes));
        if (b.fitting[i] == 0) {
            std::printf("no knee up to %zu messages each way\n", e.us.size());
        } else {
            std::printf("%d messages each way before the time per message grows\n", b.fitting[i]);
        }
    }
    if (b.capacity > 0) {
        std::printf("eager buffer per pair %llu B (%llu B per message beyond its own); overflow +%.3f us per message\n",
                    static_cast<unsigned long long>(b.capacity), static_cast<unsigned long long>(b.message_bytes),
                    b.overflow_recv_us);
    }
}

void print_points(const nbr::simulator::Calibration& c, const std::string& klass) {
    std::printf("class %s, eager limit %s, memcpy %.3f ns/B\n", klass.c_str(),
                c.eager_limit > 0 ? std::to_string(c.eager_limit).c_str() : "none found", c.copy_ns_per_byte);
    std::printf("posting a receive %.3f us; nbr_neighbor_alltoall of %llu B over one edge each way %.3f us per call\n",
                c.post_recv_us, static_cast<unsigned long long>(c.call_bytes), c.call_us);
    if (c.blocks_call_us >= 0) {
        std::printf("the same over %u parallel edges each way, one message of %u blocks: %.3f us per call",
                    c.blocks_call_edges, c.blocks_call_edges, c.blocks_call_us);
        for (const auto& call : c.byte_calls) {
            if (call.us >= 0) {
                std::printf(", %.3f us with blocks of %llu B", call.us, static_cast<unsigned long long>(call.bytes));
            }
        }
        std::printf("\n");
    }
    print_exchanges(c);
    std::printf("%10s %12s %12s %12s %12s %12s %12s\n", "bytes", "one_way_us", "send_us", "recv_us", "complete_us",
                "exchange_us", "rate_us");
    for (const auto& p : c.points) {
        std::printf("%10llu %12.3f %12.3f %12s %12s %12s %12.3f\n", static_cast<unsigned long long>(p.bytes),
                    p.one_way_us, p.send_us, measured_or_dash(p.recv_us).c_str(),
                    measured_or_dash(p.complete_us).c_str(), measured_or_dash(p.exchange_us).c_str(), p.rate_us);
    }
}

void print_checks(const std::vector<nbr::simulator::CalibrationCheck>& checks) {
    using nbr::simulator::kExchangeMessages;
    using nbr::simulator::kExchangeMoreMessages;
    const auto many = "exchange" + std::to_string(kExchangeMessages) + "_us";
    const auto more = "exchange" + std::to_string(kExchangeMoreMessages) + "_us";
    std::printf(
        "nbrc simulate with the fitted machine (exchangeN: N messages each way):\n%10s %12s %12s %12s %12s "
        "%12s %12s %12s %12s %12s %12s %12s %12s\n",
        "bytes", "one_way_us", "predicted", "rate_us", "predicted", "complete_us", "predicted", "exchange_us",
        "predicted", many.c_str(), "predicted", more.c_str(), "predicted");
    for (const auto& k : checks) {
        std::printf("%10llu %12.3f %12.3f %12.3f %12.3f %12s %12.3f %12s %12.3f %12s %12.3f %12s %12.3f\n",
                    static_cast<unsigned long long>(k.bytes), k.one_way_us, k.predicted_one_way_us, k.rate_us,
                    k.predicted_rate_us, measured_or_dash(k.complete_us).c_str(), k.predicted_complete_us,
                    measured_or_dash(k.exchange_us).c_str(), k.predicted_exchange_us,
                    measured_or_dash(k.exchange_many_us).c_str(), k.predicted_exchange_many_us,
                    measured_or_dash(k.exchange_more_us).c_str(), k.predicted_exchange_more_us);
    }
}

/// The pattern checks, measured against `machine`'s predictions.
void print_pattern_checks(const std::vector<nbr::simulator::PatternCheck>& checks, std::uint32_t edges) {
    if (checks.empty()) return;
    std::printf(
        "pattern checks: libnbr's call over %u parallel edges each way, naive (%u messages each way) and "
        "combined (one), and nbrc simulate's (nothing fitted to them):\n%10s %12s %12s %12s %12s %12s\n",
        edges, edges, "bytes", "naive_us", "predicted", "combined_us", "predicted", "ratio_error");
    for (const auto& k : checks) {
        std::printf("%10llu %12.3f %12.3f %12.3f %12.3f %11.1f%%\n", static_cast<unsigned long long>(k.bytes),
                    k.naive_us, k.predicted_naive_us, k.combined_us, k.predicted_combined_us, 100 * k.ratio_error());
    }
}

/// "the naive call over 32 edges of 1 B is 40% off the model"
std::string naive_off(const nbr::simulator::PatternCheck& check, std::uint32_t edges) {
    char text[128];
    std::snprintf(text, sizeof text, "the naive call over %u edges of %llu B is %.0f%% off the model", edges,
                  static_cast<unsigned long long>(check.bytes), 100 * check.naive_error());
    return text;
}

/// The fit's own launch: a warning where the machine's state changed while it was measured
/// (state_changed), a note where the smallest naive check is far off while it held.
void report_state(const nbr::simulator::Calibration& c, const std::vector<nbr::simulator::PatternCheck>& checks) {
    const auto* first = nbr::simulator::unsettled_check(checks);
    if (nbr::simulator::state_changed(c)) {
        std::fprintf(stderr,
                     "nbr-calibrate: warning: the one-way time of %llu B took %.3f us before libnbr's calls and "
                     "%.3f us after them%s: the machine's state changed while it was measured. Calibrate again.\n",
                     static_cast<unsigned long long>(c.points.front().bytes), c.points.front().one_way_us,
                     c.late_one_way_us,
                     first != nullptr ? ("; " + naive_off(*first, c.blocks_call_edges)).c_str() : "");
    } else if (first != nullptr) {
        std::printf(
            "%s while the machine's state held (one-way %.3f us before libnbr's calls, %.3f after): an "
            "error of the model, in the ratio errors\n",
            naive_off(*first, c.blocks_call_edges).c_str(), c.points.front().one_way_us, c.late_one_way_us);
    }
}

/// The machine's ratio errors, per block size (the least margin auto acts on there).
void print_ratio_errors(const nbr::schema::Machine& machine) {
    if (!machine.has_ratio_error()) return;
    std::printf(
        "ratio error (the least margin nbrc compile --algo auto acts on: between two sizes the larger, "
        "beyond the last check its own):");
    for (const auto& point : machine.ratio_errors()) {
        std::printf(" %llu B %.1f%%,", static_cast<unsigned long long>(point.bytes()), 100 * point.error());
    }
    std::printf(" largest %.1f%%\n", 100 * machine.ratio_error());
}

/// Writes the machine (to --output or standard output), checked to read back.
int emit(const Options& o, const nbr::schema::Machine& machine) {
    if (o.output.empty()) {
        std::cout << nbr::simulator::checked_machine_json(machine, "the calibrated machine");
    } else {
        nbr::simulator::save_machine(o.output, machine);
        std::printf("wrote %s\n", o.output.c_str());
    }
    return 0;
}

/// The two ranks share one core: the base machine gets the switch time (its socket class
/// must be measured already).
int calibrate_shared_core(const Options& o, int rank) {
    if (o.base.empty()) throw std::invalid_argument("--shared-core needs a --base machine (its socket class measured)");
    auto machine = nbr::simulator::load_machine(o.base).spec;
    const auto bytes = o.measure.sizes.front();
    const double one_way = nbr::simulator::measure_one_way(MPI_COMM_WORLD, bytes, o.measure.repeat);
    if (rank != 0) return 0;
    const double switch_us = nbr::simulator::fit_switch(machine, one_way, bytes);
    std::printf("two ranks on one core: one-way %.3f us at %llu B; switch %.3f us\n", one_way,
                static_cast<unsigned long long>(bytes), switch_us);
    machine.set_format_version(std::max(machine.format_version(), 2U));
    machine.set_switch_us(switch_us);
    machine.add_sources(
        "switch_us: measured by nbr-calibrate --shared-core (ping-pong of two ranks on one core "
        "less the socket class's one-way time)");
    return emit(o, machine);
}

/// A recheck whose naive calls the fit predicts this many times too long or too short (median
/// over the sizes) was measured in another state of the machine than the fit.
constexpr double kOtherState = 1.5;

/// The pattern checks alone, against the base machine as fitted in another launch.
int recheck(const Options& o, int rank) {
    if (o.base.empty()) throw std::invalid_argument("--recheck needs a --base machine (the one to check)");
    if (o.measure.check_sizes.empty()) throw std::invalid_argument("--recheck needs --check-sizes");
    auto machine = nbr::simulator::load_machine(o.base).spec;
    const auto c = nbr::simulator::measure_patterns_with_libnbr_call(MPI_COMM_WORLD, o.measure);
    if (rank != 0) return 0;
    const auto checks = nbr::simulator::recheck_patterns(machine, kClasses.at(o.klass), c, kRechecked);
    print_pattern_checks(checks, c.blocks_call_edges);
    if (const auto* first = nbr::simulator::unsettled_check(checks)) {
        std::printf("%s (another state than the fit's, or an error of the model): its errors count all the same\n",
                    naive_off(*first, c.blocks_call_edges).c_str());
    }
    if (const double ratio = nbr::simulator::fit_time_ratio(checks); ratio > kOtherState || ratio < 1 / kOtherState) {
        std::fprintf(stderr,
                     "nbr-calibrate: warning: the fit predicts this launch's naive calls %.2f times as long as "
                     "measured (median over the sizes): it was measured in another state of the machine. Where "
                     "most rechecks say so, calibrate again.\n",
                     ratio);
    }
    print_ratio_errors(machine);
    return emit(o, machine);
}

/// libnbr's copies as fitted: per block, and per byte at each block size measured.
void print_copy_costs(const nbr::schema::Machine& machine) {
    std::printf(
        "libnbr's copies (those calls less their simulated time, per block and per byte packed or unpacked): %.2f ns "
        "per block, ",
        machine.copy_block_ns());
    if (machine.copy_rates_size() == 0) {
        std::printf("%.4f ns per byte\n", machine.copy_ns_per_byte());
        return;
    }
    for (int i = 0; i < machine.copy_rates_size(); ++i) {
        std::printf("%s%.4f ns per byte at blocks of %llu B", i > 0 ? ", " : "", machine.copy_rates(i).ns_per_byte(),
                    static_cast<unsigned long long>(machine.copy_rates(i).block_bytes()));
    }
    std::printf(" (between them by log2 of the block size)\n");
}

int calibrate(const Options& o, int rank) {
    if (o.shared_core) return calibrate_shared_core(o, rank);
    if (o.recheck) return recheck(o, rank);
    const auto klass = kClasses.at(o.klass);
    // Inputs are checked on every rank before measuring, so that all fail at once.
    nbr::schema::Machine base;
    if (!o.base.empty()) base = nbr::simulator::load_machine(o.base).spec;
    if (klass == DistanceClass::leaf && base.nodes_per_switch() == 0) {
        throw std::invalid_argument("--class leaf needs a --base machine with nodes_per_switch");
    }
    const auto c = nbr::simulator::measure_link_with_libnbr_call(MPI_COMM_WORLD, o.measure);
    if (rank != 0) return 0;
    print_points(c, o.klass);
    const nbr::simulator::NewMachine node{o.name, std::thread::hardware_concurrency(), o.ranks_per_node,
                                          o.ranks_per_socket};
    auto machine = o.base.empty() ? nbr::simulator::machine_like(c, node) : base;
    const auto checks = nbr::simulator::apply_calibration(machine, klass, c, kMeasured);
    print_checks(nbr::simulator::check_calibration(machine, klass, c));
    print_pattern_checks(checks, c.blocks_call_edges);
    report_state(c, checks);
    print_ratio_errors(machine);
    if (klass == DistanceClass::socket) {
        std::printf("per-call cost (the call less its two messages as simulated): %.3f us\n",
                    machine.call_overhead_us());
        if (machine.has_copy_block_ns()) print_copy_costs(machine);
    }
    return emit(o, machine);
}

int run(int argc, char** argv) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Options o;
    CLI::App app{"nbr-calibrate: measure LogGOPS parameters between two ranks and write a machine file"};
    app.add_option("-o,--output", o.output, "Machine file to write (default: standard output)");
    std::map<std::string, std::string> classes;
    for (const auto& [name, k] : kClasses) classes.emplace(name, name);
    app.add_option("--class", o.klass, "Distance class the two ranks are at")
        ->transform(CLI::IsMember(classes))
        ->capture_default_str();
    app.add_option("--base", o.base, "Machine (preset or file) whose other classes are kept");
    app.add_option("--name", o.name, "Name of a new machine")->capture_default_str();
    auto* shared_core =
        app.add_flag("--shared-core", o.shared_core,
                     "The two ranks share one core: measure the switch time into --base (smallest --sizes)");
    app.add_flag("--recheck", o.recheck,
                 "Only the pattern checks, against --base fitted in another launch: their ratio errors join the "
                 "file's (--class: the two ranks' distance)")
        ->excludes(shared_core);
    app.add_option("--sizes", o.sizes, "Message sizes (K, M suffixes)")->capture_default_str();
    app.add_option("--check-sizes", o.check_sizes,
                   "Block sizes of the pattern checks (the machine's ratio_error; \"none\": no checks)")
        ->capture_default_str();
    app.add_option("--repeat", o.measure.repeat, "Repetitions per quantity (median kept)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--passes", o.measure.passes,
                   "Passes over the sizes, calls and pattern checks, one after another (each quantity's median "
                   "over them kept: a state of the machine met in fewer than half moves nothing)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    app.add_option("--ranks-per-node", o.ranks_per_node, "New machine: ranks per node (default: cores)")
        ->check(CLI::PositiveNumber);
    app.add_option("--ranks-per-socket", o.ranks_per_socket, "New machine: ranks per socket (default: per node)")
        ->check(CLI::PositiveNumber);
    // A list of sizes in 1 B .. max, or the option's usage error.
    const auto sizes_of = [](const char* option, const std::string& text, std::uint64_t max) {
        try {
            return nbr::simulator::parse_sizes_up_to(text, max);
        } catch (const std::invalid_argument& error) {
            throw CLI::ValidationError(option, error.what());
        }
    };
    try {
        app.parse(argc, argv);
        o.measure.sizes = sizes_of("--sizes", o.sizes, 1ULL << 30);
        if (o.check_sizes != "none") o.measure.check_sizes = sizes_of("--check-sizes", o.check_sizes, 1ULL << 20);
    } catch (const CLI::ParseError& error) {
        std::ostringstream sink;
        const int code = rank == 0 ? app.exit(error) : app.exit(error, sink, sink);
        return code == 0 ? 0 : 2;
    }
    return calibrate(o, rank);
}

}  // namespace

int main(int argc, char** argv) {
    return nbr::common::run_mpi_program(argc, argv, "nbr-calibrate", run);
}
