// Building a SimProgram: every rank's plan (the replayer's planner), then sends matched
// with receives across ranks.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "nbr/schema/pattern_io.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator {

namespace {

/// Collects ranks' plans in rank order, then matches sends with receives.
class ProgramBuilder {
public:
    ProgramBuilder(std::uint32_t num_ranks, Collective collective, std::uint32_t max_units) : max_units_(max_units) {
        program_.num_ranks = num_ranks;
        program_.collective = collective;
        program_.first_message.push_back(0);
        first_recv_.push_back(0);
        first_recv_dependent_.push_back(0);
        program_.first_in_edge.push_back(0);
    }

    /// Adds the next rank's plan; `source()` names the pattern in an error.
    template <class Source>
    void add_rank(const schema::RankPattern& pattern, const Source& source) {
        internal::Plan plan;
        try {
            plan = internal::segment_plan(internal::build_plan(pattern, program_.collective), max_units_);
        } catch (const internal::PlanError& error) {
            throw std::runtime_error(source() + ": " + error.what());
        }
        const auto rank = pattern.rank();
        const auto base = static_cast<std::uint32_t>(program_.num_messages());
        for (const auto& send : plan.sends) {
            program_.src.push_back(rank);
            program_.dst.push_back(send.peer);
            program_.units.push_back(static_cast<std::uint32_t>(send.units.size()));
            program_.packed.push_back(send.direct ? 0 : 1);
            program_.dependencies.push_back(send.dependencies);
            program_.send_step.push_back(send.step);
            send_tag_.push_back(send.tag);
        }
        for (const auto& recv : plan.recvs) {
            recv_peer_.push_back(recv.peer);
            recv_tag_.push_back(recv.tag);
            recv_units_.push_back(static_cast<std::uint32_t>(recv.units.size()));
            recv_step_.push_back(recv.step);
            const auto deliveries = static_cast<std::uint32_t>(recv.deliveries.size());
            // A direct message lands in place; duplicate edges of an allgather get copies.
            recv_unpack_.push_back(recv.direct ? (deliveries > 1 ? deliveries : 0) : deliveries);
            for (const auto s : recv.dependents) recv_dependents_.push_back(base + s);
            first_recv_dependent_.push_back(recv_dependents_.size());
        }
        program_.first_message.push_back(program_.num_messages());
        first_recv_.push_back(recv_peer_.size());
        program_.in_edge_source.insert(program_.in_edge_source.end(), pattern.in_neighbors().begin(),
                                       pattern.in_neighbors().end());
        program_.first_in_edge.push_back(program_.in_edge_source.size());
    }

    SimProgram finish() {
        const auto recv_of_message = match();
        attach_receives(recv_of_message);
        return std::move(program_);
    }

private:
    /// Sends grouped by destination; within one, by source then tag (sends are stored in
    /// source order, each source's tags to one peer increasing).
    [[nodiscard]] std::vector<std::uint32_t> sends_by_destination(std::vector<std::uint64_t>& first) const {
        const auto n = program_.num_ranks;
        first.assign(n + 1, 0);
        for (const auto d : program_.dst) ++first[d + 1];
        std::partial_sum(first.begin(), first.end(), first.begin());
        std::vector<std::uint32_t> order(program_.num_messages());
        auto next = first;
        for (std::uint32_t m = 0; m < program_.num_messages(); ++m) order[next[program_.dst[m]]++] = m;
        return order;
    }

    /// For every message, the index of the receive that matches it.
    [[nodiscard]] std::vector<std::uint32_t> match() const {
        std::vector<std::uint64_t> first;
        const auto sends = sends_by_destination(first);
        std::vector<std::uint32_t> recv_of(program_.num_messages());
        std::vector<std::uint32_t> recvs;
        for (std::uint32_t d = 0; d < program_.num_ranks; ++d) {
            recvs.resize(first_recv_[d + 1] - first_recv_[d]);
            std::iota(recvs.begin(), recvs.end(), static_cast<std::uint32_t>(first_recv_[d]));
            std::stable_sort(recvs.begin(), recvs.end(),
                             [&](std::uint32_t a, std::uint32_t b) { return recv_peer_[a] < recv_peer_[b]; });
            const auto count = first[d + 1] - first[d];
            for (std::size_t i = 0; i < std::max<std::size_t>(count, recvs.size()); ++i) {
                if (i >= count || i >= recvs.size()) mismatch(d, i < count ? sends[first[d] + i] : ~0U, i, recvs);
                const auto m = sends[first[d] + i];
                const auto r = recvs[i];
                if (recv_peer_[r] != program_.src[m] || recv_tag_[r] != send_tag_[m]) mismatch(d, m, i, recvs);
                if (recv_units_[r] != program_.units[m]) {
                    throw std::runtime_error("rank " + std::to_string(program_.src[m]) + " sends " +
                                             std::to_string(program_.units[m]) + " blocks to rank " +
                                             std::to_string(d) + " in its message " + std::to_string(send_tag_[m]) +
                                             ", which expects " + std::to_string(recv_units_[r]));
                }
                recv_of[m] = r;
            }
        }
        return recv_of;
    }

    [[noreturn]] void mismatch(std::uint32_t d, std::uint32_t m, std::size_t i,
                               const std::vector<std::uint32_t>& recvs) const {
        if (m == ~0U) {
            const auto r = recvs[i];
            throw std::runtime_error("rank " + std::to_string(d) + " expects message " + std::to_string(recv_tag_[r]) +
                                     " from rank " + std::to_string(recv_peer_[r]) + ", which never sends it");
        }
        throw std::runtime_error("rank " + std::to_string(program_.src[m]) + " sends message " +
                                 std::to_string(send_tag_[m]) + " to rank " + std::to_string(d) +
                                 ", which has no matching receive");
    }

    /// Receiver-side facts move to the message that the receive matches.
    void attach_receives(const std::vector<std::uint32_t>& recv_of) {
        const auto count = program_.num_messages();
        program_.unpack_units.resize(count);
        program_.recv_step.resize(count);
        program_.first_dependent.assign(count + 1, 0);
        for (std::uint64_t m = 0; m < count; ++m) {
            const auto r = recv_of[m];
            program_.unpack_units[m] = recv_unpack_[r];
            program_.recv_step[m] = recv_step_[r];
            program_.first_dependent[m + 1] =
                program_.first_dependent[m] + (first_recv_dependent_[r + 1] - first_recv_dependent_[r]);
        }
        program_.dependents.resize(program_.first_dependent.back());
        for (std::uint64_t m = 0; m < count; ++m) {
            const auto r = recv_of[m];
            std::copy(recv_dependents_.begin() + static_cast<std::ptrdiff_t>(first_recv_dependent_[r]),
                      recv_dependents_.begin() + static_cast<std::ptrdiff_t>(first_recv_dependent_[r + 1]),
                      program_.dependents.begin() + static_cast<std::ptrdiff_t>(program_.first_dependent[m]));
        }
    }

    SimProgram program_;
    std::vector<int> send_tag_;
    std::vector<std::uint64_t> first_recv_;  // per rank (+1)
    std::uint32_t max_units_;                // blocks per segment (internal::segment_plan)
    std::vector<std::uint32_t> recv_peer_, recv_units_, recv_unpack_, recv_step_;
    std::vector<int> recv_tag_;
    std::vector<std::uint64_t> first_recv_dependent_;
    std::vector<std::uint32_t> recv_dependents_;
};

}  // namespace

SimProgram make_program(std::span<const schema::RankPattern> patterns, Collective collective, std::uint32_t max_units) {
    ProgramBuilder builder(static_cast<std::uint32_t>(patterns.size()), collective, max_units);
    for (std::size_t r = 0; r < patterns.size(); ++r) {
        if (patterns[r].rank() != r)
            throw std::runtime_error("pattern " + std::to_string(r) + " is not rank " + std::to_string(r) + "'s");
        builder.add_rank(patterns[r], [r] { return "rank " + std::to_string(r); });
    }
    auto program = builder.finish();
    if (!patterns.empty()) program.algorithm = patterns.front().algorithm();
    return program;
}

SimProgram load_program(const std::filesystem::path& dir, Collective collective) {
    return load_program(dir, read_manifest(dir), collective);
}

SimProgram load_program(const std::filesystem::path& dir, const schema::Manifest& manifest, Collective collective,
                        std::uint32_t max_units) {
    ProgramBuilder builder(manifest.num_ranks(), collective, max_units);
    RankPatternReader reader(dir, manifest, 0, manifest.num_ranks());
    schema::RankPattern pattern;
    while (reader.next(pattern)) {
        builder.add_rank(pattern, [&] { return rank_pattern_source(dir, reader.rank(), manifest); });
    }
    auto program = builder.finish();
    program.algorithm = manifest.algorithm();
    return program;
}

}  // namespace nbr::simulator
