// Noise, skew, execution rules and back-to-back calls in the simulator: exact times computed
// by hand for small schedules (docs/simulate.md, "Noise, skew and execution rules").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "machine_support.hpp"
#include "nbr/graphs/placement.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/simulator/machine.hpp"
#include "nbr/simulator/simulate.hpp"
#include "noise.hpp"
#include "test_support.hpp"

namespace {

using nbr::Placement;
using nbr::schema::Operation;
using nbr::simulator::Collective;
using nbr::simulator::ExecutionRule;
using nbr::simulator::Perturbation;
using nbr::simulator::SimOptions;
using nbr::simulator::SimResult;
using nbr::test::naive;
using nbr::test::patterns;

/// L = 1 us, o_s = 0.5 us, o_r = 0.25 us, G = 1 ns/B, copies 0.5 ns/B, no call costs
/// (machine_support.hpp); every test runs on one node.
nbr::simulator::Machine machine() {
    return nbr::simulator::machine_from_spec(nbr::test::round_machine(), "test");
}

SimResult run(const std::vector<nbr::schema::RankPattern>& p, const Perturbation& perturbation,
              std::uint64_t block = 1000) {
    const auto program = nbr::simulator::make_program(p, Collective::allgather);
    SimOptions options;
    options.perturbation = perturbation;
    options.rank_finish = true;
    const auto placement = Placement::block(program.num_ranks, 8, 8);
    return perturbation.quiet() ? nbr::simulator::simulate(program, machine(), placement, block, options)
                                : nbr::simulator::simulate_perturbed(program, machine(), placement, block, options);
}

Perturbation detour_trace(std::vector<std::uint32_t> ranks, double start, double duration) {
    Perturbation p;
    p.detours.trace = {{start, duration}};
    p.noisy_ranks = std::move(ranks);
    return p;
}

/// 0 -> 2 relayed by rank 1 in step 1, where rank 1 also sends its own block to 2.
std::vector<nbr::schema::RankPattern> two_steps() {
    return patterns(
        3, {{0, 2}, {1, 2}},
        {{0, {{0, Operation::SEND, 1, {{0, 0}}}}},
         {1, {{0, Operation::RECV, 0, {{0, 0}}}, {1, Operation::SEND, 2, {{1, 0}}}, {1, Operation::SEND, 2, {{0, 0}}}}},
         {2, {{1, Operation::RECV, 1, {{1, 0}}}, {1, Operation::RECV, 1, {{0, 0}}}}}});
}

TEST(SimulateNoise, ADetourDelaysTheCpuWorkItOverlaps) {
    // One message of 1000 B: o_s 0.5 | inject 1.0 | L 1.0 | o_r 0.25 = 2.75 without noise.
    const auto p = naive(2, {{0, 1}});
    EXPECT_DOUBLE_EQ(run(p, {}).latency_us, 2.75);
    // A detour of 1 us from 0.2 on the sender stops its o_s after 0.2: it ends at 1.5, the
    // data leaves by 2.5 and is received at 3.75.
    auto r = run(p, detour_trace({0}, 0.2, 1));
    EXPECT_DOUBLE_EQ(r.latency_us, 3.75);
    EXPECT_DOUBLE_EQ(r.finish_us[0], 2.5);
    ASSERT_TRUE(r.noise);
    EXPECT_DOUBLE_EQ(r.noise->quiet_us, 2.75);
    EXPECT_DOUBLE_EQ(r.noise->slowdown, 3.75 / 2.75 - 1);
    EXPECT_EQ(r.noise->blast_radius, -1);
    // On the receiver: a detour from 2.6 interrupts its o_r (2.5 to 2.6, then 3.6 to 3.75);
    // one from 2.0 is still on when the message arrives at 2.5 (o_r from 3.0 to 3.25).
    EXPECT_DOUBLE_EQ(run(p, detour_trace({1}, 2.6, 1)).latency_us, 3.75);
    EXPECT_DOUBLE_EQ(run(p, detour_trace({1}, 2.0, 1)).latency_us, 3.25);
    // The NIC does not stop: a detour on the sender after its o_s changes nothing.
    EXPECT_DOUBLE_EQ(run(p, detour_trace({0}, 0.6, 5)).latency_us, 2.75);
}

TEST(SimulateNoise, PeriodicDetoursFollowTheirPhaseAndPeriod) {
    // 100 kHz: a period of 10 us; fixed detours of 1 us; the phase is drawn from the seed.
    Perturbation p;
    p.detours.frequency_hz = 1e5;
    p.detours.duration_us = 1;
    p.seed = 7;
    EXPECT_DOUBLE_EQ(p.detours.fraction(), 0.1);
    const auto placement = Placement::block(2, 2, 2);
    const nbr::simulator::internal::CpuNoise noise(p, placement);
    const auto phase = static_cast<std::int64_t>(nbr::simulator::internal::counter_uniform(7, 2, 0, 0) * 1e7);
    const std::int64_t us = 1'000'000;
    EXPECT_EQ(noise.advance(0, phase - us / 2, 2 * us), phase + 5 * us / 2);  // 0.5 before, 1 detour, 1.5 after
    EXPECT_EQ(noise.advance(0, phase + us / 5, 0), phase + us);               // starts inside: waits for its end
    EXPECT_EQ(noise.advance(0, phase + us, 10 * us), phase + 12 * us);        // spans the next detour too
    EXPECT_EQ(noise.advance(0, phase + 2 * us, us), phase + 3 * us);          // between detours: untouched
    // Co-scheduled detours are at the same times on every rank; independent ones are not.
    p.detours.coscheduled = true;
    const nbr::simulator::internal::CpuNoise together(p, placement);
    EXPECT_EQ(together.advance(0, 0, 30 * us), together.advance(1, 0, 30 * us));
    EXPECT_NE(noise.advance(0, 0, 30 * us) - 30 * us, 0);
}

TEST(SimulateNoise, TheStepRuleHoldsALaterStepsSendsAndBspAddsABarrier) {
    // Event rule: rank 1's own block leaves at once (o_s to 0.5, inject to 1.5, received by
    // 2.75); the relayed block arrives at rank 1 at 3.0 (pack 0.5, o_s 0.5, inject 1, L 1), is
    // received by 3.25, repacked and sent (4.25), injected (5.25), arrives at 6.25, and rank 2
    // receives and unpacks it by 7.0.
    EXPECT_DOUBLE_EQ(run(two_steps(), {}).latency_us, 7.0);
    // Step rule: both step-1 sends wait for the step-0 receive (3.25). The own block: o_s to
    // 3.75, inject to 4.75, arrives 5.75, received by 6.0. The relayed one: pack and o_s to
    // 4.75, inject to 5.75, arrives 6.75, received and unpacked by 7.5.
    Perturbation step;
    step.rule = ExecutionRule::step;
    EXPECT_DOUBLE_EQ(run(two_steps(), step).latency_us, 7.5);
    // BSP: the barrier after step 0 takes ceil(log2 3) = 2 rounds of L + o_s + o_r = 3.5 us,
    // so both sends start at 6.75: own block received by 9.5, the relayed one by 11.0.
    Perturbation bsp;
    bsp.rule = ExecutionRule::bsp;
    EXPECT_DOUBLE_EQ(run(two_steps(), bsp).latency_us, 11.0);
    // A pattern without forwarding runs the same under every rule.
    const auto flat = naive(3, {{0, 1}, {1, 2}, {2, 0}, {0, 2}});
    EXPECT_DOUBLE_EQ(run(flat, step).latency_us, run(flat, {}).latency_us);
    EXPECT_DOUBLE_EQ(run(flat, bsp).latency_us, run(flat, {}).latency_us);
}

TEST(SimulateNoise, ALateRanksBlastRadiusCountsTheRanksItDelays) {
    Perturbation late;
    late.late_rank = 0;
    late.late_us = 10;
    // The sender late by 10 us: everything shifts by 10 (12.75); both ranks finish later.
    auto r = run(naive(2, {{0, 1}}), late);
    EXPECT_DOUBLE_EQ(r.latency_us, 12.75);
    EXPECT_EQ(r.noise->blast_radius, 2);
    // The receiver late: the message waits for it (received from 10.0 to 10.25); the
    // sender's part is unchanged (1.5).
    late.late_rank = 1;
    r = run(naive(2, {{0, 1}}), late);
    EXPECT_DOUBLE_EQ(r.latency_us, 10.25);
    EXPECT_DOUBLE_EQ(r.finish_us[0], 1.5);
    EXPECT_EQ(r.noise->blast_radius, 1);
    // A late relay delays the rank it serves, not the one that feeds it.
    r = run(two_steps(), late);
    EXPECT_EQ(r.noise->blast_radius, 2);
    EXPECT_LT(r.finish_us[0], 5.0);
}

TEST(SimulateNoise, BackToBackCallsStartWhenTheRanksPreviousCallEnds) {
    // Rank 0 sends in [0, 1.5], [1.5, 3.0], [3.0, 4.5]; rank 1 receives at 2.5, 4.0, 5.5 (each
    // call entered when its previous one ended: 2.75, 4.25): done at 5.75.
    Perturbation three;
    three.iterations = 3;
    const auto r = run(naive(2, {{0, 1}}), three);
    EXPECT_DOUBLE_EQ(r.latency_us, 5.75);
    EXPECT_DOUBLE_EQ(r.iteration_us, 5.75 / 3);
    EXPECT_DOUBLE_EQ(r.finish_us[0], 4.5);
    EXPECT_EQ(r.iterations, 3U);
    // The relay of two_steps, three calls: rank 0's calls end at 2, 4 and 6 (its blocks arrive
    // at rank 1 at 3, 5, 7). Rank 1's calls end when their relayed block has left: 5.25, then
    // from 5.25 its own block (o_s to 5.75), the block that arrived at 5.0 and waited for the
    // call (o_r to 6.0, repacked and sent by 7.0, injected to 8.0); from 8.0 likewise: the
    // relayed block leaves at 10.75 and is received at 11.75, unpacked by 12.5.
    three.late_rank.reset();
    EXPECT_DOUBLE_EQ(run(two_steps(), three).latency_us, 12.5);
}

TEST(SimulateNoise, ASeedGivesTheSameRunAndAnotherSeedAnother) {
    std::vector<nbr::Edge> edges;
    for (std::uint32_t r = 0; r < 16; ++r) {
        edges.push_back({r, (r + 1) % 16});
        edges.push_back({r, (r + 5) % 16});
    }
    const auto p = naive(16, edges);
    Perturbation noisy;
    noisy.detours.frequency_hz = 1e4;  // a period of 100 us
    noisy.detours.duration_us = 5;
    noisy.detours.spread = nbr::simulator::Spread::uniform;
    noisy.skew_us = 3;
    noisy.iterations = 20;
    noisy.seed = 11;
    const auto a = run(p, noisy);
    const auto b = run(p, noisy);
    EXPECT_EQ(a.finish_us, b.finish_us);
    EXPECT_GT(a.noise->slowdown, 0);
    EXPECT_DOUBLE_EQ(a.noise->amplification, a.noise->slowdown / 0.05);
    noisy.seed = 12;
    EXPECT_NE(run(p, noisy).finish_us, a.finish_us);
}

TEST(SimulateNoise, AMachineStatesItsNoiseAndAutoComparesUnderIt) {
    nbr::schema::Machine spec = machine().spec;
    spec.set_format_version(13);
    spec.mutable_noise()->set_frequency_hz(1e4);  // a period of 100 us
    spec.mutable_noise()->set_duration_us(5);
    spec.mutable_noise()->set_spread(nbr::schema::UNIFORM);
    const auto noisy = nbr::simulator::machine_from_spec(spec, "noisy");
    EXPECT_DOUBLE_EQ(noisy.noise.fraction(), 0.05);
    EXPECT_EQ(noisy.noise.spread, nbr::simulator::Spread::uniform);
    const auto program = nbr::simulator::make_program(two_steps(), Collective::allgather);
    const auto placement = Placement::block(3, 8, 8);
    const double quiet = nbr::simulator::predicted_call_us(program, machine(), placement, 1000);
    EXPECT_DOUBLE_EQ(quiet, 7.0);  // one call's latency (TheStepRule... above)
    // Under noise: the mean per call of kNoiseCalls calls over kNoiseSeeds seeds, as simulate gives it.
    double sum = 0;
    for (std::uint32_t seed = 1; seed <= nbr::simulator::kNoiseSeeds; ++seed) {
        SimOptions options;
        options.perturbation.detours = noisy.noise;
        options.perturbation.iterations = nbr::simulator::kNoiseCalls;
        options.perturbation.seed = seed;
        sum += nbr::simulator::simulate(program, noisy, placement, 1000, options).iteration_us;
    }
    EXPECT_DOUBLE_EQ(nbr::simulator::predicted_call_us(program, noisy, placement, 1000),
                     sum / nbr::simulator::kNoiseSeeds);
    // The field needs format 13; detours longer than their period are rejected.
    spec.set_format_version(12);
    EXPECT_THROW((void)nbr::simulator::machine_from_spec(spec, "old"), nbr::simulator::MachineError);
    spec.set_format_version(13);
    spec.mutable_noise()->set_duration_us(60);  // uniform: up to 120 us every 100 us
    EXPECT_THROW((void)nbr::simulator::machine_from_spec(spec, "long"), nbr::simulator::MachineError);
}

TEST(SimulateNoise, BadDetourTracesAndRanksAreRejected) {
    const auto dir = std::filesystem::temp_directory_path() / ("nbr_detours_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& text) {
        std::ofstream(dir / "trace") << text;
        return dir / "trace";
    };
    const auto trace = nbr::simulator::read_detour_trace(write("# start duration\n10 2\n\n20 1.5 # late\n"));
    ASSERT_EQ(trace.size(), 2U);
    EXPECT_DOUBLE_EQ(trace[1].second, 1.5);
    for (const auto* bad : {"10 2\n11 1\n", "10\n", "x 1\n", "10 -1\n", "1 2 3\n", "# nothing\n"}) {
        EXPECT_THROW((void)nbr::simulator::read_detour_trace(write(bad)), nbr::InputError) << bad;
    }
    try {
        (void)nbr::simulator::read_detour_trace(write("10 2\n11 1\n"));
    } catch (const nbr::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("trace:2:"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
    Perturbation p;
    p.late_rank = 2;
    p.late_us = 1;
    EXPECT_THROW((void)run(naive(2, {{0, 1}}), p), std::invalid_argument);
    EXPECT_THROW((void)nbr::simulator::parse_execution_rule("rounds"), nbr::InputError);
}

TEST(SimulateNoise, TheCommandLinesTextsParseOrNameWhatIsWrong) {
    const auto d = nbr::simulator::parse_detours("10:10000:uniform");
    EXPECT_DOUBLE_EQ(d.frequency_hz, 10);
    EXPECT_DOUBLE_EQ(d.duration_us, 10000);
    EXPECT_EQ(d.spread, nbr::simulator::Spread::uniform);
    EXPECT_DOUBLE_EQ(d.fraction(), 0.1);
    EXPECT_EQ(nbr::simulator::parse_detours("1000:25").spread, nbr::simulator::Spread::fixed);
    EXPECT_EQ(nbr::simulator::parse_late("17:100"), (std::pair<std::uint32_t, double>{17, 100}));
    EXPECT_EQ(nbr::simulator::parse_skew("5").second, nbr::simulator::Spread::uniform);
    EXPECT_EQ(nbr::simulator::parse_skew("5:exponential").second, nbr::simulator::Spread::exponential);
    for (const auto* bad : {"10", "10:x", "-1:5", "10:5:gauss", "1:2:3:4", "100:6000:uniform", "nan:1"}) {
        EXPECT_THROW((void)nbr::simulator::parse_detours(bad), nbr::InputError) << bad;
    }
    for (const auto* bad : {"3", "3.5:10", "x:1", "3:-1", "3:1:2"}) {
        EXPECT_THROW((void)nbr::simulator::parse_late(bad), nbr::InputError) << bad;
    }
    EXPECT_THROW((void)nbr::simulator::parse_skew("1:2:3"), nbr::InputError);
}

}  // namespace
