// The checks behind nbrc verify's proof of segmented forms (compiler/src/segment_proof.hpp):
// they accept a rank's plan and its segments, and name what a broken one gets wrong.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "nbr/plan/plan.hpp"
#include "segment_proof.hpp"

namespace {

using nbr::internal::Plan;
using nbr::internal::UnitHome;

/// A forwarder: one staged receive of units 0 and 1 from rank 1 delivers unit 0 to in-slot 0;
/// one staged send to rank 2 carries unit 1 (forwarded) and unit 2 (its own block 0).
Plan forwarder() {
    Plan p;
    p.recvs.resize(1);
    p.recvs[0].peer = 1;
    p.recvs[0].units = {0, 1};
    p.recvs[0].deliveries = {{0, 0}};
    p.recvs[0].dependents = {0};
    p.sends.resize(1);
    p.sends[0].peer = 2;
    p.sends[0].units = {1, 2};
    p.sends[0].dependencies = 1;
    p.homes = {UnitHome{UnitHome::Kind::recv_slot, 0, 0, 0}, UnitHome{UnitHome::Kind::staging, 0, 1, 0},
               UnitHome{UnitHome::Kind::send_block, 0, 0, 0}};
    p.recv_units = 2;
    p.send_units = 2;
    p.staged_recvs = true;
    p.independent = false;
    return p;
}

std::string violation(const Plan& plan, std::uint32_t in_slots = 1) {
    try {
        nbr::compiler::internal::check_segmented_plan(plan, in_slots, "here");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

TEST(SegmentProof, AcceptsAPlanAndEachOfItsSegmentedForms) {
    const auto plan = forwarder();
    EXPECT_EQ(violation(plan), "");
    EXPECT_EQ(nbr::internal::longest_segmentable(plan), 2u);
    const auto segmented = nbr::internal::segment_plan(plan, 1);
    EXPECT_EQ(segmented.sends.size(), 2u);  // really split
    EXPECT_EQ(violation(segmented), "");
}

TEST(SegmentProof, NamesASendThatPacksWhatItDoesNotWaitFor) {
    auto plan = forwarder();
    plan.recvs[0].dependents.clear();
    plan.sends[0].dependencies = 0;
    EXPECT_EQ(violation(plan), "here: send 0 packs a block of receive 0 without waiting for it");
}

TEST(SegmentProof, NamesAWaitCountNoReceiveReleases) {
    auto plan = forwarder();
    plan.sends[0].dependencies = 2;
    EXPECT_EQ(violation(plan), "here: send 0 waits for 2 receives, 1 release it");
}

TEST(SegmentProof, NamesAnInSlotNotDeliveredOnce) {
    auto plan = forwarder();
    plan.recvs[0].deliveries.push_back({1, 0});
    EXPECT_EQ(violation(plan), "here: in-slot 0 delivered 2 times");
    EXPECT_EQ(violation(forwarder(), 2), "here: in-slot 1 delivered 0 times");
}

TEST(SegmentProof, FindsMessagesThatWaitInACycle) {
    nbr::simulator::SimProgram chain;
    chain.num_ranks = 2;
    chain.src = {0, 1};
    chain.dst = {1, 0};
    chain.dependencies = {0, 1};  // message 1 waits for message 0
    chain.first_dependent = {0, 1, 1};
    chain.dependents = {1};
    EXPECT_NO_THROW(nbr::compiler::internal::check_acyclic(chain, "chain"));
    auto cycle = chain;
    cycle.dependencies = {1, 1};  // and message 0 for message 1
    cycle.first_dependent = {0, 1, 2};
    cycle.dependents = {1, 0};
    try {
        nbr::compiler::internal::check_acyclic(cycle, "cycle");
        FAIL() << "a cycle was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "cycle: 2 messages wait in a cycle and are never sent");
    }
}

}  // namespace
