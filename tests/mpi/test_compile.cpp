#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/readers.hpp"
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
