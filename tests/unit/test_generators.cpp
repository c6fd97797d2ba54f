#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "nbr/graphs/generators.hpp"
#include "nbr/graphs/topology.hpp"

namespace {

using nbr::Topology;

// The topology hash's test vectors of docs/format.md ("Checksums and hashes").
TEST(TopologyHash, SpecifiedTestVectors) {
    const std::vector<std::uint32_t> in{0, 2}, out{2};
    const std::uint64_t rank1 = nbr::rank_neighborhood_hash(1, in, out);
    EXPECT_EQ(rank1, 0x8075fb66bc26eb4aULL);
    const std::vector<std::uint64_t> ranks{rank1, 7};
    EXPECT_EQ(nbr::topology_hash_of(ranks), 0x95d384e10dfa7cd4ULL);
}

TEST(BalancedDims, LikeMpiDimsCreate) {
    EXPECT_EQ(nbr::balanced_dims(64, 2), (std::vector<std::uint32_t>{8, 8}));
    EXPECT_EQ(nbr::balanced_dims(64, 3), (std::vector<std::uint32_t>{4, 4, 4}));
    EXPECT_EQ(nbr::balanced_dims(1024, 2), (std::vector<std::uint32_t>{32, 32}));
    EXPECT_EQ(nbr::balanced_dims(12, 2), (std::vector<std::uint32_t>{4, 3}));
    EXPECT_EQ(nbr::balanced_dims(7, 2), (std::vector<std::uint32_t>{7, 1}));
    EXPECT_EQ(nbr::balanced_dims(4096, 4), (std::vector<std::uint32_t>{8, 8, 8, 8}));
    for (std::uint32_t n : {6u, 30u, 360u, 1000u}) {
        for (std::uint32_t d = 1; d <= 4; ++d) {
            const auto dims = nbr::balanced_dims(n, d);
            std::uint64_t product = 1;
            for (auto x : dims) product *= x;
            EXPECT_EQ(product, n);
            EXPECT_TRUE(std::is_sorted(dims.rbegin(), dims.rend()));
        }
    }
}

TEST(Moore, NeighborCountsAndSymmetry) {
    struct Case {
        std::uint32_t n, d, r;
    };
    for (const Case c :
         {Case{64, 2, 1}, Case{64, 2, 2}, Case{64, 3, 1}, Case{1024, 2, 3}, Case{4096, 4, 1}, Case{12, 1, 5}}) {
        SCOPED_TRACE(testing::Message() << c.n << " " << c.d << " " << c.r);
        const Topology t = nbr::generate_moore({c.n, c.d, c.r});
        std::uint32_t expected = 1;
        for (std::uint32_t k = 0; k < c.d; ++k) expected *= 2 * c.r + 1;
        --expected;
        ASSERT_EQ(t.num_ranks(), c.n);
        for (std::uint32_t v = 0; v < c.n; ++v) {
            const auto out = t.out_neighbors(v);
            ASSERT_EQ(out.size(), expected);
            std::set<std::uint32_t> distinct(out.begin(), out.end());
            EXPECT_EQ(distinct.size(), out.size()) << "duplicate neighbor of " << v;
            EXPECT_EQ(distinct.count(v), 0u);
            const auto in = t.in_neighbors(v);
            EXPECT_EQ(std::set<std::uint32_t>(in.begin(), in.end()), distinct);  // symmetric
        }
    }
}

TEST(Moore, ExactNeighborsOn2D) {
    // 4x4 grid, r = 1: rank 5 = (1,1) has the 8 ranks around it, offsets in lexicographic order.
    const Topology t = nbr::generate_moore({16, 2, 1});
    const auto out = t.out_neighbors(5);
    EXPECT_EQ(std::vector<std::uint32_t>(out.begin(), out.end()),
              (std::vector<std::uint32_t>{0, 1, 2, 4, 6, 8, 9, 10}));
    // Periodic: rank 0 = (0,0) wraps around.
    const auto out0 = t.out_neighbors(0);
    EXPECT_EQ(std::vector<std::uint32_t>(out0.begin(), out0.end()),
              (std::vector<std::uint32_t>{15, 12, 13, 3, 1, 7, 4, 5}));
}

TEST(Moore, RejectsRadiusThatDuplicatesNeighbors) {
    EXPECT_THROW((void)nbr::generate_moore({16, 2, 2}), nbr::InputError);  // 4x4 grid, needs >= 5
    try {
        (void)nbr::generate_moore({64, 3, 2});
        FAIL();
    } catch (const nbr::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("4x4x4"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW((void)nbr::generate_moore({25, 2, 2}));
    EXPECT_THROW((void)nbr::generate_moore({16, 2, 0}), nbr::InputError);
}

TEST(Random, SeedDeterminesGraph) {
    const Topology a = nbr::generate_random({256, 0.1, 7});
    const Topology b = nbr::generate_random({256, 0.1, 7});
    const Topology c = nbr::generate_random({256, 0.1, 8});
    EXPECT_EQ(a, b);
    EXPECT_NE(a.hash(), c.hash());
    // Density close to δ, no self-loops, sorted unique lists.
    const double density = static_cast<double>(a.num_edges()) / (256.0 * 255.0);
    EXPECT_NEAR(density, 0.1, 0.01);
    for (std::uint32_t v = 0; v < 256; ++v) {
        const auto out = a.out_neighbors(v);
        EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
        EXPECT_EQ(std::adjacent_find(out.begin(), out.end()), out.end());
        EXPECT_EQ(std::find(out.begin(), out.end(), v), out.end());
    }
}

TEST(Random, PinnedValuesStayTheSameAcrossPlatforms) {
    // Guards the generator's stream: a change here changes every published random topology.
    const Topology t = nbr::generate_random({64, 0.2, 1});
    EXPECT_EQ(t.num_edges(), 848u);
    const auto row = t.out_neighbors(0);
    EXPECT_EQ(std::vector<std::uint32_t>(row.begin(), row.end()),
              (std::vector<std::uint32_t>{15, 20, 21, 23, 25, 28, 47, 51, 55, 57, 61}));
    EXPECT_EQ(t.hash(), 0x4aa02909f359776aULL);
}

TEST(Random, DensityZeroIsEmptyOneIsCompleteAboveOneRejected) {
    EXPECT_EQ(nbr::generate_random({32, 0.0, 1}).num_edges(), 0u);
    EXPECT_EQ(nbr::generate_random({32, 1.0, 1}).num_edges(), 32u * 31u);
    EXPECT_THROW((void)nbr::generate_random({32, 1.5, 1}), nbr::InputError);
}

TEST(Pairs, ParallelEdgesWithinEachPairAndAnIsolatedOddRank) {
    const Topology t = nbr::generate_pairs({5, 3});
    EXPECT_EQ(t.num_edges(), 12u);
    EXPECT_EQ(std::vector<std::uint32_t>(t.out_neighbors(0).begin(), t.out_neighbors(0).end()),
              (std::vector<std::uint32_t>{1, 1, 1}));
    EXPECT_EQ(std::vector<std::uint32_t>(t.in_neighbors(3).begin(), t.in_neighbors(3).end()),
              (std::vector<std::uint32_t>{2, 2, 2}));
    EXPECT_EQ(t.out_degree(4), 0u);
    EXPECT_EQ(t.in_degree(4), 0u);
    EXPECT_THROW((void)nbr::generate_pairs({2, 0}), nbr::InputError);
    EXPECT_EQ(nbr::describe(nbr::PairsParams{2, 32}), "pairs ranks=2 edges=32");
}

}  // namespace
