#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "nbr/graphs/readers.hpp"
#include "test_support.hpp"

namespace {

using nbr::InputError;
using nbr::Topology;

class ReaderTest : public testing::Test {
protected:
    void SetUp() override {
        dir_ = nbr::test::temp_root() / ("nbr_readers_" + std::to_string(::getpid()) + "_" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) {
        const auto path = (dir_ / name).string();
        std::ofstream(path) << text;
        return path;
    }

    /// Expects an InputError whose message contains every fragment.
    template <class F>
    void expect_error(F&& f, std::initializer_list<std::string> fragments) {
        try {
            f();
            ADD_FAILURE() << "no error raised";
        } catch (const InputError& error) {
            const std::string message = error.what();
            for (const auto& fragment : fragments) {
                EXPECT_NE(message.find(fragment), std::string::npos)
                    << "message '" << message << "' lacks '" << fragment << "'";
            }
        }
    }

    std::filesystem::path dir_;
};

std::vector<std::uint32_t> list(std::span<const std::uint32_t> s) {
    return {s.begin(), s.end()};
}

TEST_F(ReaderTest, EdgeListKeepsOrderDuplicatesAndSelfLoops) {
    const auto path = write("g.el",
                            "# comment line\n"
                            "0 2 1.5 extra\n"
                            "1 2\n"
                            "\n"
                            "0 2   # duplicate edge\n"
                            "2 2\n"
                            "2 0\n");
    const Topology t = nbr::read_edge_list(path);
    ASSERT_EQ(t.num_ranks(), 3u);
    EXPECT_EQ(t.num_edges(), 5u);
    EXPECT_EQ(list(t.out_neighbors(0)), (std::vector<std::uint32_t>{2, 2}));
    EXPECT_EQ(list(t.out_neighbors(1)), (std::vector<std::uint32_t>{2}));
    EXPECT_EQ(list(t.out_neighbors(2)), (std::vector<std::uint32_t>{2, 0}));
    EXPECT_EQ(list(t.in_neighbors(2)), (std::vector<std::uint32_t>{0, 1, 0, 2}));
    // The k-th 0->2 edge in 0's out-list is the k-th 0 in 2's in-list.
    EXPECT_EQ(list(t.in_source_slots(2)), (std::vector<std::uint32_t>{0, 0, 1, 0}));
    EXPECT_EQ(list(t.in_neighbors(0)), (std::vector<std::uint32_t>{2}));
    EXPECT_EQ(list(t.in_source_slots(0)), (std::vector<std::uint32_t>{1}));
}

/// A file is read in 4 MiB blocks: lines across block boundaries (a 5 MiB comment, CRLF
/// endings, no final newline) give the same topology as the text parsed whole.
TEST_F(ReaderTest, EdgeListFilesAreStreamedAcrossBlocks) {
    std::string text = "# " + std::string(5u << 20, 'x') + "\r\n";
    for (std::uint32_t i = 0; i < 400000; ++i) {
        text += std::to_string(i % 997) + " " + std::to_string((i * 7919u) % 1000u) + (i % 3 ? "\n" : "\r\n");
    }
    text += "999 0";
    const auto path = write("big.el", text);
    const Topology streamed = nbr::read_edge_list(path);
    const Topology whole = nbr::parse_edge_list(text, path);
    ASSERT_EQ(streamed.num_ranks(), 1000u);
    ASSERT_EQ(streamed.num_edges(), 400001u);
    EXPECT_EQ(streamed.hash(), whole.hash());
    // An error far into the file names its line.
    text += "\n1 two\n";
    expect_error([&] { (void)nbr::read_edge_list(write("bad.el", text)); }, {"bad.el:400003:", "non-negative"});
}

TEST_F(ReaderTest, EdgeListRankCountFromDirectiveOrOption) {
    const auto path = write("g.el", "# ranks 6\n0 1\n");
    EXPECT_EQ(nbr::read_edge_list(path).num_ranks(), 6u);
    EXPECT_EQ(nbr::read_edge_list(path, 9).num_ranks(), 9u);
    EXPECT_EQ(nbr::read_edge_list(path).out_degree(5), 0u);
}

TEST_F(ReaderTest, EdgeListMalformedLinesNameFileAndLine) {
    expect_error([&] { (void)nbr::read_edge_list(write("a.el", "0 1\n1 x\n")); }, {"a.el:2:", "non-negative"});
    expect_error([&] { (void)nbr::read_edge_list(write("b.el", "0 1\n-1 2\n")); }, {"b.el:2:"});
    expect_error([&] { (void)nbr::read_edge_list(write("c.el", "0 1\n1 2\n3")); }, {"c.el:3:", "truncated"});
    expect_error([&] { (void)nbr::read_edge_list(write("d.el", "0 1\n1 7\n"), 4); },
                 {"d.el:2:", "rank 7 out of range [0, 4)"});
    expect_error([&] { (void)nbr::read_edge_list(write("e.el", "# ranks 3\n0 1\n5 0\n")); },
                 {"e.el:3:", "out of range"});
    expect_error([&] { (void)nbr::read_edge_list(write("f.el", "# nothing\n")); }, {"f.el", "no ranks"});
    expect_error([&] { (void)nbr::read_edge_list((dir_ / "missing.el").string()); }, {"missing.el", "cannot open"});
}

TEST_F(ReaderTest, MatrixMarketMapsRowBlocks) {
    // 4x4 general, 2 ranks: rows/cols {0,1} -> rank 0, {2,3} -> rank 1.
    const auto path = write("m.mtx",
                            "%%MatrixMarket matrix coordinate real general\n"
                            "% comment\n"
                            "4 4 5\n"
                            "1 1 1.0\n"
                            "1 3 2.0\n"   // A(0,2): owner of col 2 (1) sends to owner of row 0 (0)
                            "2 4 -1e3\n"  // A(1,3): 1 -> 0 again (deduplicated)
                            "3 2 4\n"     // A(2,1): 0 -> 1
                            "4 4 1\n");
    const Topology t = nbr::read_matrix_market(path, 2);
    ASSERT_EQ(t.num_ranks(), 2u);
    EXPECT_EQ(list(t.out_neighbors(0)), (std::vector<std::uint32_t>{1}));
    EXPECT_EQ(list(t.out_neighbors(1)), (std::vector<std::uint32_t>{0}));
    // Default: one rank per row.
    const Topology full = nbr::read_matrix_market(path);
    ASSERT_EQ(full.num_ranks(), 4u);
    EXPECT_EQ(list(full.out_neighbors(2)), (std::vector<std::uint32_t>{0}));
    EXPECT_EQ(list(full.out_neighbors(3)), (std::vector<std::uint32_t>{1}));
    EXPECT_EQ(list(full.out_neighbors(1)), (std::vector<std::uint32_t>{2}));
    EXPECT_EQ(full.num_edges(), 3u);
}

TEST_F(ReaderTest, MatrixMarketFilesAreStreamedAcrossBlocks) {
    // A symmetric matrix longer than the reader's 4 MiB block, behind a 5 MiB comment, on 64
    // ranks: the topology is every distinct off-diagonal (column block, row block) pair, with
    // each entry's transpose, once and in ascending order.
    constexpr std::uint32_t n = 20000, entries = 300000, ranks = 64;
    std::string text = "%%MatrixMarket matrix coordinate real symmetric\n%" + std::string(5u << 20, 'x') + "\r\n";
    text += std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(entries) + "\n";
    std::set<std::pair<std::uint32_t, std::uint32_t>> expected;
    for (std::uint32_t k = 0; k < entries; ++k) {
        const std::uint32_t i = (k * 7919u) % n, j = (k * 104729u + 13u) % n;
        text += std::to_string(i + 1) + " " + std::to_string(j + 1) + " 1.5" + (k % 3 ? "\n" : "\r\n");
        const auto bi = nbr::block_owner(i, n, ranks), bj = nbr::block_owner(j, n, ranks);
        if (bi != bj) expected.insert({bj, bi});
        if (bi != bj && i != j) expected.insert({bi, bj});
    }
    std::vector<nbr::Edge> edges;
    for (const auto& [s, d] : expected) edges.push_back({s, d});
    const auto path = write("big.mtx", text);
    const Topology streamed = nbr::read_matrix_market(path, ranks);
    EXPECT_EQ(streamed, Topology::from_edges(ranks, edges));
    EXPECT_EQ(streamed, nbr::parse_matrix_market(text, path, ranks));
    // An error far into the file names its line.
    text.replace(text.rfind("1.5"), 3, "x.5");
    expect_error([&] { (void)nbr::read_matrix_market(write("bad.mtx", text), ranks); },
                 {"bad.mtx:" + std::to_string(entries + 3) + ":", "bad value"});
}

TEST_F(ReaderTest, MatrixMarketSymmetryKinds) {
    for (const std::string kind : {"symmetric", "skew-symmetric"}) {
        const auto path =
            write("s.mtx", "%%MatrixMarket matrix coordinate integer " + kind + "\n3 3 2\n2 1 5\n3 1 -2\n");
        const Topology t = nbr::read_matrix_market(path);
        EXPECT_EQ(list(t.out_neighbors(0)), (std::vector<std::uint32_t>{1, 2})) << kind;
        EXPECT_EQ(list(t.out_neighbors(1)), (std::vector<std::uint32_t>{0})) << kind;
        EXPECT_EQ(list(t.out_neighbors(2)), (std::vector<std::uint32_t>{0})) << kind;
    }
    const auto herm = write("h.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 1 1.0 -2.0\n");
    EXPECT_EQ(nbr::read_matrix_market(herm).num_edges(), 2u);
    const auto pattern = write("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n");
    const Topology rect = nbr::read_matrix_market(pattern);  // 2 ranks: cols {0,1}->0, {2}->1
    EXPECT_EQ(rect.num_ranks(), 2u);
    EXPECT_EQ(list(rect.out_neighbors(1)), (std::vector<std::uint32_t>{0}));
    EXPECT_EQ(list(rect.out_neighbors(0)), (std::vector<std::uint32_t>{1}));
}

TEST_F(ReaderTest, MatrixMarketMalformedLinesNameFileAndLine) {
    const std::string head = "%%MatrixMarket matrix coordinate real general\n";
    expect_error([&] { (void)nbr::read_matrix_market(write("a.mtx", "hello\n")); },
                 {"a.mtx:1:", "not a Matrix Market"});
    expect_error(
        [&] { (void)nbr::read_matrix_market(write("b.mtx", "%%MatrixMarket matrix array real general\n2 2\n")); },
        {"b.mtx:1:", "coordinate"});
    expect_error(
        [&] { (void)nbr::read_matrix_market(write("c.mtx", "%%MatrixMarket matrix coordinate foo general\n")); },
        {"c.mtx:1:", "field"});
    expect_error([&] { (void)nbr::read_matrix_market(write("d.mtx", head + "3 3 2\n1 1 1\n4 1 1\n")); },
                 {"d.mtx:4:", "outside"});
    expect_error([&] { (void)nbr::read_matrix_market(write("e.mtx", head + "3 3 3\n1 1 1\n2 2 1\n")); },
                 {"e.mtx", "2 entries found, 3 declared", "truncated"});
    expect_error([&] { (void)nbr::read_matrix_market(write("f.mtx", head + "3 3 2\n1 1 1\n2 2\n")); },
                 {"f.mtx:4:", "expected 3 columns"});
    expect_error([&] { (void)nbr::read_matrix_market(write("g.mtx", head + "3 3 1\n1 1 abc\n")); },
                 {"g.mtx:3:", "bad value"});
    expect_error([&] { (void)nbr::read_matrix_market(write("h.mtx", head)); }, {"h.mtx", "size line missing"});
    expect_error([&] { (void)nbr::read_matrix_market(write("i.mtx", head + "3 3 1\n1 1 1\n2 2 2\n")); },
                 {"i.mtx:4:", "more entries"});
    expect_error(
        [&] {
            (void)nbr::read_matrix_market(write("j.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n"));
        },
        {"j.mtx", "square"});
    expect_error([&] { (void)nbr::read_matrix_market(write("k.mtx", head + "3 3 1\n0 1 1\n")); },
                 {"k.mtx:3:", "outside"});
}

TEST_F(ReaderTest, DeclaredSizesAreCheckedAgainstTheFileAndTheRankLimitBeforeAllocating) {
    // Each would otherwise reserve gigabytes (tests/cli runs them under a 256 MiB limit too).
    const std::string head = "%%MatrixMarket matrix coordinate pattern general\n";
    expect_error([&] { (void)nbr::read_matrix_market(write("rows.mtx", head + "2000000000 2000000000 1\n1 2\n")); },
                 {"rows.mtx:2:", "2000000000 rows", "--max-ranks", "--ranks"});
    expect_error([&] { (void)nbr::read_matrix_market(write("entries.mtx", head + "3 3 4000000000\n1 2\n")); },
                 {"entries.mtx:2:", "declares 4000000000 entries", "at most 2"});
    expect_error([&] { (void)nbr::read_edge_list(write("far.el", "0 1\n1 4294967294\n")); },
                 {"far.el:2:", "rank 4294967294", "exceed the limit of 16777216"});
    expect_error([&] { (void)nbr::read_edge_list(write("declared.el", "0 1\n# ranks 4000000000\n")); },
                 {"declared.el:2:", "4000000000 ranks exceed"});
    expect_error([&] { (void)nbr::read_edge_list(write("opt.el", "0 1\n"), 100, 10); }, {"opt.el", "100 ranks exceed"});
    // The limit is a parameter: within it, the same shapes read.
    EXPECT_EQ(nbr::read_edge_list(write("ok.el", "0 1\n1 19\n"), std::nullopt, 20).num_ranks(), 20u);
    EXPECT_EQ(nbr::read_matrix_market(write("ok.mtx", head + "1000 1000 1\n1 2\n"), 4).num_ranks(), 4u);
    expect_error([&] { (void)nbr::read_edge_list(write("edge.el", "0 1\n1 20\n"), std::nullopt, 20); },
                 {"edge.el:2:", "21 ranks exceed the limit of 20"});
}

TEST_F(ReaderTest, ErrorsQuoteFileContentEscapedAndShort) {
    // A binary line: its bytes come back as \xNN, and no more than 40 of them.
    std::string junk = "0 1\n";
    for (int i = 0; i < 5000; ++i) junk += static_cast<char>(i % 7 == 0 ? 0x01 : 0xfe);
    junk += "\n";
    try {
        (void)nbr::read_edge_list(write("junk.el", junk));
        FAIL() << "no error";
    } catch (const nbr::InputError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("junk.el:2:"), std::string::npos) << message;
        EXPECT_NE(message.find("\\x01\\xfe"), std::string::npos) << message;
        EXPECT_NE(message.find("..."), std::string::npos) << message;
        EXPECT_LT(message.size(), 400u) << message;
        EXPECT_TRUE(std::all_of(message.begin(), message.end(), [](char c) {
            return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
        })) << "raw control bytes in the message";
    }
    const std::string head = "%%MatrixMarket matrix coordinate real general\n";
    expect_error([&] { (void)nbr::read_matrix_market(write("v.mtx", head + "2 2 1\n1 1 \x1b[31mred\n")); },
                 {"v.mtx:3:", "bad value '\\x1b[31mred'"});
}

TEST(SharedMatrices, EveryMatrixMapsToAConsistentProcessGraph) {
    const auto dir = nbr::test::matrices_dir();
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".mtx") continue;
        ++count;
        SCOPED_TRACE(entry.path().string());
        const Topology rows = nbr::read_matrix_market(entry.path().string());
        const Topology p16 = nbr::read_matrix_market(entry.path().string(), 16);
        EXPECT_EQ(p16.num_ranks(), 16u);
        for (const Topology* t : {&rows, &p16}) {
            std::uint64_t in_total = 0;
            for (std::uint32_t r = 0; r < t->num_ranks(); ++r) {
                const auto out = t->out_neighbors(r);
                EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
                EXPECT_EQ(std::adjacent_find(out.begin(), out.end()), out.end()) << "duplicate process edge";
                EXPECT_EQ(std::find(out.begin(), out.end(), r), out.end()) << "self message";
                in_total += t->in_degree(r);
            }
            EXPECT_EQ(in_total, t->num_edges());
        }
        EXPECT_GT(p16.num_edges(), 0u);
    }
    EXPECT_EQ(count, 22);
}

TEST(SharedMatrices, Ash292At16RanksMatchesAHandComputedMapping) {
    // Recompute the mapping independently from the raw entries.
    const auto path = (nbr::test::matrices_dir() / "ash292.mtx").string();
    const Topology t = nbr::read_matrix_market(path, 16);
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line) && line[0] == '%') {
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> expected;
    std::uint64_t i = 0, j = 0;
    while (in >> i >> j) {
        const auto a = nbr::block_owner(i - 1, 292, 16), b = nbr::block_owner(j - 1, 292, 16);
        if (a != b) {
            expected.insert({b, a});
            expected.insert({a, b});
        }
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> actual;
    for (const auto& e : t.edges()) actual.insert({e.src, e.dst});
    EXPECT_EQ(actual, expected);
    EXPECT_EQ(t.num_edges(), expected.size());
}

TEST(BlockOwner, MatchesBlockDistribution) {
    // 10 over 4: sizes 3,3,2,2
    const std::vector<std::uint32_t> owners{0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
    for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(nbr::block_owner(i, 10, 4), owners[i]);
    // More parts than indices: one each, the rest empty.
    for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(nbr::block_owner(i, 3, 8), i);
}

TEST_F(ReaderTest, WriteEdgeListRoundTrip) {
    const Topology t = nbr::test::awkward_topology(9);
    const auto path = (dir_ / "out.el").string();
    nbr::write_edge_list(path, t, "test graph");
    const Topology back = nbr::read_edge_list(path);
    ASSERT_EQ(back.num_ranks(), t.num_ranks());
    for (std::uint32_t r = 0; r < t.num_ranks(); ++r) {
        EXPECT_EQ(list(back.out_neighbors(r)), list(t.out_neighbors(r)));
    }
}

}  // namespace
