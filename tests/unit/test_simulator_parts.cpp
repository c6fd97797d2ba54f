// The simulator's parts on their own (simulator/src): first-come and fair links, the arrival
// rule of a fair sending NIC, and the step and BSP gates. The whole model is checked by
// hand-computed simulations in test_simulate.
#include <gtest/gtest.h>

#include <vector>

#include "network.hpp"
#include "step_gates.hpp"

namespace {

using nbr::simulator::ExecutionRule;
using nbr::simulator::SimProgram;
using namespace nbr::simulator::internal;

TEST(SimulatorParts, FirstComeLinksQueueInArrivalOrder) {
    FirstComeLinks links(2);
    EXPECT_EQ(links.take(0, 10, 5), 10);  // idle: at once
    EXPECT_EQ(links.take(0, 12, 5), 15);  // behind the first
    EXPECT_EQ(links.take(0, 30, 1), 30);  // free again
    EXPECT_EQ(links.take(1, 12, 5), 12);  // another link is independent
}

TEST(SimulatorParts, FairLinksIgnoreStaleDepartures) {
    FairLinks links(1);
    EXPECT_FALSE(links.next_departure(0));  // idle
    links.join(0, 0, 10, 7, 3);
    const auto first = links.next_departure(0);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->first, 10);
    links.join(0, 4, 10, 8, 0);                       // shares from 4: the first leaves at 16
    EXPECT_FALSE(links.leave(0, 10, first->second));  // the departure scheduled before is stale
    const auto now = links.next_departure(0);
    ASSERT_TRUE(now);
    EXPECT_EQ(now->first, 16);
    const auto job = links.leave(0, now->first, now->second);
    ASSERT_TRUE(job);
    EXPECT_EQ(job->message, 7U);
    EXPECT_EQ(job->aux, 3);  // handed back
}

TEST(SimulatorParts, TailGateHoldsAnArrivalUntilTheTailLeft) {
    TailGate gate(2);
    // Message 0 passes the receiving NIC at 50 before its tail's departure is known: held.
    EXPECT_FALSE(gate.arrival(0, 50, 7));
    const auto held = gate.tail_left(0, 60);
    ASSERT_TRUE(held);
    EXPECT_EQ(*held, 50);
    EXPECT_EQ(gate.arrival(0, *held, 7), 67);  // not before its tail left plus the latency
    // Message 1's tail left first: nothing held, and a late arrival keeps its own time.
    EXPECT_FALSE(gate.tail_left(1, 10));
    EXPECT_EQ(gate.arrival(1, 40, 7), 40);
}

/// Two ranks, one call: m0 0→1 (steps 0/0), m1 and m2 1→0 (steps 1/1), m3 0→1 (steps 1/1).
SimProgram stepped() {
    SimProgram p;
    p.num_ranks = 2;
    p.src = {0, 1, 1, 0};
    p.dst = {1, 0, 0, 1};
    p.send_step = {0, 1, 1, 1};
    p.recv_step = {0, 1, 1, 1};
    return p;
}

std::vector<std::uint32_t> released_by(StepGates& gates, std::uint32_t received) {
    std::vector<std::uint32_t> released;
    gates.received(received, [&](std::uint32_t h) { released.push_back(h); });
    return released;
}

TEST(SimulatorParts, StepGatesPerRankUnderTheStepRule) {
    const auto program = stepped();
    StepGates gates(program, ExecutionRule::step, 1, 4);
    EXPECT_TRUE(gates.ready(0));
    EXPECT_FALSE(gates.ready(1));  // rank 1 waits for m0, its step-0 receive
    EXPECT_TRUE(gates.ready(3));   // rank 0 has no step-0 receive
    gates.hold(1);
    gates.hold(2);
    EXPECT_EQ(released_by(gates, 0), (std::vector<std::uint32_t>{1, 2}));  // in the order held
    EXPECT_TRUE(gates.ready(1));
}

TEST(SimulatorParts, StepGatesPerCallUnderBsp) {
    const auto program = stepped();
    StepGates gates(program, ExecutionRule::bsp, 1, 4);
    EXPECT_FALSE(gates.ready(3));  // every rank waits for every step-0 receive
    gates.hold(3);
    gates.hold(1);
    EXPECT_EQ(released_by(gates, 0), (std::vector<std::uint32_t>{3, 1}));
}

TEST(SimulatorParts, StepGatesHoldNothingUnderTheEventRule) {
    const auto program = stepped();
    StepGates gates(program, ExecutionRule::event, 1, 4);
    for (std::uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(gates.ready(i));
    EXPECT_TRUE(released_by(gates, 0).empty());
}

}  // namespace
