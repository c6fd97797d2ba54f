#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbr/schema/file_io.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/packed.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "temp_root.hpp"

namespace {

namespace fs = std::filesystem;

nbr::schema::RankPattern sample(std::uint32_t rank) {
    nbr::schema::RankPattern p;
    p.set_format_version(nbr::kSingleFormatVersion);
    p.set_rank(rank);
    p.set_num_ranks(2);
    p.add_in_neighbors(1 - rank);
    p.add_in_source_slots(0);
    p.add_out_neighbors(1 - rank);
    p.set_topology_hash(42);
    p.set_algorithm("naive");
    auto* step = p.add_steps();
    auto* recv = step->add_operations();
    recv->set_kind(nbr::schema::Operation::RECV);
    recv->set_peer(1 - rank);
    recv->add_origins(1 - rank);
    recv->add_slots(0);
    auto* send = step->add_operations();
    send->set_kind(nbr::schema::Operation::SEND);
    send->set_peer(1 - rank);
    send->add_origins(rank);
    send->add_slots(0);
    return p;
}

class SchemaTest : public testing::Test {
protected:
    void SetUp() override {
        dir_ = nbr::test::temp_root() / ("nbr_schema_" + std::to_string(::getpid()) + "_" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        nbr::schema::Manifest manifest;
        manifest.set_format_version(nbr::kSingleFormatVersion);
        manifest.set_num_ranks(2);
        manifest.set_num_edges(2);
        manifest.set_algorithm("naive");
        manifest.set_topology_hash(42);
        for (std::uint32_t r = 0; r < 2; ++r) {
            const auto bytes = nbr::serialize_deterministic(sample(r));
            nbr::write_file(dir_ / nbr::rank_file_name(r), bytes);
            manifest.add_rank_checksums(nbr::internal::checksum64(bytes));
        }
        manifest_ = manifest;
        nbr::write_file(dir_ / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
    }
    void TearDown() override { fs::remove_all(dir_); }

    nbr::PatternErrorKind error_kind(const std::function<void()>& f, std::string* message = nullptr) {
        try {
            f();
        } catch (const nbr::PatternError& e) {
            if (message) *message = e.what();
            return e.kind();
        }
        ADD_FAILURE() << "no PatternError";
        return nbr::PatternErrorKind::io;
    }

    fs::path dir_;
    nbr::schema::Manifest manifest_;
};

TEST_F(SchemaTest, RoundTrip) {
    const auto manifest = nbr::read_manifest(dir_);
    EXPECT_EQ(manifest.num_ranks(), 2u);
    for (std::uint32_t r = 0; r < 2; ++r) {
        const auto p = nbr::read_rank_pattern(dir_, r, manifest);
        EXPECT_EQ(nbr::serialize_deterministic(p), nbr::serialize_deterministic(sample(r)));
    }
    nbr::RankPatternReader reader(dir_, manifest, 0, 2);
    nbr::schema::RankPattern pattern;
    for (std::uint32_t r = 0; r < 2; ++r) {
        ASSERT_TRUE(reader.next(pattern));
        EXPECT_EQ(nbr::serialize_deterministic(pattern), nbr::serialize_deterministic(sample(r)));
    }
    EXPECT_FALSE(reader.next(pattern));
    EXPECT_EQ(nbr::rank_file_name(7), "rank-000007.pb");
    EXPECT_EQ(nbr::rank_file_name(1234567), "rank-1234567.pb");
}

TEST_F(SchemaTest, RejectsNewerAndMissingVersions) {
    auto manifest = manifest_;
    manifest.set_format_version(nbr::kFormatVersion + 1);
    nbr::write_file(dir_ / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
    std::string message;
    EXPECT_EQ(error_kind([&] { (void)nbr::read_manifest(dir_); }, &message), nbr::PatternErrorKind::version);
    EXPECT_NE(message.find("newer"), std::string::npos);
    EXPECT_NE(message.find("manifest.pb"), std::string::npos);
    manifest.clear_format_version();
    nbr::write_file(dir_ / nbr::manifest_file_name(), nbr::serialize_deterministic(manifest));
    EXPECT_EQ(error_kind([&] { (void)nbr::read_manifest(dir_); }), nbr::PatternErrorKind::version);
}

TEST_F(SchemaTest, MultiVariantManifestsNeedFormatTwoVariantsAndBandsFromZero) {
    nbr::schema::Manifest manifest;
    manifest.set_format_version(nbr::kMultiVariantFormatVersion);
    manifest.set_num_ranks(2);
    manifest.set_algorithm("auto");
    for (const char* name : {"naive", "kgroup-k3"}) manifest.add_variants()->set_name(name);
    for (auto [collective, from, variant] :
         {std::tuple{nbr::schema::ALLGATHER, 0, 1}, {nbr::schema::ALLGATHER, 64, 0}, {nbr::schema::ALLTOALL, 0, 0}}) {
        auto* band = manifest.add_bands();
        band->set_collective(collective);
        band->set_from_bytes(static_cast<std::uint64_t>(from));
        band->set_variant(static_cast<std::uint32_t>(variant));
    }
    const auto bytes = [](const nbr::schema::Manifest& m) { return nbr::serialize_deterministic(m); };
    const auto parsed = nbr::parse_manifest(bytes(manifest), "m");
    EXPECT_EQ(nbr::band_variant(parsed, nbr::schema::ALLGATHER, 63), 1U);
    EXPECT_EQ(nbr::band_variant(parsed, nbr::schema::ALLGATHER, 64), 0U);
    EXPECT_EQ(nbr::band_variant(parsed, nbr::schema::ALLTOALL, 1U << 30), 0U);
    auto bad = manifest;
    bad.set_format_version(nbr::kSingleFormatVersion);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest;
    bad.mutable_bands(1)->set_from_bytes(0);  // not increasing
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest;
    bad.mutable_bands()->RemoveLast();  // no alltoall band
    std::string message;
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }, &message),
              nbr::PatternErrorKind::corrupt);
    EXPECT_NE(message.find("alltoall bands: none"), std::string::npos) << message;
    bad = manifest;
    bad.add_rank_checksums(1);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest;
    bad.set_alltoallv_variant(2);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest;
    bad.mutable_variants(1)->set_name("naive");
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest;
    bad.clear_variants();  // format 2 without variants
    bad.clear_bands();
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
}

TEST_F(SchemaTest, RejectsTruncatedAndCorruptedFiles) {
    const auto path = dir_ / nbr::rank_file_name(1);
    auto bytes = nbr::read_file(path);
    nbr::write_file(path, bytes.substr(0, bytes.size() / 2));
    std::string message;
    EXPECT_EQ(error_kind([&] { (void)nbr::read_rank_pattern(dir_, 1, manifest_); }, &message),
              nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("rank-000001.pb"), std::string::npos);
    const auto manifest_path = dir_ / nbr::manifest_file_name();
    const auto manifest_bytes = nbr::read_file(manifest_path);
    nbr::write_file(manifest_path, manifest_bytes.substr(0, manifest_bytes.size() - 3));
    EXPECT_EQ(error_kind([&] { (void)nbr::read_manifest(dir_); }), nbr::PatternErrorKind::corrupt);
    fs::remove(path);
    EXPECT_EQ(error_kind([&] { (void)nbr::read_rank_pattern(dir_, 1, manifest_); }), nbr::PatternErrorKind::io);
}

TEST_F(SchemaTest, RejectsFileOfAnotherRank) {
    fs::copy_file(dir_ / nbr::rank_file_name(0), dir_ / nbr::rank_file_name(1), fs::copy_options::overwrite_existing);
    auto manifest = manifest_;
    manifest.set_rank_checksums(1, manifest.rank_checksums(0));
    EXPECT_EQ(error_kind([&] { (void)nbr::read_rank_pattern(dir_, 1, manifest); }), nbr::PatternErrorKind::rank);
    manifest.set_topology_hash(43);
    EXPECT_EQ(error_kind([&] { (void)nbr::read_rank_pattern(dir_, 0, manifest); }),
              nbr::PatternErrorKind::topology_hash);
}

TEST(ValidateRankPattern, RejectsOutOfRangeContent) {
    auto p = sample(0);
    p.mutable_steps(0)->mutable_operations(0)->set_peer(5);
    EXPECT_THROW(nbr::validate_rank_pattern(p, "x"), nbr::PatternError);
    p = sample(0);
    p.mutable_steps(0)->mutable_operations(1)->add_slots(3);
    EXPECT_THROW(nbr::validate_rank_pattern(p, "x"), nbr::PatternError);
    p = sample(0);
    p.add_in_neighbors(1);
    EXPECT_THROW(nbr::validate_rank_pattern(p, "x"), nbr::PatternError);
    EXPECT_NO_THROW(nbr::validate_rank_pattern(sample(1), "x"));
}

TEST(Checksum, DependsOnEveryByte) {
    std::string a(100, 'a');
    std::string b = a;
    b[57] = 'b';
    EXPECT_NE(nbr::internal::checksum64(a), nbr::internal::checksum64(b));
    EXPECT_NE(nbr::internal::checksum64(a), nbr::internal::checksum64(a.substr(0, 99)));
    EXPECT_EQ(nbr::internal::checksum64(a), nbr::internal::checksum64(std::string(100, 'a')));
}

// The test vectors of docs/format.md ("Checksums and hashes"): the same on every host, so a
// pattern written on one machine checks on any other, and another implementation can check
// itself against them.
TEST(Checksum, SpecifiedTestVectors) {
    EXPECT_EQ(nbr::internal::checksum64(""), 0xbac1775082379709ULL);
    EXPECT_EQ(nbr::internal::checksum64("a"), 0x14810778b82c40b1ULL);
    EXPECT_EQ(nbr::internal::checksum64("nbr pattern"), 0xd321db4bb442b957ULL);
}

// Pattern and capture directories are made as temporary siblings and renamed into place: they
// and their files get the umask's permissions, as ones made by hand (a directory shared with a
// group stays readable by it), and the directories distinct names.
TEST(OwnedTempDir, HasTheUmasksPermissionsAndAFreshNameEachTime) {
    const fs::path parent = nbr::test::temp_root() / ("nbr_tempdir_" + std::to_string(::getpid()));
    fs::create_directories(parent);
    for (const mode_t mask : {mode_t{022}, mode_t{077}, mode_t{002}}) {
        const mode_t before = ::umask(mask);
        const fs::path a = nbr::make_owned_temp_dir(parent, "out.tmp-");
        const fs::path b = nbr::make_owned_temp_dir(parent, "out.tmp-");
        nbr::write_whole_file(a / "file", "bytes");
        ::umask(before);
        EXPECT_NE(a, b);
        struct stat info {};
        ASSERT_EQ(::stat(a.c_str(), &info), 0);
        EXPECT_EQ(info.st_mode & 0777, 0777 & ~mask) << std::oct << mask;
        ASSERT_EQ(::stat((a / "file").c_str(), &info), 0);
        EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask) << std::oct << mask;
        const std::string name = a.filename().string();
        const std::string owner = "out.tmp-" + nbr::host_name() + "-" + std::to_string(::getpid()) + "-";
        EXPECT_EQ(name.rfind(owner, 0), 0U) << name;
        EXPECT_EQ(name.size(), owner.size() + 6) << name;
    }
    EXPECT_THROW((void)nbr::make_owned_temp_dir(parent / "missing", "x-"), nbr::FileError);
    fs::remove_all(parent);
}

// Wisdom, machine files, a capture's calls and the drop-in's JSON report replace their file
// whole (replace_whole_file): the new bytes exactly, nothing left beside it, and where the
// file cannot be replaced an error naming it, the old file untouched, no temporary left.
TEST(ReplaceWholeFile, ReplacesAllOrNothingAndLeavesNoTemporaryFile) {
    const fs::path dir = nbr::test::temp_root() / ("nbr_replace_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto entries = [&dir] {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    };
    nbr::replace_whole_file(dir / "report.json", std::string(1000, 'a'));
    nbr::replace_whole_file(dir / "report.json", "short");
    EXPECT_EQ(nbr::read_regular_file(dir / "report.json"), "short");
    EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
    fs::create_directory(dir / "taken");  // a directory where the file should go
    fs::create_directory(dir / "taken" / "inside");
    try {
        nbr::replace_whole_file(dir / "taken", "bytes");
        ADD_FAILURE() << "replaced a non-empty directory";
    } catch (const nbr::FileError& error) {
        EXPECT_NE(std::string(error.what()).find((dir / "taken").string()), std::string::npos) << error.what();
    }
    EXPECT_THROW(nbr::replace_whole_file(dir / "missing" / "file", "bytes"), nbr::FileError);
    EXPECT_EQ(entries(), (std::vector<std::string>{"report.json", "taken"}));
    EXPECT_EQ(nbr::read_regular_file(dir / "report.json"), "short");
    fs::remove_all(dir);
}

}  // namespace

namespace {

/// A packed directory of `slices` (rank order) for compile `id`, written by hand as the format
/// describes: header, records, patterns.
std::string pack(std::uint64_t id, const std::vector<std::string>& slices) {
    const auto n = static_cast<std::uint64_t>(slices.size());
    std::uint64_t size = nbr::packed_data_offset(n);
    for (const auto& s : slices) size += s.size();
    std::string file = nbr::encode_packed_header(n, id, size);
    std::uint64_t offset = nbr::packed_data_offset(n);
    for (std::uint64_t r = 0; r < n; ++r) {
        const auto& s = slices[static_cast<std::size_t>(r)];
        file += nbr::encode_packed_record(id, r, {offset, s.size(), nbr::internal::checksum64(s)});
        offset += s.size();
    }
    for (const auto& s : slices) file += s;
    return file;
}

class PackedSchemaTest : public SchemaTest {
protected:
    void SetUp() override {
        SchemaTest::SetUp();
        fs::remove(dir_ / nbr::rank_file_name(0));
        fs::remove(dir_ / nbr::rank_file_name(1));
        for (std::uint32_t r = 0; r < 2; ++r) {
            auto pattern = sample(r);
            pattern.set_compile_id(kId);
            slices_.push_back(nbr::serialize_deterministic(pattern));
        }
        manifest_.clear_rank_checksums();
        manifest_.set_format_version(nbr::kPackedFormatVersion);
        manifest_.set_layout(nbr::schema::PACKED);
        manifest_.set_compile_id(kId);
        write(pack(kId, slices_));
    }
    void write(const std::string& bytes) const { nbr::write_file(dir_ / nbr::packed_file_name(), bytes); }
    /// The error reading `rank` gives after `edit` changed the pack file.
    nbr::PatternErrorKind damaged(const std::function<void(std::string&)>& edit, std::uint32_t rank,
                                  std::string* message) {
        auto bytes = pack(kId, slices_);
        edit(bytes);
        write(bytes);
        return error_kind([&] { (void)nbr::read_rank_pattern(dir_, rank, manifest_); }, message);
    }

    static constexpr std::uint64_t kId = 7;
    std::vector<std::string> slices_;
};

TEST_F(PackedSchemaTest, HeaderAndRecordsFollowTheFormat) {
    const auto file = pack(kId, slices_);
    EXPECT_EQ(file.substr(0, 8), "NBRPACK1");
    EXPECT_EQ(file.size(), 64 + 2 * 32 + slices_[0].size() + slices_[1].size());
    // Test vectors for docs/format.md: the header's and rank 1's check words.
    const auto word = [](const std::string& s, std::size_t at) {
        std::uint64_t w = 0;
        for (std::size_t k = 0; k < 8; ++k) w |= std::uint64_t{static_cast<unsigned char>(s[at + k])} << (8 * k);
        return w;
    };
    EXPECT_EQ(word(nbr::encode_packed_header(2, 7, 200), 56), 0xf380b72f7f94251bULL);
    EXPECT_EQ(word(nbr::encode_packed_record(7, 1, {160, 40, 9}), 24), 0xff715c6b8366ff81ULL);
}

TEST_F(PackedSchemaTest, EveryRankReadsItsOwnSlice) {
    const auto parsed = nbr::parse_manifest(nbr::serialize_deterministic(manifest_), "m");
    for (std::uint32_t r = 0; r < 2; ++r) {
        std::uint64_t read = 0;
        const auto pattern = nbr::read_rank_pattern(dir_, r, parsed, &read);
        EXPECT_EQ(nbr::serialize_deterministic(pattern), slices_[r]);
        EXPECT_EQ(read, 64 + 32 + slices_[r].size());
    }
    EXPECT_EQ(nbr::rank_pattern_source(dir_, 1, parsed), (dir_ / "ranks.pack").string() + " (rank 1)");
    std::string message;
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_rank_pattern(slices_[0], "s", 0, parsed); }, &message),
              nbr::PatternErrorKind::corrupt);
    EXPECT_NE(message.find("no rank checksums"), std::string::npos) << message;
}

TEST_F(PackedSchemaTest, RankPatternReaderReadsThePackInBlocksWithTheSameChecks) {
    const auto file_size = fs::file_size(dir_ / nbr::packed_file_name());
    nbr::schema::RankPattern pattern;
    {
        nbr::RankPatternReader reader(dir_, manifest_, 0, 2);
        for (std::uint32_t r = 0; r < 2; ++r) {
            ASSERT_TRUE(reader.next(pattern));
            EXPECT_EQ(reader.rank(), r);
            EXPECT_EQ(nbr::serialize_deterministic(pattern), slices_[r]);
        }
        EXPECT_FALSE(reader.next(pattern));
        EXPECT_EQ(reader.bytes_read(), file_size) << "header, index and data, each read once";
    }
    {
        nbr::RankPatternReader reader(dir_, manifest_, 1, 2);
        ASSERT_TRUE(reader.next(pattern));
        EXPECT_EQ(nbr::serialize_deterministic(pattern), slices_[1]);
        EXPECT_EQ(reader.bytes_read(), 64 + 32 + slices_[1].size()) << "nothing of rank 0";
    }
    // Damage to rank 1's slice: rank 0 still reads, rank 1 fails as read_rank_pattern does.
    auto bytes = pack(kId, slices_);
    bytes[bytes.size() - 3] ^= 1;
    write(bytes);
    nbr::RankPatternReader reader(dir_, manifest_, 0, 2);
    ASSERT_TRUE(reader.next(pattern));
    std::string message;
    EXPECT_EQ(error_kind([&] { (void)reader.next(pattern); }, &message), nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("rank 1's pattern corrupted"), std::string::npos) << message;
    // A truncated pack fails at the header, before any rank.
    write(pack(kId, slices_).substr(0, 100));
    EXPECT_EQ(error_kind([&] { nbr::RankPatternReader(dir_, manifest_, 0, 2); }, &message),
              nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST_F(PackedSchemaTest, DamageIsReportedByKind) {
    std::string message;
    EXPECT_EQ(damaged([](std::string& b) { b[70] ^= 1; }, 0, &message), nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("index record of rank 0 corrupted"), std::string::npos) << message;
    EXPECT_NO_THROW((void)nbr::read_rank_pattern(dir_, 1, manifest_)) << "rank 1's record is intact";
    EXPECT_EQ(damaged([](std::string& b) { b[b.size() - 3] ^= 1; }, 1, &message), nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("rank 1's pattern corrupted"), std::string::npos) << message;
    EXPECT_EQ(damaged([](std::string& b) { b.resize(b.size() - 1); }, 0, &message), nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    EXPECT_EQ(damaged([](std::string& b) { b.resize(10); }, 0, &message), nbr::PatternErrorKind::checksum);
    EXPECT_EQ(damaged([](std::string& b) { b += "x"; }, 0, &message), nbr::PatternErrorKind::corrupt);
    EXPECT_EQ(damaged([](std::string& b) { b[0] = 'X'; }, 0, &message), nbr::PatternErrorKind::corrupt);
    EXPECT_NE(message.find("not an nbr pack file"), std::string::npos) << message;
    EXPECT_EQ(damaged([](std::string& b) { b[20] ^= 1; }, 0, &message), nbr::PatternErrorKind::checksum);
    EXPECT_NE(message.find("header corrupted"), std::string::npos) << message;
    // The pack of another compile (or a manifest of another compile beside it).
    EXPECT_EQ(damaged([&](std::string& b) { b = pack(kId + 1, slices_); }, 0, &message), nbr::PatternErrorKind::mixed);
    EXPECT_NE(message.find("pack file of another compile"), std::string::npos) << message;
    // A consistent record that points past the file.
    EXPECT_EQ(damaged(
                  [&](std::string& b) {
                      b.replace(96, 32, nbr::encode_packed_record(kId, 1, {60, 40, 0}));
                  },
                  1, &message),
              nbr::PatternErrorKind::corrupt);
    EXPECT_NE(message.find("points outside"), std::string::npos) << message;
    // A slice of another compile, with a record made for it.
    auto other = sample(1);
    other.set_compile_id(kId + 1);
    EXPECT_EQ(damaged(
                  [&](std::string& b) {
                      b = pack(kId, {slices_[0], nbr::serialize_deterministic(other)});
                  },
                  1, &message),
              nbr::PatternErrorKind::mixed);
    EXPECT_NE(message.find("ranks.pack (rank 1): rank pattern of another compile"), std::string::npos) << message;
    fs::remove(dir_ / nbr::packed_file_name());
    EXPECT_EQ(error_kind([&] { (void)nbr::read_rank_pattern(dir_, 0, manifest_); }), nbr::PatternErrorKind::io);
}

TEST_F(PackedSchemaTest, PackedManifestsNeedFormatThreeAndACompileId) {
    const auto bytes = [](const nbr::schema::Manifest& m) { return nbr::serialize_deterministic(m); };
    EXPECT_NO_THROW((void)nbr::parse_manifest(bytes(manifest_), "m"));
    auto bad = manifest_;
    bad.set_format_version(nbr::kSingleFormatVersion);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest_;
    bad.add_rank_checksums(1);
    bad.add_rank_checksums(2);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest_;
    bad.set_compile_id(0);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest_;
    bad.set_layout(static_cast<nbr::schema::Layout>(5));
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest_;
    bad.set_layout(nbr::schema::PER_RANK);  // format 3, one file per rank: no such format
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::corrupt);
    bad = manifest_;
    bad.set_format_version(nbr::kFormatVersion + 1);
    EXPECT_EQ(error_kind([&] { (void)nbr::parse_manifest(bytes(bad), "m"); }), nbr::PatternErrorKind::version);
}

}  // namespace
