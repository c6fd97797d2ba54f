// Fitting the simulator's LogGOPS parameters to nbr-calibrate's measurements.
#include "nbr/simulator/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "nbr/simulator/simulate.hpp"
#include "statistics.hpp"

namespace nbr::simulator {

namespace {

constexpr double kNsPerUs = 1e3;

/// The share of a stream message's time a CPU's copy must take for the stream to count as
/// bound by it (bytes_time_us).
constexpr double kCpuBoundShare = 0.5;

using internal::median;

bool rendezvous(const Calibration& c, std::uint64_t bytes) {
    return c.eager_limit > 0 && bytes > c.eager_limit;
}

void check_points(const Calibration& c) {
    if (c.points.empty()) throw std::invalid_argument("calibration: no measurements");
    for (std::size_t i = 1; i < c.points.size(); ++i) {
        if (c.points[i].bytes <= c.points[i - 1].bytes) {
            throw std::invalid_argument("calibration: sizes must increase");
        }
    }
}

/// n messages from rank 0 to rank 1, then (if `answer`) an empty one back once all arrived.
SimProgram stream_program(std::uint32_t n, bool answer) {
    SimProgram p;
    p.num_ranks = 2;
    const std::uint32_t total = n + (answer ? 1 : 0);
    p.first_message = {0, n, total};
    for (std::uint32_t i = 0; i < total; ++i) {
        const bool back = i == n;
        p.src.push_back(back ? 1 : 0);
        p.dst.push_back(back ? 0 : 1);
        p.units.push_back(back ? 0 : 1);
        p.unpack_units.push_back(0);
        p.packed.push_back(0);
        p.dependencies.push_back(back ? n : 0);
        p.first_dependent.push_back(p.dependents.size());
        if (!back && answer) p.dependents.push_back(n);
    }
    p.first_dependent.push_back(p.dependents.size());
    return p;
}

/// `n` messages each way, all posted at the start: naive's neighborhood call over n parallel
/// edges (over one, what the exchanges and the per-call cost measure).
SimProgram parallel_exchange_program(std::uint32_t n) {
    SimProgram p;
    p.num_ranks = 2;
    p.first_message = {0, n, 2 * std::uint64_t{n}};
    for (std::uint32_t i = 0; i < 2 * n; ++i) {
        p.src.push_back(i < n ? 0 : 1);
        p.dst.push_back(i < n ? 1 : 0);
        p.units.push_back(1);
        p.unpack_units.push_back(0);
        p.packed.push_back(0);
        p.dependencies.push_back(0);
        p.first_dependent.push_back(0);
    }
    p.first_dependent.push_back(0);
    return p;
}

/// One message each way of `blocks` blocks, both posted at the start, packed by the sender
/// and unpacked by the receiver (a combining pattern's message on two ranks).
SimProgram blocks_exchange_program(std::uint32_t blocks) {
    SimProgram p = parallel_exchange_program(1);
    for (std::size_t i = 0; i < 2; ++i) {
        p.units[i] = blocks;
        p.unpack_units[i] = blocks;
        p.packed[i] = 1;
    }
    return p;
}

/// The machine as the exchanges see it: no call, the acknowledgments, and each rank posting
/// its receives inside the timer, before its sends (as a neighborhood call posts them).
Machine exchanging(const schema::Machine& spec) {
    auto machine = machine_from_spec(spec, "the calibrated machine");
    machine.call_ps = 0;
    return machine;
}

/// The machine as the point-to-point measurements see it: no call, receives posted before
/// the timer starts (streams) or while waiting (ping-pong). Without `acks` a send completes
/// when its tail leaves: what the one-way times and streams measure ends at a receive, which
/// the acknowledgment does not move.
Machine messaging_only(const schema::Machine& spec, bool acks = false) {
    auto machine = exchanging(spec);
    for (auto& link : machine.link) {
        link.post_recv_ps = 0;
        if (acks) continue;
        link.ack_ps = -1;
        for (auto& segment : link.segments) segment.ack_ps = -1;
    }
    return machine;
}

/// How long after the one-way time the sender's completion came at point `p` (at least 0),
/// where it was measured (above the eager limit); negative elsewhere.
double measured_ack(const Calibration& c, const CalibrationPoint& p) {
    return rendezvous(c, p.bytes) && p.complete_us >= 0 ? std::max(0.0, p.complete_us - p.one_way_us) : -1;
}

/// The class's acknowledgment, for sizes without a segment of their own: the median of the
/// measured ones; negative if none was measured.
double ack_latency(const Calibration& c) {
    std::vector<double> acks;
    for (const auto& p : c.points) {
        if (const double ack = measured_ack(c, p); ack >= 0) acks.push_back(ack);
    }
    return acks.empty() ? -1 : median(acks);
}

/// Two ranks at distance `klass` (block placement; leaf: two nodes under one switch).
Placement pair_placement(DistanceClass klass) {
    switch (klass) {
        case DistanceClass::socket: return Placement::block(2, 2, 2);
        case DistanceClass::node: return Placement::block(2, 2, 1);
        case DistanceClass::leaf:
        case DistanceClass::network: break;
    }
    return Placement::block(2, 1, 1);
}

/// Least squares of y[from..to) against n = index + 1: the slope and the squared error left.
struct Line {
    double slope = 0, error = 0;
};
Line least_squares(const std::vector<double>& y, std::size_t from, std::size_t to) {
    const double count = static_cast<double>(to - from);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = from; i < to; ++i) {
        const double x = static_cast<double>(i + 1);
        sx += x;
        sy += y[i];
        sxx += x * x;
        sxy += x * y[i];
    }
    const double spread = sxx - sx * sx / count;
    Line line;
    line.slope = spread > 0 ? (sxy - sx * sy / count) / spread : 0;
    const double intercept = (sy - line.slope * sx) / count;
    for (std::size_t i = from; i < to; ++i) {
        const double r = y[i] - intercept - line.slope * static_cast<double>(i + 1);
        line.error += r * r;
    }
    return line;
}

/// Where a series of times turns steeper: the n up to which messages cost less (0: no knee),
/// and the two slopes.
struct Knee {
    int messages = 0;
    double before = 0, after = 0;
};
constexpr std::size_t kKneeSide = 4;  // points on each side of a knee at least

Knee find_knee(const std::vector<double>& y) {
    Knee best;
    if (y.size() < 2 * kKneeSide) return best;
    double best_error = -1;
    for (std::size_t k = kKneeSide; k + kKneeSide <= y.size(); ++k) {
        const auto left = least_squares(y, 0, k), right = least_squares(y, k, y.size());
        if (best_error < 0 || left.error + right.error < best_error) {
            best_error = left.error + right.error;
            best = {static_cast<int>(k), left.slope, right.slope};
        }
    }
    const bool steeper = best.after - best.before >= 0.25 * std::max(best.before, 1e-6);
    if (!steeper || best_error > 0.5 * least_squares(y, 0, y.size()).error) best.messages = 0;
    return best;
}

}  // namespace

EagerBuffer fit_eager_buffer(const std::vector<ExchangeBursts>& exchanges) {
    EagerBuffer buffer;
    std::vector<Knee> knees;
    for (const auto& e : exchanges) {
        knees.push_back(find_knee(e.us));
        buffer.fitting.push_back(knees.back().messages);
    }
    // A buffer of bytes holds more of the smaller messages: without knees at both sizes that
    // say so, the series show something else (or noise), and no buffer is fitted.
    if (knees.size() < 2 || knees[0].messages == 0 || knees[1].messages <= knees[0].messages) return buffer;
    const auto k1 = static_cast<double>(knees[0].messages);
    const auto s1 = static_cast<double>(exchanges[0].bytes);
    const auto k2 = static_cast<double>(knees[1].messages);
    const auto s2 = static_cast<double>(exchanges[1].bytes);
    // Nor does it hold more than s1 / s2 times as many (that would take a negative footprint
    // per message; one message of slack for where a knee falls): the knees are not one buffer.
    if (k2 > k1 * s1 / s2 + 1) return buffer;
    buffer.message_bytes = static_cast<std::uint64_t>(std::max(0.0, std::round((k1 * s1 - k2 * s2) / (k2 - k1))));
    buffer.capacity = static_cast<std::uint64_t>(k1 * (s1 + static_cast<double>(buffer.message_bytes)));
    buffer.overflow_recv_us = knees[0].after - knees[0].before;
    return buffer;
}

std::vector<CalibrationCheck> check_calibration(const schema::Machine& spec, DistanceClass klass,
                                                const Calibration& c) {
    auto machine = messaging_only(spec);
    auto acked = messaging_only(spec, true);
    auto exchanges = exchanging(spec);
    if (klass == DistanceClass::network) {  // two nodes: not under one leaf
        machine.nodes_per_switch = acked.nodes_per_switch = exchanges.nodes_per_switch = 0;
    }
    const auto placement = pair_placement(klass);
    const auto one = stream_program(1, false);
    const auto first = stream_program(1, true);
    std::vector<CalibrationCheck> checks;
    for (const auto& p : c.points) {
        const auto many = stream_program(static_cast<std::uint32_t>(std::max(2, p.stream_messages)), true);
        CalibrationCheck check;
        check.bytes = p.bytes;
        check.one_way_us = p.one_way_us;
        check.rate_us = p.rate_us;
        check.predicted_one_way_us = simulate(one, machine, placement, p.bytes).latency_us;
        check.complete_us = p.complete_us;
        check.predicted_complete_us = simulate(one, acked, placement, p.bytes).latency_us;
        check.exchange_us = p.exchange_us;
        check.predicted_exchange_us = simulate(parallel_exchange_program(1), exchanges, placement, p.bytes).latency_us;
        check.exchange_many_us = p.exchange_many_us;
        check.predicted_exchange_many_us =
            simulate(parallel_exchange_program(kExchangeMessages), exchanges, placement, p.bytes).latency_us;
        check.exchange_more_us = p.exchange_more_us;
        check.predicted_exchange_more_us =
            simulate(parallel_exchange_program(kExchangeMoreMessages), exchanges, placement, p.bytes).latency_us;
        check.predicted_rate_us = (simulate(many, machine, placement, p.bytes).latency_us -
                                   simulate(first, machine, placement, p.bytes).latency_us) /
                                  static_cast<double>(many.num_messages() - 2);
        checks.push_back(check);
    }
    return checks;
}

namespace {

/// The CPU's time per message measured at point `p` (`measured`, negative if not measured
/// there: `fallback`), at most the stream's time per message there (a stream pays it once
/// per message), or `floor` if that is larger.
double overhead_at(double measured, double fallback, const CalibrationPoint& p, double floor) {
    return measured >= 0 ? std::min(measured, std::max(p.rate_us, floor)) : fallback;
}

/// The stream's time per message at point `p` that the model charges as bytes (G·b), given
/// the sender's and the receiver's CPU per message (`send_us`; `cpu_us`: the receive and, above
/// the eager limit, the answer to the request). The stream alone asks for its time beyond the
/// gap; the one-way time (L at least 0) leaves `one_way − send_us − cpu_us`. Where that is
/// less and a CPU's copy takes at least half of a stream message's time (on shared memory
/// the sender's copy is both its overhead and the transfer, so in a stream the two overlap),
/// the G·b between them that makes the larger of the two relative errors smallest, the
/// one-way time overstated and the stream (max(send_us, cpu_us, g + G·b)) understated; of
/// several such, the least. A stream the CPUs do not bind (large messages, whose sends post
/// a descriptor) keeps its own.
double bytes_time_us(const CalibrationPoint& p, double gap, double send_us, double cpu_us) {
    const double stream = std::max(0.0, p.rate_us - gap);
    const double room = p.one_way_us - send_us - cpu_us;
    const double floor = std::max(send_us, cpu_us);  // the stream's time per message without G
    if (room >= stream || floor < kCpuBoundShare * p.rate_us || p.rate_us <= 0 || p.one_way_us <= 0) return stream;
    const auto over = [&](double x) { return (send_us + x + cpu_us) / p.one_way_us - 1; };
    const auto under = [&](double x) { return 1 - std::max(floor, gap + x) / p.rate_us; };
    double lo = std::max(0.0, room), hi = stream;
    if (over(lo) >= under(lo)) return lo;
    for (int k = 0; k < 60; ++k) {
        const double mid = (lo + hi) / 2;
        (over(mid) < under(mid) ? lo : hi) = mid;
    }
    // Where the stream's error is flat (its CPU bounds it), a smaller G·b costs it nothing.
    return gap + hi <= floor ? std::max(0.0, room) : hi;
}

/// Two ranks on a machine whose classes are all `link`, as the exchanges see it: what the
/// exchanges above the eager limit are fitted on.
Machine pair_machine(const schema::LinkClass& link) {
    schema::Machine spec;
    spec.set_format_version(kCalibratedFormat);
    spec.set_ranks_per_node(2);
    spec.set_ranks_per_socket(2);
    *spec.mutable_socket() = link;
    *spec.mutable_node() = link;
    *spec.mutable_network() = link;
    return exchanging(spec);
}

/// Above the eager limit each segment's acknowledgment is set so that the exchange of one
/// message each way takes what was measured (at least 0): in an exchange each rank's call
/// ends when its send completes, A after the other's receive, so A is what moves it. Two
/// transfers at once can cost more than one, which the one-way measurements miss; and the
/// sender's completion measured in one direction, with the receiver idle in its wait, can
/// take longer than in an exchange, where both ranks progress at once. The class's A becomes
/// the median of the segments'.
void fit_acks_to_exchanges(const Calibration& c, schema::LinkClass& link) {
    // Changing one segment's A does not change another size's prediction: one machine serves all.
    const auto machine = pair_machine(link);
    std::vector<double> acks;
    for (int i = 0; i < link.segments_size(); ++i) {
        const auto& p = c.points[static_cast<std::size_t>(i) + 1];
        if (!rendezvous(c, p.bytes) || p.exchange_us < 0) continue;
        const double predicted =
            simulate(parallel_exchange_program(1), machine, pair_placement(DistanceClass::socket), p.bytes).latency_us;
        auto* segment = link.mutable_segments(i);
        const double excess = p.exchange_us - predicted;  // within 1 ns: the simulator's rounding
        const double current = segment->has_ack_latency_us() ? segment->ack_latency_us() : link.ack_latency_us();
        const double ack = std::max(0.0, current + (std::abs(excess) > 1e-3 ? excess : 0.0));
        segment->set_ack_latency_us(ack);
        acks.push_back(ack);
    }
    if (!acks.empty()) link.set_ack_latency_us(median(acks));
}

/// The relative errors of the exchanges of kExchangeMessages and of kExchangeMoreMessages
/// each way at `p`, simulated on a machine whose classes are all `link`, summed (the second
/// only where measured): grows with the segment's exchange byte time.
double exchange_errors(const schema::LinkClass& link, const CalibrationPoint& p) {
    const auto machine = pair_machine(link);
    const auto placement = pair_placement(DistanceClass::socket);
    const auto error = [&](std::uint32_t n, double measured) {
        return simulate(parallel_exchange_program(n), machine, placement, p.bytes).latency_us / measured - 1;
    };
    double sum = error(kExchangeMessages, p.exchange_many_us);
    if (p.exchange_more_us > 0) sum += error(kExchangeMoreMessages, p.exchange_more_us);
    return sum;
}

/// Above the eager limit each segment's byte time of streams that cross is set
/// so that the exchanges of kExchangeMessages and kExchangeMoreMessages each way come out as
/// measured as one value can make them: where no value gives both, the one whose two relative
/// errors are equal and opposite (the larger of them least). Bisection on the errors' sum,
/// which grows with the byte time, between 0 and where it turns positive (0 where even that
/// is slower than measured).
void fit_exchange_byte_times(const Calibration& c, schema::LinkClass& link) {
    for (int i = 0; i < link.segments_size(); ++i) {
        const auto& p = c.points[static_cast<std::size_t>(i) + 1];
        if (!rendezvous(c, p.bytes) || p.exchange_many_us <= 0) continue;
        auto* segment = link.mutable_segments(i);
        const auto slower = [&](double ns) {
            segment->set_exchange_byte_time_ns(ns);
            return exchange_errors(link, p) >= 0;
        };
        double lo = 0, hi = std::max(segment->byte_time_ns(), 1e-3);
        if (slower(lo)) continue;  // left at 0
        while (!slower(hi) && hi < 1e6) hi *= 2;
        for (int k = 0; k < 40; ++k) {
            const double mid = (lo + hi) / 2;
            (slower(mid) ? hi : lo) = mid;
        }
        segment->set_exchange_byte_time_ns(hi);
    }
}

/// The median over `passes` of the quantity `field` picks from each.
template <typename Pick>
double median_over(const std::vector<Calibration>& passes, Pick field) {
    std::vector<double> values;
    values.reserve(passes.size());
    for (const auto& pass : passes) values.push_back(field(pass));
    return median(std::move(values));
}

void check_same_sizes(const std::vector<Calibration>& passes) {
    const auto& first = passes.front();
    for (const auto& pass : passes) {
        const bool same = pass.points.size() == first.points.size() &&
                          pass.byte_calls.size() == first.byte_calls.size() &&
                          pass.pattern_points.size() == first.pattern_points.size() &&
                          std::equal(pass.points.begin(), pass.points.end(), first.points.begin(),
                                     [](const auto& a, const auto& b) { return a.bytes == b.bytes; });
        if (!same) throw std::invalid_argument("calibration passes measured different sizes");
    }
}

}  // namespace

Calibration median_of_passes(const std::vector<Calibration>& passes) {
    if (passes.empty()) throw std::invalid_argument("calibration: no passes");
    check_same_sizes(passes);
    Calibration c = passes.front();
    for (std::size_t i = 0; i < c.points.size(); ++i) {
        auto& p = c.points[i];
        const auto at = [&](double CalibrationPoint::*field) {
            return median_over(passes, [&](const Calibration& pass) { return pass.points[i].*field; });
        };
        p.one_way_us = at(&CalibrationPoint::one_way_us);
        p.send_us = at(&CalibrationPoint::send_us);
        p.recv_us = at(&CalibrationPoint::recv_us);
        p.complete_us = at(&CalibrationPoint::complete_us);
        p.exchange_us = at(&CalibrationPoint::exchange_us);
        p.exchange_many_us = at(&CalibrationPoint::exchange_many_us);
        p.exchange_more_us = at(&CalibrationPoint::exchange_more_us);
        p.rate_us = at(&CalibrationPoint::rate_us);
    }
    c.post_recv_us = median_over(passes, [](const Calibration& pass) { return pass.post_recv_us; });
    c.call_us = median_over(passes, [](const Calibration& pass) { return pass.call_us; });
    c.blocks_call_us = median_over(passes, [](const Calibration& pass) { return pass.blocks_call_us; });
    for (std::size_t i = 0; i < c.byte_calls.size(); ++i) {
        c.byte_calls[i].us = median_over(passes, [&](const Calibration& pass) { return pass.byte_calls[i].us; });
    }
    for (std::size_t i = 0; i < c.pattern_points.size(); ++i) {
        auto& p = c.pattern_points[i];
        p.naive_us = median_over(passes, [&](const Calibration& pass) { return pass.pattern_points[i].naive_us; });
        p.combined_us =
            median_over(passes, [&](const Calibration& pass) { return pass.pattern_points[i].combined_us; });
    }
    return c;
}

schema::LinkClass fit_link_class(const Calibration& c) {
    check_points(c);
    std::vector<double> recv;
    for (const auto& p : c.points) {
        if (p.recv_us >= 0) recv.push_back(p.recv_us);
    }
    // The smallest size's overheads are the class's; each larger size has its own in its
    // segment. A stream's time per message bounds both (each is paid once per message in it):
    // this keeps burst noise from making the model slower than the measured stream.
    const auto& first = c.points.front();
    const double gap = std::max(0.0, first.rate_us);
    const double o_s = std::min(first.send_us, gap);
    const double o_r = std::min(first.recv_us >= 0 ? first.recv_us : median(recv), gap);
    schema::LinkClass link;
    link.set_send_overhead_us(o_s);
    link.set_recv_overhead_us(o_r);
    link.set_gap_us(gap);
    link.set_post_recv_overhead_us(std::max(0.0, c.post_recv_us));
    if (c.eager_limit > 0) link.set_eager_limit_bytes(c.eager_limit);
    if (const double ack = ack_latency(c); ack >= 0) link.set_ack_latency_us(ack);
    if (c.buffer.capacity > 0) {
        link.set_eager_buffer_bytes(c.buffer.capacity);
        link.set_eager_buffer_message_bytes(c.buffer.message_bytes);
        link.set_overflow_recv_overhead_us(c.buffer.overflow_recv_us);
    }
    for (std::size_t i = 0; i < c.points.size(); ++i) {
        const auto& p = c.points[i];
        const double b = static_cast<double>(p.bytes);
        const double send_us = i > 0 ? overhead_at(p.send_us, o_s, p, o_s) : o_s;
        const double recv_us = i > 0 ? overhead_at(p.recv_us, o_r, p, o_r) : o_r;
        // Above S the receiver answers the request (o_r of the class: a small message) and
        // the message pays three latencies.
        const double answer_us = rendezvous(c, p.bytes) ? o_r : 0;
        const double byte_us = p.bytes > 0 ? bytes_time_us(p, gap, send_us, recv_us + answer_us) / b : 0;
        const double rest = p.one_way_us - send_us - byte_us * b - recv_us - answer_us;
        const double latency = std::max(0.0, rendezvous(c, p.bytes) ? rest / 3 : rest);
        if (i == 0) {
            link.set_latency_us(latency);
            link.set_byte_time_ns(byte_us * kNsPerUs);
            continue;
        }
        schema::SizeSegment* segment = link.add_segments();
        segment->set_from_bytes(p.bytes);
        segment->set_latency_us(latency);
        segment->set_byte_time_ns(byte_us * kNsPerUs);
        segment->set_send_overhead_us(send_us);
        segment->set_recv_overhead_us(recv_us);
        if (const double ack = measured_ack(c, p); ack >= 0) segment->set_ack_latency_us(ack);
    }
    // A from the single exchange (whose messages queue behind none: G_x does not touch it),
    // then G_x from the larger one, which ends A after its last receive.
    fit_acks_to_exchanges(c, link);
    fit_exchange_byte_times(c, link);
    return link;
}

double fit_call_overhead(const schema::Machine& spec, DistanceClass klass, const Calibration& c) {
    if (c.call_us < 0) return 0;
    auto machine = machine_from_spec(spec, "the calibrated machine");
    if (klass == DistanceClass::network) machine.nodes_per_switch = 0;
    machine.call_ps = 0;
    const double predicted =
        simulate(parallel_exchange_program(1), machine, pair_placement(klass), c.call_bytes).latency_us;
    return std::max(0.0, c.call_us - predicted);
}

namespace {

/// The simulated call of `edges` blocks of `bytes` each way in one message, on `machine` with
/// the given copy costs (ps).
double blocks_call_predicted(Machine& machine, DistanceClass klass, std::uint32_t edges, std::uint64_t bytes,
                             double block_ps, double byte_ps) {
    machine.copy_block_ps = block_ps;
    machine.copy_byte_ps = byte_ps;
    machine.copy_rates.clear();
    return simulate(blocks_exchange_program(edges), machine, pair_placement(klass), bytes).latency_us;
}

}  // namespace

CopyCosts fit_copy_costs(const schema::Machine& spec, DistanceClass klass, const Calibration& c) {
    CopyCosts costs;
    costs.byte_ns = spec.copy_ns_per_byte();
    if (c.blocks_call_us < 0 || c.blocks_call_edges < 2) return costs;
    // Each rank packs its message's blocks and unpacks the other's, one after the other. The
    // small call's bytes and the larger calls' blocks are known only once the other is fitted:
    // a few rounds settle both.
    const double copies = 2.0 * c.blocks_call_edges;
    auto machine = machine_from_spec(spec, "the calibrated machine");
    if (klass == DistanceClass::network) machine.nodes_per_switch = 0;
    for (int round = 0; round < 3; ++round) {
        const double small =
            blocks_call_predicted(machine, klass, c.blocks_call_edges, c.call_bytes, 0, costs.byte_ns * kNsPerUs);
        costs.block_ns = std::max(0.0, c.blocks_call_us - small) * kNsPerUs / copies;
        costs.rates.clear();
        for (const auto& call : c.byte_calls) {
            if (call.us < 0) continue;
            const double blocks_only =
                blocks_call_predicted(machine, klass, c.blocks_call_edges, call.bytes, costs.block_ns * kNsPerUs, 0);
            // A copy is no faster than a plain memcpy of 1 MiB: noise below that is not a rate.
            const double rate =
                std::max(0.0, call.us - blocks_only) * kNsPerUs / (copies * static_cast<double>(call.bytes));
            costs.rates.push_back({call.bytes, std::max(spec.copy_ns_per_byte(), rate)});
        }
        if (costs.rates.empty()) break;
        costs.byte_ns = costs.rates.front().ns_per_byte;
    }
    return costs;
}

std::vector<PatternCheck> check_patterns(const schema::Machine& spec, DistanceClass klass, const Calibration& c) {
    auto machine = machine_from_spec(spec, "the calibrated machine");
    if (klass == DistanceClass::network) machine.nodes_per_switch = 0;
    const auto placement = pair_placement(klass);
    const auto naive = parallel_exchange_program(c.blocks_call_edges);
    const auto combined = blocks_exchange_program(c.blocks_call_edges);
    std::vector<PatternCheck> checks;
    for (const auto& p : c.pattern_points) {
        if (p.naive_us <= 0 || p.combined_us <= 0) continue;
        PatternCheck check;
        check.bytes = p.bytes;
        check.naive_us = p.naive_us;
        check.combined_us = p.combined_us;
        check.predicted_naive_us = simulate(naive, machine, placement, p.bytes).latency_us;
        check.predicted_combined_us = simulate(combined, machine, placement, p.bytes).latency_us;
        checks.push_back(check);
    }
    return checks;
}

double PatternCheck::ratio_error() const {
    // How much more the model expects combining to gain over naive than the call measured:
    // (predicted naive / combined) / (measured naive / combined) − 1, where above 0. (Where
    // the model expects less, a choice it makes errs towards naive, never below it.)
    const double overstated = (predicted_naive_us / naive_us) * (combined_us / predicted_combined_us);
    return std::clamp(overstated - 1, 0.0, kMaxRatioError);
}

double PatternCheck::naive_error() const {
    return std::abs(predicted_naive_us - naive_us) / naive_us;
}

const PatternCheck* unsettled_check(const std::vector<PatternCheck>& checks) {
    if (checks.empty()) return nullptr;
    const auto smallest =
        std::min_element(checks.begin(), checks.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
    return smallest->naive_error() > 0.25 ? &*smallest : nullptr;
}

double fit_time_ratio(const std::vector<PatternCheck>& checks) {
    std::vector<double> ratios;
    for (const auto& check : checks) ratios.push_back(check.predicted_naive_us / check.naive_us);
    return ratios.empty() ? 1 : median(std::move(ratios));
}

bool state_changed(const Calibration& c) {
    if (c.late_one_way_us < 0 || c.points.empty() || c.points.front().one_way_us <= 0) return false;
    return std::abs(c.late_one_way_us / c.points.front().one_way_us - 1) > 0.25;
}

double ratio_error(const std::vector<PatternCheck>& checks) {
    double worst = 0;
    for (const auto& check : checks) worst = std::max(worst, check.ratio_error());
    return worst;
}

std::vector<RatioPoint> ratio_points(const std::vector<PatternCheck>& checks) {
    std::vector<RatioPoint> points;
    for (const auto& check : checks) points.push_back(RatioPoint{check.bytes, check.ratio_error()});
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
    std::vector<RatioPoint> out;  // one per size, the larger error of a size checked twice
    for (const auto& p : points) {
        if (!out.empty() && out.back().bytes == p.bytes) {
            out.back().error = std::max(out.back().error, p.error);
        } else {
            out.push_back(p);
        }
    }
    return out;
}

void merge_ratio_errors(schema::Machine& machine, const std::vector<PatternCheck>& checks) {
    std::vector<RatioPoint> had;
    for (const auto& p : machine.ratio_errors()) had.push_back(RatioPoint{p.bytes(), p.error()});
    const double had_overall = machine.ratio_error();  // 0 if absent; at every size without points
    const auto fresh = ratio_points(checks);
    const double fresh_overall = ratio_error(checks);
    std::vector<std::uint64_t> sizes;
    for (const auto& p : had) sizes.push_back(p.bytes);
    for (const auto& p : fresh) sizes.push_back(p.bytes);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    machine.set_format_version(std::max(machine.format_version(), kRatioErrorsFormat));
    machine.set_ratio_error(std::max(had_overall, fresh_overall));
    machine.clear_ratio_errors();
    for (const auto bytes : sizes) {
        auto* point = machine.add_ratio_errors();
        point->set_bytes(bytes);
        point->set_error(std::max(ratio_error_over(had, had_overall, bytes, bytes),
                                  ratio_error_over(fresh, fresh_overall, bytes, bytes)));
    }
}

std::vector<PatternCheck> recheck_patterns(schema::Machine& machine, DistanceClass klass, const Calibration& c,
                                           const std::string& source) {
    auto checks = check_patterns(machine, klass, c);
    if (checks.empty()) return checks;
    merge_ratio_errors(machine, checks);
    const auto& sources = machine.sources();
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) machine.add_sources(source);
    return checks;
}

double fit_switch(const schema::Machine& spec, double shared_one_way_us, std::uint64_t bytes) {
    auto machine = messaging_only(spec);
    machine.cores_per_node = 0;
    const auto predicted =
        simulate(stream_program(1, false), machine, pair_placement(DistanceClass::socket), bytes).latency_us;
    return std::max(0.0, shared_one_way_us - predicted);
}

namespace {

schema::LinkClass* class_of(schema::Machine& machine, DistanceClass klass) {
    switch (klass) {
        case DistanceClass::socket: return machine.mutable_socket();
        case DistanceClass::node: return machine.mutable_node();
        case DistanceClass::leaf: return machine.mutable_leaf();
        case DistanceClass::network: break;
    }
    return machine.mutable_network();
}

/// The copy costs into `machine`: per byte by block size where two sizes or more
/// were measured, else one rate.
void set_copy_costs(schema::Machine& machine, const CopyCosts& costs) {
    machine.set_copy_block_ns(costs.block_ns);
    machine.set_copy_ns_per_byte(costs.byte_ns);
    machine.clear_copy_rates();
    if (costs.rates.size() < 2) return;
    for (const auto& rate : costs.rates) {
        auto* point = machine.add_copy_rates();
        point->set_block_bytes(rate.block_bytes);
        point->set_ns_per_byte(rate.ns_per_byte);
    }
    machine.set_format_version(std::max<std::uint32_t>(machine.format_version(), 11));
}

}  // namespace

std::vector<PatternCheck> apply_calibration(schema::Machine& machine, DistanceClass klass, const Calibration& c,
                                            const std::string& source) {
    const auto link = fit_link_class(c);
    const bool per_size = link.segments_size() > 0 && link.segments(0).has_send_overhead_us();
    const bool block_copies = klass == DistanceClass::socket && c.blocks_call_us >= 0;
    const bool both_ways = std::any_of(link.segments().begin(), link.segments().end(),
                                       [](const auto& s) { return s.has_exchange_byte_time_ns(); });
    const std::uint32_t format = both_ways                       ? 12
                                 : per_size || block_copies      ? 8
                                 : link.has_eager_buffer_bytes() ? 7
                                 : link.has_ack_latency_us()     ? 6
                                                                 : 2;
    machine.set_format_version(std::max(machine.format_version(), format));
    if (klass == DistanceClass::leaf && machine.nodes_per_switch() == 0) {
        throw std::invalid_argument("class leaf needs a machine with nodes_per_switch");
    }
    *class_of(machine, klass) = link;
    if (klass == DistanceClass::socket) {
        machine.set_copy_ns_per_byte(c.copy_ns_per_byte);
        machine.set_call_overhead_us(fit_call_overhead(machine, klass, c));
        if (block_copies) set_copy_costs(machine, fit_copy_costs(machine, klass, c));
    }
    auto checks = check_patterns(machine, klass, c);
    if (!checks.empty()) merge_ratio_errors(machine, checks);
    machine.add_sources(std::string(to_string(klass)) + ": measured by " + source);
    return checks;
}

schema::Machine machine_like(const Calibration& c, const NewMachine& node) {
    schema::Machine m;
    m.set_format_version(kCalibratedFormat);
    m.set_name(node.name);
    m.set_description("measured by nbr-calibrate");
    const auto cores = std::max(1U, node.cores);
    m.set_ranks_per_node(node.ranks_per_node > 0 ? node.ranks_per_node : cores);
    m.set_ranks_per_socket(node.ranks_per_socket > 0 ? node.ranks_per_socket : m.ranks_per_node());
    m.set_cores_per_node(cores);
    const auto link = fit_link_class(c);
    *m.mutable_socket() = link;
    *m.mutable_node() = link;
    *m.mutable_network() = link;
    m.add_sources(
        "node, network: copies of the measured class until measured (nbr-calibrate --class CLASS --base FILE)");
    return m;
}

schema::Machine calibrated_machine(const Calibration& c, DistanceClass klass, const NewMachine& node,
                                   const std::string& source) {
    auto m = machine_like(c, node);
    (void)apply_calibration(m, klass, c, source);
    return m;
}

}  // namespace nbr::simulator
