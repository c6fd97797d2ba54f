#include "nbr/compiler/pattern_builder.hpp"

#include <algorithm>
#include <stdexcept>

#include "nbr/schema/pattern_io.hpp"

namespace nbr::compiler {

PatternBuilder::PatternBuilder(const Engine& engine)
    : first_(engine.local_begin()),
      sends_(engine.local_count()),
      recvs_(engine.local_count()),
      metrics_(engine.local_count()) {}

std::size_t PatternBuilder::local(std::uint32_t rank) const {
    const std::size_t index = rank - first_;
    if (rank < first_ || index >= sends_.size()) {
        throw std::out_of_range("rank " + std::to_string(rank) + " is not hosted by this process");
    }
    return index;
}

void PatternBuilder::add_send(std::uint32_t rank, std::uint32_t step, std::uint32_t peer, std::vector<Item> items) {
    if (items.empty()) throw std::invalid_argument("a send must carry at least one item");
    sends_[local(rank)].push_back(SendOp{step, peer, std::move(items)});
}

void PatternBuilder::add_metric(std::uint32_t rank, const std::string& name, double value) {
    schema::Metric metric;
    metric.set_name(name);
    metric.set_value(value);
    metrics_[local(rank)].push_back(std::move(metric));
}

const std::vector<SendOp>& PatternBuilder::sends(std::uint32_t rank) const {
    return sends_[local(rank)];
}

void PatternBuilder::derive_receives(Engine& engine) {
    engine.superstep([&](std::uint32_t v, auto /*inbox*/, Engine::Outbox& out) {
        for (const SendOp& op : sends_[local(v)])
            out.post(op.peer, internal::SendAnnouncement::encode(op.step, op.items));
    });
    for (std::uint32_t v = engine.local_begin(); v < engine.local_end(); ++v) {
        auto& recvs = recvs_[local(v)];
        recvs.clear();
        for (const Message& message : engine.inbox(v)) {
            auto announced = internal::SendAnnouncement::decode(message.payload);
            recvs.push_back({announced.step, message.source, std::move(announced.items)});
        }
        // Stable by step: within a step the inbox order (source, then posting order) stays.
        std::stable_sort(recvs.begin(), recvs.end(), [](const SendOp& a, const SendOp& b) { return a.step < b.step; });
    }
}

schema::RankPattern PatternBuilder::rank_pattern(std::uint32_t rank, const Topology& topology,
                                                 const std::string& algorithm, std::uint64_t topology_hash) const {
    schema::RankPattern pattern;
    pattern.set_format_version(kSingleFormatVersion);
    pattern.set_rank(rank);
    pattern.set_num_ranks(topology.num_ranks());
    for (auto r : topology.in_neighbors(rank)) pattern.add_in_neighbors(r);
    for (auto r : topology.out_neighbors(rank)) pattern.add_out_neighbors(r);
    for (auto s : topology.in_source_slots(rank)) pattern.add_in_source_slots(s);
    pattern.set_topology_hash(topology_hash);
    pattern.set_algorithm(algorithm);

    const auto& sends = sends_[local(rank)];
    const auto& recvs = recvs_[local(rank)];
    std::uint32_t steps = 0;
    for (const auto& op : sends) steps = std::max(steps, op.step + 1);
    for (const auto& op : recvs) steps = std::max(steps, op.step + 1);
    for (std::uint32_t s = 0; s < steps; ++s) pattern.add_steps();
    auto append = [&](const SendOp& op, schema::Operation::Kind kind) {
        auto* operation = pattern.mutable_steps(static_cast<int>(op.step))->add_operations();
        operation->set_kind(kind);
        operation->set_peer(op.peer);
        for (const Item& item : op.items) {
            operation->add_origins(item.origin);
            operation->add_slots(item.slot);
        }
    };
    // Within a step: receives first (they are posted first at run time), then sends.
    for (const auto& op : recvs) append(op, schema::Operation::RECV);
    for (const auto& op : sends) append(op, schema::Operation::SEND);
    for (const auto& metric : metrics_[local(rank)]) *pattern.add_metrics() = metric;
    return pattern;
}

}  // namespace nbr::compiler
