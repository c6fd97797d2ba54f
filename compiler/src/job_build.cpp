#include "nbr/compiler/job_build.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <system_error>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/compiler/auto_compile.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/schema/file_io.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "nbr/simulator/machine.hpp"

namespace nbr::compiler {

namespace fs = std::filesystem;
using internal::collective_try;

namespace {

constexpr std::uint32_t kUnknownSocket = UINT32_MAX;

/// The socket (package) of a CPU from Linux sysfs, or kUnknownSocket.
std::uint32_t package_of(int cpu) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id");
    long id = -1;
    if (!(in >> id) || id < 0) return kUnknownSocket;
    return static_cast<std::uint32_t>(id);
}

/// The socket of every CPU this process may run on, if they all share one; else kUnknownSocket
/// (an unbound process may run on any socket, so it has none).
std::uint32_t own_socket() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return kUnknownSocket;
    std::uint32_t socket = kUnknownSocket;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set)) continue;
        const auto mine = package_of(cpu);
        if (mine == kUnknownSocket || (socket != kUnknownSocket && mine != socket)) return kUnknownSocket;
        socket = mine;
    }
    return socket;
}

std::vector<std::uint32_t> to_unsigned(std::span<const int> list) {
    return {list.begin(), list.end()};
}

/// Every process's list, concatenated in rank order, with the lengths.
std::vector<std::vector<std::uint32_t>> allgather_lists(MPI_Comm comm, std::span<const int> mine) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
    std::int64_t total = 0;
    for (int r = 0; r < size; ++r) {
        offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
        total += lengths[static_cast<std::size_t>(r)];
    }
    if (total > INT32_MAX) throw InputError("the communicator's neighbor lists hold more than 2^31 entries");
    std::vector<int> all(static_cast<std::size_t>(total));
    MPI_Allgatherv(mine.data(), length, MPI_INT, all.data(), lengths.data(), offsets.data(), MPI_INT, comm);
    std::vector<std::vector<std::uint32_t>> lists(static_cast<std::size_t>(size));
    for (std::size_t r = 0; r < lists.size(); ++r) {
        const auto begin = all.begin() + offsets[r];
        lists[r] = to_unsigned(std::span<const int>(&*begin, static_cast<std::size_t>(lengths[r])));
    }
    return lists;
}

bool is_auto(const std::string& algorithm) {
    return algorithm == "default" || algorithm == "auto";
}

std::string hex(std::uint64_t value, int digits) {
    static const char* const kDigits = "0123456789abcdef";
    std::string text(static_cast<std::size_t>(digits), '0');
    for (int i = digits - 1; i >= 0; --i, value >>= 4) text[static_cast<std::size_t>(i)] = kDigits[value & 15];
    return text;
}

std::uint64_t directory_bytes(const fs::path& dir) {
    std::uint64_t bytes = 0;
    std::error_code ec;
    for (const auto& file : fs::recursive_directory_iterator(dir, ec)) {
        if (file.is_regular_file(ec)) bytes += file.file_size(ec);
    }
    return bytes;
}

JobBuildReport build_auto(MPI_Comm comm, const Topology& topology, const Placement& placement,
                          const JobBuildOptions& options, const fs::path& entry) {
    AutoOptions automatic;
    automatic.machine = simulator::load_machine(options.machine);
    automatic.placement = placement;
    automatic.sizes = default_auto_sizes();
    if (options.algorithm == "default") automatic.candidates = default_job_candidates();
    automatic.keep = options.keep;
    automatic.output = entry;
    automatic.quiet = true;
    automatic.source = job_source();
    automatic.keep_existing = true;
    automatic.build_budget_seconds = options.budget_seconds;
    const auto report = compile_auto(comm, topology, automatic);
    return {0, report.variants, report.over_budget, report.notes, report.kept_existing};
}

JobBuildReport build_single(MPI_Comm comm, const Topology& topology, const Placement& placement,
                            const JobBuildOptions& options, const fs::path& entry) {
    const auto configuration = parse_configuration(options.algorithm);
    if (!configuration) throw std::invalid_argument("unknown algorithm '" + options.algorithm + "'");
    CompileOptions compile_options;
    compile_options.algorithm = configuration->kind;
    configuration->apply(compile_options.algorithm_options);
    compile_options.segment_bytes = configuration->segment_bytes.value_or(0);
    compile_options.algorithm_options.placement = placement;
    compile_options.output = entry;
    compile_options.quiet = true;
    compile_options.source = job_source();
    compile_options.keep_existing = true;
    const auto report = compile(comm, topology, compile_options);
    return {0, {options.algorithm}, {}, report.notes, report.kept_existing};
}

}  // namespace

const std::vector<std::string>& default_job_candidates() {
    static const std::vector<std::string> names = {"common-neighbor", "distance-halving", "hierarchical"};
    return names;
}

Topology gather_topology(MPI_Comm comm, std::span<const int> in, std::span<const int> out) {
    const auto in_lists = allgather_lists(comm, in);
    const auto out_lists = allgather_lists(comm, out);
    Topology topology;
    collective_try(comm, [&] { topology = Topology::from_adjacency(in_lists, out_lists); });
    return topology;
}

Placement detect_placement(MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int leader = rank;  // the node's lowest rank in comm names it
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    const std::uint32_t mine[2] = {static_cast<std::uint32_t>(leader), own_socket()};
    std::vector<std::uint32_t> all(2 * static_cast<std::size_t>(size));
    MPI_Allgather(mine, 2, MPI_UINT32_T, all.data(), 2, MPI_UINT32_T, comm);
    std::vector<std::uint32_t> nodes(static_cast<std::size_t>(size)), sockets(static_cast<std::size_t>(size));
    bool known = true;
    for (std::size_t r = 0; r < nodes.size(); ++r) {
        nodes[r] = all[2 * r];
        sockets[r] = all[2 * r + 1];
        known = known && sockets[r] != kUnknownSocket;
    }
    if (!known) std::fill(sockets.begin(), sockets.end(), 0);  // some process unbound: sockets unknown
    return Placement::from_lists(std::move(nodes), std::move(sockets),
                                 known ? "detected (nodes, sockets)" : "detected (nodes)");
}

Placement job_placement(MPI_Comm comm, const JobBuildOptions& options, std::uint32_t ranks) {
    if (!options.ranks_per_node && !options.ranks_per_socket) return detect_placement(comm);
    const auto per_node = options.ranks_per_node.value_or(*options.ranks_per_socket);
    return Placement::block(ranks, per_node, options.ranks_per_socket.value_or(per_node));
}

std::optional<std::string> not_worth_building(const Topology& topology) {
    if (topology.num_ranks() < 2) return "one rank: nothing to forward";
    std::uint32_t widest = 0;
    for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) {
        widest = std::max({widest, topology.in_degree(r), topology.out_degree(r)});
    }
    if (widest > 2) return std::nullopt;
    return "every rank has at most " + std::to_string(widest) +
           " neighbors each way: forwarding cannot save a message; naive (MPI's own) is best";
}

std::string cache_entry_name(const Topology& topology, const Placement& placement, const JobBuildOptions& options) {
    nbr::internal::Hasher hasher;
    hasher.update_bytes(options.algorithm);
    hasher.update_bytes(is_auto(options.algorithm) ? options.machine : std::string());
    hasher.update(is_auto(options.algorithm) ? options.keep : 1);
    hasher.update_bytes(placement.description());
    for (std::uint32_t r = 0; r < placement.num_ranks(); ++r) {
        hasher.update(placement.node(r));
        hasher.update(placement.socket(r));
    }
    hasher.update_bytes(NBR_VERSION_STRING);  // another version may build other bytes
    std::string name = "n";                   // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "n" + string
    name += std::to_string(topology.num_ranks());
    name += '-';
    name += hex(topology.hash(), 16);
    name += '-';
    name += hex(hasher.digest(), 8);
    return name;
}

std::string job_source() {
    return "built in the job by libnbr";
}

JobBuildReport build_into(MPI_Comm comm, const Topology& topology, const Placement& placement,
                          const JobBuildOptions& options, const fs::path& entry) {
    placement.require_ranks(topology.num_ranks(), "in-job build");
    const double start = MPI_Wtime();  // the job's clock (simulated under SMPI)
    auto report = is_auto(options.algorithm) ? build_auto(comm, topology, placement, options, entry)
                                             : build_single(comm, topology, placement, options, entry);
    report.seconds = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &report.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
    return report;
}

void touch_entry(const fs::path& entry) {
    std::error_code ec;
    fs::last_write_time(entry / manifest_file_name(), fs::file_time_type::clock::now(), ec);
}

void discard_entry(const fs::path& entry) {
    // Renamed aside first, so that no reader finds a half-removed entry under its name.
    std::string name = ".";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + string
    name += entry.filename().string();
    name += ".discarded-";
    name += host_name();
    name += "-";
    name += std::to_string(::getpid());
    const fs::path aside = entry.parent_path() / name;
    std::error_code ec;
    fs::rename(entry, aside, ec);
    fs::remove_all(ec ? entry : aside, ec);
}

std::vector<fs::path> evict(const fs::path& cache, std::uint64_t limit, const fs::path& keep) {
    struct Entry {
        fs::file_time_type used;
        fs::path dir;
        std::uint64_t bytes;
    };
    std::vector<Entry> entries;
    std::uint64_t total = 0;
    std::error_code ec;
    for (const auto& item : fs::directory_iterator(cache, ec)) {
        const auto name = item.path().filename().string();
        if (name.empty() || name[0] == '.' || !item.is_directory(ec)) continue;
        const auto manifest = item.path() / manifest_file_name();
        const auto used = fs::last_write_time(manifest, ec);
        if (ec) continue;
        entries.push_back({used, item.path(), directory_bytes(item.path())});
        total += entries.back().bytes;
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.used != b.used ? a.used < b.used : a.dir < b.dir; });
    std::vector<fs::path> removed;
    for (const auto& e : entries) {
        if (limit == 0 || total <= limit) break;
        if (e.dir == keep) continue;
        discard_entry(e.dir);
        total -= std::min(total, e.bytes);
        removed.push_back(e.dir);
    }
    return removed;
}

}  // namespace nbr::compiler
