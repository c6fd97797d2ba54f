// The replayer's planner: message layout, direct (typed) messages, data dependencies, and
// local rejection of broken schedules.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>
#include <mpi.h>

#include "nbr/compiler/algorithm.hpp"
#include "nbr/graphs/generators.hpp"

#include "mpi_test_support.hpp"
#include "nbr/compiler/verify.hpp"
#include "nbr/plan/plan.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "relay_algorithm.hpp"
#include "test_support.hpp"

namespace {

using nbr::internal::Collective;
using nbr::internal::PlanError;
using nbr::schema::Operation;

std::vector<nbr::schema::RankPattern> compile(const nbr::Topology& t, nbr::compiler::Algorithm* algorithm) {
    nbr::test::SharedTempDir tmp(MPI_COMM_SELF);
    nbr::compiler::CompileOptions options;
    options.output = tmp.path() / "p";
    options.quiet = true;
    if (algorithm) {
        nbr::compiler::compile(MPI_COMM_SELF, t, *algorithm, options);
    } else {
        nbr::compiler::compile(MPI_COMM_SELF, t, options);
    }
    return nbr::compiler::read_all_rank_patterns(options.output, nbr::read_manifest(options.output));
}

TEST(Plan, NaiveIsAllDirectWithoutDependencies) {
    const auto t = nbr::test::awkward_topology(9);
    for (const auto& p : compile(t, nullptr)) {
        for (auto c : {Collective::allgather, Collective::alltoall}) {
            const auto plan = nbr::internal::build_plan(p, c);
            EXPECT_EQ(plan.sends.size(), t.out_degree(p.rank()));
            EXPECT_EQ(plan.recvs.size(), t.in_degree(p.rank()));
            for (const auto& s : plan.sends) {
                EXPECT_TRUE(s.direct);
                EXPECT_EQ(s.dependencies, 0u);
            }
            for (const auto& r : plan.recvs) EXPECT_TRUE(r.direct);
        }
    }
}

TEST(Plan, RelayLayoutsAndDependencies) {
    // 0 -> 2 twice (duplicate) and 1 -> 2: rank 0 relays both through 1 (relay_of(0) = 1).
    const auto t = nbr::Topology::from_edges(3, std::vector<nbr::Edge>{{0, 2}, {0, 2}, {1, 2}});
    nbr::test::RelayAlgorithm relay;
    const auto patterns = compile(t, &relay);
    const auto ag1 = nbr::internal::build_plan(patterns[1], Collective::allgather);
    // Rank 1: receives (0,0) for relaying (staged), sends it on to 2 in step 1 after it arrives.
    ASSERT_EQ(ag1.recvs.size(), 1u);
    EXPECT_FALSE(ag1.recvs[0].direct);
    EXPECT_TRUE(ag1.recvs[0].deliveries.empty());
    bool found_relay = false;
    for (const auto& s : ag1.sends) {
        if (s.dependencies == 1) {
            found_relay = true;
            EXPECT_EQ(s.peer, 2u);
            EXPECT_FALSE(s.direct);
        }
    }
    EXPECT_TRUE(found_relay);
    const auto ag2 = nbr::internal::build_plan(patterns[2], Collective::allgather);
    const auto aa2 = nbr::internal::build_plan(patterns[2], Collective::alltoall);
    // Rank 2 gets the relayed pair from 1 in step 1 and 1's own edge directly.
    std::size_t deliveries = 0;
    for (const auto& r : ag2.recvs) deliveries += r.deliveries.size();
    EXPECT_EQ(deliveries, 3u);
    // Allgather sends one block per origin, alltoall one per edge.
    std::size_t ag_units = 0, aa_units = 0;
    for (const auto& r : ag2.recvs) ag_units += r.units.size();
    for (const auto& r : aa2.recvs) aa_units += r.units.size();
    EXPECT_LT(ag_units, aa_units);
    EXPECT_EQ(aa_units, 3u);
}

TEST(Plan, OneHopCombinedMessagesStayWholeAndRelayedOnesSplit) {
    // Distance halving between two ranks with four parallel edges each way combines each
    // rank's four alltoall blocks into one message the peer only delivers: one hop, whole.
    std::vector<nbr::Edge> edges;
    for (int k = 0; k < 4; ++k) edges.insert(edges.end(), {{0, 1}, {1, 0}});
    const auto pairs = nbr::Topology::from_edges(2, edges);
    nbr::compiler::AlgorithmOptions options;
    options.placement = nbr::Placement::block(2, 2, 1);
    const auto dh = nbr::compiler::make_algorithm(nbr::compiler::AlgorithmKind::distance_halving, options);
    for (const auto& p : compile(pairs, dh.get())) {
        const auto plan = nbr::internal::build_plan(p, Collective::alltoall);
        ASSERT_EQ(plan.sends.size(), 1u);
        ASSERT_EQ(plan.recvs.size(), 1u);
        EXPECT_EQ(plan.sends[0].units.size(), 4u);
        EXPECT_TRUE(plan.sends[0].one_hop && !plan.sends[0].direct);
        EXPECT_TRUE(plan.recvs[0].one_hop && !plan.recvs[0].direct);
        EXPECT_EQ(nbr::internal::longest_segmentable(plan), 0u);
        EXPECT_EQ(nbr::internal::segment_plan(plan, 1).sends.size(), 1u);
        EXPECT_EQ(nbr::internal::segmented_max_tag(plan, 1), 0);
    }
    // Rank 0 relays its two blocks for rank 2 through rank 1: relayed on both hops, split.
    const auto t = nbr::Topology::from_edges(3, std::vector<nbr::Edge>{{0, 2}, {0, 2}, {1, 2}});
    nbr::test::RelayAlgorithm relay;
    const auto patterns = compile(t, &relay);
    const auto sender = nbr::internal::build_plan(patterns[0], Collective::alltoall);
    const auto relay_plan = nbr::internal::build_plan(patterns[1], Collective::alltoall);
    ASSERT_EQ(sender.sends.size(), 1u);
    EXPECT_FALSE(sender.sends[0].one_hop);
    EXPECT_FALSE(relay_plan.recvs.at(0).one_hop);
    EXPECT_EQ(nbr::internal::segment_plan(sender, 1).sends.size(), 2u);
    EXPECT_EQ(nbr::internal::segment_plan(relay_plan, 1).recvs.size(), relay_plan.recvs.size() + 1);
}

/// Every message of every rank's plan, keyed (sender, receiver, tag): its blocks.
using Messages = std::map<std::tuple<std::uint32_t, std::uint32_t, int>, std::size_t>;

TEST(Plan, SegmentedPlansSplitStagedMessagesIntoMatchingSegmentsOfWholeBlocks) {
    const auto dense = nbr::generate_random({16, 0.6, 3});  // where common-neighbor and kgroup combine
    for (const auto kind : {nbr::compiler::AlgorithmKind::common_neighbor, nbr::compiler::AlgorithmKind::kgroup,
                            nbr::compiler::AlgorithmKind::distance_halving}) {
        const auto t = kind == nbr::compiler::AlgorithmKind::distance_halving ? nbr::test::awkward_topology(9) : dense;
        nbr::compiler::AlgorithmOptions options;
        options.placement = nbr::Placement::block(t.num_ranks(), 4, 2);
        const auto algorithm = nbr::compiler::make_algorithm(kind, options);
        const auto patterns = compile(t, algorithm.get());
        for (auto c : {Collective::allgather, Collective::alltoall}) {
            for (const std::uint32_t max_units : {1U, 2U, 3U}) {
                SCOPED_TRACE(nbr::compiler::to_string(kind) + " max_units " + std::to_string(max_units));
                Messages sent, received;
                bool split = false;
                for (const auto& p : patterns) {
                    const auto whole = nbr::internal::build_plan(p, c);
                    const auto plan = nbr::internal::segment_plan(whole, max_units);
                    EXPECT_EQ(nbr::internal::segmented_max_tag(whole, max_units), plan.max_tag);
                    split = split || plan.sends.size() > whole.sends.size();
                    EXPECT_EQ(plan.recv_units, whole.recv_units);
                    EXPECT_EQ(plan.send_units, whole.send_units);
                    std::multiset<std::uint32_t> slots, whole_slots;
                    for (const auto& r : plan.recvs) {
                        EXPECT_TRUE(r.one_hop || r.units.size() <= max_units);
                        EXPECT_LE(r.tag, plan.max_tag);
                        received[{r.peer, p.rank(), r.tag}] = r.units.size();
                        for (const auto& [position, slot] : r.deliveries) {
                            EXPECT_LT(position, r.units.size());
                            slots.insert(slot);
                        }
                    }
                    for (const auto& r : whole.recvs) {
                        for (const auto& d : r.deliveries) whole_slots.insert(d.second);
                    }
                    EXPECT_EQ(slots, whole_slots);
                    for (std::uint32_t s = 0; s < plan.sends.size(); ++s) {
                        const auto& send = plan.sends[s];
                        EXPECT_TRUE(send.one_hop || send.units.size() <= max_units);
                        sent[{p.rank(), send.peer, send.tag}] = send.units.size();
                        // Every block the segment forwards is in a receive it waits for, and those are all.
                        std::uint32_t waits = 0;
                        for (std::uint32_t r = 0; r < plan.recvs.size(); ++r) {
                            const auto& d = plan.recvs[r].dependents;
                            waits += static_cast<std::uint32_t>(std::count(d.begin(), d.end(), s));
                        }
                        EXPECT_EQ(waits, send.dependencies);
                        for (const auto u : send.units) {
                            const auto& home = plan.homes[u];
                            if (home.kind == nbr::internal::UnitHome::Kind::send_block) continue;
                            const auto& provider = plan.recvs[home.provider];
                            EXPECT_EQ(std::count(provider.dependents.begin(), provider.dependents.end(), s), 1);
                            if (home.kind == nbr::internal::UnitHome::Kind::staging) {
                                EXPECT_EQ(provider.units.at(home.position), u);
                            }
                        }
                    }
                }
                EXPECT_EQ(sent, received);  // every segment matched by (peer, tag), blocks alike
                if (max_units == 1) {
                    EXPECT_TRUE(split);
                }
            }
        }
    }
    EXPECT_EQ(nbr::internal::segment_units(0, 64), nbr::internal::kWholeMessages);
    EXPECT_EQ(nbr::internal::segment_units(1000, 0), nbr::internal::kWholeMessages);
    EXPECT_EQ(nbr::internal::segment_units(1000, 64), 8U);  // 15 fit: a power of two
    EXPECT_EQ(nbr::internal::segment_units(10, 64), 1U);    // a block is never split
}

TEST(Plan, RejectsBrokenSchedules) {
    const auto t = nbr::test::awkward_topology(9);
    auto patterns = compile(t, nullptr);
    // A rank sends an item it never receives.
    auto p = patterns[0];
    auto* op = p.mutable_steps(0)->add_operations();
    op->set_kind(Operation::SEND);
    op->set_peer(1);
    op->add_origins(5);
    op->add_slots(0);
    EXPECT_THROW((void)nbr::internal::build_plan(p, Collective::allgather), PlanError);
    // An in-edge is never delivered.
    p = patterns[1];
    auto* ops = p.mutable_steps(0)->mutable_operations();
    for (int i = 0; i < ops->size(); ++i) {
        if ((*ops)[i].kind() == Operation::RECV) {
            ops->DeleteSubrange(i, 1);
            break;
        }
    }
    try {
        (void)nbr::internal::build_plan(p, Collective::alltoall);
        ADD_FAILURE();
    } catch (const PlanError& e) {
        EXPECT_NE(std::string(e.what()).find("never delivered"), std::string::npos) << e.what();
    }
    // An in-edge delivered twice.
    p = patterns[1];
    for (const auto& o : p.steps(0).operations()) {
        if (o.kind() == Operation::RECV) {
            *p.mutable_steps(0)->add_operations() = o;
            break;
        }
    }
    EXPECT_THROW((void)nbr::internal::build_plan(p, Collective::allgather), PlanError);
}

}  // namespace
