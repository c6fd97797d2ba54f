// The step and BSP execution rules of the simulator (docs/simulate.md, "Execution rules"):
// which sends may start, and which a receive releases.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nbr/simulator/perturbation.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::simulator::internal {

/// @brief Under the step rule a gate per rank and call, under BSP one per call (the event
/// rule has none: every send is ready). A gate counts per step the receives still missing
/// and holds the sends of later steps, in the order they became ready; a send of step s may
/// start once every receive of its gate's steps below s is in.
class StepGates {
public:
    /// `program` holds `calls` copies of a call's `call_messages` messages, call after call.
    StepGates(const SimProgram& program, ExecutionRule rule, std::uint32_t calls, std::uint32_t call_messages)
        : program_(program), rule_(rule), calls_(calls), call_messages_(call_messages) {
        if (rule_ == ExecutionRule::event) return;
        for (std::uint32_t i = 0; i < call_messages_; ++i)
            steps_ = std::max({steps_, send_step(i) + 1, recv_step(i) + 1});
        const std::size_t gates = rule_ == ExecutionRule::bsp ? calls_ : std::size_t{program_.num_ranks} * calls_;
        left_.assign(gates * steps_, 0);
        for (std::uint32_t i = 0; i < program_.num_messages(); ++i)
            ++left_[gate_of(program_.dst[i], i) * steps_ + recv_step(i)];
        low_.assign(gates, 0);
        for (std::size_t g = 0; g < gates; ++g) advance_low(g);
        head_.assign(gates * steps_, kNone);
        tail_.assign(gates * steps_, kNone);
        next_.assign(program_.num_messages(), kNone);
    }

    /// @brief Whether send i may start now.
    [[nodiscard]] bool ready(std::uint32_t i) const {
        return rule_ == ExecutionRule::event || send_step(i) <= low_[gate_of(program_.src[i], i)];
    }

    /// @brief Send i must wait for its step.
    void hold(std::uint32_t i) {
        const auto at = gate_of(program_.src[i], i) * steps_ + send_step(i);
        if (tail_[at] == kNone) {
            head_[at] = i;
        } else {
            next_[tail_[at]] = i;
        }
        tail_[at] = i;
    }

    /// @brief Message i is received: calls `release(h)` for each held send h that may go now,
    /// step by step, in the order they were held.
    template <class Release>
    void received(std::uint32_t i, Release&& release) {
        if (rule_ == ExecutionRule::event) return;
        const auto g = gate_of(program_.dst[i], i);
        const auto s = recv_step(i);
        if (--left_[g * steps_ + s] != 0 || s != low_[g]) return;
        const auto before = low_[g];
        advance_low(g);
        for (auto t = before + 1; t <= std::min(low_[g], steps_ - 1); ++t) {
            for (auto h = head_[g * steps_ + t]; h != kNone; h = next_[h]) release(h);
            head_[g * steps_ + t] = tail_[g * steps_ + t] = kNone;
        }
    }

private:
    static constexpr std::uint32_t kNone = ~0U;

    [[nodiscard]] std::uint32_t send_step(std::uint32_t i) const {
        return program_.send_step.empty() ? 0 : program_.send_step[i % call_messages_];
    }
    [[nodiscard]] std::uint32_t recv_step(std::uint32_t i) const {
        return program_.recv_step.empty() ? 0 : program_.recv_step[i % call_messages_];
    }
    [[nodiscard]] std::size_t gate_of(std::uint32_t rank, std::uint32_t i) const {
        const std::uint32_t call = i / call_messages_;
        return rule_ == ExecutionRule::bsp ? call : std::size_t{rank} * calls_ + call;
    }
    /// Gate g's lowest step with receives missing, past the steps whose receives are all in.
    void advance_low(std::size_t g) {
        while (low_[g] < steps_ && left_[g * steps_ + low_[g]] == 0) ++low_[g];
    }

    const SimProgram& program_;
    ExecutionRule rule_;
    std::uint32_t calls_, call_messages_;
    std::uint32_t steps_ = 1;
    std::vector<std::uint32_t> left_;                // per gate and step: receives missing
    std::vector<std::uint32_t> low_;                 // per gate: the lowest step with receives missing
    std::vector<std::uint32_t> head_, tail_, next_;  // per gate and step, per message: held sends
};

}  // namespace nbr::simulator::internal
