#include "nbr/compiler/compile.hpp"
#include "nbr/common/mpi_program.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <system_error>
#include <vector>

#include "nbr/schema/file_io.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/packed.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace nbr::compiler {

namespace fs = std::filesystem;
using nbr::common::broadcast_string;
using nbr::common::kOutOfMemory;

namespace internal {

void Progress::say(const std::string& what) const {
    if (!enabled_) return;
    std::fprintf(stderr, "[nbrc %8.3f s] %s\n", seconds(), what.c_str());
    std::fflush(stderr);
}

double Progress::seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::uint64_t count_messages(const Engine& engine, const PatternBuilder& builder) {
    std::uint64_t local = 0;
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) local += builder.sends(v).size();
    return engine.sum(local);
}

std::uint64_t count_messages_without_neighbors(const Engine& engine, const PatternBuilder& builder,
                                               const Topology& topology) {
    const auto alone = [&](std::uint32_t r) {
        return topology.in_neighbors(r).empty() && topology.out_neighbors(r).empty();
    };
    std::uint64_t local = 0;
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        for (const auto& send : builder.sends(v)) local += alone(v) || alone(send.peer) ? 1 : 0;
    }
    return engine.sum(local);
}

std::uint64_t schedule_checksum(const Engine& engine, const PatternBuilder& builder, const Topology& topology) {
    std::uint64_t local = 0;
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        auto pattern = builder.rank_pattern(v, topology, "", 0);
        pattern.clear_metrics();
        // Summed over ranks (wrapping), each rank's checksum first mixed with its rank: the
        // total does not depend on how the ranks are split over processes.
        nbr::internal::Hasher hasher;
        hasher.update(v);
        hasher.update(nbr::internal::checksum64(serialize_deterministic(pattern)));
        local += hasher.digest();
    }
    return engine.sum(local);
}

void collective_try(MPI_Comm comm, const std::function<void()>& action) {
    std::string message;
    int failed_input = 0;
    try {
        action();
    } catch (const InputError& error) {
        message = error.what();
        failed_input = 1;
    } catch (const std::bad_alloc&) {
        message = kOutOfMemory;
    } catch (const std::exception& error) {
        message = error.what();
        if (message.empty()) message = "unknown error";
    }
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    int size = 1;
    MPI_Comm_size(comm, &size);
    int mine = message.empty() ? size : rank;
    int first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return;
    int length = static_cast<int>(message.size());
    int is_input = failed_input;
    MPI_Bcast(&length, 1, MPI_INT, first, comm);
    MPI_Bcast(&is_input, 1, MPI_INT, first, comm);
    message.resize(static_cast<std::size_t>(length));
    MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
    if (is_input != 0) throw InputError(message);  // keeps the input-error type across processes
    throw std::runtime_error(message);
}

}  // namespace internal

namespace {

using Clock = std::chrono::steady_clock;
using internal::Progress;

/// Prefix of the temporary directories a compile to `output` works in: files are written there
/// and the directory is renamed to `output` only when complete. The name carries the host and
/// process id of its compile, so that a later compile can tell a leftover of a killed one.
std::string temp_prefix(const fs::path& output) {
    std::string prefix = ".";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + string
    prefix += output.filename().string();
    prefix += ".tmp-";
    return prefix;
}

fs::path parent_of(const fs::path& output) {
    fs::path parent = output.parent_path();
    return parent.empty() ? fs::path(".") : parent;
}

/// Whether a temporary directory's name (HOST-PID-XXXXXX, maybe with ".old") names a process
/// of this host that no longer runs.
bool is_abandoned(std::string rest, const std::string& host) {
    if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, ".old") == 0) rest.resize(rest.size() - 4);
    if (rest.size() < 8 || rest[rest.size() - 7] != '-') return false;
    rest.resize(rest.size() - 7);  // drops -XXXXXX
    const auto dash = rest.rfind('-');
    if (dash == std::string::npos || rest.substr(0, dash) != host) return false;
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str() + dash + 1, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == getpid()) return false;
    return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

/// Removes the temporary directories that killed compiles to `output` on this host left behind.
int remove_leftovers(const fs::path& output) {
    const std::string prefix = temp_prefix(output);
    const std::string host = host_name();
    std::error_code ec;
    int removed = 0;
    for (const auto& entry : fs::directory_iterator(parent_of(output), ec)) {
        const std::string name = entry.path().filename().string();
        if (name.compare(0, prefix.size(), prefix) != 0 || !entry.is_directory(ec)) continue;
        if (!is_abandoned(name.substr(prefix.size()), host)) continue;
        if (fs::remove_all(entry.path(), ec) != static_cast<std::uintmax_t>(-1) && !ec) ++removed;
    }
    return removed;
}

/// Creates a unique sibling directory of `output` for the files being written.
fs::path make_temp_dir(const fs::path& output) {
    const fs::path parent = parent_of(output);
    if (!fs::is_directory(parent)) {
        throw std::runtime_error(parent.string() + ": output's parent directory does not exist");
    }
    return make_owned_temp_dir(parent, temp_prefix(output));
}

bool is_replaceable(const fs::path& dir) {
    return fs::exists(dir / manifest_file_name()) || fs::is_empty(dir);
}

/// Fails unless a compile may write `output`: absent, or a pattern directory or an empty one
/// (replaced once the new one is complete).
void check_replaceable(const fs::path& output) {
    if (fs::exists(output) && (!fs::is_directory(output) || !is_replaceable(output))) {
        throw std::runtime_error(output.string() +
                                 ": exists and is not an nbr pattern directory; refusing to replace it");
    }
}

/// Moves the finished directory into place, replacing an old pattern directory.
void publish(const fs::path& temp, const fs::path& output) {
    std::error_code ec;
    if (fs::exists(output)) {
        check_replaceable(output);
        const fs::path old = temp.string() + ".old";
        fs::rename(output, old);
        fs::rename(temp, output);
        fs::remove_all(old, ec);
    } else {
        fs::rename(temp, output);
    }
}

/// Manifest.compile_id: a checksum of what makes two compiles' outputs differ.
std::uint64_t compile_id(const Algorithm& algorithm, const Topology& topology, std::uint64_t segment_bytes) {
    std::string key = algorithm.name();
    for (const auto& [name, value] : algorithm.parameters()) {
        key.append(1, '\0').append(name).append(1, '=').append(value);
    }
    if (segment_bytes > 0) key.append(1, '\0').append("segment=").append(std::to_string(segment_bytes));
    key.append(1, '\0').append(std::to_string(topology.num_ranks()));
    key.append(1, '\0').append(std::to_string(topology.hash()));
    return nbr::internal::checksum64(key);
}

}  // namespace

Topology read_topology_collective(MPI_Comm comm, const std::string& path, InputFormat format,
                                  std::optional<std::uint32_t> ranks, std::uint32_t max_ranks) {
    Topology topology;
    internal::collective_try(comm, [&] {
        try {
            topology = read_topology(path, format, ranks, max_ranks);
        } catch (const std::bad_alloc&) {
            throw InputError(path + ": " + kOutOfMemory);
        }
    });
    return topology;
}

namespace internal {

fs::path directory_path(const fs::path& output) {
    fs::path path = output;
    while (!path.has_filename() && path.has_relative_path()) path = path.parent_path();
    return path;
}

void check_output(MPI_Comm comm, const fs::path& output, bool keep_existing) {
    int process = 0;
    MPI_Comm_rank(comm, &process);
    collective_try(comm, [&] {
        if (process == 0 && !keep_existing) check_replaceable(directory_path(output));
    });
}

StagedOutput::StagedOutput(MPI_Comm comm, const fs::path& output, bool keep_existing)
    : comm_(comm), output_(directory_path(output)), keep_existing_(keep_existing) {
    MPI_Comm_rank(comm, &process_);
    collective_try(comm, [&] {
        if (process_ != 0) return;
        const int removed = remove_leftovers(output_);
        if (removed > 0) {  // a notice even with --quiet: files were deleted
            std::fprintf(stderr, "nbrc: removed %d temporary director%s left by interrupted compiles\n", removed,
                         removed == 1 ? "y" : "ies");
        }
        dir_ = make_temp_dir(output_);
    });
    dir_ = broadcast_string(comm, dir_.string());
}

StagedOutput::~StagedOutput() {
    if (published_ || process_ != 0) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
}

void StagedOutput::publish() {
    int kept = 0;
    collective_try(comm_, [&] {
        if (process_ != 0) return;
        if (!keep_existing_) return nbr::compiler::publish(dir_, output_);
        // rename(2) of a directory onto a non-empty one fails: the first compile to finish wins.
        std::error_code ec;
        fs::rename(dir_, output_, ec);
        if (!ec) return;
        if (!fs::exists(output_ / manifest_file_name())) {
            throw std::runtime_error(output_.string() + ": cannot publish the pattern: " + ec.message());
        }
        kept = 1;
        fs::remove_all(dir_, ec);
    });
    MPI_Bcast(&kept, 1, MPI_INT, 0, comm_);
    kept_existing_ = kept != 0;
    published_ = true;
}

namespace {

/// The manifest of a single-algorithm directory, without rank checksums.
schema::Manifest make_manifest(const Topology& topology, const Algorithm& algorithm, std::uint64_t id,
                               const std::string& source, std::uint64_t segment_bytes) {
    schema::Manifest manifest;
    manifest.set_format_version(kSingleFormatVersion);
    manifest.set_num_ranks(topology.num_ranks());
    manifest.set_num_edges(topology.num_edges());
    manifest.set_algorithm(algorithm.name());
    for (const auto& [name, value] : algorithm.parameters()) {
        auto* parameter = manifest.add_parameters();
        parameter->set_name(name);
        parameter->set_value(value);
    }
    manifest.set_topology_hash(topology.hash());
    manifest.set_compile_id(id);
    manifest.set_producer("nbrc " NBR_VERSION_STRING);
    manifest.set_source(source);
    manifest.set_segment_bytes(segment_bytes);
    return manifest;
}

/// The serialized patterns of this process's ranks, concatenated in rank order.
struct LocalPatterns {
    std::string bytes;
    std::vector<std::uint64_t> lengths;
    std::vector<std::uint64_t> checksums;
};

/// Serializes rank v's pattern (calls `sink(v, bytes)` for each local rank in order).
template <class Sink>
void serialize_local(const Engine& engine, const PatternBuilder& builder, const Topology& topology,
                     const Algorithm& algorithm, std::uint64_t id, Sink&& sink) {
    const std::string algo_name = algorithm.name();
    const std::uint64_t hash = topology.hash();
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        auto pattern = builder.rank_pattern(v, topology, algo_name, hash);
        pattern.set_compile_id(id);
        sink(v, serialize_deterministic(pattern));
    }
}

/// One file per rank; the checksums gathered in rank order into the manifest on process 0.
void write_per_rank(MPI_Comm comm, const Engine& engine, const std::vector<std::uint64_t>& checksums,
                    schema::Manifest& manifest) {
    const auto [counts, displs] = engine.blocks().gather_layout();
    const bool root = engine.process() == 0;
    std::vector<std::uint64_t> all(root ? manifest.num_ranks() : 0);
    MPI_Gatherv(checksums.data(), static_cast<int>(checksums.size()), MPI_UINT64_T, all.data(), counts.data(),
                displs.data(), MPI_UINT64_T, 0, comm);
    for (auto c : all) manifest.add_rank_checksums(c);
}

/// ranks.pack: every process writes its ranks' index records and patterns at offsets that
/// depend only on the patterns' sizes (an exclusive prefix sum), so the file is the same for
/// any process count; process 0 writes the header.
void write_packed(MPI_Comm comm, const Engine& engine, const LocalPatterns& local, std::uint64_t id,
                  const fs::path& file) {
    std::uint64_t mine = local.bytes.size();
    std::uint64_t before = 0;
    std::uint64_t total = 0;
    MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (engine.process() == 0) before = 0;  // MPI_Exscan leaves process 0's result undefined
    MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
    const std::uint64_t ranks = engine.num_ranks();
    const std::uint64_t data = packed_data_offset(ranks);
    internal::collective_try(comm, [&] {
        if (engine.process() == 0) create_sized_file(file, data + total);
    });
    internal::collective_try(comm, [&] {
        std::string records;
        records.reserve(local.lengths.size() * kPackedRecordBytes);
        std::uint64_t offset = data + before;
        for (std::size_t i = 0; i < local.lengths.size(); ++i) {
            records +=
                encode_packed_record(id, engine.local_begin() + i, {offset, local.lengths[i], local.checksums[i]});
            offset += local.lengths[i];
        }
        write_file_at(file, packed_record_offset(engine.local_begin()), records);
        write_file_at(file, data + before, local.bytes);
        if (engine.process() == 0) write_file_at(file, 0, encode_packed_header(ranks, id, data + total));
    });
}

}  // namespace

std::uint64_t write_pattern_files(MPI_Comm comm, const Engine& engine, const PatternBuilder& builder,
                                  const Topology& topology, const Algorithm& algorithm, const fs::path& dir,
                                  const std::string& source, PatternLayout layout, std::uint64_t segment_bytes) {
    const std::uint64_t id = compile_id(algorithm, topology, segment_bytes);
    auto manifest = make_manifest(topology, algorithm, id, source, segment_bytes);
    collective_try(comm, [&] {
        if (engine.process() == 0) fs::create_directories(dir);
    });
    if (packs(layout, topology.num_ranks())) {
        LocalPatterns local;
        collective_try(comm, [&] {
            serialize_local(engine, builder, topology, algorithm, id, [&](std::uint32_t, const std::string& bytes) {
                local.bytes += bytes;
                local.lengths.push_back(bytes.size());
                local.checksums.push_back(nbr::internal::checksum64(bytes));
            });
        });
        write_packed(comm, engine, local, id, dir / packed_file_name());
        manifest.set_format_version(kPackedFormatVersion);
        manifest.set_layout(schema::PACKED);
    } else {
        std::vector<std::uint64_t> checksums;
        collective_try(comm, [&] {
            serialize_local(engine, builder, topology, algorithm, id, [&](std::uint32_t v, const std::string& bytes) {
                checksums.push_back(nbr::internal::checksum64(bytes));
                write_file(dir / rank_file_name(v), bytes);
            });
        });
        write_per_rank(comm, engine, checksums, manifest);
    }
    collective_try(comm, [&] {
        if (engine.process() == 0) write_file(dir / manifest_file_name(), serialize_deterministic(manifest));
    });
    return id;
}

}  // namespace internal

double write_pattern(MPI_Comm comm, const Engine& engine, const PatternBuilder& builder, const Topology& topology,
                     const Algorithm& algorithm, const CompileOptions& options, bool* kept_existing) {
    const auto start = Clock::now();
    internal::StagedOutput staged(comm, options.output, options.keep_existing);
    internal::write_pattern_files(comm, engine, builder, topology, algorithm, staged.dir(), options.source,
                                  options.layout, options.segment_bytes);
    staged.publish();
    if (kept_existing != nullptr) *kept_existing = staged.kept_existing();
    return std::chrono::duration<double>(Clock::now() - start).count();
}

bool packs(PatternLayout layout, std::uint32_t ranks) {
    return layout == PatternLayout::packed || (layout == PatternLayout::automatic && ranks >= kPackedFromRanks);
}

CompileReport compile(MPI_Comm comm, const Topology& topology, const CompileOptions& options) {
    auto algorithm = make_algorithm(options.algorithm, options.algorithm_options);
    return compile(comm, topology, *algorithm, options);
}

CompileReport compile(MPI_Comm comm, const Topology& topology, Algorithm& algorithm, const CompileOptions& options) {
    int process = 0;
    MPI_Comm_rank(comm, &process);
    Progress progress(!options.quiet && process == 0);
    CompileReport report;
    report.ranks = topology.num_ranks();
    report.edges = topology.num_edges();
    if (topology.num_ranks() == 0) throw InputError("topology has no ranks");
    internal::check_output(comm, options.output, options.keep_existing);

    const std::string algo_name = algorithm.name();
    progress.say("compiling " + std::to_string(report.ranks) + " ranks, " + std::to_string(report.edges) +
                 " edges with '" + algo_name + "'");

    Engine engine(comm, topology.num_ranks());
    PatternBuilder builder(engine);
    internal::collective_try(comm, [&] { algorithm.build(engine, topology, builder); });
    report.notes = algorithm.notes();
    builder.derive_receives(engine);
    report.messages = internal::count_messages(engine, builder);
    report.build_seconds = progress.seconds();
    progress.say("pattern built in " + std::to_string(engine.supersteps()) + " supersteps, " +
                 std::to_string(report.messages) + " messages");

    report.write_seconds = write_pattern(comm, engine, builder, topology, algorithm, options, &report.kept_existing);
    progress.say("wrote " + std::to_string(report.ranks) + " rank patterns (" +
                 (packs(options.layout, report.ranks) ? "packed" : "one file each") + ") to " +
                 options.output.string());
    return report;
}

}  // namespace nbr::compiler
