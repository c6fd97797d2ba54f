// calls.txt: the neighborhood collectives an application called on a captured communicator.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "nbr/graphs/captured_calls.hpp"
#include "nbr/graphs/topology.hpp"
#include "temp_root.hpp"

namespace {

using nbr::CallKind;
using nbr::CapturedCalls;

CapturedCalls example() {
    CapturedCalls calls;
    calls[CallKind::allgather] = {40, 1, 16384, 1, 16384, 480, 1310700};
    calls[CallKind::alltoallv] = {1, 1, 6, 2, 5, 12, 42};
    return calls;
}

std::string message_of(const std::string& text) {
    try {
        (void)nbr::parse_captured_calls(text, "calls.txt");
    } catch (const nbr::InputError& error) {
        return error.what();
    }
    return "no error";
}

const std::string kLines =
    "allgather 0 0 0 0 0 0 0\nalltoall 0 0 0 0 0 0 0\nallgatherv 0 0 0 0 0 0 0\nalltoallv 0 0 0 0 0 0 0\n";

TEST(CapturedCalls, FormatAndParseGiveTheSameCalls) {
    const auto text = nbr::format_captured_calls(example());
    EXPECT_EQ(text.rfind("# nbr capture calls 1\n", 0), 0U) << text;
    EXPECT_NE(text.find("\nalltoallv 1 1 6 2 5 12 42\n"), std::string::npos) << text;
    EXPECT_EQ(nbr::parse_captured_calls(text, "calls.txt"), example());
}

TEST(CapturedCalls, VariableBytesSpanTheVCallsMeansOnly) {
    CapturedCalls calls = example();
    EXPECT_EQ(calls.variable_bytes(), (std::pair<std::uint64_t, std::uint64_t>{2, 5}));
    calls[CallKind::allgatherv] = {3, 0, 900, 1, 300, 30, 3000};
    EXPECT_EQ(calls.variable_bytes(), (std::pair<std::uint64_t, std::uint64_t>{1, 300}));
    // Fixed-size calls pick their band per call: they do not widen the range.
    CapturedCalls fixed_only;
    fixed_only[CallKind::allgather] = {40, 1, 16384, 1, 16384, 480, 1310700};
    EXPECT_FALSE(fixed_only.variable_bytes());
    // v-calls that moved nothing (or ranks without out-edges) state no range.
    CapturedCalls empty_blocks;
    empty_blocks[CallKind::alltoallv] = {2, 0, 0, 0, 0, 24, 0};
    EXPECT_FALSE(empty_blocks.variable_bytes());
}

TEST(CapturedCalls, BadFilesAreRejectedWithFileAndLine) {
    const std::string head = "# nbr capture calls 1\n";
    EXPECT_NE(message_of("").find("calls.txt: empty"), std::string::npos);
    EXPECT_NE(message_of("allgather 1 2 3\n").find("calls.txt:1: expected '# nbr capture calls N'"), std::string::npos);
    EXPECT_NE(message_of("# nbr capture calls 2\n" + kLines).find("calls.txt:1: calls format 2 is newer"),
              std::string::npos);
    EXPECT_NE(message_of(head + "bcast 0 0 0 0 0 0 0\n").find("calls.txt:2: unknown collective 'bcast'"),
              std::string::npos);
    EXPECT_NE(message_of(head + "allgather 0 0 0\n").find("calls.txt:2: expected 8 fields"), std::string::npos);
    EXPECT_NE(message_of(head + "allgather 0 0 0 0 0 0 -1\n").find("calls.txt:2: not a count: '-1'"),
              std::string::npos);
    EXPECT_NE(message_of(head + "allgather 1 9 3 1 1 1 1\n").find("calls.txt:2: a minimum above its maximum"),
              std::string::npos);
    EXPECT_NE(message_of(head + kLines + "alltoall 0 0 0 0 0 0 0\n").find("calls.txt:6: alltoall listed twice"),
              std::string::npos);
    EXPECT_NE(message_of(head + "allgather 0 0 0 0 0 0 0\n").find("calls.txt: no line for alltoall"),
              std::string::npos);
    EXPECT_EQ(message_of(head + "# a comment\n\n" + kLines), "no error");
}

TEST(CapturedCalls, WrittenIntoACaptureDirectoryAndReadBack) {
    const auto dir = nbr::test::temp_root() / ("nbr_test_calls_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    EXPECT_FALSE(nbr::read_captured_calls(dir));  // a capture without calls.txt
    nbr::write_captured_calls(dir, example());
    EXPECT_EQ(nbr::read_captured_calls(dir), example());
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
    EXPECT_EQ(files, 1U);  // no temporary file left
    std::filesystem::remove_all(dir);
}

}  // namespace
