// The schedule simulator: exact times computed by hand for small schedules (docs/simulate.md
// states the model), machine files, placement, and errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "machine_support.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/simulate.hpp"
#include "shared_link.hpp"
#include "test_support.hpp"

namespace {

using nbr::Edge;
using nbr::Placement;
using nbr::schema::Operation;
using nbr::simulator::Collective;
using nbr::simulator::DistanceClass;
using nbr::simulator::Machine;
using nbr::simulator::SimResult;

using nbr::test::Op;

using nbr::test::naive;
using nbr::test::patterns;

using nbr::test::round_link;

/// Round numbers (machine_support.hpp): L = 1 us, o_s = 0.5 us, o_r = 0.25 us, G = 1 ns/B in
/// every class; copies 0.5 ns/B; NIC 2 ns/B with a 0.1 us gap.
nbr::schema::Machine spec() {
    return nbr::test::round_machine();
}

SimResult run(const std::vector<nbr::schema::RankPattern>& p, const nbr::schema::Machine& m, std::uint32_t per_node,
              std::uint64_t block, Collective c = Collective::allgather, bool critical_path = false) {
    const auto program = nbr::simulator::make_program(p, c);
    const auto machine = nbr::simulator::machine_from_spec(m, "test");
    nbr::simulator::SimOptions options;
    options.critical_path = critical_path;
    return nbr::simulator::simulate(program, machine, Placement::block(program.num_ranks, per_node, per_node), block,
                                    options);
}

using Kind = nbr::simulator::PathStep::Kind;

/// A critical path step as (kind, rank, peer, start, end, queued).
struct Expected {
    Kind kind;
    std::uint32_t rank, peer;
    double start, end, queued;
};

void expect_path(const SimResult& r, const std::vector<Expected>& expected) {
    ASSERT_EQ(r.path.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const auto& s = r.path[k];
        const auto& e = expected[k];
        SCOPED_TRACE("step " + std::to_string(k));
        EXPECT_EQ(s.kind, e.kind);
        EXPECT_EQ(s.rank, e.rank);
        EXPECT_EQ(s.peer, e.peer);
        EXPECT_NEAR(s.start_us, e.start, 1e-9);
        EXPECT_NEAR(s.end_us, e.end, 1e-9);
        EXPECT_NEAR(s.queued_us, e.queued, 1e-9);
    }
    EXPECT_NEAR(r.path.back().end_us, r.latency_us, 1e-9);
}

TEST(Simulate, OneMessage) {
    // o_s 0.5 | inject 1000 B x 1 ns = 1.0 | L 1.0 | o_r 0.25: zero-copy, no packing.
    const auto r = run(naive(2, {{0, 1}}), spec(), 2, 1000);
    EXPECT_DOUBLE_EQ(r.latency_us, 2.75);
    EXPECT_DOUBLE_EQ(r.completion_min_us, 1.5);  // the sender is done when its data has left
    EXPECT_EQ(r.last_rank, 1U);
    EXPECT_EQ(r.critical_path_messages, 1U);
    EXPECT_EQ(r.traffic[0].messages_max, 1U);
    EXPECT_DOUBLE_EQ(r.traffic[0].bytes_mean, 500);
}

TEST(Simulate, StreamsThatCrossMoveAtTheExchangeRate) {
    // Format 12: from 1000 B a message that waited for its sender's previous one moves at
    // 3 ns/B if its receiver is injecting as it starts. One message each way: neither waited,
    // 2.75 as one way. Two each way (duplicate edges): each rank posts both (0.5, 1.0); the
    // first messages leave at 1 ns/B (0.5 to 1.5); the second ones, queued behind them with
    // the other rank injecting, at 3 ns/B (1.5 to 4.5), L (5.5), o_r at the receiver (the
    // first receives done at 2.75): 5.75. Without the exchange rate: 2.5 to 2.5 + 1 + L 1 +
    // o_r 0.25 = 3.75.
    auto m = spec();
    m.set_format_version(12);
    auto* segment = m.mutable_socket()->add_segments();
    segment->set_from_bytes(1000);
    segment->set_exchange_byte_time_ns(3);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 1000).latency_us, 2.75);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}, {1, 0}}), m, 2, 1000).latency_us, 2.75);
    const auto two_each_way = naive(2, {{0, 1}, {0, 1}, {1, 0}, {1, 0}});
    EXPECT_DOUBLE_EQ(run(two_each_way, spec(), 2, 1000, Collective::alltoall).latency_us, 3.75);
    EXPECT_DOUBLE_EQ(run(two_each_way, m, 2, 1000, Collective::alltoall).latency_us, 5.75);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}, {0, 1}}), m, 2, 1000, Collective::alltoall).latency_us, 3.75);  // one way
    EXPECT_DOUBLE_EQ(run(two_each_way, m, 2, 999, Collective::alltoall).latency_us, 3.748);  // below the segment
    // The field needs format 12 and a non-negative value.
    m.set_format_version(11);
    EXPECT_THROW((void)nbr::simulator::machine_from_spec(m, "old"), nbr::simulator::MachineError);
    m.set_format_version(12);
    segment->set_exchange_byte_time_ns(-1);
    EXPECT_THROW((void)nbr::simulator::machine_from_spec(m, "negative"), nbr::simulator::MachineError);
}

TEST(Simulate, ChainOfDependentMessages) {
    // 0 -> 2 relayed by 1. Both hops are staged (the item is not for the hop's receiver):
    // pack 1000 x 0.5 ns = 0.5 and o_s 0.5 (1.0), inject 1.0 (2.0), L (3.0), rank 1 receives
    // until 3.25 (not its item: no unpack); pack and o_s (4.25), inject (5.25), L (6.25),
    // o_r 0.25 and unpack 0.5 at rank 2: 7.0.
    const auto p = patterns(3, {{0, 2}},
                            {{0, {{0, Operation::SEND, 1, {{0, 0}}}}},
                             {1, {{0, Operation::RECV, 0, {{0, 0}}}, {1, Operation::SEND, 2, {{0, 0}}}}},
                             {2, {{1, Operation::RECV, 1, {{0, 0}}}}}});
    const auto r = run(p, spec(), 3, 1000);
    EXPECT_DOUBLE_EQ(r.latency_us, 7.0);
    EXPECT_EQ(r.last_rank, 2U);
    EXPECT_EQ(r.critical_path_messages, 2U);
}

TEST(Simulate, SegmentedForwardingStreamsThroughTheRelay) {
    // Four parallel edges 0 -> 2, relayed by 1 in one message each way (alltoall: four blocks).
    // In segments the relay forwards the first block while the next ones arrive: a chain of
    // two hops and four segments takes (2 + 4 - 1) segment times, not 2 x 4.
    const std::vector<std::pair<std::uint32_t, std::uint32_t>> items{{0, 0}, {0, 1}, {0, 2}, {0, 3}};
    const auto p = patterns(3, {{0, 2}, {0, 2}, {0, 2}, {0, 2}},
                            {{0, {{0, Operation::SEND, 1, items}}},
                             {1, {{0, Operation::RECV, 0, items}, {1, Operation::SEND, 2, items}}},
                             {2, {{1, Operation::RECV, 1, items}}}});
    const auto machine = nbr::simulator::machine_from_spec(spec(), "test");
    const auto placement = Placement::block(3, 3, 3);
    const auto latency = [&](std::uint32_t units) {
        const auto program = nbr::simulator::make_program(p, Collective::alltoall, units);
        return std::pair{nbr::simulator::simulate(program, machine, placement, 1000).latency_us,
                         program.num_messages()};
    };
    const auto [whole, whole_messages] = latency(nbr::internal::kWholeMessages);
    const auto [one, one_messages] = latency(1);
    const auto [two, two_messages] = latency(2);
    EXPECT_EQ(whole_messages, 2U);
    EXPECT_EQ(one_messages, 8U);
    EXPECT_EQ(two_messages, 4U);
    EXPECT_LT(one, whole);
    EXPECT_LT(two, whole);
    EXPECT_EQ(latency(4).first, whole);  // segments of all four blocks: the whole message
}

TEST(Simulate, CriticalPathFollowsAMessageThroughItsRelay) {
    // The chain above, step by step (times as computed there).
    const auto p = patterns(3, {{0, 2}},
                            {{0, {{0, Operation::SEND, 1, {{0, 0}}}}},
                             {1, {{0, Operation::RECV, 0, {{0, 0}}}, {1, Operation::SEND, 2, {{0, 0}}}}},
                             {2, {{1, Operation::RECV, 1, {{0, 0}}}}}});
    EXPECT_TRUE(run(p, spec(), 3, 1000).path.empty());  // only when asked for
    const auto r = run(p, spec(), 3, 1000, Collective::allgather, true);
    EXPECT_DOUBLE_EQ(r.latency_us, 7.0);  // the same with the trace
    expect_path(r, {{Kind::send, 0, 1, 0, 1.0, 0},
                    {Kind::transfer, 0, 1, 1.0, 3.0, 0},
                    {Kind::receive, 1, 0, 3.0, 3.25, 0},
                    {Kind::send, 1, 2, 3.25, 4.25, 0},
                    {Kind::transfer, 1, 2, 4.25, 6.25, 0},
                    {Kind::receive, 2, 1, 6.25, 7.0, 0}});
    EXPECT_EQ(r.path[1].bytes, 1000U);
}

TEST(Simulate, CriticalPathShowsTheReceiversBusyCpuAndTheCallCost) {
    // Fan-in (below): rank 0's second receive waits for its first, not for its message.
    auto r = run(naive(3, {{1, 0}, {2, 0}}), spec(), 3, 1000, Collective::allgather, true);
    expect_path(r, {{Kind::send, 1, 0, 0, 0.5, 0},
                    {Kind::transfer, 1, 0, 0.5, 2.5, 0},
                    {Kind::receive, 0, 1, 2.5, 2.75, 0},
                    {Kind::receive, 0, 2, 2.75, 3.0, 0}});
    // With a per-call cost the first send waits for the call start on its rank.
    auto m = spec();
    m.set_format_version(2);
    m.set_call_overhead_us(0.4);
    r = run(naive(2, {{0, 1}}), m, 2, 1000, Collective::allgather, true);
    ASSERT_EQ(r.path.size(), 4U);
    EXPECT_EQ(r.path[0].kind, Kind::call);
    EXPECT_EQ(r.path[0].rank, 0U);
    EXPECT_NEAR(r.path[0].end_us, 0.4, 1e-9);
    EXPECT_NEAR(r.path[1].start_us, 0.4, 1e-9);
    // Rank 2 on the other node: its message arrives last, and the path starts at its call.
    r = run(naive(3, {{0, 1}, {2, 1}}), m, 2, 1000, Collective::allgather, true);
    ASSERT_EQ(r.path.size(), 4U);
    EXPECT_EQ(r.path[0].kind, Kind::call);
    EXPECT_EQ(r.path[0].rank, 2U);
    EXPECT_EQ(r.path[2].distance, DistanceClass::network);
}

TEST(Simulate, CriticalPathNamesTheQueueAtTheNic) {
    // The NIC case below: the second message waits 2.6 - 0.5 = 2.1 for the sending NIC.
    const auto r = run(naive(4, {{0, 2}, {1, 3}}), spec(), 2, 1000, Collective::allgather, true);
    expect_path(
        r, {{Kind::send, 1, 3, 0, 0.5, 0}, {Kind::transfer, 1, 3, 0.5, 5.6, 2.1}, {Kind::receive, 3, 1, 5.6, 5.85, 0}});
    EXPECT_EQ(r.path[1].distance, DistanceClass::network);
    // Fair sharing (FairNicSharingFinishesMessagesThatMeetTogether): each message is through
    // the receiving NIC at 5.7 instead of 1.5 + 2.1 alone, slowed by 2.1.
    auto fair = spec();
    fair.set_format_version(4);
    fair.set_nic_sharing(nbr::schema::FAIR);
    const auto shared = run(naive(3, {{0, 2}, {1, 2}}), fair, 1, 1000, Collective::allgather, true);
    expect_path(shared, {{Kind::send, 0, 2, 0, 0.5, 0},
                         {Kind::transfer, 0, 2, 0.5, 5.7, 2.1},
                         {Kind::receive, 2, 0, 5.7, 5.95, 0},
                         {Kind::receive, 2, 1, 5.95, 6.2, 0}});
}

TEST(Simulate, FanInSerializesOnTheReceiversCpu) {
    // Both messages arrive at 2.5; rank 0's CPU takes them one after the other: 2.75, 3.0.
    const auto r = run(naive(3, {{1, 0}, {2, 0}}), spec(), 3, 1000);
    EXPECT_DOUBLE_EQ(r.latency_us, 3.0);
    EXPECT_EQ(r.last_rank, 0U);
}

TEST(Simulate, NicSerializesANodesOffNodeSends) {
    // Ranks 0, 1 on node 0 send to 2, 3 on node 1. Both inject at 0.5; the first holds the
    // NIC for 1000 x 2 ns = 2.0 plus the 0.1 gap (free at 2.6), arrives at 3.5, received at
    // 3.75. The second leaves the NIC at 2.6 + 2.0 = 4.6, reaches the other NIC at 3.6 (free
    // at 3.6), arrives at 5.6, received at 5.85.
    const auto serialized = run(naive(4, {{0, 2}, {1, 3}}), spec(), 2, 1000);
    EXPECT_DOUBLE_EQ(serialized.latency_us, 5.85);
    EXPECT_EQ(serialized.last_rank, 3U);
    EXPECT_DOUBLE_EQ(serialized.traffic[static_cast<std::size_t>(DistanceClass::network)].messages_mean, 0.5);
    // One rank per node: two NICs, no serialization (3.5 + 0.25).
    const auto spread = run(naive(4, {{0, 2}, {1, 3}}), spec(), 1, 1000);
    EXPECT_DOUBLE_EQ(spread.latency_us, 3.75);
}

TEST(Simulate, FairNicSharingFinishesMessagesThatMeetTogether) {
    // Ranks 0 and 1, each on its own node, send to rank 2 on a third. Each message leaves its
    // NIC at 0.5 and holds it 2.0 (tail 2.5); its head reaches rank 2's NIC at 1.5, its tail no
    // earlier than 3.5. First come: the first is through at 3.5 (received 3.75), the second
    // starts at 3.6 and is through at 5.6 (received 5.85).
    const auto fan_in = naive(3, {{0, 2}, {1, 2}});
    EXPECT_DOUBLE_EQ(run(fan_in, spec(), 1, 1000).latency_us, 5.85);
    // Fair: both share the NIC from 1.5, each needing 2.0 + 0.1 (the NIC's gap) alone, so both
    // are through at 1.5 + 4.2 = 5.7; rank 2's CPU takes them one after the other: 5.95, 6.2.
    auto fair = spec();
    fair.set_format_version(4);
    fair.set_nic_sharing(nbr::schema::FAIR);
    EXPECT_DOUBLE_EQ(run(fan_in, fair, 1, 1000).latency_us, 6.2);
    // A lone message pays the receiving NIC's gap too: 2.75 + 1.0 (its NICs' byte time beyond
    // G) + 0.1.
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), spec(), 1, 1000).latency_us, 3.75);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), fair, 1, 1000).latency_us, 3.85);
    // Sends of one node still leave its NIC in turn (NicSerializesANodesOffNodeSends): their
    // heads reach the other NIC at 1.5 and 3.6, and each is alone on it: the second is
    // through at 3.6 + 2.1 = 5.7, received at 5.95.
    EXPECT_NEAR(run(naive(4, {{0, 2}, {1, 3}}), fair, 2, 1000).latency_us, 5.95, 1e-9);
}

TEST(Simulate, FairSendingNicLetsANodesMessagesLeaveTogether) {
    // Ranks 0 and 1 (node 0) send 1000 B to rank 2 (node 1) and rank 4 (node 2). First come:
    // the first holds node 0's NIC 0.5-2.5 (+ gap), is through node 1's NIC at 3.5 and
    // received at 3.75; the second leaves from 2.6, its head reaches node 2's NIC at 3.6, its
    // tail is through at 5.6, received at 5.85.
    const auto fan_out = naive(6, {{0, 2}, {1, 4}});
    EXPECT_DOUBLE_EQ(run(fan_out, spec(), 2, 1000).latency_us, 5.85);
    // Fair: both share node 0's NIC from 0.5, each needing 2.0 + 0.1 alone, so both tails
    // leave at 0.5 + 4.2 = 4.7. Their heads move on at once (through the receiving NICs at
    // 3.5), but a tail arrives no earlier than it left plus L: 5.7, received at 5.95.
    auto fair = spec();
    fair.set_format_version(5);
    fair.set_nic_send_sharing(nbr::schema::FAIR);
    EXPECT_DOUBLE_EQ(run(fan_out, fair, 2, 1000).latency_us, 5.95);
    // Fair at both NICs: each message is alone on its receiving NIC (1.5 + 2.1 = 3.6), so
    // the sending NIC decides again.
    fair.set_nic_sharing(nbr::schema::FAIR);
    EXPECT_DOUBLE_EQ(run(fan_out, fair, 2, 1000).latency_us, 5.95);
    // A lone message pays its sending NIC's gap (as the fair receiving NIC's): its tail leaves
    // at 0.5 + 2.1 = 2.6 and arrives at 3.6, received at 3.85 (first come: 3.75).
    fair.set_nic_sharing(nbr::schema::FIRST_COME);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), fair, 1, 1000).latency_us, 3.85);
    // Messages inside a node do not use the NIC.
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), fair, 2, 1000).latency_us,
                     run(naive(2, {{0, 1}}), spec(), 2, 1000).latency_us);
}

TEST(Simulate, ConcurrentInjectionLetsARanksMessagesOverlap) {
    // Rank 0 sends 1000 B to ranks 1 and 2 of its socket. Its CPU posts them at 0.5 and 1.0;
    // queued at the rank, the second is injected when the first has left (1.5), arrives at 3.5
    // and is received at 3.75. Concurrent: injected at 1.0, arrives at 3.0, received at 3.25.
    const auto fan_out = naive(3, {{0, 1}, {0, 2}});
    EXPECT_DOUBLE_EQ(run(fan_out, spec(), 3, 1000).latency_us, 3.75);
    auto concurrent = spec();
    concurrent.set_format_version(4);
    concurrent.mutable_socket()->set_concurrent_injection(true);
    EXPECT_DOUBLE_EQ(run(fan_out, concurrent, 3, 1000).latency_us, 3.25);
    // Another class still queues (ranks 1 and 2 on another node: the network class).
    EXPECT_DOUBLE_EQ(run(fan_out, concurrent, 1, 1000).latency_us, run(fan_out, spec(), 1, 1000).latency_us);
}

TEST(SharedLink, EqualSharesInVirtualTime) {
    nbr::simulator::internal::SharedLink link;
    link.join(0, 10, 7, 0);
    EXPECT_EQ(link.next_departure(), 10);  // alone: its work
    link.join(4, 10, 8, 0);                // 6 left for the first, shared by two from 4
    EXPECT_EQ(link.next_departure(), 16);
    const auto version = link.version();
    EXPECT_EQ(link.leave(16).message, 7U);
    EXPECT_NE(link.version(), version);    // a departure scheduled before is stale
    EXPECT_EQ(link.next_departure(), 20);  // the second's 4 left, alone again: work conserved
    EXPECT_EQ(link.leave(20).message, 8U);
    EXPECT_TRUE(link.empty());
    // Equal tags leave in joining order.
    link.join(30, 5, 1, 0);
    link.join(30, 5, 2, 0);
    EXPECT_EQ(link.next_departure(), 40);
    EXPECT_EQ(link.leave(40).message, 1U);
    EXPECT_EQ(link.next_departure(), 40);
    EXPECT_EQ(link.leave(40).message, 2U);
}

/// One rank per node, leaves of two nodes, every class as in spec(); with `uplinks` > 0,
/// that many uplinks of 4 ns/B per leaf.
nbr::schema::Machine leaf_spec(std::uint32_t uplinks) {
    auto m = spec();
    m.set_format_version(3);
    m.set_nodes_per_switch(2);
    *m.mutable_leaf() = round_link(1, 0.5, 0.25, 1);
    if (uplinks > 0) {
        m.set_uplinks_per_switch(uplinks);
        m.mutable_uplink()->set_byte_time_ns(4);
    }
    return m;
}

TEST(Simulate, UplinksShareALeafsCrossLeafTraffic) {
    // Ranks 0, 1 under leaf 0 send to 2, 3 under leaf 1, each through its own NIC. Without
    // uplinks both arrive at 3.5 (NicSerializesANodesOffNodeSends, spread): 3.75.
    const auto cross = naive(4, {{0, 2}, {1, 3}});
    EXPECT_DOUBLE_EQ(run(cross, leaf_spec(0), 1, 1000).latency_us, 3.75);
    // One uplink: the first message holds it from 0.5 for 1000 x 4 ns (free at 4.5), its
    // tail crosses the downlink by 4.5 and arrives at 4.5 + L = 5.5; the second crosses from
    // 4.5 to 8.5 and arrives at 9.5, received at 9.75.
    EXPECT_DOUBLE_EQ(run(cross, leaf_spec(1), 1, 1000).latency_us, 9.75);
    // Two uplinks pass a message each 2.0: the second starts at 2.5, still takes 4.0 on its
    // own uplink (6.5) and arrives at 7.5: 7.75.
    EXPECT_DOUBLE_EQ(run(cross, leaf_spec(2), 1, 1000).latency_us, 7.75);
    // Traffic under one leaf does not use the uplinks.
    EXPECT_DOUBLE_EQ(run(naive(4, {{0, 1}, {2, 3}}), leaf_spec(1), 1, 1000).latency_us, 3.75);
}

TEST(Simulate, RendezvousWaitsForTheReceiver) {
    // Eager limit 500 B: the request arrives at 0.5 + 1 = 1.5, the receiver answers (o_r, 1.75),
    // the answer arrives at 2.75, the data moves (3.75), arrives at 4.75, received at 5.0.
    auto m = spec();
    m.mutable_socket()->set_eager_limit_bytes(500);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 1000).latency_us, 5.0);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 500).latency_us, 0.5 + 0.5 + 1 + 0.25);  // eager at the limit
}

TEST(Simulate, AcknowledgedSendsCompleteAfterTheirReceive) {
    // Format 6: above the eager limit the sender is done 0.5 after the receive (5.0), not when
    // its tail left (3.75); eager sends and the receive itself do not change.
    auto m = spec();
    m.set_format_version(6);
    m.mutable_socket()->set_eager_limit_bytes(500);
    m.mutable_socket()->set_ack_latency_us(0.5);
    const auto one = run(naive(2, {{0, 1}}), m, 2, 1000, Collective::allgather, true);
    EXPECT_DOUBLE_EQ(one.latency_us, 5.5);
    EXPECT_EQ(one.last_rank, 0U);
    EXPECT_DOUBLE_EQ(one.completion_min_us, 5.0);
    EXPECT_EQ(one.path.back().kind, Kind::ack);
    EXPECT_DOUBLE_EQ(one.path.back().start_us, 5.0);
    EXPECT_DOUBLE_EQ(one.path.back().end_us, 5.5);
    EXPECT_EQ(one.path.back().rank, 0U);
    EXPECT_EQ(one.path[one.path.size() - 2].kind, Kind::receive);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 500).latency_us, 0.5 + 0.5 + 1 + 0.25);
    // An exchange: each rank's send ends 0.5 after the other's receive, which waits behind
    // the rank's own answer on the other CPU.
    const auto both = run(naive(2, {{0, 1}, {1, 0}}), m, 2, 1000);
    m.mutable_socket()->clear_ack_latency_us();
    EXPECT_DOUBLE_EQ(both.latency_us, run(naive(2, {{0, 1}, {1, 0}}), m, 2, 1000).latency_us + 0.5);
    // A size segment's acknowledgment applies from its size on (2000 B: 1.0 instead of 0.5).
    m.mutable_socket()->set_ack_latency_us(0.5);
    auto* segment = m.mutable_socket()->add_segments();
    segment->set_from_bytes(2000);
    segment->set_ack_latency_us(1.0);
    const auto large = run(naive(2, {{0, 1}}), m, 2, 2000);
    EXPECT_DOUBLE_EQ(large.latency_us, large.completion_min_us + 1.0);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 1999).latency_us, 5.5 + 0.999);
}

TEST(Simulate, TheAcknowledgmentDoesNotWaitForTheUnpack) {
    // Two parallel edges 0 -> 1 in one staged message of 2 x 1000 B (above the eager limit):
    // rank 1 unpacks it for 2000 x 0.5 ns = 1.0 after receiving it, and the transport
    // acknowledges when the message is received, so rank 0 is done 0.5 after that, 0.5
    // before rank 1.
    auto m = spec();
    m.set_format_version(6);
    m.mutable_socket()->set_eager_limit_bytes(500);
    m.mutable_socket()->set_ack_latency_us(0.5);
    const auto p =
        patterns(2, {{0, 1}, {0, 1}},
                 {{0, {{0, Operation::SEND, 1, {{0, 0}, {0, 1}}}}}, {1, {{0, Operation::RECV, 0, {{0, 0}, {0, 1}}}}}});
    const auto r = run(p, m, 2, 1000, Collective::alltoall);
    EXPECT_EQ(r.last_rank, 1U);
    EXPECT_DOUBLE_EQ(r.completion_min_us, r.latency_us - 1.0 + 0.5);
}

/// n parallel edges each way between ranks 0 and 1.
std::vector<Edge> parallel(std::uint32_t n) {
    std::vector<Edge> edges;
    for (std::uint32_t k = 0; k < n; ++k) {
        edges.push_back({0, 1});
        edges.push_back({1, 0});
    }
    return edges;
}

TEST(Simulate, MessagesBeyondAPairsEagerBufferCostTheirReceiver) {
    // 8 messages of 100 B each way, every send before any receive (o_s 0.5: the CPUs send
    // until 4.0). Without a buffer the receives run 4.0 to 6.0 (the last arrives at 5.1).
    // A buffer of 350 B at 50 B per message beyond the bytes takes two (300 B); the other six
    // cost their receiver 1.0 more each: 12.0.
    auto m = spec();
    const auto plain = run(naive(2, parallel(8)), m, 2, 100, Collective::alltoall);
    EXPECT_DOUBLE_EQ(plain.latency_us, 6.0);
    m.set_format_version(7);
    m.mutable_socket()->set_eager_limit_bytes(1000);
    m.mutable_socket()->set_eager_buffer_bytes(350);
    m.mutable_socket()->set_eager_buffer_message_bytes(50);
    m.mutable_socket()->set_overflow_recv_overhead_us(1.0);
    EXPECT_DOUBLE_EQ(run(naive(2, parallel(8)), m, 2, 100, Collective::alltoall).latency_us, 12.0);
    // Room for all eight (8 · 150 B): as without; above the eager limit the buffer plays no part.
    m.mutable_socket()->set_eager_buffer_bytes(1200);
    EXPECT_DOUBLE_EQ(run(naive(2, parallel(8)), m, 2, 100, Collective::alltoall).latency_us, 6.0);
    m.mutable_socket()->set_eager_buffer_bytes(350);
    m.mutable_socket()->set_eager_limit_bytes(50);
    auto rendezvous = spec();
    rendezvous.mutable_socket()->set_eager_limit_bytes(50);
    EXPECT_DOUBLE_EQ(run(naive(2, parallel(8)), m, 2, 100, Collective::alltoall).latency_us,
                     run(naive(2, parallel(8)), rendezvous, 2, 100, Collective::alltoall).latency_us);
    // A completed receive frees its room. Rank 0 sends to 1, three times to rank 2 on the
    // other node (no buffer there; it is done at 3.45), then to 1 again (sends from 0, 0.5,
    // ..., 2.0; 1.1 from a send's start to its arrival on the node). Rank 1 has received the
    // first (1.6 to 1.85) when the second is sent (2.0): with room for one message both fit,
    // rank 1 is done at 3.85 as without a buffer; with room for none both overflow (4.85).
    const std::vector<Edge> spread{{0, 1}, {0, 2}, {0, 2}, {0, 2}, {0, 1}};
    m.mutable_socket()->set_eager_limit_bytes(1000);
    m.mutable_socket()->set_eager_buffer_bytes(150);
    EXPECT_DOUBLE_EQ(run(naive(3, spread), spec(), 2, 100, Collective::alltoall).latency_us, 3.85);
    EXPECT_DOUBLE_EQ(run(naive(3, spread), m, 2, 100, Collective::alltoall).latency_us, 3.85);
    m.mutable_socket()->set_eager_buffer_bytes(100);
    EXPECT_DOUBLE_EQ(run(naive(3, spread), m, 2, 100, Collective::alltoall).latency_us, 4.85);
}

TEST(Simulate, ASizeSegmentsOverheadsApplyFromItsSizeOn) {
    // The exchange above (8 messages of 100 B each way) with o_s 0.75 and o_r 0.5 from 64 B
    // on: the CPUs send until 6.0, then receive until 10.0 (everything has arrived
    // by 7.1). At 50 B the class's overheads still apply, as without the segment.
    auto m = spec();
    m.set_format_version(8);
    auto* segment = m.mutable_socket()->add_segments();
    segment->set_from_bytes(64);
    segment->set_send_overhead_us(0.75);
    segment->set_recv_overhead_us(0.5);
    EXPECT_DOUBLE_EQ(run(naive(2, parallel(8)), m, 2, 100, Collective::alltoall).latency_us, 10.0);
    EXPECT_DOUBLE_EQ(run(naive(2, parallel(8)), m, 2, 50, Collective::alltoall).latency_us,
                     run(naive(2, parallel(8)), spec(), 2, 50, Collective::alltoall).latency_us);
}

TEST(Simulate, CriticalPathThroughARendezvous) {
    // The request (0.5 -> 1.5), the receiver's answer (1.5 -> 1.75), the data (-> 4.75).
    auto m = spec();
    m.mutable_socket()->set_eager_limit_bytes(500);
    const auto r = run(naive(2, {{0, 1}}), m, 2, 1000, Collective::allgather, true);
    expect_path(r, {{Kind::send, 0, 1, 0, 0.5, 0},
                    {Kind::transfer, 0, 1, 0.5, 1.5, 0},
                    {Kind::answer, 1, 0, 1.5, 1.75, 0},
                    {Kind::transfer, 0, 1, 1.75, 4.75, 0},
                    {Kind::receive, 1, 0, 4.75, 5.0, 0}});
}

/// 0 -> 3 and 1 -> 3, combined by rank 2 into one message.
auto combined_by_rank_2() {
    return patterns(4, {{0, 3}, {1, 3}},
                    {{0, {{0, Operation::SEND, 2, {{0, 0}}}}},
                     {1, {{0, Operation::SEND, 2, {{1, 0}}}}},
                     {2,
                      {{0, Operation::RECV, 0, {{0, 0}}},
                       {0, Operation::RECV, 1, {{1, 0}}},
                       {1, Operation::SEND, 3, {{0, 0}, {1, 0}}}}},
                     {3, {{1, Operation::RECV, 2, {{0, 0}, {1, 0}}}}}});
}

TEST(Simulate, CombinedMessageWaitsForBothInputs) {
    // 0 -> 3 and 1 -> 3 combined by rank 2: the staged inputs (pack 0.5, o_s 0.5, inject 1.0,
    // L 1.0) arrive at 3.0 and are received at 3.25 and 3.5; then pack 2000 x 0.5 ns = 1.0 and
    // o_s 0.5 (5.0), inject 2.0 (7.0), L (8.0), o_r 0.25 and unpack of both blocks 1.0: 9.25.
    const auto p = combined_by_rank_2();
    for (const auto c : {Collective::allgather, Collective::alltoall}) {
        const auto r = run(p, spec(), 4, 1000, c);
        EXPECT_DOUBLE_EQ(r.latency_us, 9.25);
        EXPECT_EQ(r.critical_path_messages, 2U);
        EXPECT_EQ(r.last_rank, 3U);
    }
    // A copy cost of 0.1 per block: the inputs' packs 0.6 (arriving at 3.1, received
    // at 3.35 and 3.6; rank 2 unpacks nothing it forwards), the combined pack 1.2 (to 4.8),
    // o_s, inject, L (8.3), o_r, the unpack of both blocks 1.2: 9.75.
    auto m = spec();
    m.set_format_version(8);
    m.set_copy_block_ns(100);
    EXPECT_DOUBLE_EQ(run(p, m, 4, 1000, Collective::alltoall).latency_us, 9.75);
}

TEST(Simulate, CopiesAtTheRateOfTheBlockSize) {
    // The combining case above at blocks of 1000 B: 0.5 ns/B halfway in log2 between
    // 1.0 at 250 B and 0 at 4000 B, as copy_ns_per_byte: 9.25 again; 0.25 ns/B at 1000 B and
    // beyond halves every copy: packs 0.25 (inputs, arriving at 2.75, received at 3.0 and 3.25)
    // and 0.5 (3.75), o_s (4.25), inject (6.25), L (7.25), o_r (7.5), unpack 0.5: 8.0.
    const auto p = combined_by_rank_2();
    const auto with_rates = [](std::initializer_list<std::pair<std::uint64_t, double>> rates) {
        auto m = spec();
        m.set_format_version(11);
        m.set_copy_ns_per_byte(7);  // the rates replace it
        nbr::test::add_copy_rates(m, rates);
        return m;
    };
    EXPECT_DOUBLE_EQ(run(p, with_rates({{250, 1.0}, {4000, 0.0}}), 4, 1000, Collective::alltoall).latency_us, 9.25);
    EXPECT_DOUBLE_EQ(run(p, with_rates({{100, 0.5}, {1000, 0.25}}), 4, 1000, Collective::alltoall).latency_us, 8.0);
}

TEST(Simulate, AllgatherSendsDuplicateEdgesOnceAlltoallTwice) {
    // Two parallel edges 0 -> 1 relayed by 2: allgather carries one block, alltoall two.
    const auto p =
        patterns(3, {{0, 1}, {0, 1}},
                 {{0, {{0, Operation::SEND, 2, {{0, 0}, {0, 1}}}}},
                  {2, {{0, Operation::RECV, 0, {{0, 0}, {0, 1}}}, {1, Operation::SEND, 1, {{0, 0}, {0, 1}}}}},
                  {1, {{1, Operation::RECV, 2, {{0, 0}, {0, 1}}}}}});
    const auto gather = run(p, spec(), 3, 1000, Collective::allgather);
    const auto all = run(p, spec(), 3, 1000, Collective::alltoall);
    EXPECT_DOUBLE_EQ(gather.traffic[0].bytes_mean, 2000.0 / 3);
    EXPECT_DOUBLE_EQ(all.traffic[0].bytes_mean, 4000.0 / 3);
    EXPECT_LT(gather.latency_us, all.latency_us);
}

TEST(Simulate, SizeSegmentsOverrideLatencyAndByteTime) {
    auto m = spec();
    auto* segment = m.mutable_socket()->add_segments();
    segment->set_from_bytes(1000);
    segment->set_latency_us(3);
    // From 1000 B on: L = 3 us, G unchanged; 999 B keep L = 1 us.
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 1000).latency_us, 2.75 + 2);
    EXPECT_DOUBLE_EQ(run(naive(2, {{0, 1}}), m, 2, 999).latency_us, 0.5 + 0.999 + 1 + 0.25);
}

TEST(Simulate, SelfLoopsIsolatedRanksAndDeterminism) {
    const std::vector<Edge> edges{{0, 0}, {0, 2}, {0, 2}, {2, 0}};  // rank 1 has no neighbors
    const auto p = naive(3, edges);
    const auto a = run(p, spec(), 2, 64);
    const auto b = run(p, spec(), 2, 64);
    EXPECT_EQ(a.latency_us, b.latency_us);
    EXPECT_EQ(a.completion_median_us, b.completion_median_us);
    EXPECT_DOUBLE_EQ(a.completion_min_us, 0);  // the isolated rank is done at once
    EXPECT_EQ(a.messages, 4U);
}

TEST(Simulate, CallAndPostedReceiveCostsDelayTheStart) {
    // Format 2: a call costs 0.3 us per rank, posting a socket-class receive 0.2 us.
    auto m = spec();
    m.set_format_version(2);
    m.set_call_overhead_us(0.3);
    m.mutable_socket()->set_post_recv_overhead_us(0.2);
    // Rank 0: call 0.3 | o_s 0.5 | inject 1.0 -> done 1.8 | L 1.0 -> arrives 2.8.
    // Rank 1: call 0.3 + one receive 0.2 = 0.5, idle until 2.8 | o_r 0.25 -> 3.05.
    const auto r = run(naive(2, {{0, 1}}), m, 2, 1000);
    EXPECT_DOUBLE_EQ(r.completion_min_us, 1.8);
    EXPECT_DOUBLE_EQ(r.latency_us, 3.05);
    // A rank with nothing to do still pays for its call.
    const auto idle = run(naive(3, {{0, 1}}), m, 3, 1000);
    EXPECT_DOUBLE_EQ(idle.completion_min_us, 0.3);
}

TEST(Simulate, RanksSharingACoreSerializeTheirCpuWork) {
    auto m = spec();
    m.set_format_version(2);
    const auto p = naive(2, {{0, 1}, {1, 0}});
    // A core each: both send at 0 | o_s 0.5 | inject 1.0 | L 1.0 | o_r 0.25 -> 2.75.
    EXPECT_DOUBLE_EQ(run(p, m, 2, 1000).latency_us, 2.75);
    // One core: rank 1's send waits for rank 0's (0.5 -> 1.0), injects 1.0-2.0, arrives 3.0;
    // rank 0's message arrives at 2.5 and is received 2.5-2.75 first; then 3.0 + 0.25.
    m.set_cores_per_node(1);
    const auto shared = run(p, m, 2, 1000);
    EXPECT_DOUBLE_EQ(shared.latency_us, 3.25);
    EXPECT_DOUBLE_EQ(shared.completion_min_us, 2.75);
    // With a 1 us switch, each receiver notices an arrival only after the core has passed
    // through the other rank: 2.5 + 1 -> 3.75 on rank 1; 3.0 + 1 -> 4.25 on rank 0.
    m.set_switch_us(1);
    EXPECT_DOUBLE_EQ(run(p, m, 2, 1000).latency_us, 4.25);
    // Ranks with a core each never wait for one.
    m.set_cores_per_node(2);
    EXPECT_DOUBLE_EQ(run(p, m, 2, 1000).latency_us, 2.75);
    // More cores than a node has ranks are cores each, however many (no core is allocated
    // beyond the ranks): four nodes of one rank with 4·10^9 cores each.
    m.set_cores_per_node(4000000000U);
    const auto ring = naive(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
    const auto many = run(ring, m, 1, 1000);
    m.set_cores_per_node(1);
    EXPECT_DOUBLE_EQ(many.latency_us, run(ring, m, 1, 1000).latency_us);
}

TEST(Simulate, TimesBeyondTheSimulatorsRangeAreRejectedBeforeSimulating) {
    // 10^13 us of latency: 2^62 ps is about 4.6 * 10^12 us.
    auto m = spec();
    m.mutable_socket()->set_latency_us(1e13);
    try {
        (void)run(naive(2, {{0, 1}}), m, 2, 8);
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("the simulator's range"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at 8 B per block"), std::string::npos) << e.what();
    }
    // Within it, but for a block size that makes it overflow: 1 ns per byte at 2^60 bytes.
    auto fine = spec();
    EXPECT_NO_THROW((void)run(naive(2, {{0, 1}}), fine, 2, 1 << 20));
    EXPECT_THROW((void)run(naive(2, {{0, 1}}), fine, 2, std::uint64_t{1} << 60), std::runtime_error);
}

TEST(Simulate, SizeHeadersPrecedeStagedMessages) {
    // One staged message of 1000 B with one block, unpacked by the receiver.
    auto program = nbr::simulator::make_program(naive(2, {{0, 1}}), Collective::alltoall);
    program.packed[0] = 1;
    program.unpack_units[0] = 1;
    auto m = spec();
    m.set_format_version(2);
    m.mutable_socket()->set_post_recv_overhead_us(0.125);
    const auto machine = nbr::simulator::machine_from_spec(m, "test");
    const auto placement = Placement::block(2, 2, 2);
    // Without: posting 0.125 on rank 1; rank 0: pack 0.5 | o_s 0.5 | inject 1.0 -> 2.0 |
    // L -> 3.0; rank 1: o_r 0.25 + unpack 0.5 -> 3.75.
    EXPECT_DOUBLE_EQ(nbr::simulator::simulate(program, machine, placement, 1000).latency_us, 3.75);
    // With: a second o_s for the 8-byte header (1.5); the header injects first (8 B x 1 ns),
    // the payload 1.508-2.508, arrives 3.508; rank 1: the header's o_r 0.25 and the payload
    // receive's posting 0.125, then o_r 0.25 + unpack 0.5 -> 4.633.
    program.size_headers = true;
    const auto r = nbr::simulator::simulate(program, machine, placement, 1000);
    EXPECT_DOUBLE_EQ(r.completion_min_us, 2.508);
    EXPECT_DOUBLE_EQ(r.latency_us, 4.633);
}

TEST(Simulate, RejectsUnmatchedSends) {
    const auto p = patterns(2, {{0, 1}}, {{0, {{0, Operation::SEND, 1, {{0, 0}}}}}});
    try {
        (void)nbr::simulator::make_program(p, Collective::allgather);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        // The receiver's own plan already finds its in-edge undelivered.
        EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
    }
}

TEST(Simulate, RejectsPlacementOfAnotherSize) {
    const auto program = nbr::simulator::make_program(naive(2, {{0, 1}}), Collective::allgather);
    const auto machine = nbr::simulator::machine_from_spec(spec(), "test");
    EXPECT_THROW((void)nbr::simulator::simulate(program, machine, Placement::block(3, 1, 1), 4), std::runtime_error);
}

TEST(Machine, TheSegmentSizeIsTheNetworksHalfPowerPointRoundedUp) {
    // niagara: (0.65 + 0.2 + 0.2) us / 0.0826 ns per byte = 12.7 KB -> 16 KiB; the SMPI preset:
    // 8.56 us over its NIC's 0.08 ns per byte = 107 KB -> 128 KiB.
    EXPECT_EQ(nbr::simulator::segment_size_for(nbr::simulator::load_machine("niagara")), 16384U);
    EXPECT_EQ(nbr::simulator::segment_size_for(nbr::simulator::load_machine("smpi-fat-tree-32c")), 131072U);
    auto free_bytes = spec();
    for (auto* link : {free_bytes.mutable_socket(), free_bytes.mutable_node(), free_bytes.mutable_network()}) {
        link->set_byte_time_ns(0);
    }
    free_bytes.mutable_nic()->set_byte_time_ns(0);
    EXPECT_EQ(nbr::simulator::segment_size_for(nbr::simulator::machine_from_spec(free_bytes, "free")), 0U);
}

TEST(Machine, PresetsLoadAndRoundTrip) {
    const auto names = nbr::simulator::machine_preset_names();
    ASSERT_GE(names.size(), 2U);
    for (const auto& name : names) {
        const auto m = nbr::simulator::load_machine(name);
        EXPECT_EQ(m.name, name);
        EXPECT_FALSE(m.sources.empty()) << name << " must cite its sources";
        const auto again = nbr::simulator::parse_machine(nbr::simulator::machine_to_json(m.spec), "again");
        EXPECT_EQ(again.cost(DistanceClass::network).latency_ps, m.cost(DistanceClass::network).latency_ps);
    }
    EXPECT_EQ(nbr::simulator::load_machine("niagara").ranks_per_node, 40U);
}

TEST(Machine, SmpiPresetStatesThePlatformsSharing) {
    // The smpi preset states the platform's fair NIC sharing in both directions and its
    // unserialized loopback; bench/smpi/fat-tree-32c-fcfs.json keeps the same values without
    // them, and fat-tree-32c-fair-recv.json with the receiving side only, for the tables
    // computed with them.
    const auto preset = nbr::simulator::load_machine("smpi-fat-tree-32c");
    const auto fcfs = nbr::simulator::load_machine(NBR_SOURCE_DIR "/bench/smpi/fat-tree-32c-fcfs.json");
    const auto recv = nbr::simulator::load_machine(NBR_SOURCE_DIR "/bench/smpi/fat-tree-32c-fair-recv.json");
    EXPECT_EQ(preset.nic_sharing, nbr::simulator::NicSharing::fair);
    EXPECT_EQ(preset.nic_send_sharing, nbr::simulator::NicSharing::fair);
    EXPECT_EQ(fcfs.nic_sharing, nbr::simulator::NicSharing::first_come);
    EXPECT_EQ(fcfs.nic_send_sharing, nbr::simulator::NicSharing::first_come);
    EXPECT_EQ(recv.nic_sharing, nbr::simulator::NicSharing::fair);
    EXPECT_EQ(recv.nic_send_sharing, nbr::simulator::NicSharing::first_come);
    for (const auto c : {DistanceClass::socket, DistanceClass::node, DistanceClass::network}) {
        const bool intra = c != DistanceClass::network;
        EXPECT_EQ(preset.cost(c).concurrent_injection, intra);
        EXPECT_EQ(recv.cost(c).concurrent_injection, intra);
        EXPECT_FALSE(fcfs.cost(c).concurrent_injection);
        EXPECT_EQ(preset.cost(c).latency_and_byte_ps(5000), fcfs.cost(c).latency_and_byte_ps(5000));
        EXPECT_EQ(recv.cost(c).latency_and_byte_ps(5000), fcfs.cost(c).latency_and_byte_ps(5000));
    }
    EXPECT_EQ(preset.nic_byte_ps, fcfs.nic_byte_ps);
    EXPECT_EQ(recv.nic_byte_ps, fcfs.nic_byte_ps);
    EXPECT_EQ(preset.uplinks_per_switch, fcfs.uplinks_per_switch);
}

TEST(Machine, TheRatioErrorOverSizesIsTheLargestOfTheChecksThatBracketThem) {
    using nbr::simulator::RatioPoint;
    const std::vector<RatioPoint> points{{1, 0}, {4, 0.1}, {16, 0}, {64, 0.05}};
    const auto over = [&](std::uint64_t lo, std::uint64_t hi) {
        return nbr::simulator::ratio_error_over(points, 0.2, lo, hi);
    };
    EXPECT_EQ(over(1, 1), 0.0);  // a checked size alone
    EXPECT_EQ(over(2, 3), 0.1);  // between 1 and 4 B
    EXPECT_EQ(over(1, 4), 0.1);  // from one check to the next
    EXPECT_EQ(over(16, 16), 0.0);
    EXPECT_EQ(over(16, 32), 0.05);  // up to the check at 64 B
    EXPECT_EQ(over(8, 16), 0.1);    // down to the check at 4 B
    EXPECT_EQ(over(64, 64), 0.05);
    EXPECT_EQ(over(64, 65), 0.05);  // beyond the last check: the last
    EXPECT_EQ(over(32, 1 << 30), 0.05);
    EXPECT_EQ(over(0, 1), 0.0);                                       // below the first: the first
    EXPECT_EQ(over(32, 8), 0.1);                                      // an inverted range is the same range
    EXPECT_EQ(nbr::simulator::ratio_error_over({}, 0.3, 1, 1), 0.3);  // no points: at every size
}

TEST(Machine, TheCopyRateIsInterpolatedInLog2OfTheBlockSize) {
    using nbr::simulator::CopyRatePoint;
    const std::vector<CopyRatePoint> points{{512, 35}, {8192, 15}};
    const auto at = [&](std::uint64_t bytes) { return nbr::simulator::copy_byte_ps_at(points, 99, bytes); };
    EXPECT_DOUBLE_EQ(at(512), 35);
    EXPECT_DOUBLE_EQ(at(2048), 25);  // halfway from 512 B to 8 KiB in log2
    EXPECT_DOUBLE_EQ(at(4096), 20);
    EXPECT_DOUBLE_EQ(at(1), 35);                                          // below the first: the first
    EXPECT_DOUBLE_EQ(at(1 << 20), 15);                                    // beyond the last: the last
    EXPECT_DOUBLE_EQ(nbr::simulator::copy_byte_ps_at({}, 99, 4096), 99);  // no points: the one rate
    const std::vector<CopyRatePoint> three{{1, 40}, {4, 20}, {64, 10}};
    EXPECT_DOUBLE_EQ(nbr::simulator::copy_byte_ps_at(three, 0, 2), 30);
    EXPECT_DOUBLE_EQ(nbr::simulator::copy_byte_ps_at(three, 0, 16), 15);
}

TEST(Machine, RejectsBadFiles) {
    auto expect_error = [](const std::string& json, const std::string& needle) {
        try {
            (void)nbr::simulator::parse_machine(json, "m.json");
            FAIL() << "accepted: " << json;
        } catch (const nbr::simulator::MachineError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).rfind("m.json: ", 0), 0U) << e.what();
        }
    };
    auto json = nbr::simulator::machine_to_json(spec());
    expect_error("{", "not a valid machine file");
    expect_error(R"({"format_version": 1, "bogus": 2})", "not a valid machine file");
    auto newer = spec();
    newer.set_format_version(99);
    expect_error(nbr::simulator::machine_to_json(newer), "newer");
    auto missing = spec();
    missing.mutable_network()->clear_latency_us();
    expect_error(nbr::simulator::machine_to_json(missing), "network.latency_us");
    auto negative = spec();
    negative.mutable_socket()->set_gap_us(-1);
    expect_error(nbr::simulator::machine_to_json(negative), "socket.gap_us");
    auto early = spec();  // format 1 with a format-2 field
    early.set_call_overhead_us(0.1);
    expect_error(nbr::simulator::machine_to_json(early), "'call_overhead_us' needs format_version 2");
    auto early_post = spec();
    early_post.mutable_network()->set_post_recv_overhead_us(0.1);
    expect_error(nbr::simulator::machine_to_json(early_post), "'post_recv_overhead_us' needs format_version 2");
    auto negative_call = spec();
    negative_call.set_format_version(2);
    negative_call.set_call_overhead_us(-0.1);
    expect_error(nbr::simulator::machine_to_json(negative_call), "call_overhead_us");
    auto early_uplinks = leaf_spec(2);  // format 2 with a format-3 field
    early_uplinks.set_format_version(2);
    expect_error(nbr::simulator::machine_to_json(early_uplinks), "'uplinks_per_switch' needs format_version 3");
    auto early_fair = leaf_spec(2);  // format 3 with a format-4 field
    early_fair.set_nic_sharing(nbr::schema::FAIR);
    expect_error(nbr::simulator::machine_to_json(early_fair), "'nic_sharing' needs format_version 4");
    auto early_concurrent = spec();
    early_concurrent.set_format_version(3);
    early_concurrent.mutable_node()->set_concurrent_injection(true);
    expect_error(nbr::simulator::machine_to_json(early_concurrent), "'concurrent_injection' needs format_version 4");
    auto early_send_fair = spec();  // format 4 with a format-5 field
    early_send_fair.set_format_version(4);
    early_send_fair.set_nic_send_sharing(nbr::schema::FAIR);
    expect_error(nbr::simulator::machine_to_json(early_send_fair), "'nic_send_sharing' needs format_version 5");
    auto early_ack = spec();  // format 5 with a format-6 field
    early_ack.set_format_version(5);
    early_ack.mutable_network()->set_ack_latency_us(0.3);
    expect_error(nbr::simulator::machine_to_json(early_ack), "'ack_latency_us' needs format_version 6");
    auto early_buffer = spec();  // format 6 with a format-7 field
    early_buffer.set_format_version(6);
    early_buffer.mutable_socket()->set_eager_buffer_bytes(4096);
    expect_error(nbr::simulator::machine_to_json(early_buffer), "needs format_version 7");
    auto early_overflow = spec();
    early_overflow.set_format_version(6);
    early_overflow.mutable_node()->set_overflow_recv_overhead_us(0.1);
    expect_error(nbr::simulator::machine_to_json(early_overflow), "needs format_version 7");
    auto negative_overflow = spec();
    negative_overflow.set_format_version(7);
    negative_overflow.mutable_socket()->set_overflow_recv_overhead_us(-1);
    expect_error(nbr::simulator::machine_to_json(negative_overflow), "socket.overflow_recv_overhead_us");
    auto early_segment = spec();  // format 7 with a format-8 field
    early_segment.set_format_version(7);
    auto* segment = early_segment.mutable_socket()->add_segments();
    segment->set_from_bytes(1024);
    segment->set_recv_overhead_us(0.2);
    expect_error(nbr::simulator::machine_to_json(early_segment), "needs format_version 8");
    auto early_block = spec();
    early_block.set_format_version(7);
    early_block.set_copy_block_ns(5);
    expect_error(nbr::simulator::machine_to_json(early_block), "'copy_block_ns' needs format_version 8");
    auto early_ratio = spec();
    early_ratio.set_format_version(8);
    early_ratio.set_ratio_error(0.1);
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_error' needs format_version 9");
    early_ratio.set_format_version(9);
    early_ratio.set_ratio_error(-0.1);
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_error' must be a non-negative number");
    early_ratio.set_ratio_error(10);
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_error' must be below 10");
    early_ratio.set_ratio_error(0.25);
    EXPECT_EQ(nbr::simulator::parse_machine(nbr::simulator::machine_to_json(early_ratio), "ok").ratio_error, 0.25);
    auto* point = early_ratio.add_ratio_errors();  // format 10
    point->set_bytes(16);
    point->set_error(0.1);
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_errors' needs format_version 10");
    early_ratio.set_format_version(10);
    EXPECT_EQ(nbr::simulator::parse_machine(nbr::simulator::machine_to_json(early_ratio), "ok").ratio_errors.size(),
              1U);
    point->set_error(0.3);
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_errors[0].error' must lie in [0, ratio_error]");
    point->set_error(0.1);
    auto* second = early_ratio.add_ratio_errors();
    second->set_bytes(16);
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_errors[1].bytes' must be positive and larger");
    second->set_bytes(64);
    early_ratio.clear_ratio_error();
    expect_error(nbr::simulator::machine_to_json(early_ratio), "'ratio_errors' needs 'ratio_error'");
    auto copy_rates = spec();  // format 11
    auto* rate = copy_rates.add_copy_rates();
    rate->set_block_bytes(512);
    rate->set_ns_per_byte(0.03);
    expect_error(nbr::simulator::machine_to_json(copy_rates), "'copy_rates' needs format_version 11");
    copy_rates.set_format_version(11);
    EXPECT_EQ(nbr::simulator::parse_machine(nbr::simulator::machine_to_json(copy_rates), "ok").copy_rates.size(), 1U);
    rate->set_ns_per_byte(-0.01);
    expect_error(nbr::simulator::machine_to_json(copy_rates), "'copy_rates[0].ns_per_byte' must be a non-negative");
    rate->set_ns_per_byte(0.03);
    copy_rates.add_copy_rates()->set_block_bytes(512);
    expect_error(nbr::simulator::machine_to_json(copy_rates),
                 "'copy_rates[1].block_bytes' must be positive and larger");
    early_segment.set_format_version(8);
    segment->set_send_overhead_us(-0.1);
    expect_error(nbr::simulator::machine_to_json(early_segment), "socket.segments[0].send_overhead_us");
    auto negative_ack = spec();
    negative_ack.set_format_version(6);
    negative_ack.mutable_socket()->set_ack_latency_us(-0.1);
    expect_error(nbr::simulator::machine_to_json(negative_ack), "socket.ack_latency_us");
    auto no_uplink = leaf_spec(2);
    no_uplink.clear_uplink();
    expect_error(nbr::simulator::machine_to_json(no_uplink), "'uplinks_per_switch' and 'uplink' go together");
    auto no_leaves = leaf_spec(2);
    no_leaves.set_nodes_per_switch(0);
    no_leaves.clear_leaf();
    expect_error(nbr::simulator::machine_to_json(no_leaves), "'uplinks_per_switch' needs 'nodes_per_switch'");
    auto no_rate = leaf_spec(2);
    no_rate.mutable_uplink()->clear_byte_time_ns();
    expect_error(nbr::simulator::machine_to_json(no_rate), "uplink.byte_time_ns");
    EXPECT_THROW((void)nbr::simulator::load_machine("no-such-machine"), nbr::simulator::MachineError);
    EXPECT_NO_THROW((void)nbr::simulator::parse_machine(json, "m.json"));
}

TEST(Placement, BlockAndFile) {
    const auto block = Placement::block(10, 4, 2);  // last node partial
    EXPECT_EQ(block.num_nodes(), 3U);
    EXPECT_TRUE(block.same_socket(4, 5));
    EXPECT_FALSE(block.same_socket(5, 6));
    EXPECT_TRUE(block.same_node(5, 6));
    EXPECT_FALSE(block.same_node(7, 8));
    EXPECT_EQ(block.max_ranks_per_node(), 4U);
    EXPECT_THROW((void)Placement::block(4, 2, 3), nbr::InputError);

    const auto dir = nbr::test::temp_root() / ("nbr_placement_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    block.write((dir / "p.txt").string());
    const auto read = Placement::read((dir / "p.txt").string(), 10);
    for (std::uint32_t r = 0; r < 10; ++r) {
        EXPECT_EQ(read.node(r), block.node(r));
        EXPECT_EQ(read.socket(r), block.socket(r));
    }
    auto expect_error = [&](const std::string& text, std::uint32_t n, const std::string& needle) {
        std::ofstream(dir / "bad.txt") << text;
        try {
            (void)Placement::read((dir / "bad.txt").string(), n);
            FAIL() << "accepted: " << text;
        } catch (const nbr::InputError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_error("0 0 0\n1 0\n", 2, "bad.txt:2: expected 'rank node socket'");
    expect_error("0 0 0\n0 1 0\n", 2, "bad.txt:2: rank 0 placed twice");
    expect_error("0 0 0\n", 2, "rank 1 is not placed");
    expect_error("0 0 0\n5 0 0\n", 2, "bad.txt:2: rank 5 out of range");
    expect_error("# ranks 3\n0 0 0\n1 0 0\n", 2, "bad.txt:1: '# ranks 3'");
    std::filesystem::remove_all(dir);
}

TEST(Placement, SocketGroupsMakeEverySocketANodeAndMergeSmallOnes) {
    // Nodes of 8 in sockets of 4, the last node 5 ranks (sockets of 4 and 1): the socket of 1
    // joins the one before it.
    const auto groups = Placement::block(21, 8, 4).socket_groups();
    ASSERT_EQ(groups.num_ranks(), 21U);
    EXPECT_EQ(groups.num_nodes(), 5U);
    for (const auto& [a, b, same] :
         {std::tuple{0U, 3U, true}, {3U, 4U, false}, {8U, 12U, false}, {16U, 19U, true}, {19U, 20U, true}}) {
        EXPECT_EQ(groups.same_node(a, b), same) << a << " " << b;
    }
    EXPECT_EQ(groups.max_ranks_per_node(), 5U);
    EXPECT_EQ(groups.max_ranks_per_socket(), 4U) << "the sockets keep their ids";
    EXPECT_NE(groups.description().find("by socket"), std::string::npos);
    // A small socket first joins the one after it; sockets of half the largest stay apart.
    const auto text = std::string("0 0 0\n1 0 1\n2 0 1\n3 0 1\n4 0 1\n5 1 0\n6 1 0\n7 1 1\n8 1 1\n9 1 1\n10 1 1\n");
    const auto file = Placement::parse(text, "p.txt", 11).socket_groups();
    EXPECT_EQ(file.num_nodes(), 3U);
    EXPECT_TRUE(file.same_node(0, 4));
    EXPECT_FALSE(file.same_node(5, 7));
}

}  // namespace
