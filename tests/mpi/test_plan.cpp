// The replayer's planner: message layout, direct (typed) messages, data dependencies, and
// local rejection of broken schedules.
#include <gtest/gtest.h>
#include <mpi.h>

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
