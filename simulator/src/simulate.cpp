// The discrete-event LogGOPS simulation of one replay (model: docs/simulate.md). The event loop
// and the stages of a message are here; the parts they consult have files of their own: each
// message's costs (message_costs.hpp), the cores (cores.hpp), the network's NICs and uplinks
// (network.hpp), the per-pair eager buffers (eager_buffer.hpp), the step and BSP rules
// (step_gates.hpp), CPU noise (noise.hpp) and the critical-path trace (critical_path.hpp).
#include "nbr/simulator/simulate.hpp"

#include "cores.hpp"
#include "critical_path.hpp"
#include "eager_buffer.hpp"
#include "event_queue.hpp"
#include "message_costs.hpp"
#include "network.hpp"
#include "noise.hpp"
#include "step_gates.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace nbr::simulator {

namespace {

using internal::kUnknown;
using internal::ps;
using internal::Time;
using Op = internal::PathTrace::Op;

double us(Time t) {
    return static_cast<double>(t) * 1e-6;
}

/// What happens to a message next.
enum class Stage : std::uint8_t {
    call,           ///< a rank enters a call (message = the rank, aux = the iteration)
    send,           ///< the sender's CPU packs (if staged) and pays o_s + O_s·b
    request,        ///< rendezvous: the request reaches the receiver, whose CPU answers it
    inject,         ///< the data leaves the sender (rank injection: g, G)
    nic_out,        ///< off-node: through the sending node's NIC
    nic_out_leave,  ///< fair sending NIC: the first message on a sending NIC leaves (if current)
    up,             ///< other leaf (machines with uplinks): through the sending leaf's uplinks
    down,           ///< other leaf: through the receiving leaf's downlinks
    nic_in,         ///< off-node: through the receiving node's NIC
    nic_in_leave,   ///< fair NIC sharing: the first message on a receiving NIC leaves (if current)
    arrive,         ///< fully arrived: the receiver's CPU pays o_r + O_r·b and unpacks
};

struct Event {
    Time time;
    std::uint64_t order;  // insertion order: ties in time are served first come, first served
    Time aux;             // time the message's tail passed the previous stage
    std::uint32_t message;
    Stage stage;
};

/// The network parts a machine's models call for, each built only when its model is on.
struct Network {
    Network(const internal::NetworkModels& models, const Machine& machine, const Placement& placement,
            std::uint64_t messages)
        : nic_out(models.fair_nic_out ? 0 : placement.num_nodes()),
          nic_in(models.fair_nic_in ? 0 : placement.num_nodes()) {
        if (models.fair_nic_out) {
            fair_out.emplace(placement.num_nodes());
            tails.emplace(messages);
        }
        if (models.fair_nic_in) fair_in.emplace(placement.num_nodes());
        if (models.uplinks)
            uplinks.emplace((placement.num_nodes() + machine.nodes_per_switch - 1) / machine.nodes_per_switch);
    }

    internal::FirstComeLinks nic_out, nic_in;              // per node, NICs served first come
    std::optional<internal::FairLinks> fair_out, fair_in;  // per node, NICs shared fairly
    std::optional<internal::TailGate> tails;               // with fair sending NICs
    std::optional<internal::Uplinks> uplinks;              // per leaf switch
};

/// One simulated replay: `calls` back-to-back calls of a program, stage by stage.
///
/// Protocol: a rank enters a call (its per-call cost and posted receives on its core), then
/// starts the sends that wait for nothing; a send passes send → [request →] inject →
/// [nic_out → [up → down →] nic_in →] arrive, each stage an event at the time it can begin; an
/// arrival releases the sends that waited for it (and, under the step rules, the sends of the
/// steps it completes). A rank's call is complete when all its operations are; it then enters
/// the next call.
class Simulation {
public:
    /// `program` holds `iterations` copies of a call's messages, call after call.
    Simulation(const SimProgram& program, const Machine& machine, const Placement& placement, std::uint64_t block,
               const SimOptions& options, std::uint32_t iterations)
        : program_(program),
          machine_(machine),
          placement_(placement),
          block_(block),
          models_(internal::NetworkModels::of(machine)),
          costs_(program, machine, placement, block, models_),
          calls_(iterations),
          call_messages_(program.num_messages() / iterations),
          cores_(machine, placement),
          noise_(options.perturbation, placement),
          gates_(program, options.perturbation.rule, calls_, call_messages_),
          network_(models_, machine, placement, program.num_messages()),
          inject_(program.num_ranks, 0),
          finish_(program.num_ranks, 0),
          finish_depth_(program.num_ranks, 0),
          waiting_(program.dependencies),
          depth_(program.num_messages(), 1) {
        if (models_.eager_buffers) eager_.emplace(program, costs_);
        check_range();
        prepare_calls();
        if (options.perturbation.rule == ExecutionRule::bsp) barrier_ = barrier_ps();
        if (options.critical_path) {
            trace_ = std::make_unique<internal::PathTrace>(program.num_messages(), program.num_ranks, cores_.count());
        }
    }

    void run() {
        start_calls();
        // Sends with nothing to wait for start at time 0, before every later event (which
        // comes at time 0 or later and is inserted after them): handled at once, in order.
        // Ranks entering their first call later send theirs when they do.
        for (std::uint32_t i = 0; i < call_messages_; ++i) {
            if (waiting_[i] != 0 || call_done_[slot(program_.src[i], 0)] == kUnknown) continue;
            if (!gates_.ready(i)) {
                gates_.hold(i);
                continue;
            }
            ++events_;
            on_send(Event{0, order_++, 0, i, Stage::send});
        }
        while (!queue_.empty()) {
            ++events_;
            handle(queue_.pop());
        }
        if (delivered_ != program_.num_messages()) {
            throw std::runtime_error("the pattern deadlocks: " + std::to_string(program_.num_messages() - delivered_) +
                                     " of " + std::to_string(program_.num_messages()) +
                                     " messages are never delivered");
        }
    }

    [[nodiscard]] SimResult result() const;

private:
    /// Simulated times are picoseconds in 64 bits: a machine and block size whose serial bound
    /// exceeds 2^62 ps (about 53 days) are rejected before anything is simulated.
    void check_range() const {
        constexpr double kLimitPs = 4.6e18;
        const double bound = costs_.serial_bound_ps();
        if (!(bound <= kLimitPs)) {
            throw std::runtime_error("machine " + machine_.name + " at " + std::to_string(block_) +
                                     " B per block: the simulated times could exceed the simulator's range "
                                     "(2^62 ps, about 53 days); the machine's costs or the block size are too large");
        }
    }

    // Calls: per rank, the call's CPU cost and its sends waiting for no receive (of call 0);
    // per rank and call, operations still to complete, their last completion, the call's end
    // on the CPU (kUnknown until the rank enters it) and events that came before that.

    /// Each rank's call starts with its per-call cost and the posting of all its receives
    /// (with size headers, the headers' receives; payload receives are posted on arrival).
    void start_calls() {
        for (std::uint32_t r = 0; r < program_.num_ranks; ++r) {
            if (const Time entry = noise_.entry_delay(r, 0); entry > 0) {
                push(Stage::call, entry, r, 0);
                continue;
            }
            Time& cpu = cores_.free(r);
            const Time begin = cpu;
            cpu = noise_.advance(r, begin, call_cost_[r]);
            if (trace_) trace_->call(r, cores_.of(r), begin, cpu);
            call_done_[slot(r, 0)] = cpu;
            complete(r, 0, cpu, 0, {Op::Kind::call, r});
        }
    }

    /// A later call (or a late first one): the call's cost on the rank's core, then its sends
    /// that wait for nothing, and what arrived for the call before it started.
    void on_call(const Event& e) {
        const auto r = e.message;
        const auto k = static_cast<std::uint32_t>(e.aux);
        Time& cpu = cores_.free(r);
        const Time begin = std::max(e.time, cpu);
        cpu = noise_.advance(r, begin, call_cost_[r]);
        if (trace_) trace_->call(r, cores_.of(r), begin, cpu);
        const Time done = cpu;
        call_done_[slot(r, k)] = done;
        for (auto j = first_root_[r]; j < first_root_[r + 1]; ++j) release(k * call_messages_ + roots_[j], done);
        auto early = std::move(early_[slot(r, k)]);
        for (const auto& held : early) push(held.stage, done, held.message, held.aux);
        complete(r, k, done, 0, {Op::Kind::call, r});
    }

    /// Per rank: the call's cost (per-call cost and posting its receives) and the sends that
    /// wait for no receive; per rank and call: what completes the call there.
    void prepare_calls() {
        std::vector<double> start(program_.num_ranks, machine_.call_ps);
        std::vector<std::uint32_t> operations(program_.num_ranks, 1);  // the call
        first_root_.assign(program_.num_ranks + 1, 0);
        for (std::uint32_t i = 0; i < call_messages_; ++i) {
            start[program_.dst[i]] += costs_.cost(i).post_recv_ps;
            ++operations[program_.src[i]];  // its tail leaves
            ++operations[program_.dst[i]];  // it is received
            if (costs_.cost(i).ack_after_receive_ps(costs_.bytes(i)) >= 0) ++operations[program_.src[i]];  // acked
            if (program_.dependencies[i] == 0) ++first_root_[program_.src[i] + 1];
        }
        std::partial_sum(first_root_.begin(), first_root_.end(), first_root_.begin());
        roots_.resize(first_root_.back());
        auto next = first_root_;
        for (std::uint32_t i = 0; i < call_messages_; ++i) {
            if (program_.dependencies[i] == 0) roots_[next[program_.src[i]]++] = i;
        }
        call_cost_.resize(program_.num_ranks);
        for (std::uint32_t r = 0; r < program_.num_ranks; ++r) call_cost_[r] = ps(start[r]);
        outstanding_.resize(std::size_t{program_.num_ranks} * calls_);
        for (std::uint32_t r = 0; r < program_.num_ranks; ++r) {
            for (std::uint32_t k = 0; k < calls_; ++k) outstanding_[slot(r, k)] = operations[r];
        }
        call_end_.assign(outstanding_.size(), 0);
        call_done_.assign(outstanding_.size(), kUnknown);
        early_.resize(outstanding_.size());
    }
    [[nodiscard]] std::size_t slot(std::uint32_t rank, std::uint32_t k) const { return std::size_t{rank} * calls_ + k; }
    [[nodiscard]] std::uint32_t iteration(std::uint32_t i) const { return i / call_messages_; }

    /// Whether the receiver of message i has entered the message's call; if not, the event
    /// waits until it has (a message of the next call, or for a late rank).
    bool entered(const Event& e, std::uint32_t rank) {
        const auto s = slot(rank, iteration(e.message));
        if (call_done_[s] != kUnknown) return true;
        early_[s].push_back(e);
        return false;
    }

    /// The rank's collective is complete once its last operation (`op`) is.
    /// Once every operation of call k is, the rank enters call k + 1 (after its entry delay).
    void complete(std::uint32_t rank, std::uint32_t k, Time time, std::uint32_t depth, Op op) {
        if (time >= finish_[rank]) {
            finish_[rank] = time;
            finish_depth_[rank] = depth;
            if (trace_) trace_->finished(rank, op);
        }
        const auto s = slot(rank, k);
        call_end_[s] = std::max(call_end_[s], time);
        if (--outstanding_[s] == 0 && k + 1 < calls_) {
            push(Stage::call, call_end_[s] + noise_.entry_delay(rank, k + 1), rank, k + 1);
        }
    }

    /// BSP: a dissemination barrier, ceil(log2 P) rounds of an empty message across the
    /// farthest distance class the placement has.
    [[nodiscard]] Time barrier_ps() const {
        const auto rounds = static_cast<double>(std::bit_width(std::max(1U, program_.num_ranks) - 1));
        DistanceClass far = DistanceClass::socket;
        for (const auto k : costs_.classes()) far = std::max(far, k);
        const LinkCost& c = machine_.cost(far);
        return ps(rounds * (c.latency_and_byte_ps(0).first + c.send_overhead_at(0) + c.recv_overhead_at(0)));
    }

    /// Send i has what it needs at `time`: it starts then, unless its step must wait.
    void release(std::uint32_t i, Time time) {
        if (gates_.ready(i)) {
            push(Stage::send, time, i);
        } else {
            gates_.hold(i);
        }
    }
    /// Message i is received at `time`: the sends its step held may go (after BSP's barrier).
    void step_received(std::uint32_t i, Time time) {
        gates_.received(i, [&](std::uint32_t h) {
            depth_[h] = std::max(depth_[h], depth_[i] + 1);
            if (trace_) trace_->released(h, i);
            push(Stage::send, time + barrier_, h);
        });
    }

    void push(Stage stage, Time time, std::uint32_t message, Time aux = 0) {
        queue_.push(Event{time, order_++, aux, message, stage});
    }

    [[nodiscard]] std::size_t leaf_of(std::uint32_t rank) const {
        return placement_.node(rank) / machine_.nodes_per_switch;
    }

    void handle(const Event& e) {
        switch (e.stage) {
            case Stage::call: on_call(e); break;
            case Stage::send: on_send(e); break;
            case Stage::request: on_request(e); break;
            case Stage::inject: on_inject(e); break;
            case Stage::nic_out: models_.fair_nic_out ? on_nic_out_fair(e) : on_nic_out(e); break;
            case Stage::nic_out_leave: on_nic_out_leave(e); break;
            case Stage::up: on_uplink(e, network_.uplinks->up, leaf_of(program_.src[e.message]), Stage::down); break;
            case Stage::down:
                on_uplink(e, network_.uplinks->down, leaf_of(program_.dst[e.message]), Stage::nic_in);
                break;
            case Stage::nic_in: models_.fair_nic_in ? on_nic_in_fair(e) : on_nic_in(e); break;
            case Stage::nic_in_leave: on_nic_in_leave(e); break;
            case Stage::arrive: on_arrive(e); break;
        }
    }

    void on_send(const Event& e) {
        const auto i = e.message;
        const auto s = program_.src[i];
        const auto b = costs_.bytes(i);
        const LinkCost& c = costs_.cost(i);
        const auto h = costs_.header_bytes(i);
        Time& cpu = cores_.free(s);
        const Time start = std::max(e.time, cpu);
        const double pack = program_.packed[i] ? costs_.copy_ps(b, program_.units[i]) : 0.0;
        const double header = h > 0 ? c.send_overhead_at(h) + c.send_byte_ps * static_cast<double>(h) : 0.0;
        cpu = noise_.advance(s, start,
                             ps(pack) + ps(header + c.send_overhead_at(b) + c.send_byte_ps * static_cast<double>(b)));
        if (eager_) eager_->sent(i, start);
        if (trace_) trace_->send(i, cores_.of(s), e.time, start, cpu);
        if (b > c.eager_limit) {
            push(Stage::request, cpu + costs_.latency(i), i);
        } else {
            push(Stage::inject, cpu, i);
        }
    }

    // Rendezvous: the receiver's CPU answers the request; the data moves when the answer is back.
    void on_request(const Event& e) {
        const auto i = e.message;
        const auto d = program_.dst[i];
        if (!entered(e, d)) return;
        Time& cpu = cores_.free(d);
        const Time start = std::max(e.time + cores_.wake(d), cpu);
        cpu = noise_.advance(d, start, ps(costs_.cost(i).recv_overhead_ps));
        if (trace_) trace_->answer(i, cores_.of(d), e.time, start, cpu);
        push(Stage::inject, cpu + costs_.latency(i), i);
    }

    void on_inject(const Event& e) {
        const auto i = e.message;
        const auto s = program_.src[i];
        const auto b = costs_.bytes(i);
        const LinkCost& c = costs_.cost(i);
        // Streams that cross: a message queued behind its sender's last one while its receiver
        // is injecting too moves its bytes at the exchange's rate.
        const bool crossing = !c.concurrent_injection && inject_[s] > e.time && inject_[program_.dst[i]] > e.time;
        const double byte = crossing ? c.exchange_byte_ps_at(b) : c.latency_and_byte_ps(b).second;
        const auto h = costs_.header_bytes(i);
        // The header leaves first: the payload follows it after a gap.
        const Time header = h > 0 ? ps(c.gap_ps + byte * static_cast<double>(h)) : 0;
        const Time start = (c.concurrent_injection ? e.time : std::max(e.time, inject_[s])) + header;
        const Time transfer = ps(byte * static_cast<double>(b));
        if (!c.concurrent_injection) inject_[s] = start + ps(c.gap_ps) + transfer;
        if (costs_.off_node(i)) {
            push(Stage::nic_out, start, i, start + transfer);
        } else {
            complete(s, iteration(i), start + transfer, depth_[i], {Op::Kind::tail, i});
            push(Stage::arrive, start + transfer + costs_.latency(i), i);
        }
    }

    /// The message's head leaves the sending node at `time`, its tail at `tail`: through the
    /// uplinks, or on to the receiving NIC after the latency.
    void leave_node(std::uint32_t i, Time time, Time tail) {
        if (costs_.via_uplinks(i)) {
            push(Stage::up, time, i, tail);
            return;
        }
        push(Stage::nic_in, time + costs_.latency(i), i, tail + costs_.latency(i));
    }

    /// First-come sending NIC: the message holds the NIC for its transfer and the NIC's gap.
    void on_nic_out(const Event& e) {
        const auto i = e.message;
        const auto node = placement_.node(program_.src[i]);
        const Time transfer = costs_.nic_transfer(i);
        const Time start = network_.nic_out.take(node, e.time, ps(machine_.nic_gap_ps) + transfer);
        const Time tail = std::max(start + transfer, e.aux);
        complete(program_.src[i], iteration(i), tail, depth_[i], {Op::Kind::tail, i});
        leave_node(i, start, tail);
    }

    /// Fair sending NIC: the message shares its node's NIC with every message on it; its head
    /// moves on at once (`aux`, the tail leaving the rank, is then only a lower bound of the
    /// tail), its tail leaves when its share has carried it.
    void on_nic_out_fair(const Event& e) {
        const auto i = e.message;
        const auto node = placement_.node(program_.src[i]);
        network_.fair_out->join(node, e.time, static_cast<double>(costs_.nic_transfer(i)) + machine_.nic_gap_ps, i,
                                e.aux);
        schedule_departure(*network_.fair_out, node, Stage::nic_out_leave);
        leave_node(i, e.time, e.aux);
    }

    void on_nic_out_leave(const Event& e) {
        const auto job = network_.fair_out->leave(e.message, e.time, e.aux);
        if (!job) return;  // a message joined or left since
        const auto i = job->message;
        const Time tail = std::max(e.time, job->aux);
        complete(program_.src[i], iteration(i), tail, depth_[i], {Op::Kind::tail, i});
        if (const auto held = network_.tails->tail_left(i, tail)) arrive_off_node(i, *held);
        schedule_departure(*network_.fair_out, e.message, Stage::nic_out_leave);
    }

    /// Event of the next departure from `links`' link `node`, if it carries a message:
    /// `message` holds the node, `aux` the link's version when scheduled.
    void schedule_departure(const internal::FairLinks& links, std::uint32_t node, Stage stage) {
        if (const auto next = links.next_departure(node)) push(stage, next->first, node, next->second);
    }

    /// Through a leaf's uplinks (or downlinks), first come, first served; the message's
    /// latency is charged after the downlinks.
    void on_uplink(const Event& e, internal::FirstComeLinks& links, std::size_t leaf, Stage next) {
        const auto i = e.message;
        const auto [alone, shared] = costs_.uplink_transfer(i);
        const Time start = links.take(leaf, e.time, shared);
        const Time tail = std::max(start + alone, e.aux);
        const Time after = next == Stage::nic_in ? costs_.latency(i) : 0;
        push(next, start + after, i, tail + after);
    }

    /// First-come receiving NIC.
    void on_nic_in(const Event& e) {
        const auto i = e.message;
        const auto node = placement_.node(program_.dst[i]);
        const Time transfer = costs_.nic_transfer(i);
        const Time start = network_.nic_in.take(node, e.time, ps(machine_.nic_gap_ps) + transfer);
        arrive_off_node(i, std::max(start + transfer, e.aux));
    }

    /// Fair sharing: the message shares the receiving NIC with every message on it from the
    /// time its head arrives; its tail arrives when its share has carried it and the NIC's
    /// per-message gap.
    void on_nic_in_fair(const Event& e) {
        const auto node = placement_.node(program_.dst[e.message]);
        network_.fair_in->join(node, e.time, static_cast<double>(costs_.nic_transfer(e.message)) + machine_.nic_gap_ps,
                               e.message, e.aux);
        schedule_departure(*network_.fair_in, node, Stage::nic_in_leave);
    }

    void on_nic_in_leave(const Event& e) {
        const auto job = network_.fair_in->leave(e.message, e.time, e.aux);
        if (!job) return;  // a message joined or left since
        arrive_off_node(job->message, std::max(e.time, job->aux));
        schedule_departure(*network_.fair_in, e.message, Stage::nic_in_leave);
    }

    /// An off-node message's tail has passed the receiving NIC at `t`: it arrives then, or,
    /// with a fair sending NIC, not before its tail left the sending NIC plus the latency
    /// (held until that is known).
    void arrive_off_node(std::uint32_t i, Time t) {
        if (!network_.tails) {
            push(Stage::arrive, t, i);
        } else if (const auto arrival = network_.tails->arrival(i, t, costs_.latency(i))) {
            push(Stage::arrive, *arrival, i);
        }
    }

    void on_arrive(const Event& e) {
        const auto i = e.message;
        const auto d = program_.dst[i];
        if (!entered(e, d)) return;
        const auto b = costs_.bytes(i);
        const LinkCost& c = costs_.cost(i);
        const double unpack =
            costs_.copy_ps(std::uint64_t{program_.unpack_units[i]} * block_, program_.unpack_units[i]);
        // With a size header: its completion, then posting the payload's receive.
        const auto h = costs_.header_bytes(i);
        const double header =
            h > 0 ? c.recv_overhead_at(h) + c.recv_byte_ps * static_cast<double>(h) + c.post_recv_ps : 0.0;
        Time& cpu = cores_.free(d);
        const Time start = std::max(e.time + cores_.wake(d), cpu);
        const double overflow = eager_ && eager_->overflows(i) ? c.overflow_recv_ps : 0.0;
        const Time done = noise_.advance(
            d, start,
            ps(header) + ps(c.recv_overhead_at(b) + overflow + c.recv_byte_ps * static_cast<double>(b)) + ps(unpack));
        cpu = done;
        if (eager_) eager_->received(i, done);
        if (trace_) trace_->receive(i, cores_.of(d), e.time, start, done);
        ++delivered_;
        complete(d, iteration(i), done, depth_[i], {Op::Kind::receive, i});
        // The transport acknowledges once the message is in the receive buffer: before libnbr
        // unpacks it.
        if (const double ack = c.ack_after_receive_ps(b); ack >= 0) {
            complete(program_.src[i], iteration(i), done - ps(unpack) + ps(ack), depth_[i], {Op::Kind::ack, i});
        }
        for (auto k = program_.first_dependent[i]; k < program_.first_dependent[i + 1]; ++k) {
            const auto next = program_.dependents[k];
            if (--waiting_[next] == 0) {
                depth_[next] = depth_[i] + 1;  // the receive that released it is on its critical path
                if (trace_) trace_->released(next, i);
                release(next, done);
            }
        }
        step_received(i, done);
    }

    // What is simulated, and the parts the stages consult.
    const SimProgram& program_;
    const Machine& machine_;
    const Placement& placement_;
    std::uint64_t block_;
    internal::NetworkModels models_;  // which of the optional network models the machine states
    internal::MessageCosts costs_;
    std::uint32_t calls_;          // calls back to back
    std::uint32_t call_messages_;  // messages per call
    internal::Cores cores_;
    internal::CpuNoise noise_;
    internal::StepGates gates_;
    Time barrier_ = 0;  // BSP: the barrier between steps
    Network network_;
    std::optional<internal::PairEagerBuffers> eager_;  // with eager buffers
    std::unique_ptr<internal::PathTrace> trace_;       // with SimOptions::critical_path
    // Per rank: when its injection is free, its last completion and that one's depth.
    std::vector<Time> inject_, finish_;
    std::vector<std::uint32_t> finish_depth_;
    // Per message: dependencies not yet received, depth on the critical path.
    std::vector<std::uint32_t> waiting_, depth_;
    // Calls (see start_calls).
    std::vector<Time> call_cost_;
    std::vector<std::uint64_t> first_root_;
    std::vector<std::uint32_t> roots_;
    std::vector<std::uint32_t> outstanding_;
    std::vector<Time> call_end_, call_done_;
    std::vector<std::vector<Event>> early_;
    internal::MonotoneEventQueue<Event> queue_;
    std::uint64_t order_ = 0, events_ = 0, delivered_ = 0;
};

/// `iterations` copies of the program's messages, call after call (messages k·M + i).
SimProgram repeat(const SimProgram& program, std::uint32_t iterations) {
    const auto m = program.num_messages();
    if (m * iterations >= std::uint64_t{1} << 32) {
        throw std::invalid_argument(std::to_string(iterations) + " calls of " + std::to_string(m) +
                                    " messages each exceed the simulator's 2^32 messages");
    }
    SimProgram r;
    r.num_ranks = program.num_ranks;
    r.algorithm = program.algorithm;
    r.collective = program.collective;
    r.size_headers = program.size_headers;
    r.first_message = program.first_message;  // of the first call
    r.send_step = program.send_step;          // indexed modulo the call's messages
    r.recv_step = program.recv_step;
    const auto append = [&](auto& to, const auto& from) {
        for (std::uint32_t k = 0; k < iterations; ++k) to.insert(to.end(), from.begin(), from.end());
    };
    append(r.src, program.src);
    append(r.dst, program.dst);
    append(r.units, program.units);
    append(r.unpack_units, program.unpack_units);
    append(r.packed, program.packed);
    append(r.dependencies, program.dependencies);
    r.first_dependent.reserve(m * iterations + 1);
    r.dependents.reserve(program.dependents.size() * iterations);
    for (std::uint32_t k = 0; k < iterations; ++k) {
        const auto offset = static_cast<std::uint32_t>(k * m);
        for (std::uint64_t i = 0; i < m; ++i)
            r.first_dependent.push_back(k * program.dependents.size() + program.first_dependent[i]);
        for (const auto d : program.dependents) r.dependents.push_back(d + offset);
    }
    r.first_dependent.push_back(program.dependents.size() * iterations);
    return r;
}

double quantile(const std::vector<Time>& sorted, double q) {
    if (sorted.empty()) return 0;
    const auto index = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return us(sorted[std::min(sorted.size() - 1, index == 0 ? 0 : index - 1)]);
}

SimResult Simulation::result() const {
    SimResult r;
    r.bytes = block_;
    r.messages = program_.num_messages();
    r.events = events_;
    r.finish_us.reserve(finish_.size());
    for (const Time t : finish_) r.finish_us.push_back(us(t));
    std::vector<Time> sorted(finish_);
    std::sort(sorted.begin(), sorted.end());
    if (!sorted.empty()) {
        r.last_rank = static_cast<std::uint32_t>(std::max_element(finish_.begin(), finish_.end()) - finish_.begin());
        r.critical_path_messages = finish_[r.last_rank] > 0 ? finish_depth_[r.last_rank] : 0;
        r.latency_us = us(sorted.back());
        r.completion_min_us = us(sorted.front());
        r.completion_max_us = us(sorted.back());
        double sum = 0;
        for (const Time t : sorted) sum += us(t);
        r.completion_mean_us = sum / static_cast<double>(sorted.size());
        r.completion_median_us = quantile(sorted, 0.5);
        r.completion_p90_us = quantile(sorted, 0.9);
        r.completion_p99_us = quantile(sorted, 0.99);
        if (trace_) {
            r.path = trace_->walk(
                r.last_rank, finish_[r.last_rank], cores_.wakes(), program_.src, program_.dst, costs_.classes(),
                [this](std::uint32_t i) { return costs_.bytes(i); },
                [this](std::uint32_t i, bool tail) { return costs_.unloaded(i, tail); });
        }
    }
    // Traffic by distance class, per sending rank.
    std::vector<std::array<std::uint64_t, 2 * kDistanceClasses>> per_rank(program_.num_ranks);
    for (std::uint32_t i = 0; i < program_.num_messages(); ++i) {
        const auto k = static_cast<std::size_t>(costs_.class_of(i));
        per_rank[program_.src[i]][2 * k] += 1;
        per_rank[program_.src[i]][2 * k + 1] += costs_.bytes(i);
    }
    const double n = std::max<double>(1, program_.num_ranks);
    for (const auto& counts : per_rank) {
        for (std::size_t k = 0; k < kDistanceClasses; ++k) {
            auto& t = r.traffic[k];
            t.messages_mean += static_cast<double>(counts[2 * k]) / n;
            t.bytes_mean += static_cast<double>(counts[2 * k + 1]) / n;
            t.messages_max = std::max(t.messages_max, counts[2 * k]);
            t.bytes_max = std::max(t.bytes_max, counts[2 * k + 1]);
        }
    }
    return r;
}

}  // namespace

SimResult simulate(const SimProgram& program, const Machine& machine, const Placement& placement,
                   std::uint64_t block_bytes, const SimOptions& options) {
    if (placement.num_ranks() != program.num_ranks) {
        throw std::runtime_error("placement has " + std::to_string(placement.num_ranks()) + " ranks, the pattern " +
                                 std::to_string(program.num_ranks));
    }
    const auto iterations = std::max(1U, options.perturbation.iterations);
    if (options.critical_path && iterations > 1) {
        throw std::invalid_argument("the critical path is recorded for a single call (iterations 1)");
    }
    if (const auto& noisy = options.perturbation.noisy_ranks;
        std::any_of(noisy.begin(), noisy.end(), [&](std::uint32_t r) { return r >= program.num_ranks; })) {
        throw std::invalid_argument("a noisy rank is not below the pattern's " + std::to_string(program.num_ranks) +
                                    " ranks");
    }
    if (const auto late = options.perturbation.late_rank; late && *late >= program.num_ranks) {
        throw std::invalid_argument("late rank " + std::to_string(*late) + " is not below the pattern's " +
                                    std::to_string(program.num_ranks) + " ranks");
    }
    const auto start = std::chrono::steady_clock::now();
    SimProgram repeated;
    if (iterations > 1) repeated = repeat(program, iterations);
    Simulation simulation(iterations > 1 ? repeated : program, machine, placement, block_bytes, options, iterations);
    simulation.run();
    auto result = simulation.result();
    result.iterations = iterations;
    result.iteration_us = result.latency_us / iterations;
    if (!options.rank_finish) result.finish_us.clear();
    result.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace nbr::simulator

namespace nbr::simulator {

namespace {

/// The run without the perturbation's delays: same rule and calls.
SimOptions without_delays(const SimOptions& options) {
    SimOptions quiet;
    quiet.perturbation.rule = options.perturbation.rule;
    quiet.perturbation.iterations = options.perturbation.iterations;
    quiet.rank_finish = true;
    return quiet;
}

/// Ranks whose last completion is later than in `quiet` by more than `threshold_us`.
std::int64_t ranks_later(const SimResult& noisy, const SimResult& quiet, double threshold_us) {
    std::int64_t count = 0;
    for (std::size_t r = 0; r < noisy.finish_us.size(); ++r)
        count += noisy.finish_us[r] - quiet.finish_us[r] > threshold_us;
    return count;
}

}  // namespace

SimResult simulate_perturbed(const SimProgram& program, const Machine& machine, const Placement& placement,
                             std::uint64_t block_bytes, const SimOptions& options, std::uint32_t seeds) {
    const auto& perturbation = options.perturbation;
    const auto quiet = simulate(program, machine, placement, block_bytes, without_delays(options));
    NoiseEffect effect;
    effect.seeds = std::max(1U, seeds);
    effect.quiet_us = quiet.iteration_us;
    effect.noisy_min_us = std::numeric_limits<double>::infinity();
    SimResult first;
    double sum = 0;
    for (std::uint32_t s = 0; s < effect.seeds; ++s) {
        SimOptions run = options;
        run.perturbation.seed = perturbation.seed + s;
        run.rank_finish = s == 0;
        run.critical_path = options.critical_path && s == 0;
        auto result = simulate(program, machine, placement, block_bytes, run);
        sum += result.iteration_us;
        effect.noisy_min_us = std::min(effect.noisy_min_us, result.iteration_us);
        effect.noisy_max_us = std::max(effect.noisy_max_us, result.iteration_us);
        if (s == 0) first = std::move(result);
    }
    effect.noisy_us = sum / effect.seeds;
    effect.slowdown = effect.quiet_us > 0 ? effect.noisy_us / effect.quiet_us - 1 : 0.0;
    effect.noise_fraction = perturbation.detours.fraction();
    effect.amplification = effect.noise_fraction > 0 ? effect.slowdown / effect.noise_fraction : 0.0;
    if (perturbation.late_rank) effect.blast_radius = ranks_later(first, quiet, perturbation.late_us / 2);
    if (!options.rank_finish) first.finish_us.clear();
    first.noise = effect;
    return first;
}

double predicted_call_us(const SimProgram& program, const Machine& machine, const Placement& placement,
                         std::uint64_t block_bytes) {
    if (!machine.noise.any()) return simulate(program, machine, placement, block_bytes).latency_us;
    double sum = 0;
    for (std::uint32_t seed = 1; seed <= kNoiseSeeds; ++seed) {
        SimOptions options;
        options.perturbation.detours = machine.noise;
        options.perturbation.iterations = kNoiseCalls;
        options.perturbation.seed = seed;
        sum += simulate(program, machine, placement, block_bytes, options).iteration_us;
    }
    return sum / kNoiseSeeds;
}

}  // namespace nbr::simulator
