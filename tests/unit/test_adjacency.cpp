// Adjacency files: every rank's ordered in- and out-lists, as captured from an application.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbr/graphs/adjacency.hpp"
#include "nbr/schema/file_io.hpp"
#include "temp_root.hpp"

namespace {

using nbr::InputError;
using nbr::Topology;
using List = std::vector<std::uint32_t>;

List as_list(std::span<const std::uint32_t> span) {
    return {span.begin(), span.end()};
}

/// Rank 0 receives from 2 before 1 (not source order), 1 sends to 0 twice, 2 has a self-loop
/// received last, rank 3 has no neighbors.
Topology awkward() {
    const std::vector<List> in{{2, 1, 1}, {0}, {0, 2}, {}};
    const std::vector<List> out{{1, 2}, {0, 0}, {2, 0}, {}};
    return Topology::from_adjacency(in, out);
}

std::string message_of(const std::string& text) {
    try {
        (void)nbr::parse_adjacency(text, "t.adj", 64);
    } catch (const InputError& error) {
        return error.what();
    }
    return "no error";
}

TEST(Adjacency, InListsKeepTheirOrderAndDuplicatesPairUpInOrder) {
    const Topology t = awkward();
    EXPECT_EQ(as_list(t.in_neighbors(0)), (List{2, 1, 1}));
    // The k-th 1 -> 0 edge in rank 1's out-list is the k-th 1 in rank 0's in-list.
    EXPECT_EQ(as_list(t.in_source_slots(0)), (List{1, 0, 1}));
    EXPECT_EQ(as_list(t.in_source_slots(2)), (List{1, 0}));
    EXPECT_EQ(t.num_edges(), 6U);
    EXPECT_EQ(t.in_degree(3) + t.out_degree(3), 0U);
}

TEST(Adjacency, WrittenFileReadsBackIdenticalWithTheSameHash) {
    const auto path = nbr::test::temp_root() / ("nbr_adj_" + std::to_string(::getpid()) + ".adj");
    nbr::write_adjacency(path, awkward(), "captured\nby a test");
    const Topology back = nbr::read_topology(path.string(), nbr::InputFormat::automatic);
    std::filesystem::remove(path);
    EXPECT_EQ(back, awkward());
    EXPECT_EQ(back.hash(), awkward().hash());
}

TEST(Adjacency, CaptureDirectoryIsReadThroughItsNeighborsFile) {
    const auto dir = nbr::test::temp_root() / ("nbr_capture_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    nbr::write_adjacency(dir / nbr::kCaptureTopologyFile, awkward());
    EXPECT_TRUE(nbr::is_capture_dir(dir));
    EXPECT_EQ(nbr::read_topology(dir.string(), nbr::InputFormat::automatic), awkward());
    EXPECT_THROW((void)nbr::read_topology(dir.string(), nbr::InputFormat::automatic, 5), InputError);
    std::filesystem::remove_all(dir);
}

TEST(Adjacency, CapturesOfARunAreListedInNameOrder) {
    const auto root = nbr::test::temp_root() / ("nbr_captures_" + std::to_string(::getpid()));
    for (const char* name : {"000001", "000000", "notes"}) std::filesystem::create_directories(root / name);
    nbr::write_adjacency(root / "000001" / nbr::kCaptureTopologyFile, awkward());
    nbr::write_adjacency(root / "000000" / nbr::kCaptureTopologyFile, awkward());
    const auto captures = nbr::list_capture_dirs(root);
    ASSERT_EQ(captures.size(), 2U);  // "notes" holds no neighbors file
    EXPECT_EQ(captures[0].filename(), "000000");
    EXPECT_EQ(captures[1].filename(), "000001");
    EXPECT_TRUE(nbr::list_capture_dirs(root / "000000").empty());  // a capture itself
    EXPECT_TRUE(nbr::list_capture_dirs(root / "missing").empty());
    std::filesystem::remove_all(root);
}

TEST(Adjacency, MalformedFilesNameFileLineAndRank) {
    EXPECT_EQ(message_of("0: ; 1\n"), "t.adj:1: expected '# ranks N' before the first rank line");
    EXPECT_EQ(message_of("# ranks 2\n0: 1 ; 1\n0: 0 ; 0\n"), "t.adj:3: rank 0 listed twice");
    EXPECT_EQ(message_of("# ranks 2\n0: ; \n"), "t.adj: rank 1 has no line");
    EXPECT_EQ(message_of("# ranks 2\n0: 5 ; \n1: ;\n"), "t.adj:2: rank 5 out of range [0, 2)");
    EXPECT_EQ(message_of("# ranks 2\n0 1 ; 1\n1: ;\n"),
              "t.adj:2: expected 'RANK: IN-NEIGHBORS ; OUT-NEIGHBORS', found '0 1 ; 1'");
    EXPECT_EQ(message_of("# ranks 2\n0: ; 1 1\n1: 0 ;\n"),
              "t.adj: rank 0 lists 1 as out-neighbor more often than rank 1 lists it as in-neighbor");
    EXPECT_EQ(message_of("# ranks 2\n0: 1 ;\n1: ;\n"),
              "t.adj: rank 0 lists 1 as in-neighbor more often than rank 1 lists it as out-neighbor");
    EXPECT_EQ(message_of("# ranks 2\n0: x\x01 ; \n1: ;\n"), "t.adj:2: not a rank: 'x\\x01'");
}

TEST(Adjacency, DeclaredRankCountIsCheckedBeforeAllocating) {
    EXPECT_EQ(message_of("# ranks 65\n"), "t.adj:1: 65 ranks exceed the limit of 64 (raise it with --max-ranks)");
    try {
        (void)nbr::parse_adjacency("# ranks 4000000000\n0: ;\n", "big.adj", 4000000000U);
        ADD_FAILURE() << "no error";
    } catch (const InputError& error) {
        EXPECT_STREQ(error.what(),
                     "big.adj:1: declares 4000000000 ranks, but the rest of the file holds at most 2 rank lines");
    }
}

}  // namespace
