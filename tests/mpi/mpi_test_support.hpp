#pragma once

// Helpers for MPI tests: shared temporary directories and compiling topologies in-process.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <mpi.h>

#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/inspect.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "temp_root.hpp"

namespace nbr::test {

/// @brief A temporary directory created by rank 0 of comm and known to all; removed on
/// destruction (collective).
class SharedTempDir {
public:
    explicit SharedTempDir(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        std::string path;
        if (rank == 0) {
            std::string pattern = (nbr::test::temp_root() / "nbr_test_XXXXXX").string();
            if (mkdtemp(pattern.data()) != nullptr) path = pattern;
        }
        int length = static_cast<int>(path.size());
        MPI_Bcast(&length, 1, MPI_INT, 0, comm);
        path.resize(static_cast<std::size_t>(length));
        MPI_Bcast(path.data(), length, MPI_CHAR, 0, comm);
        path_ = path;
    }
    ~SharedTempDir() {
        MPI_Barrier(comm_);
        int rank = 0;
        MPI_Comm_rank(comm_, &rank);
        std::error_code ec;
        if (rank == 0) std::filesystem::remove_all(path_, ec);
    }
    SharedTempDir(const SharedTempDir&) = delete;
    SharedTempDir& operator=(const SharedTempDir&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
    MPI_Comm comm_;
    std::filesystem::path path_;
};

/// @brief Compiles `topology` with every process of comm into `dir`.
inline compiler::CompileReport compile_to(MPI_Comm comm, const Topology& topology, const std::filesystem::path& dir,
                                          compiler::AlgorithmKind algorithm = compiler::AlgorithmKind::naive) {
    compiler::CompileOptions options;
    options.algorithm = algorithm;
    options.output = dir;
    options.quiet = true;
    options.source = "test";
    return compiler::compile(comm, topology, options);
}

inline int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

inline int world_size() {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

/// @brief Options for a quiet common-neighbor compile into `out`.
inline compiler::CompileOptions common_neighbor_options(const std::filesystem::path& out, std::uint32_t threshold = 4) {
    compiler::CompileOptions options;
    options.algorithm = compiler::AlgorithmKind::common_neighbor;
    options.algorithm_options.threshold = threshold;
    options.output = out;
    options.quiet = true;
    return options;
}

/// @brief Options for a quiet compile with an algorithm that takes a placement.
inline compiler::CompileOptions placed_options(const std::filesystem::path& out, compiler::AlgorithmKind kind,
                                               Placement placement) {
    compiler::CompileOptions options;
    options.algorithm = kind;
    options.algorithm_options.placement = std::move(placement);
    options.output = out;
    options.quiet = true;
    return options;
}

/// @brief Placement file `path` (written by world rank 0) with rank r on node r % nodes and
/// socket (r / nodes) % sockets: neighbors in rank order on different nodes. Collective.
inline Placement round_robin(const std::filesystem::path& path, std::uint32_t n, std::uint32_t nodes,
                             std::uint32_t sockets = 1) {
    std::string text = "# ranks " + std::to_string(n) + "\n";
    for (std::uint32_t r = 0; r < n; ++r) {
        text +=
            std::to_string(r) + " " + std::to_string(r % nodes) + " " + std::to_string((r / nodes) % sockets) + "\n";
    }
    if (world_rank() == 0) write_file(path, text);
    MPI_Barrier(MPI_COMM_WORLD);
    return Placement::read(path.string(), n);
}

/// @brief Options for distance halving with `placement`.
inline compiler::CompileOptions distance_halving_options(const std::filesystem::path& out, Placement placement) {
    return placed_options(out, compiler::AlgorithmKind::distance_halving, std::move(placement));
}

/// @brief Options for the hierarchical algorithm with `placement` (with Bruck rounds of
/// `radix` inside the nodes if given, else direct).
inline compiler::CompileOptions hierarchical_options(const std::filesystem::path& out, Placement placement,
                                                     std::optional<std::uint32_t> radix = std::nullopt) {
    auto options = placed_options(out, compiler::AlgorithmKind::hierarchical, std::move(placement));
    if (radix) {
        options.algorithm_options.intra_node = compiler::IntraNode::bruck;
        options.algorithm_options.intra_radix = *radix;
    }
    return options;
}

/// @brief Options for the hierarchical algorithm across nodes along a cube of radix
/// `node_radix` (0: one round), with Bruck rounds of `radix` inside the nodes if given.
inline compiler::CompileOptions cube_options(const std::filesystem::path& out, Placement placement,
                                             std::uint32_t node_radix,
                                             std::optional<std::uint32_t> radix = std::nullopt) {
    auto options = hierarchical_options(out, std::move(placement), radix);
    options.algorithm_options.across_nodes = compiler::AcrossNodes::cube;
    options.algorithm_options.node_radix = node_radix;
    return options;
}

/// @brief Options for kgroup with groups of `k`, threshold Θ (unset: the default, k) and,
/// if `placement` is given, the topology-aware variant.
inline compiler::CompileOptions kgroup_options(const std::filesystem::path& out, std::uint32_t k,
                                               std::optional<std::uint32_t> threshold = std::nullopt,
                                               std::optional<Placement> placement = std::nullopt) {
    compiler::CompileOptions options;
    options.algorithm = compiler::AlgorithmKind::kgroup;
    options.algorithm_options.group_size = k;
    options.algorithm_options.threshold = threshold;
    options.algorithm_options.topology_aware = placement.has_value();
    options.algorithm_options.placement = std::move(placement);
    options.output = out;
    options.quiet = true;
    return options;
}

/// @brief Every rank file of a pattern directory.
inline std::vector<schema::RankPattern> read_patterns(const std::filesystem::path& dir) {
    return compiler::read_all_rank_patterns(dir, read_manifest(dir));
}

/// @brief inspect's summary of a pattern directory.
inline compiler::PatternSummary summary_of(const std::filesystem::path& dir) {
    return compiler::summarize(read_manifest(dir), read_patterns(dir));
}

/// @brief Compiles `topology` with `options` on all processes, verifies it on rank 0 (gtest
/// expectation) and returns its summary there; removes the directory afterwards.
inline compiler::PatternSummary compile_and_verify(const Topology& topology, const compiler::CompileOptions& options,
                                                   const std::string& label) {
    const auto& dir = options.output;
    compiler::compile(MPI_COMM_WORLD, topology, options);
    compiler::PatternSummary summary;
    if (world_rank() == 0) {
        const auto report = compiler::verify_directory(dir, &topology);
        EXPECT_TRUE(report.ok) << label << ": " << report.violation;
        summary = summary_of(dir);
        std::filesystem::remove_all(dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return summary;
}

/// @brief Compiles `topology` with all processes into `dir`.parallel and, on rank 0, with
/// one process into `dir`.serial; expects byte-identical files and a pattern that verify
/// proves. Returns the parallel pattern's summary on rank 0.
inline compiler::PatternSummary compile_for_any_process_count(const Topology& topology,
                                                              compiler::CompileOptions options,
                                                              const std::filesystem::path& dir) {
    const std::filesystem::path parallel = dir.string() + ".parallel";
    options.output = parallel;
    compiler::compile(MPI_COMM_WORLD, topology, options);
    compiler::PatternSummary summary;
    if (world_rank() == 0) {
        options.output = dir.string() + ".serial";
        compiler::compile(MPI_COMM_SELF, topology, options);
        for (const auto& entry : std::filesystem::directory_iterator(options.output)) {
            EXPECT_EQ(read_file(entry.path()), read_file(parallel / entry.path().filename()))
                << entry.path().filename();
        }
        const auto report = compiler::verify_directory(parallel, &topology);
        EXPECT_TRUE(report.ok) << report.violation;
        summary = summary_of(parallel);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return summary;
}

/// @brief compile_and_verify with common-neighbor (default Θ) into `dir`.
inline compiler::PatternSummary compile_and_verify(const Topology& topology, const std::filesystem::path& dir,
                                                   const std::string& label) {
    return compile_and_verify(topology, common_neighbor_options(dir), label);
}

}  // namespace nbr::test
