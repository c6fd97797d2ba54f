#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/compiler/engine.hpp"
#include "nbr/compiler/pattern_builder.hpp"
#include "nbr/graphs/readers.hpp"
#include "nbr/graphs/topology.hpp"

namespace nbr::compiler {

/// @brief What `nbrc compile` needs to know.
/// @brief How a single-algorithm pattern directory stores its rank patterns (docs/format.md).
enum class PatternLayout {
    automatic,  ///< packed from kPackedFromRanks (4096) ranks, one file per rank below
    per_rank,   ///< one rank-NNNNNN.pb per rank, checksums in the manifest
    packed      ///< ranks.pack: a header, one fixed-size index record per rank, the patterns
};

/// @brief Whether `layout` packs a pattern of `ranks` ranks.
[[nodiscard]] bool packs(PatternLayout layout, std::uint32_t ranks);

struct CompileOptions {
    AlgorithmKind algorithm = AlgorithmKind::naive;
    AlgorithmOptions algorithm_options;
    std::filesystem::path output;  ///< pattern directory to (re)place
    bool quiet = false;            ///< no progress lines on stderr
    std::string source;            ///< recorded in the manifest (input file or generator)
    PatternLayout layout = PatternLayout::automatic;
    /// A directory already at `output` when this compile finishes wins and this compile's is
    /// dropped (a cache entry that two jobs build at once: both build the same bytes).
    bool keep_existing = false;
    /// Segmented forwarding (Manifest.segment_bytes; `--segment`): 0 whole messages.
    std::uint64_t segment_bytes = 0;
};

/// @brief Figures of a finished compile (identical on every process).
struct CompileReport {
    std::uint32_t ranks = 0;
    std::uint64_t edges = 0;
    std::uint64_t messages = 0;  ///< sends over all ranks
    double build_seconds = 0;
    double write_seconds = 0;
    std::vector<std::string> notes;  ///< the algorithm's warnings (Algorithm::notes)
    bool kept_existing = false;      ///< keep_existing found another compile's output there
};

/// @brief Runs the algorithm over `topology` on the processes of `comm` and writes the
/// pattern directory atomically: rank files go to a temporary directory next to `output`
/// that is renamed into place only when everything succeeded. An existing `output` is
/// replaced only if it is an nbr pattern directory (or empty).
///
/// Collective over comm; every process must pass the same topology and options. On failure
/// every process throws std::runtime_error with the same message and nothing is left at
/// `output` (or the old directory stays).
CompileReport compile(MPI_Comm comm, const Topology& topology, const CompileOptions& options);

/// @brief Same as above with an algorithm object (options.algorithm is ignored).
CompileReport compile(MPI_Comm comm, const Topology& topology, Algorithm& algorithm, const CompileOptions& options);

/// @brief Writes the pattern that `algorithm` built into `builder` (receives derived) as a
/// pattern directory at `options.output`, atomically as compile() does (which calls it after
/// building). For programs that build a pattern themselves, e.g. to time the construction,
/// and keep the result. Collective over the engine's processes; on failure every process
/// throws the same std::runtime_error and nothing is left at `options.output`.
/// @param kept_existing if not null: whether options.keep_existing kept another compile's output
/// @return seconds spent serializing and writing
double write_pattern(MPI_Comm comm, const Engine& engine, const PatternBuilder& builder, const Topology& topology,
                     const Algorithm& algorithm, const CompileOptions& options, bool* kept_existing = nullptr);

/// @brief Reads a topology on every process of `comm`; if any process fails, all throw
/// InputError with the first failing process's message. Collective.
[[nodiscard]] Topology read_topology_collective(MPI_Comm comm, const std::string& path, InputFormat format,
                                                std::optional<std::uint32_t> ranks,
                                                std::uint32_t max_ranks = kDefaultMaxRanks);

namespace internal {

/// @brief Progress lines on stderr ("[nbrc 1.234 s] what"), when enabled.
class Progress {
public:
    explicit Progress(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
    void say(const std::string& what) const;
    [[nodiscard]] double seconds() const;

private:
    bool enabled_;
    std::chrono::steady_clock::time_point start_;
};

/// @brief Fails (on every process) unless a compile may write `output`: absent, or a pattern
/// directory or an empty one, which publish() replaces (with `keep_existing`, anything: it is
/// kept). Called before a compile's work, so that a long compile does not end in a refusal;
/// publish() checks again. Collective.
void check_output(MPI_Comm comm, const std::filesystem::path& output, bool keep_existing);

/// @brief `output` without trailing separators ("patterns/" -> "patterns"): the directory a
/// compile writes, whose parent holds its temporary sibling.
[[nodiscard]] std::filesystem::path directory_path(const std::filesystem::path& output);

/// @brief A pattern directory being written: a temporary sibling of `output` (created by
/// process 0, named on every process) that publish() renames into place, replacing an old
/// pattern directory. Unpublished, it is removed on destruction. Collective.
class StagedOutput {
public:
    /// @param keep_existing publish() leaves a directory found at `output` in place and drops
    /// this one (else it replaces an old pattern directory)
    StagedOutput(MPI_Comm comm, const std::filesystem::path& output, bool keep_existing = false);
    StagedOutput(const StagedOutput&) = delete;
    StagedOutput& operator=(const StagedOutput&) = delete;
    ~StagedOutput();
    [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
    void publish();
    /// @brief After publish() with keep_existing: whether another compile's directory was
    /// found at `output` and kept (this one dropped). The same on every process.
    [[nodiscard]] bool kept_existing() const noexcept { return kept_existing_; }

private:
    MPI_Comm comm_;
    std::filesystem::path output_;
    std::filesystem::path dir_;
    int process_ = 0;
    bool keep_existing_ = false;
    bool published_ = false;
    bool kept_existing_ = false;
};

/// @brief Writes a single-algorithm pattern (rank files or ranks.pack, and the manifest) into
/// `dir`, created if missing, with `segment_bytes` (Manifest.segment_bytes; part of the compile
/// id when not 0). Collective; returns the manifest's compile id.
std::uint64_t write_pattern_files(MPI_Comm comm, const Engine& engine, const PatternBuilder& builder,
                                  const Topology& topology, const Algorithm& algorithm,
                                  const std::filesystem::path& dir, const std::string& source, PatternLayout layout,
                                  std::uint64_t segment_bytes = 0);

/// @brief The messages of a built pattern: its sends over all ranks. Collective.
[[nodiscard]] std::uint64_t count_messages(const Engine& engine, const PatternBuilder& builder);

/// @brief The messages of a built pattern that a rank without neighbors sends or receives, over
/// all ranks. Such a rank may pass any counts to a fixed-size call, so libnbr runs no variant
/// with such a message for those calls. Collective.
[[nodiscard]] std::uint64_t count_messages_without_neighbors(const Engine& engine, const PatternBuilder& builder,
                                                             const Topology& topology);

/// @brief A checksum of a built pattern's schedules alone: every rank's steps, without the
/// algorithm's name and metrics, so two algorithms that built the same messages in the same
/// steps get the same value (and a simulation of one holds for the other). The same for every
/// process count. Collective.
[[nodiscard]] std::uint64_t schedule_checksum(const Engine& engine, const PatternBuilder& builder,
                                              const Topology& topology);

/// @brief Runs `action` on every process; if it throws on any, every process throws a
/// std::runtime_error carrying the message of the lowest failing process. Collective.
void collective_try(MPI_Comm comm, const std::function<void()>& action);

}  // namespace internal

}  // namespace nbr::compiler
