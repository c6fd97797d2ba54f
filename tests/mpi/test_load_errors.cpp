// nbr_load_pattern: every kind of bad input gets its own error code on the rank that sees it,
// NBR_ERR_REMOTE on the others, a message naming file or rank, and no half-loaded pattern.
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr.h"
#include "nbr/graphs/generators.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/packed.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::test::world_rank;
using nbr::test::world_size;

class LoadErrorTest : public testing::Test {
protected:
    void SetUp() override {
        topology_ = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.6, 4});
        nbr::test::compile_to(MPI_COMM_WORLD, topology_, dir());
    }
    [[nodiscard]] fs::path dir() const { return tmp_.path() / "p"; }

    /// Loads on comm; checks the pattern stays NULL on failure and returns the code.
    static int load(const fs::path& d, MPI_Comm comm, std::string* message = nullptr) {
        nbr_pattern_t pattern = reinterpret_cast<nbr_pattern_t>(0x1);
        const int code = nbr_load_pattern(d.c_str(), comm, &pattern);
        if (message) *message = nbr_last_error();
        if (code == NBR_SUCCESS) {
            nbr_pattern_free(&pattern);
        } else {
            EXPECT_EQ(pattern, nullptr);
        }
        return code;
    }

    /// Rewrites rank r's file through `edit` on rank 0 and fixes the manifest checksum.
    void edit_rank_file(std::uint32_t r, const std::function<void(nbr::schema::RankPattern&)>& edit) {
        if (world_rank() == 0) {
            auto manifest = nbr::read_manifest(dir());
            auto pattern = nbr::read_rank_pattern(dir(), r, manifest);
            edit(pattern);
            const auto bytes = nbr::serialize_deterministic(pattern);
            nbr::write_file(dir() / nbr::rank_file_name(r), bytes);
            manifest.set_rank_checksums(static_cast<int>(r), nbr::internal::checksum64(bytes));
            nbr::write_file(dir() / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /// Expects `code` on rank `culprit` and NBR_ERR_REMOTE elsewhere.
    static void expect_on_one_rank(int code, std::uint32_t culprit, const fs::path& d, const std::string& fragment) {
        std::string message;
        const int result = load(d, MPI_COMM_WORLD, &message);
        if (static_cast<std::uint32_t>(world_rank()) == culprit) {
            EXPECT_EQ(result, code) << nbr_strerror(result) << ": " << message;
        } else {
            EXPECT_EQ(result, NBR_ERR_REMOTE) << message;
            EXPECT_NE(message.find("rank " + std::to_string(culprit)), std::string::npos) << message;
        }
        EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }

    nbr::test::SharedTempDir tmp_;
    nbr::Topology topology_;
};

TEST_F(LoadErrorTest, IntactPatternLoadsOnEveryRank) {
    EXPECT_EQ(load(dir(), MPI_COMM_WORLD), NBR_SUCCESS);
}

TEST_F(LoadErrorTest, FlagsGivenOnSomeRanksOnlyAreArgumentErrorsEverywhereNotAHang) {
    if (world_size() < 2) GTEST_SKIP() << "needs ranks that differ";
    // Measurement agrees among the ranks and a native hand-off runs MPI's collective: on some
    // ranks only either would wait forever for the others.
    for (const auto& [flag, name] :
         {std::pair{NBR_LOAD_MEASURE, "NBR_LOAD_MEASURE"}, std::pair{NBR_LOAD_NO_NATIVE, "NBR_LOAD_NO_NATIVE"}}) {
        nbr_pattern_t pattern = NBR_PATTERN_NULL;
        const int code = nbr_load_pattern_flags(dir().c_str(), MPI_COMM_WORLD, world_rank() == 0 ? flag : 0, &pattern);
        EXPECT_EQ(code, NBR_ERR_ARG) << name;
        EXPECT_EQ(pattern, NBR_PATTERN_NULL);
        EXPECT_NE(std::string(nbr_last_error()).find(std::string(name) + " given on some ranks only"),
                  std::string::npos)
            << nbr_last_error();
    }
    // Statistics are local, step synchronization orders a rank's own sends: both may differ.
    for (const unsigned long flag : {NBR_LOAD_STATS, NBR_LOAD_STEP_SYNC}) {
        nbr_pattern_t pattern = NBR_PATTERN_NULL;
        ASSERT_EQ(nbr_load_pattern_flags(dir().c_str(), MPI_COMM_WORLD, world_rank() == 1 ? flag : 0, &pattern),
                  NBR_SUCCESS)
            << nbr_last_error();
        EXPECT_EQ(nbr_pattern_free(&pattern), NBR_SUCCESS);
    }
}

TEST_F(LoadErrorTest, NullPatternPointerOnOneRankFailsEverywhereNotAHang) {
    // The other ranks would wait in the load's collectives for a rank that returned at once.
    const int culprit = world_size() - 1;
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    const int code = nbr_load_pattern(dir().c_str(), MPI_COMM_WORLD, world_rank() == culprit ? nullptr : &pattern);
    const std::string message = nbr_last_error();
    EXPECT_EQ(code, world_rank() == culprit ? NBR_ERR_ARG : NBR_ERR_REMOTE) << message;
    EXPECT_EQ(pattern, NBR_PATTERN_NULL);
    EXPECT_NE(message.find("pattern pointer is NULL"), std::string::npos) << message;
}

TEST_F(LoadErrorTest, MissingDirectoryIsAnIoErrorOnEveryRank) {
    std::string message;
    EXPECT_EQ(load(tmp_.path() / "nothing", MPI_COMM_WORLD, &message), NBR_ERR_IO);
    EXPECT_NE(message.find("nothing/manifest.pb"), std::string::npos) << message;
}

TEST_F(LoadErrorTest, CommunicatorOfAnotherSizeIsASizeError) {
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, 0, &half);
    std::string message;
    EXPECT_EQ(load(dir(), half, &message), NBR_ERR_COMM_SIZE);
    EXPECT_NE(message.find("communicator has"), std::string::npos) << message;
    MPI_Comm_free(&half);
}

TEST_F(LoadErrorTest, DistGraphWithOtherNeighborsIsANeighborsError) {
    const auto other = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.6, 5});
    const auto r = static_cast<std::uint32_t>(world_rank());
    std::vector<int> in(other.in_neighbors(r).begin(), other.in_neighbors(r).end());
    std::vector<int> out(other.out_neighbors(r).begin(), other.out_neighbors(r).end());
    MPI_Comm graph = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(in.size()), in.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(out.size()), out.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    std::string message;
    const int code = load(dir(), graph, &message);
    const bool differs =
        !std::equal(in.begin(), in.end(), topology_.in_neighbors(r).begin(), topology_.in_neighbors(r).end()) ||
        !std::equal(out.begin(), out.end(), topology_.out_neighbors(r).begin(), topology_.out_neighbors(r).end());
    EXPECT_EQ(code, differs ? NBR_ERR_NEIGHBORS : NBR_ERR_REMOTE) << message;
    EXPECT_NE(message.find("neighbor"), std::string::npos) << message;
    MPI_Comm_free(&graph);
}

TEST_F(LoadErrorTest, CartesianCommunicatorIsCheckedAgainstThePattern) {
    // A periodic ring's lists (r-1, r+1 both ways) against another topology's pattern: the
    // ranks whose lists differ say which neighbor. A non-periodic ring's ends have one neighbor
    // each way (MPI_PROC_NULL is no neighbor): their lists are shorter than the pattern's.
    int dims[1] = {world_size()};
    int periods[1] = {1};
    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    const auto r = static_cast<std::uint32_t>(world_rank());
    const int n = world_size();
    const std::vector<std::uint32_t> ring = {(r + n - 1) % n, (r + 1) % n};
    const bool differs =
        !std::ranges::equal(ring, topology_.in_neighbors(r)) || !std::ranges::equal(ring, topology_.out_neighbors(r));
    std::string message;
    EXPECT_EQ(load(dir(), cart, &message), differs ? NBR_ERR_NEIGHBORS : NBR_ERR_REMOTE) << message;
    EXPECT_NE(message.find("neighbor"), std::string::npos) << message;
    MPI_Comm_free(&cart);
    periods[0] = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    const bool end = r == 0 || static_cast<int>(r) == n - 1;
    const int code = load(dir(), cart, &message);
    EXPECT_EQ(code, end || differs ? NBR_ERR_NEIGHBORS : NBR_ERR_REMOTE) << message;
    if (end) {
        EXPECT_NE(message.find("communicator has 1 in-neighbors"), std::string::npos) << message;
    }
    MPI_Comm_free(&cart);
}

TEST_F(LoadErrorTest, CorruptedRankFileIsAChecksumErrorOnItsRank) {
    if (world_rank() == 0) {
        auto bytes = nbr::read_file(dir() / nbr::rank_file_name(2));
        bytes[bytes.size() / 3] ^= 0x10;
        nbr::write_file(dir() / nbr::rank_file_name(2), bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_on_one_rank(NBR_ERR_CHECKSUM, 2, dir(), "rank-000002.pb");
}

TEST_F(LoadErrorTest, TruncatedRankFileIsAChecksumErrorOnItsRank) {
    if (world_rank() == 0) {
        const auto bytes = nbr::read_file(dir() / nbr::rank_file_name(1));
        nbr::write_file(dir() / nbr::rank_file_name(1), bytes.substr(0, bytes.size() - 5));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_on_one_rank(NBR_ERR_CHECKSUM, 1, dir(), "rank-000001.pb");
}

TEST_F(LoadErrorTest, TruncatedManifestIsCorruptOnEveryRank) {
    if (world_rank() == 0) {
        const auto bytes = nbr::read_file(dir() / nbr::manifest_file_name());
        nbr::write_file(dir() / nbr::manifest_file_name(), bytes.substr(0, bytes.size() / 2));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    std::string message;
    EXPECT_EQ(load(dir(), MPI_COMM_WORLD, &message), NBR_ERR_CORRUPT);
    EXPECT_NE(message.find("manifest.pb"), std::string::npos) << message;
}

TEST_F(LoadErrorTest, RankFileOfNewerFormatIsAVersionError) {
    edit_rank_file(3, [](auto& p) { p.set_format_version(nbr::kFormatVersion + 1); });
    expect_on_one_rank(NBR_ERR_VERSION, 3, dir(), "newer");
}

TEST_F(LoadErrorTest, RankFileHoldingAnotherRankIsARankError) {
    edit_rank_file(1, [](auto& p) { p.set_rank(0); });
    expect_on_one_rank(NBR_ERR_RANK, 1, dir(), "rank-000001.pb");
}

TEST_F(LoadErrorTest, RankFileWithAnotherTopologyHashIsATopologyError) {
    edit_rank_file(0, [](auto& p) { p.set_topology_hash(p.topology_hash() + 1); });
    expect_on_one_rank(NBR_ERR_TOPOLOGY_HASH, 0, dir(), "topology hash");
}

TEST_F(LoadErrorTest, ScheduleThatNeverDeliversAnEdgeIsAPatternError) {
    // Drop one receive from rank 1's schedule: an in-edge is never delivered.
    edit_rank_file(1, [](auto& p) {
        auto* ops = p.mutable_steps(0)->mutable_operations();
        for (int i = 0; i < ops->size(); ++i) {
            if ((*ops)[i].kind() == nbr::schema::Operation::RECV) {
                ops->DeleteSubrange(i, 1);
                return;
            }
        }
    });
    expect_on_one_rank(NBR_ERR_PATTERN, 1, dir(), "never delivered");
}

TEST_F(LoadErrorTest, ManifestOfNewerFormatFailsWithVersionOnEveryRank) {
    if (world_rank() == 0) {
        auto manifest = nbr::read_manifest(dir());
        manifest.set_format_version(nbr::kFormatVersion + 1);
        nbr::write_file(dir() / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    std::string message;
    EXPECT_EQ(load(dir(), MPI_COMM_WORLD, &message), NBR_ERR_VERSION) << message;
    EXPECT_NE(message.find("manifest.pb: format version"), std::string::npos) << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
}

/// Copies rank r's file of the pattern in `other` over this pattern's (a directory assembled
/// from two compiles, or a rank file replaced after the manifest was written).
void mix_in(const fs::path& other, const fs::path& into, std::uint32_t r) {
    if (world_rank() == 0)
        fs::copy_file(other / nbr::rank_file_name(r), into / nbr::rank_file_name(r),
                      fs::copy_options::overwrite_existing);
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(LoadErrorTest, RankFileOfAnotherAlgorithmIsMixed) {
    nbr::test::compile_to(MPI_COMM_WORLD, topology_, tmp_.path() / "cn", nbr::compiler::AlgorithmKind::common_neighbor);
    mix_in(tmp_.path() / "cn", dir(), 2);
    expect_on_one_rank(NBR_ERR_MIXED, 2, dir(), "rank-000002.pb: rank file of another compile (algorithm");
}

TEST_F(LoadErrorTest, RankFileOfAnotherTopologyIsMixed) {
    const auto other = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.6, 9});
    nbr::test::compile_to(MPI_COMM_WORLD, other, tmp_.path() / "other");
    mix_in(tmp_.path() / "other", dir(), 3);
    expect_on_one_rank(NBR_ERR_MIXED, 3, dir(), "another topology");
}

TEST_F(LoadErrorTest, RankFileReplacedByFifoFailsWithoutBlocking) {
    const fs::path file = dir() / nbr::rank_file_name(1);
    if (world_rank() == 0) {
        fs::remove(file);
        ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_on_one_rank(NBR_ERR_IO, 1, dir(), "rank-000001.pb: is not a regular file");
}

TEST_F(LoadErrorTest, UnreadableRankFileFailsWithIoNamingTheReason) {
    const fs::path file = dir() / nbr::rank_file_name(2);
    int readable = 0;
    if (world_rank() == 0) {
        fs::permissions(file, fs::perms::none);
        readable = std::ifstream(file).good() ? 1 : 0;  // root reads it anyway
    }
    MPI_Bcast(&readable, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (readable != 0) GTEST_SKIP() << "running as root: permissions do not apply (tests/cli covers this case)";
    expect_on_one_rank(NBR_ERR_IO, 2, dir(), "rank-000002.pb: cannot open file: Permission denied");
}

/// The packed layout: damage to one rank's index record or pattern fails that rank; damage to
/// the whole file (truncation, another compile's file) fails every rank.
class PackedLoadErrorTest : public LoadErrorTest {
protected:
    void SetUp() override {
        auto options = nbr::test::common_neighbor_options(dir(), 2);
        options.layout = nbr::compiler::PatternLayout::packed;
        topology_ = nbr::generate_random({static_cast<std::uint32_t>(world_size()), 0.6, 4});
        nbr::compiler::compile(MPI_COMM_WORLD, topology_, options);
    }
    [[nodiscard]] fs::path pack() const { return dir() / nbr::packed_file_name(); }

    /// Applies `edit` to ranks.pack on rank 0.
    void edit_pack(const std::function<void(std::string&)>& edit) const {
        if (world_rank() == 0) {
            auto bytes = nbr::read_file(pack());
            edit(bytes);
            nbr::write_file(pack(), bytes);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /// Expects `code` and `fragment` on every rank.
    void expect_everywhere(int code, const std::string& fragment) const {
        std::string message;
        EXPECT_EQ(load(dir(), MPI_COMM_WORLD, &message), code) << message;
        EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }

    /// Offset of rank r's pattern in the bytes of ranks.pack (the first word of its record).
    [[nodiscard]] static std::uint64_t slice_offset(const std::string& bytes, std::uint32_t r) {
        std::uint64_t word = 0;
        for (std::uint64_t k = 0; k < 8; ++k) {
            word |= std::uint64_t{static_cast<unsigned char>(bytes.at(nbr::packed_record_offset(r) + k))} << (8 * k);
        }
        return word;
    }
};

TEST_F(PackedLoadErrorTest, IntactPackedPatternLoadsOnEveryRank) {
    EXPECT_EQ(load(dir(), MPI_COMM_WORLD), NBR_SUCCESS);
}

TEST_F(PackedLoadErrorTest, CorruptedIndexRecordIsAChecksumErrorOnItsRank) {
    edit_pack([](std::string& b) { b[nbr::packed_record_offset(2) + 9] ^= 0x04; });
    expect_on_one_rank(NBR_ERR_CHECKSUM, 2, dir(), "ranks.pack: index record of rank 2 corrupted");
}

TEST_F(PackedLoadErrorTest, CorruptedRankPatternIsAChecksumErrorOnItsRank) {
    edit_pack([](std::string& b) { b.at(slice_offset(b, 1) + 3) ^= 0x10; });
    expect_on_one_rank(NBR_ERR_CHECKSUM, 1, dir(), "ranks.pack: rank 1's pattern corrupted");
}

TEST_F(PackedLoadErrorTest, TruncatedPackFailsOnEveryRank) {
    edit_pack([](std::string& b) { b.resize(b.size() - 5); });
    expect_everywhere(NBR_ERR_CHECKSUM, "ranks.pack: truncated");
}

TEST_F(PackedLoadErrorTest, PackOfAnotherCompileIsMixedOnEveryRank) {
    auto options = nbr::test::common_neighbor_options(tmp_.path() / "naive", 2);
    options.algorithm = nbr::compiler::AlgorithmKind::naive;
    options.layout = nbr::compiler::PatternLayout::packed;
    nbr::compiler::compile(MPI_COMM_WORLD, topology_, options);
    if (world_rank() == 0) {
        fs::copy_file(tmp_.path() / "naive" / nbr::packed_file_name(), pack(), fs::copy_options::overwrite_existing);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_everywhere(NBR_ERR_MIXED, "pack file of another compile");
}

TEST_F(PackedLoadErrorTest, MissingPackIsAnIoErrorOnEveryRank) {
    if (world_rank() == 0) fs::remove(pack());
    MPI_Barrier(MPI_COMM_WORLD);
    expect_everywhere(NBR_ERR_IO, "ranks.pack: cannot open file");
}

TEST(LoadArguments, NullPointersAreArgumentErrors) {
    EXPECT_EQ(nbr_load_pattern("x", MPI_COMM_WORLD, nullptr), NBR_ERR_ARG);
    EXPECT_EQ(nbr_load_pattern("x", MPI_COMM_NULL, nullptr), NBR_ERR_ARG);
    EXPECT_EQ(nbr_pattern_free(nullptr), NBR_ERR_ARG);
    EXPECT_STREQ(nbr_strerror(NBR_ERR_CHECKSUM), "rank file does not match the manifest checksum");
    EXPECT_EQ(nbr_get_api_version(), static_cast<unsigned>(NBR_API_VERSION));
}

}  // namespace
