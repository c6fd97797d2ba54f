#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/readers.hpp"
#include "nbr/schema/packed.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::test::SharedTempDir;
using nbr::test::world_rank;

std::vector<std::pair<std::string, nbr::Topology>> topologies() {
    return {
        {"moore", nbr::generate_moore({64, 2, 2})},
        {"random", nbr::generate_random({50, 0.2, 3})},
        {"awkward", nbr::test::awkward_topology(13)},
        {"tiny", nbr::test::awkward_topology(1)},
        {"ash292", nbr::read_matrix_market((nbr::test::matrices_dir() / "ash292.mtx").string(), 16)},
    };
}

/// The same topology compiled by all processes and by one process gives identical bytes.
TEST(Compile, ByteIdenticalForEveryProcessCount) {
    SharedTempDir tmp;
    for (const auto& [name, topology] : topologies()) {
        SCOPED_TRACE(name);
        const fs::path parallel = tmp.path() / (name + ".parallel");
        nbr::test::compile_to(MPI_COMM_WORLD, topology, parallel);
        if (world_rank() == 0) {
            const fs::path serial = tmp.path() / (name + ".serial");
            nbr::test::compile_to(MPI_COMM_SELF, topology, serial);
            std::size_t files = 0;
            for (const auto& entry : fs::directory_iterator(serial)) {
                const auto other = parallel / entry.path().filename();
                ASSERT_TRUE(fs::exists(other)) << other;
                EXPECT_EQ(nbr::read_file(entry.path()), nbr::read_file(other)) << entry.path().filename();
                ++files;
            }
            EXPECT_EQ(files, topology.num_ranks() + 1);
            EXPECT_EQ(
                static_cast<std::size_t>(std::distance(fs::directory_iterator(parallel), fs::directory_iterator())),
                files);
            const auto report = nbr::compiler::verify_directory(parallel, &topology);
            EXPECT_TRUE(report.ok) << report.violation;
            EXPECT_EQ(report.edges, topology.num_edges());
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/// common-neighbor (Θ = 2, so that small graphs combine) into `dir` in `layout`.
void compile_packed(MPI_Comm comm, const nbr::Topology& topology, const fs::path& dir,
                    nbr::compiler::PatternLayout layout = nbr::compiler::PatternLayout::packed) {
    auto options = nbr::test::common_neighbor_options(dir, 2);
    options.layout = layout;
    nbr::compiler::compile(comm, topology, options);
}

/// Packed output: two files, byte-identical for every process count (the world's and one),
/// every rank's slice the bytes of its per-rank file, and verify proves it.
TEST(Compile, PackedLayoutIsByteIdenticalAndHoldsTheRankFiles) {
    SharedTempDir tmp;
    for (const auto& [name, topology] : topologies()) {
        SCOPED_TRACE(name);
        const fs::path parallel = tmp.path() / (name + ".packed");
        compile_packed(MPI_COMM_WORLD, topology, parallel);
        compile_packed(MPI_COMM_WORLD, topology, tmp.path() / (name + ".files"),
                       nbr::compiler::PatternLayout::per_rank);
        if (world_rank() == 0) {
            const fs::path serial = tmp.path() / (name + ".serial");
            compile_packed(MPI_COMM_SELF, topology, serial);
            for (const auto* file : {"manifest.pb", "ranks.pack"}) {
                EXPECT_EQ(nbr::read_file(serial / file), nbr::read_file(parallel / file)) << file;
            }
            EXPECT_EQ(std::distance(fs::directory_iterator(parallel), fs::directory_iterator()), 2);
            const auto manifest = nbr::read_manifest(parallel);
            EXPECT_TRUE(nbr::is_packed(manifest));
            const auto files = tmp.path() / (name + ".files");
            const auto per_rank = nbr::read_manifest(files);
            EXPECT_EQ(manifest.compile_id(), per_rank.compile_id());
            for (std::uint32_t r = 0; r < topology.num_ranks(); ++r) {
                EXPECT_EQ(nbr::serialize_deterministic(nbr::read_rank_pattern(parallel, r, manifest)),
                          nbr::read_file(files / nbr::rank_file_name(r)))
                    << "rank " << r;
            }
            const auto report = nbr::compiler::verify_directory(parallel, &topology);
            EXPECT_TRUE(report.ok) << report.violation;
            EXPECT_EQ(report.edges, topology.num_edges());
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/// What a rank reads at load from a packed directory does not grow with the rank count: the
/// manifest (no per-rank entries), a 64-byte header, its 32-byte index record and its own
/// pattern. One file per rank, the manifest grows by 9 bytes per rank.
TEST(Compile, PackedLoadReadsOnlyTheRanksOwnBytes) {
    SharedTempDir tmp;
    std::vector<std::uint64_t> manifest_bytes;
    for (const std::uint32_t ranks : {4096u, 16384u}) {
        const auto topology = nbr::generate_moore({ranks, 2, 1});
        const auto dir = tmp.path() / ("m" + std::to_string(ranks));
        nbr::test::compile_to(MPI_COMM_WORLD, topology, dir);  // automatic: packed from 4096 ranks
        if (world_rank() != 0) continue;
        const auto manifest = nbr::read_manifest(dir);
        ASSERT_TRUE(nbr::is_packed(manifest)) << ranks;
        manifest_bytes.push_back(fs::file_size(dir / nbr::manifest_file_name()));
        for (const std::uint32_t r : {0u, ranks / 2, ranks - 1}) {
            std::uint64_t read = 0;
            const auto pattern = nbr::read_rank_pattern(dir, r, manifest, &read);
            EXPECT_EQ(read,
                      nbr::kPackedHeaderBytes + nbr::kPackedRecordBytes + nbr::serialize_deterministic(pattern).size())
                << "rank " << r;
        }
    }
    if (world_rank() == 0) {
        ASSERT_EQ(manifest_bytes.size(), 2u);
        // 4 times the ranks, the same manifest but for the varints of N and the edge count.
        EXPECT_LE(manifest_bytes[1], manifest_bytes[0] + 4) << "the manifest grows with the ranks";
        EXPECT_LT(manifest_bytes[1], 1024u);
    }
}

TEST(Compile, LeavesNoTemporaryFilesAndReplacesOldPatterns) {
    SharedTempDir tmp;
    const fs::path out = tmp.path() / "patterns";
    nbr::test::compile_to(MPI_COMM_WORLD, nbr::generate_moore({16, 2, 1}), out);
    const auto topology = nbr::generate_random({20, 0.3, 5});
    nbr::test::compile_to(MPI_COMM_WORLD, topology, out);  // replaces the old one
    if (world_rank() == 0) {
        EXPECT_EQ(nbr::read_manifest(out).num_ranks(), 20u);
        EXPECT_FALSE(fs::exists(out / nbr::rank_file_name(20)));
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path())) ++entries;
        EXPECT_EQ(entries, 1u) << "temporary directories left behind";
    }
}

TEST(Compile, RefusesToReplaceAForeignDirectory) {
    SharedTempDir tmp;
    const fs::path out = tmp.path() / "precious";
    if (world_rank() == 0) {
        fs::create_directories(out);
        std::ofstream(out / "thesis.tex") << "do not delete";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    try {
        nbr::test::compile_to(MPI_COMM_WORLD, nbr::generate_moore({16, 2, 1}), out);
        ADD_FAILURE() << "compile replaced a foreign directory";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("not an nbr pattern directory"), std::string::npos) << e.what();
    }
    if (world_rank() == 0) {
        EXPECT_TRUE(fs::exists(out / "thesis.tex"));
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path())) ++entries;
        EXPECT_EQ(entries, 1u) << "temporary directory left behind after failure";
    }
}

TEST(Compile, FailsCleanlyWhenOutputParentIsMissing) {
    SharedTempDir tmp;
    const fs::path out = tmp.path() / "no" / "such" / "parent";
    EXPECT_THROW(nbr::test::compile_to(MPI_COMM_WORLD, nbr::generate_moore({16, 2, 1}), out), std::runtime_error);
    if (world_rank() == 0) {
        EXPECT_FALSE(fs::exists(tmp.path() / "no"));
    }
}

TEST(Compile, CollectiveReadReportsTheSameErrorEverywhere) {
    SharedTempDir tmp;
    const auto bad = tmp.path() / "bad.el";
    if (world_rank() == 0) std::ofstream(bad) << "0 1\n1 two\n";
    MPI_Barrier(MPI_COMM_WORLD);
    try {
        (void)nbr::compiler::read_topology_collective(MPI_COMM_WORLD, bad.string(), nbr::InputFormat::automatic,
                                                      std::nullopt);
        ADD_FAILURE() << "no error";
    } catch (const nbr::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.el:2:"), std::string::npos) << e.what();
    }
}

}  // namespace
