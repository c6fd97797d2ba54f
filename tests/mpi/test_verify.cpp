// verify: accepts correct patterns, rejects deliberately broken ones with the right message.
#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/graphs/generators.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "relay_algorithm.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::schema::Operation;
using nbr::schema::RankPattern;

struct Compiled {
    std::vector<RankPattern> patterns;
    std::uint64_t hash = 0;
};

Compiled compile_relay(const nbr::Topology& topology) {
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    nbr::test::RelayAlgorithm relay;
    nbr::compiler::CompileOptions options;
    options.output = tmp.path() / "p";
    options.quiet = true;
    nbr::compiler::compile(MPI_COMM_SELF, topology, relay, options);
    const auto manifest = nbr::read_manifest(options.output);
    return {nbr::compiler::read_all_rank_patterns(options.output, manifest), manifest.topology_hash()};
}

/// First operation of `kind` in `pattern` that carries more than one item.
Operation* multi_item_op(RankPattern& pattern, Operation::Kind kind, int* step_out = nullptr) {
    for (int s = 0; s < pattern.steps_size(); ++s) {
        for (auto& op : *pattern.mutable_steps(s)->mutable_operations()) {
            if (op.kind() == kind && op.origins_size() > 1) {
                if (step_out) *step_out = s;
                return &op;
            }
        }
    }
    return nullptr;
}

/// The proof spread over the world's processes, each holding its block of `c`'s patterns.
nbr::compiler::VerifyReport verify_spread(const Compiled& c, const nbr::Topology* expected = nullptr) {
    const auto n = static_cast<std::uint32_t>(c.patterns.size());
    const auto [begin, end] = nbr::compiler::verify_block(MPI_COMM_WORLD, n);
    const std::vector<RankPattern> local(c.patterns.begin() + begin, c.patterns.begin() + end);
    return nbr::compiler::verify_patterns(MPI_COMM_WORLD, local, n, c.hash, expected);
}

/// One process's proof and the spread one both find the violation.
void expect_violation(const Compiled& c, const std::string& fragment) {
    for (const auto& report : {nbr::compiler::verify_patterns(c.patterns, c.hash), verify_spread(c)}) {
        EXPECT_FALSE(report.ok);
        EXPECT_NE(report.violation.find(fragment), std::string::npos) << "violation: " << report.violation;
    }
}

class VerifyTest : public testing::Test {
protected:
    void SetUp() override { compiled_ = compile_relay(topology_); }
    nbr::Topology topology_ = nbr::test::awkward_topology(11);
    Compiled compiled_;
};

TEST_F(VerifyTest, AcceptsRelayAndNaivePatterns) {
    const auto report = nbr::compiler::verify_patterns(compiled_.patterns, compiled_.hash, &topology_);
    ASSERT_TRUE(report.ok) << report.violation;
    EXPECT_EQ(report.steps, 2u);
    EXPECT_GT(report.items_moved, report.messages);  // relays combine
    for (const auto& t :
         {nbr::generate_moore({25, 2, 2}), nbr::generate_random({40, 0.3, 9}), nbr::test::awkward_topology(2)}) {
        const auto c = compile_relay(t);
        const auto r = nbr::compiler::verify_patterns(c.patterns, c.hash, &t);
        EXPECT_TRUE(r.ok) << r.violation;
        const auto spread = verify_spread(c, &t);
        EXPECT_TRUE(spread.ok) << spread.violation;
        EXPECT_EQ(spread.edges, r.edges);
        EXPECT_EQ(spread.messages, r.messages);
        EXPECT_EQ(spread.items_moved, r.items_moved);
        EXPECT_EQ(spread.steps, r.steps);
    }
}

TEST_F(VerifyTest, RejectsADroppedItem) {
    // Remove the last item from a combined send and from its receive: that edge is lost.
    int step = 0;
    for (auto& p : compiled_.patterns) {
        if (Operation* send = multi_item_op(p, Operation::SEND, &step)) {
            const auto peer = send->peer();
            send->mutable_origins()->RemoveLast();
            send->mutable_slots()->RemoveLast();
            for (auto& op : *compiled_.patterns[peer].mutable_steps(step)->mutable_operations()) {
                if (op.kind() == Operation::RECV && op.peer() == p.rank() && op.origins_size() > 1) {
                    op.mutable_origins()->RemoveLast();
                    op.mutable_slots()->RemoveLast();
                    break;
                }
            }
            break;
        }
    }
    expect_violation(compiled_, "never delivered");
}

TEST_F(VerifyTest, RejectsADuplicatedItem) {
    // Rank 0 sends its slot-0 item a second time, directly, with a matching receive.
    auto& p0 = compiled_.patterns[0];
    const std::uint32_t dst = p0.out_neighbors(0);
    auto add = [&](RankPattern& p, Operation::Kind kind, std::uint32_t peer) {
        auto* op = p.mutable_steps(0)->add_operations();
        op->set_kind(kind);
        op->set_peer(peer);
        op->add_origins(0);
        op->add_slots(0);
    };
    add(p0, Operation::SEND, dst);
    add(compiled_.patterns[dst], Operation::RECV, 0);
    expect_violation(compiled_, "more than once");
}

TEST_F(VerifyTest, RejectsASendBeforeItsDataArrived) {
    // Move a relayed send from step 1 to step 0 on both sides: the relay does not hold the
    // items yet.
    for (auto& p : compiled_.patterns) {
        if (p.steps_size() < 2) continue;
        auto* ops = p.mutable_steps(1)->mutable_operations();
        for (int i = 0; i < ops->size(); ++i) {
            if ((*ops)[i].kind() != Operation::SEND) continue;
            const Operation send = (*ops)[i];
            ops->DeleteSubrange(i, 1);
            *p.mutable_steps(0)->add_operations() = send;
            auto& peer = compiled_.patterns[send.peer()];
            auto* peer_ops = peer.mutable_steps(1)->mutable_operations();
            for (int j = 0; j < peer_ops->size(); ++j) {
                if ((*peer_ops)[j].kind() == Operation::RECV && (*peer_ops)[j].peer() == p.rank()) {
                    const Operation recv = (*peer_ops)[j];
                    peer_ops->DeleteSubrange(j, 1);
                    *peer.mutable_steps(0)->add_operations() = recv;
                    break;
                }
            }
            expect_violation(compiled_, "before it arrives");
            return;
        }
    }
    FAIL() << "no relayed send found";
}

TEST_F(VerifyTest, RejectsUnmatchedAndMismatchedMessages) {
    auto c = compiled_;
    // Drop a receive: its send has no partner.
    auto* ops = c.patterns[1].mutable_steps(0)->mutable_operations();
    for (int i = 0; i < ops->size(); ++i) {
        if ((*ops)[i].kind() == Operation::RECV) {
            ops->DeleteSubrange(i, 1);
            break;
        }
    }
    expect_violation(c, "no matching receive");
    // Reverse a combined receive's items: order matters for the message layout.
    c = compiled_;
    for (auto& p : c.patterns) {
        if (Operation* recv = multi_item_op(p, Operation::RECV)) {
            std::reverse(recv->mutable_origins()->begin(), recv->mutable_origins()->end());
            std::reverse(recv->mutable_slots()->begin(), recv->mutable_slots()->end());
            break;
        }
    }
    expect_violation(c, "items differ");
}

TEST_F(VerifyTest, RejectsForeignTopologyAndInconsistentLists) {
    const auto other = nbr::test::awkward_topology(12);
    auto report = nbr::compiler::verify_patterns(compiled_.patterns, compiled_.hash, &other);
    EXPECT_FALSE(report.ok);
    auto c = compiled_;
    c.patterns[4].set_in_source_slots(0, c.patterns[4].in_source_slots(0) + 1);
    expect_violation(c, "in-neighbor");
    c = compiled_;
    c.hash ^= 1;
    expect_violation(c, "hash");
    EXPECT_FALSE(verify_spread(compiled_, &other).ok);
    // Two in-list entries swapped between ranks' lists: counts no longer match.
    c = compiled_;
    c.patterns[2].add_in_neighbors(c.patterns[2].in_neighbors(0));
    c.patterns[2].add_in_source_slots(c.patterns[2].in_source_slots(0));
    expect_violation(c, "rank 2");
}

/// A pattern directory verified by every process of the world, each reading its block (both
/// layouts); a damaged rank file is reported by name on every process.
TEST(VerifyDirectory, SpreadOverTheProcessesReadsEachBlock) {
    nbr::test::SharedTempDir tmp;
    const auto topology = nbr::generate_random({40, 0.3, 9});
    for (const auto layout : {nbr::compiler::PatternLayout::per_rank, nbr::compiler::PatternLayout::packed}) {
        auto options = nbr::test::common_neighbor_options(tmp.path() / "p", 2);
        options.layout = layout;
        nbr::compiler::compile(MPI_COMM_WORLD, topology, options);
        const auto report = nbr::compiler::verify_directory(MPI_COMM_WORLD, tmp.path() / "p", &topology);
        EXPECT_TRUE(report.ok) << report.violation;
        EXPECT_EQ(report.edges, topology.num_edges());
    }
    if (nbr::test::world_rank() == 0) {
        nbr::test::compile_to(MPI_COMM_SELF, topology, tmp.path() / "f");
        auto bytes = nbr::read_file(tmp.path() / "f" / nbr::rank_file_name(39));
        bytes[bytes.size() / 2] ^= 0x5a;
        nbr::write_file(tmp.path() / "f" / nbr::rank_file_name(39), bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const auto report = nbr::compiler::verify_directory(MPI_COMM_WORLD, tmp.path() / "f");
    EXPECT_FALSE(report.ok);
    EXPECT_NE(report.violation.find("rank-000039.pb"), std::string::npos) << report.violation;
}

TEST(VerifyDirectory, ReportsFileProblemsByName) {
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    const auto dir = tmp.path() / "p";
    nbr::test::compile_to(MPI_COMM_SELF, nbr::generate_moore({16, 2, 1}), dir);
    EXPECT_TRUE(nbr::compiler::verify_directory(dir).ok);
    auto bytes = nbr::read_file(dir / nbr::rank_file_name(3));
    bytes[bytes.size() / 2] ^= 0x5a;
    nbr::write_file(dir / nbr::rank_file_name(3), bytes);
    const auto report = nbr::compiler::verify_directory(dir);
    EXPECT_FALSE(report.ok);
    EXPECT_NE(report.violation.find("rank-000003.pb"), std::string::npos) << report.violation;
}

}  // namespace
