// The discrete-event LogGOPS simulation of one replay (model: docs/simulate.md).
#include "nbr/simulator/simulate.hpp"

#include "critical_path.hpp"
#include "eager_buffer.hpp"
#include "event_queue.hpp"
#include "noise.hpp"
#include "shared_link.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>

namespace nbr::simulator {

namespace {

using Time = std::int64_t;  // picoseconds
using Op = internal::PathTrace::Op;
constexpr Time kUnknown = -1;

Time ps(double value) {
    return static_cast<Time>(std::llround(value));
}

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

/// The optional parts of the network model a machine states, chosen once per simulation
/// (docs/simulate.md, "The model, exactly"): fair sharing of the receiving and the sending
/// NIC (else first come, first served), contention on the leaf switches' uplinks, per-pair
/// eager buffers.
struct NetworkModels {
    bool fair_nic_in = false;
    bool fair_nic_out = false;
    bool uplinks = false;
    bool eager_buffers = false;
};

bool has_eager_buffer(const Machine& m) {
    return std::any_of(m.link.begin(), m.link.end(), [](const LinkCost& c) { return c.eager_buffer > 0; });
}

NetworkModels models_of(const Machine& machine) {
    return {machine.nic_sharing == NicSharing::fair, machine.nic_send_sharing == NicSharing::fair,
            machine.uplinks_per_switch > 0, has_eager_buffer(machine)};
}

class Simulation {
public:
    /// `program` holds `iterations` copies of a call's messages, call after call.
    Simulation(const SimProgram& program, const Machine& machine, const Placement& placement, std::uint64_t block,
               const SimOptions& options, std::uint32_t iterations)
        : program_(program),
          models_(models_of(machine)),
          rule_(options.perturbation.rule),
          calls_(iterations),
          call_messages_(program.num_messages() / iterations),
          noise_(options.perturbation, placement),
          machine_(machine),
          placement_(placement),
          block_(block),
          copy_byte_ps_(machine.copy_byte_ps_at(block)),
          core_(cores_of(machine, placement)),
          cpu_(core_.empty() ? 0 : *std::max_element(core_.begin(), core_.end()) + 1, 0),
          wake_(wake_delays(machine, core_, cpu_.size())),
          inject_(program.num_ranks, 0),
          finish_(program.num_ranks, 0),
          finish_depth_(program.num_ranks, 0),
          nic_out_(placement.num_nodes(), 0),
          nic_in_(placement.num_nodes(), 0),
          shared_in_(models_.fair_nic_in ? placement.num_nodes() : 0),
          shared_out_(models_.fair_nic_out ? placement.num_nodes() : 0),
          send_tail_(models_.fair_nic_out ? program.num_messages() : 0, kUnknown),
          held_arrival_(send_tail_.size(), kUnknown),
          up_(models_.uplinks ? leaves(machine, placement) : 0, 0),
          down_(up_.size(), 0),
          buffered_(models_.eager_buffers ? program.num_messages() : 0, Buffered::no),
          sent_at_(buffered_.size(), 0),
          pair_slot_(buffered_.size(), kUntracked),
          waiting_(program.dependencies),
          depth_(program.num_messages(), 1),
          class_of_(program.num_messages()) {
        for (std::uint64_t i = 0; i < program.num_messages(); ++i)
            class_of_[i] = distance(program_.src[i], program_.dst[i]);
        track_eager_buffers();
        check_range();
        prepare_calls();
        if (rule_ != ExecutionRule::event) prepare_step_gates();
        if (options.critical_path) {
            trace_ = std::make_unique<internal::PathTrace>(program.num_messages(), program.num_ranks, cpu_.size());
        }
    }

    void run() {
        start_calls();
        // Sends with nothing to wait for start at time 0, before every later event (which
        // comes at time 0 or later and is inserted after them): handled at once, in order.
        // Ranks entering their first call later send theirs when they do.
        for (std::uint32_t i = 0; i < call_messages_; ++i) {
            if (waiting_[i] != 0 || call_done_[slot(program_.src[i], 0)] == kUnknown) continue;
            if (!step_ready(i)) {
                hold_send(i);
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
    /// The core each rank runs on: its own, or with `cores_per_node`, local rank i of a node
    /// on the node's core i mod cores_per_node. Cores are numbered densely over the cores in
    /// use (a node's first min(cores_per_node, its ranks)), so there are at most as many as ranks.
    static std::vector<std::uint32_t> cores_of(const Machine& m, const Placement& place) {
        std::vector<std::uint32_t> core(place.num_ranks());
        if (m.cores_per_node == 0) {
            std::iota(core.begin(), core.end(), 0U);
            return core;
        }
        std::vector<std::uint32_t> ranks(place.num_nodes(), 0);
        for (std::uint32_t r = 0; r < place.num_ranks(); ++r) ++ranks[place.node(r)];
        std::vector<std::uint32_t> used(place.num_nodes()), first(place.num_nodes());  // cores in use, first one
        std::uint32_t next = 0;
        for (std::uint32_t node = 0; node < place.num_nodes(); ++node) {
            used[node] = std::min(ranks[node], m.cores_per_node);
            first[node] = next;
            next += used[node];
        }
        std::vector<std::uint32_t> local(place.num_nodes(), 0);
        for (std::uint32_t r = 0; r < place.num_ranks(); ++r) {
            const auto node = place.node(r);
            core[r] = first[node] + local[node]++ % used[node];
        }
        return core;
    }

    /// Every stage of every message and every call, one after another: no simulated time can
    /// be later (each event waits only for earlier stages and for resources busy with them).
    [[nodiscard]] double serial_bound_ps() const {
        const double wake =
            machine_.switch_ps * static_cast<double>(program_.num_ranks);  // (k - 1) switches, k ranks at most
        double total = static_cast<double>(program_.num_ranks) * machine_.call_ps;
        for (std::uint32_t i = 0; i < program_.num_messages(); ++i) {
            const LinkCost& c = cost(i);
            const double b = static_cast<double>(bytes(i) + header_bytes(i));
            const auto [latency, byte] = c.latency_and_byte_ps(bytes(i));
            // Twice (a size header or a rendezvous answer besides the payload) the largest
            // overhead any of them pays.
            const double overheads =
                2 * std::max({c.send_overhead_ps, c.send_overhead_at(bytes(i)), c.send_overhead_at(header_bytes(i))}) +
                2 * std::max({c.recv_overhead_ps, c.recv_overhead_at(bytes(i)), c.recv_overhead_at(header_bytes(i))});
            const double cpu =
                overheads + c.post_recv_ps + c.overflow_recv_ps +
                (c.send_byte_ps + c.recv_byte_ps + 2 * copy_byte_ps_) * b +
                machine_.copy_block_ps * (static_cast<double>(program_.units[i]) + program_.unpack_units[i]);
            const double way = 3 * latency + c.gap_ps + byte * b + std::max(0.0, c.ack_after_receive_ps(bytes(i)));
            const double nic = 4 * machine_.nic_gap_ps + 2 * std::max(machine_.nic_byte_ps, byte) * b;
            const double up =
                via_uplinks(i) ? 2 * (machine_.uplink_gap_ps + std::max(machine_.uplink_byte_ps, byte) * b) : 0.0;
            total += cpu + way + nic + up + 2 * wake;
        }
        return total;
    }

    /// Simulated times are picoseconds in 64 bits: a machine and block size whose serial bound
    /// exceeds 2^62 ps (about 53 days) are rejected before anything is simulated.
    void check_range() const {
        constexpr double kLimitPs = 4.6e18;
        const double bound = serial_bound_ps();
        if (!(bound <= kLimitPs)) {
            throw std::runtime_error("machine " + machine_.name + " at " + std::to_string(block_) +
                                     " B per block: the simulated times could exceed the simulator's range "
                                     "(2^62 ps, about 53 days); the machine's costs or the block size are too large");
        }
    }

    [[nodiscard]] bool bufferable(std::uint32_t i) const {
        const LinkCost& c = cost(i);
        return c.eager_buffer > 0 && bytes(i) <= c.eager_limit;
    }

    /// Per-pair eager buffer: numbers the pairs whose messages could overflow, those
    /// with more than one bufferable message or one that does not fit alone (sorted by pair:
    /// no per-pair map); the others always fit and need no state.
    void track_eager_buffers() {
        if (!models_.eager_buffers) return;
        std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;  // (pair, message)
        for (std::uint32_t i = 0; i < program_.num_messages(); ++i) {
            if (bufferable(i))
                keyed.emplace_back(std::uint64_t{program_.src[i]} * program_.num_ranks + program_.dst[i], i);
        }
        std::sort(keyed.begin(), keyed.end());
        std::uint32_t pairs = 0;
        for (std::size_t a = 0, b = 0; a < keyed.size(); a = b) {
            while (b < keyed.size() && keyed[b].first == keyed[a].first) ++b;
            const auto i = keyed[a].second;
            if (b - a == 1 && footprint(i) <= cost(i).eager_buffer) continue;
            for (std::size_t k = a; k < b; ++k) pair_slot_[keyed[k].second] = pairs;
            ++pairs;
        }
        buffers_ = internal::EagerBuffers(pairs);
    }

    /// Whether eager message i fits its pair's buffer as it was when the message was sent
    /// (then held until received) or overflows. Decided when it arrives, in the order a pair's
    /// messages arrive: by then every earlier message of the pair has been received or is
    /// waiting, so what the buffer held at the send is known.
    void buffer_on_arrive(std::uint32_t i) {
        if (!models_.eager_buffers || pair_slot_[i] == kUntracked) return;
        const bool fits = buffers_.admit(pair_slot_[i], footprint(i), cost(i).eager_buffer, sent_at_[i]);
        buffered_[i] = fits ? Buffered::held : Buffered::overflow;
    }
    [[nodiscard]] double overflow_recv_ps(std::uint32_t i) const {
        return models_.eager_buffers && buffered_[i] == Buffered::overflow ? cost(i).overflow_recv_ps : 0.0;
    }
    [[nodiscard]] std::uint64_t footprint(std::uint32_t i) const {
        return bytes(i) + header_bytes(i) + cost(i).eager_buffer_message;
    }

    /// Per rank: how long an arrived message waits for the rank to get its core back, (k - 1)
    /// switches with k ranks on the core.
    static std::vector<Time> wake_delays(const Machine& m, const std::vector<std::uint32_t>& core, std::size_t cores) {
        std::vector<std::uint32_t> sharing(cores, 0);
        for (const auto c : core) ++sharing[c];
        std::vector<Time> wake(core.size());
        for (std::size_t r = 0; r < core.size(); ++r) wake[r] = ps(m.switch_ps * (sharing[core[r]] - 1));
        return wake;
    }

    /// Each rank's call starts with its per-call cost and the posting of all its receives
    /// (with size headers, the headers' receives; payload receives are posted on arrival).
    void start_calls() {
        for (std::uint32_t r = 0; r < program_.num_ranks; ++r) {
            if (const Time entry = noise_.entry_delay(r, 0); entry > 0) {
                push(Stage::call, entry, r, 0);
                continue;
            }
            const Time begin = cpu_[core_[r]];
            cpu_[core_[r]] = noise_.advance(r, begin, call_cost_[r]);
            if (trace_) trace_->call(r, core_[r], begin, cpu_[core_[r]]);
            call_done_[slot(r, 0)] = cpu_[core_[r]];
            complete(r, 0, cpu_[core_[r]], 0, {Op::Kind::call, r});
        }
    }

    /// A later call (or a late first one): the call's cost on the rank's core, then its sends
    /// that wait for nothing, and what arrived for the call before it started.
    void on_call(const Event& e) {
        const auto r = e.message;
        const auto k = static_cast<std::uint32_t>(e.aux);
        Time& cpu = cpu_[core_[r]];
        const Time begin = std::max(e.time, cpu);
        cpu = noise_.advance(r, begin, call_cost_[r]);
        if (trace_) trace_->call(r, core_[r], begin, cpu);
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
            start[program_.dst[i]] += cost(i).post_recv_ps;
            ++operations[program_.src[i]];                                                   // its tail leaves
            ++operations[program_.dst[i]];                                                   // it is received
            if (cost(i).ack_after_receive_ps(bytes(i)) >= 0) ++operations[program_.src[i]];  // acknowledged
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

    // Execution rules (docs/simulate.md): under the step rule a gate per rank and call, under
    // BSP one per call; a gate counts per step the receives still missing and holds the sends
    // of later steps, in the order they became ready.
    [[nodiscard]] std::uint32_t send_step(std::uint32_t i) const {
        return program_.send_step.empty() ? 0 : program_.send_step[i % call_messages_];
    }
    [[nodiscard]] std::uint32_t recv_step(std::uint32_t i) const {
        return program_.recv_step.empty() ? 0 : program_.recv_step[i % call_messages_];
    }
    [[nodiscard]] std::size_t gate_of(std::uint32_t rank, std::uint32_t i) const {
        return rule_ == ExecutionRule::bsp ? iteration(i) : slot(rank, iteration(i));
    }

    void prepare_step_gates() {
        for (std::uint32_t i = 0; i < call_messages_; ++i)
            steps_ = std::max({steps_, send_step(i) + 1, recv_step(i) + 1});
        const std::size_t gates = rule_ == ExecutionRule::bsp ? calls_ : std::size_t{program_.num_ranks} * calls_;
        left_.assign(gates * steps_, 0);
        for (std::uint32_t i = 0; i < program_.num_messages(); ++i)
            ++left_[gate_of(program_.dst[i], i) * steps_ + recv_step(i)];
        low_.assign(gates, 0);
        for (std::size_t g = 0; g < gates; ++g) {
            advance_low(g);
        }
        held_head_.assign(gates * steps_, kNone);
        held_tail_.assign(gates * steps_, kNone);
        held_next_.assign(program_.num_messages(), kNone);
        if (rule_ == ExecutionRule::bsp) barrier_ = barrier_ps();
    }

    /// A dissemination barrier: ceil(log2 P) rounds of an empty message across the farthest
    /// distance class the placement has.
    [[nodiscard]] Time barrier_ps() const {
        const auto rounds = static_cast<double>(std::bit_width(std::max(1U, program_.num_ranks) - 1));
        DistanceClass far = DistanceClass::socket;
        for (const auto k : class_of_) far = std::max(far, k);
        const LinkCost& c = machine_.cost(far);
        return ps(rounds * (c.latency_and_byte_ps(0).first + c.send_overhead_at(0) + c.recv_overhead_at(0)));
    }

    /// Gate g's lowest step with receives missing, past the steps whose receives are all in.
    void advance_low(std::size_t g) {
        while (low_[g] < steps_ && left_[g * steps_ + low_[g]] == 0) ++low_[g];
    }

    [[nodiscard]] bool step_ready(std::uint32_t i) const {
        return rule_ == ExecutionRule::event || send_step(i) <= low_[gate_of(program_.src[i], i)];
    }
    void hold_send(std::uint32_t i) {
        const auto at = gate_of(program_.src[i], i) * steps_ + send_step(i);
        if (held_tail_[at] == kNone) {
            held_head_[at] = i;
        } else {
            held_next_[held_tail_[at]] = i;
        }
        held_tail_[at] = i;
    }
    /// Send i has what it needs at `time`: it starts then, unless its step must wait.
    void release(std::uint32_t i, Time time) {
        if (step_ready(i)) {
            push(Stage::send, time, i);
        } else {
            hold_send(i);
        }
    }
    /// Message i is received at `time`: the sends its step held may go.
    void step_received(std::uint32_t i, Time time) {
        if (rule_ == ExecutionRule::event) return;
        const auto g = gate_of(program_.dst[i], i);
        const auto s = recv_step(i);
        if (--left_[g * steps_ + s] != 0 || s != low_[g]) return;
        const auto before = low_[g];
        advance_low(g);
        for (auto t = before + 1; t <= std::min(low_[g], steps_ - 1); ++t) {
            for (auto h = held_head_[g * steps_ + t]; h != kNone; h = held_next_[h]) {
                depth_[h] = std::max(depth_[h], depth_[i] + 1);
                if (trace_) trace_->released(h, i);
                push(Stage::send, time + barrier_, h);
            }
            held_head_[g * steps_ + t] = held_tail_[g * steps_ + t] = kNone;
        }
    }

    static std::size_t leaves(const Machine& m, const Placement& place) {
        return (place.num_nodes() + m.nodes_per_switch - 1) / m.nodes_per_switch;
    }

    [[nodiscard]] DistanceClass distance(std::uint32_t a, std::uint32_t b) const {
        return machine_.distance(placement_, a, b);
    }
    [[nodiscard]] bool off_node(std::uint32_t i) const { return class_of_[i] >= DistanceClass::leaf; }
    [[nodiscard]] std::uint64_t bytes(std::uint32_t i) const { return std::uint64_t{program_.units[i]} * block_; }
    /// A copy of `blocks` blocks, `b` bytes in all (packing or unpacking).
    [[nodiscard]] double copy_ps(std::uint64_t b, std::uint32_t blocks) const {
        return copy_byte_ps_ * static_cast<double>(b) + machine_.copy_block_ps * static_cast<double>(blocks);
    }
    [[nodiscard]] const LinkCost& cost(std::uint32_t i) const { return machine_.cost(class_of_[i]); }
    /// v-variants: the size header sent ahead of a staged message (one uint64 per block).
    [[nodiscard]] std::uint64_t header_bytes(std::uint32_t i) const {
        return program_.size_headers && program_.packed[i] ? std::uint64_t{program_.units[i]} * sizeof(std::uint64_t)
                                                           : 0;
    }
    /// Time a message occupies a NIC: a message never crosses the NIC faster than its
    /// class's byte time (measured point to point, through the NIC) allows.
    [[nodiscard]] Time nic_transfer(std::uint32_t i) const {
        const auto b = bytes(i);
        const auto h = header_bytes(i);
        const double byte = std::max(machine_.nic_byte_ps, cost(i).latency_and_byte_ps(b).second);
        return ps(byte * static_cast<double>(b + h) + (h > 0 ? machine_.nic_gap_ps : 0.0));
    }

    /// Time one message takes through one uplink, and the time it occupies its leaf's
    /// uplinks (shared by uplinks_per_switch of them).
    [[nodiscard]] std::pair<Time, Time> uplink_transfer(std::uint32_t i) const {
        const auto b = bytes(i) + header_bytes(i);
        const double byte = std::max(machine_.uplink_byte_ps, cost(i).latency_and_byte_ps(bytes(i)).second);
        const double alone = byte * static_cast<double>(b);
        return {ps(alone), ps((alone + machine_.uplink_gap_ps) / machine_.uplinks_per_switch)};
    }
    /// L of message i's class at its size.
    [[nodiscard]] Time latency(std::uint32_t i) const { return ps(cost(i).latency_and_byte_ps(bytes(i)).first); }
    [[nodiscard]] bool via_uplinks(std::uint32_t i) const {
        return models_.uplinks && class_of_[i] == DistanceClass::network;
    }

    void push(Stage stage, Time time, std::uint32_t message, Time aux = 0) {
        queue_.push(Event{time, order_++, aux, message, stage});
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

    /// Trace: how long message i takes from its post (with rendezvous: from the answer) to its
    /// arrival, or with `tail` to its tail leaving the sender (its rank, or its NIC), with
    /// nothing else on its way; the transfers of the critical path are queued for the rest.
    [[nodiscard]] Time unloaded(std::uint32_t i, bool tail) const {
        const LinkCost& c = cost(i);
        const auto b = bytes(i);
        const auto h = header_bytes(i);
        const double byte = c.latency_and_byte_ps(b).second;
        const Time start =
            (b > c.eager_limit ? latency(i) : 0) + (h > 0 ? ps(c.gap_ps + byte * static_cast<double>(h)) : 0);
        const Time rank_tail = start + ps(byte * static_cast<double>(b));
        if (!off_node(i)) return tail ? rank_tail : rank_tail + latency(i);
        const Time x = nic_transfer(i);
        const Time gap = ps(machine_.nic_gap_ps);
        const Time out_tail = std::max(start + x + (models_.fair_nic_out ? gap : 0), rank_tail);
        if (tail) return out_tail;
        Time in_aux = models_.fair_nic_out ? rank_tail : out_tail;
        if (via_uplinks(i)) in_aux = std::max(start + uplink_transfer(i).first, in_aux);  // up and down alike
        const Time head = start + latency(i);
        Time arrival = std::max(head + x + (models_.fair_nic_in ? gap : 0), in_aux + latency(i));
        if (models_.fair_nic_out) arrival = std::max(arrival, out_tail + latency(i));
        return arrival;
    }

    void handle(const Event& e) {
        switch (e.stage) {
            case Stage::call: on_call(e); break;
            case Stage::send: on_send(e); break;
            case Stage::request: on_request(e); break;
            case Stage::inject: on_inject(e); break;
            case Stage::nic_out: models_.fair_nic_out ? on_nic_out_fair(e) : on_nic_out(e); break;
            case Stage::nic_out_leave: on_nic_out_leave(e); break;
            case Stage::up:
                on_uplink(e, up_[placement_.node(program_.src[e.message]) / machine_.nodes_per_switch], Stage::down);
                break;
            case Stage::down:
                on_uplink(e, down_[placement_.node(program_.dst[e.message]) / machine_.nodes_per_switch],
                          Stage::nic_in);
                break;
            case Stage::nic_in: models_.fair_nic_in ? on_nic_in_fair(e) : on_nic_in(e); break;
            case Stage::nic_in_leave: on_nic_in_leave(e); break;
            case Stage::arrive: on_arrive(e); break;
        }
    }

    void on_send(const Event& e) {
        const auto i = e.message;
        const auto s = program_.src[i];
        const auto b = bytes(i);
        const LinkCost& c = cost(i);
        const auto h = header_bytes(i);
        Time& cpu = cpu_[core_[s]];
        const Time start = std::max(e.time, cpu);
        const double pack = program_.packed[i] ? copy_ps(b, program_.units[i]) : 0.0;
        const double header = h > 0 ? c.send_overhead_at(h) + c.send_byte_ps * static_cast<double>(h) : 0.0;
        cpu = noise_.advance(s, start,
                             ps(pack) + ps(header + c.send_overhead_at(b) + c.send_byte_ps * static_cast<double>(b)));
        if (models_.eager_buffers) sent_at_[i] = start;
        if (trace_) trace_->send(i, core_[s], e.time, start, cpu);
        if (b > c.eager_limit) {
            push(Stage::request, cpu + latency(i), i);
        } else {
            push(Stage::inject, cpu, i);
        }
    }

    // Rendezvous: the receiver's CPU answers the request; the data moves when the answer is back.
    void on_request(const Event& e) {
        const auto i = e.message;
        const auto d = program_.dst[i];
        if (!entered(e, d)) return;
        const LinkCost& c = cost(i);
        Time& cpu = cpu_[core_[d]];
        const Time start = std::max(e.time + wake_[d], cpu);
        cpu = noise_.advance(d, start, ps(c.recv_overhead_ps));
        if (trace_) trace_->answer(i, core_[d], e.time, start, cpu);
        push(Stage::inject, cpu + latency(i), i);
    }

    void on_inject(const Event& e) {
        const auto i = e.message;
        const auto s = program_.src[i];
        const auto b = bytes(i);
        const LinkCost& c = cost(i);
        // Streams that cross: a message queued behind its sender's last one while its receiver
        // is injecting too moves its bytes at the exchange's rate.
        const bool crossing = !c.concurrent_injection && inject_[s] > e.time && inject_[program_.dst[i]] > e.time;
        const double byte = crossing ? c.exchange_byte_ps_at(b) : c.latency_and_byte_ps(b).second;
        const auto h = header_bytes(i);
        // The header leaves first: the payload follows it after a gap.
        const Time header = h > 0 ? ps(c.gap_ps + byte * static_cast<double>(h)) : 0;
        const Time start = (c.concurrent_injection ? e.time : std::max(e.time, inject_[s])) + header;
        const Time transfer = ps(byte * static_cast<double>(b));
        if (!c.concurrent_injection) inject_[s] = start + ps(c.gap_ps) + transfer;
        if (off_node(i)) {
            push(Stage::nic_out, start, i, start + transfer);
        } else {
            complete(s, iteration(i), start + transfer, depth_[i], {Op::Kind::tail, i});
            push(Stage::arrive, start + transfer + latency(i), i);
        }
    }

    void on_nic_out(const Event& e) {
        const auto i = e.message;
        const auto node = placement_.node(program_.src[i]);
        const Time start = std::max(e.time, nic_out_[node]);
        const Time transfer = nic_transfer(i);
        nic_out_[node] = start + ps(machine_.nic_gap_ps) + transfer;
        const Time tail = std::max(start + transfer, e.aux);
        complete(program_.src[i], iteration(i), tail, depth_[i], {Op::Kind::tail, i});
        if (via_uplinks(i)) {
            push(Stage::up, start, i, tail);
            return;
        }
        push(Stage::nic_in, start + latency(i), i, tail + latency(i));
    }

    /// Through a leaf's uplinks (or downlinks), first come, first served; the message's
    /// latency is charged after the downlinks.
    void on_uplink(const Event& e, Time& free, Stage next) {
        const auto i = e.message;
        const Time start = std::max(e.time, free);
        const auto [alone, shared] = uplink_transfer(i);
        free = start + shared;
        const Time tail = std::max(start + alone, e.aux);
        const Time after = next == Stage::nic_in ? latency(i) : 0;
        push(next, start + after, i, tail + after);
    }

    void on_nic_in(const Event& e) {
        const auto i = e.message;
        const auto node = placement_.node(program_.dst[i]);
        const Time start = std::max(e.time, nic_in_[node]);
        const Time transfer = nic_transfer(i);
        nic_in_[node] = start + ps(machine_.nic_gap_ps) + transfer;
        arrive_off_node(i, std::max(start + transfer, e.aux));
    }

    /// Fair sharing: the message shares the receiving NIC with every message on it from the
    /// time its head arrives; its tail arrives when its share has carried it and the NIC's
    /// per-message gap.
    void on_nic_in_fair(const Event& e) {
        const auto node = placement_.node(program_.dst[e.message]);
        auto& link = shared_in_[node];
        link.join(e.time, static_cast<double>(nic_transfer(e.message)) + machine_.nic_gap_ps, e.message, e.aux);
        schedule_departure(shared_in_, node, Stage::nic_in_leave);
    }

    /// Event of a departure from `links[node]`: `message` holds the node, `aux` the link's
    /// version when scheduled.
    void schedule_departure(const std::vector<internal::SharedLink>& links, std::uint32_t node, Stage stage) {
        const auto& link = links[node];
        if (!link.empty()) push(stage, link.next_departure(), node, static_cast<Time>(link.version()));
    }

    void on_nic_in_leave(const Event& e) {
        auto& link = shared_in_[e.message];
        if (static_cast<Time>(link.version()) != e.aux) return;  // a message joined or left since
        const auto job = link.leave(e.time);
        arrive_off_node(job.message, std::max(e.time, job.aux));
        schedule_departure(shared_in_, e.message, Stage::nic_in_leave);
    }

    /// Fair sending NIC: the message shares its node's NIC with every message on it; its head
    /// moves on at once (`aux`, the tail leaving the rank, is then only a lower bound of the
    /// tail), its tail leaves when its share has carried it.
    void on_nic_out_fair(const Event& e) {
        const auto i = e.message;
        const auto node = placement_.node(program_.src[i]);
        shared_out_[node].join(e.time, static_cast<double>(nic_transfer(i)) + machine_.nic_gap_ps, i, e.aux);
        schedule_departure(shared_out_, node, Stage::nic_out_leave);
        if (via_uplinks(i)) {
            push(Stage::up, e.time, i, e.aux);
            return;
        }
        push(Stage::nic_in, e.time + latency(i), i, e.aux + latency(i));
    }

    void on_nic_out_leave(const Event& e) {
        auto& link = shared_out_[e.message];
        if (static_cast<Time>(link.version()) != e.aux) return;  // a message joined or left since
        const auto job = link.leave(e.time);
        const auto i = job.message;
        const Time tail = std::max(e.time, job.aux);
        complete(program_.src[i], iteration(i), tail, depth_[i], {Op::Kind::tail, i});
        send_tail_[i] = tail;
        if (held_arrival_[i] != kUnknown) arrive_off_node(i, held_arrival_[i]);
        schedule_departure(shared_out_, e.message, Stage::nic_out_leave);
    }

    /// An off-node message's tail has passed the receiving NIC at `t`: it arrives then, or,
    /// with a fair sending NIC, not before its tail left the sending NIC plus the latency
    /// (held until that is known).
    void arrive_off_node(std::uint32_t i, Time t) {
        if (!models_.fair_nic_out) {
            push(Stage::arrive, t, i);
        } else if (send_tail_[i] == kUnknown) {
            held_arrival_[i] = t;
        } else {
            push(Stage::arrive, std::max(t, send_tail_[i] + latency(i)), i);
        }
    }

    void on_arrive(const Event& e) {
        const auto i = e.message;
        const auto d = program_.dst[i];
        if (!entered(e, d)) return;
        const auto b = bytes(i);
        const LinkCost& c = cost(i);
        const double unpack = copy_ps(std::uint64_t{program_.unpack_units[i]} * block_, program_.unpack_units[i]);
        // With a size header: its completion, then posting the payload's receive.
        const auto h = header_bytes(i);
        const double header =
            h > 0 ? c.recv_overhead_at(h) + c.recv_byte_ps * static_cast<double>(h) + c.post_recv_ps : 0.0;
        Time& cpu = cpu_[core_[d]];
        const Time start = std::max(e.time + wake_[d], cpu);
        buffer_on_arrive(i);
        const Time done = noise_.advance(
            d, start,
            ps(header) + ps(c.recv_overhead_at(b) + overflow_recv_ps(i) + c.recv_byte_ps * static_cast<double>(b)) +
                ps(unpack));
        cpu = done;
        if (models_.eager_buffers && buffered_[i] == Buffered::held)
            buffers_.release(pair_slot_[i], footprint(i), done);
        if (trace_) trace_->receive(i, core_[d], e.time, start, done);
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

    const SimProgram& program_;
    const NetworkModels models_;  // which of the optional network models the machine states
    ExecutionRule rule_;
    std::uint32_t calls_;          // calls back to back
    std::uint32_t call_messages_;  // messages per call
    internal::CpuNoise noise_;
    const Machine& machine_;
    const Placement& placement_;
    std::uint64_t block_;
    double copy_byte_ps_;              ///< the machine's copy per byte at this block size
    std::vector<std::uint32_t> core_;  // per rank
    std::vector<Time> cpu_;            // per core
    std::vector<Time> wake_;           // per rank
    std::vector<Time> inject_, finish_;
    std::vector<std::uint32_t> finish_depth_;
    std::vector<Time> nic_out_, nic_in_;
    std::vector<internal::SharedLink> shared_in_;   // per node, with fair sharing of the receiving NIC
    std::vector<internal::SharedLink> shared_out_;  // per node, with fair sharing of the sending NIC
    std::vector<Time> send_tail_;                   // per message, fair sending NIC: its tail left the NIC
    std::vector<Time> held_arrival_;                // per message: through the receiving NIC, waiting for that
    std::vector<Time> up_, down_;                   // per leaf switch
    enum class Buffered : std::uint8_t { no, held, overflow };
    std::vector<Buffered> buffered_;  // per message, with a per-pair eager buffer
    std::vector<Time> sent_at_;       // per message, with such a buffer: when its send started
    static constexpr std::uint32_t kUntracked = ~0U;
    std::vector<std::uint32_t> pair_slot_;  // per message: its pair's buffer, or kUntracked (always fits)
    internal::EagerBuffers buffers_;
    std::vector<std::uint32_t> waiting_, depth_;
    std::vector<DistanceClass> class_of_;
    internal::MonotoneEventQueue<Event> queue_;
    std::unique_ptr<internal::PathTrace> trace_;  // with SimOptions::critical_path
    // Calls: per rank, the call's CPU cost and its sends waiting for no receive (of call 0);
    // per rank and call, operations still to complete, their last completion, the call's end
    // on the CPU (kUnknown until the rank enters it) and events that came before that.
    std::vector<Time> call_cost_;
    std::vector<std::uint64_t> first_root_;
    std::vector<std::uint32_t> roots_;
    std::vector<std::uint32_t> outstanding_;
    std::vector<Time> call_end_, call_done_;
    std::vector<std::vector<Event>> early_;
    // Step gates (rules step and bsp).
    static constexpr std::uint32_t kNone = ~0U;
    std::uint32_t steps_ = 1;
    std::vector<std::uint32_t> left_, low_, held_head_, held_tail_, held_next_;
    Time barrier_ = 0;
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
                r.last_rank, finish_[r.last_rank], wake_, program_.src, program_.dst, class_of_,
                [this](std::uint32_t i) { return bytes(i); },
                [this](std::uint32_t i, bool tail) { return unloaded(i, tail); });
        }
    }
    // Traffic by distance class, per sending rank.
    std::vector<std::array<std::uint64_t, 2 * kDistanceClasses>> per_rank(program_.num_ranks);
    for (std::uint32_t i = 0; i < program_.num_messages(); ++i) {
        const auto k = static_cast<std::size_t>(class_of_[i]);
        per_rank[program_.src[i]][2 * k] += 1;
        per_rank[program_.src[i]][2 * k + 1] += bytes(i);
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
