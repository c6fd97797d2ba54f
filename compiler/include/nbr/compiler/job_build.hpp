#pragma once
// Building a pattern in the application's job (libnbr's nbr_pattern_build, the drop-in's
// NBR_CACHE) and the pattern cache it builds into: the compiler's engine on the application's
// own ranks, one virtual rank per process, writing what `nbrc compile` writes for the same
// topology, placement and options (docs/architecture.md, "Patterns built in the job").

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"

namespace nbr::compiler {

/// @brief What an in-job build builds, and what it may spend.
struct JobBuildOptions {
    /// `default` (auto over kDefaultJobCandidates), `auto` (every candidate) or a configuration
    /// name (`nbrc compile --algo`).
    std::string algorithm = "default";
    std::string machine = "niagara";  ///< auto's and default's model (a preset name or a file)
    /// Block placement instead of the detected one (`--ranks-per-node`, `--ranks-per-socket`).
    std::optional<std::uint32_t> ranks_per_node;
    std::optional<std::uint32_t> ranks_per_socket;
    /// Seconds the candidates' builds may take (AutoOptions::build_budget_seconds); a single
    /// algorithm is built whatever it costs.
    double budget_seconds = 30;
    /// Candidates kept per band for measured selection (AutoOptions::keep).
    std::size_t keep = 1;
    /// Bytes the cache may hold; least recently used entries go first (0: no limit).
    std::uint64_t cache_limit_bytes = std::uint64_t{1} << 30;
};

/// @brief The candidates `default` tries beside naive: the cheap constructions (no k-group search).
[[nodiscard]] const std::vector<std::string>& default_job_candidates();

/// @brief Every rank's lists gathered into the communicator's topology (collective over comm;
/// `in` and `out` are the calling rank's, in MPI's buffer order).
/// @throws InputError (on every process) if the lists disagree.
[[nodiscard]] Topology gather_topology(MPI_Comm comm, std::span<const int> in, std::span<const int> out);

/// @brief Where the communicator's ranks run: nodes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED),
/// sockets from the CPU each process runs on (Linux sysfs; 0 where unknown). Collective.
[[nodiscard]] Placement detect_placement(MPI_Comm comm);

/// @brief The placement an in-job build uses: block if the options give ranks per node or per
/// socket, else detect_placement. Collective.
[[nodiscard]] Placement job_placement(MPI_Comm comm, const JobBuildOptions& options, std::uint32_t ranks);

/// @brief Why building is not worth it for this topology (every rank sends to and receives from
/// at most two neighbors: forwarding cannot remove a message there), or nullopt.
[[nodiscard]] std::optional<std::string> not_worth_building(const Topology& topology);

/// @brief The cache entry's name: ranks, topology hash, and a checksum of everything else that
/// makes two builds differ (algorithm, machine, placement, keep).
[[nodiscard]] std::string cache_entry_name(const Topology& topology, const Placement& placement,
                                           const JobBuildOptions& options);

/// @brief The manifest's `source` of an in-job build.
[[nodiscard]] std::string job_source();

/// @brief What build_into stored.
struct JobBuildReport {
    double seconds = 0;                    ///< the build's wall time on the slowest process
    std::vector<std::string> variants;     ///< the variants kept (one name for a single algorithm)
    std::vector<std::string> over_budget;  ///< candidates left out by the budget
    std::vector<std::string> notes;        ///< the algorithms' notes
    bool kept_existing = false;            ///< another job stored the same entry first; it was kept
};

/// @brief Builds the pattern for `topology` on the processes of `comm` (one virtual rank each)
/// into `entry`, atomically; an entry another job stored meanwhile is kept (it holds the same
/// bytes). Collective; on failure every process throws the same error and nothing is left.
JobBuildReport build_into(MPI_Comm comm, const Topology& topology, const Placement& placement,
                          const JobBuildOptions& options, const std::filesystem::path& entry);

/// @brief Marks a cache entry used now (least recently used eviction goes by it).
void touch_entry(const std::filesystem::path& entry);

/// @brief Removes an entry that could not be loaded; best effort (another job may do the same).
void discard_entry(const std::filesystem::path& entry);

/// @brief Removes the least recently used entries of `cache` until it holds at most `limit`
/// bytes, never `keep`. @return the entries removed
std::vector<std::filesystem::path> evict(const std::filesystem::path& cache, std::uint64_t limit,
                                         const std::filesystem::path& keep);

}  // namespace nbr::compiler
