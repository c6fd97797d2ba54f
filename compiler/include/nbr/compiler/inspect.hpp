#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nbr_pattern.pb.h"

namespace nbr::compiler {

/// @brief min / mean / max of a per-rank quantity.
struct Spread {
    double min = 0;
    double mean = 0;
    double max = 0;
};

/// @brief Summary of a pattern directory.
struct PatternSummary {
    std::uint32_t ranks = 0;
    std::uint64_t edges = 0;
    std::string algorithm;
    std::string configuration;  ///< the --algo name that compiles it (configuration_of)
    std::vector<std::pair<std::string, std::string>> parameters;
    std::string source;
    std::string layout;               ///< "per-rank" or "packed"
    std::uint64_t segment_bytes = 0;  ///< Manifest.segment_bytes: 0 whole messages
    std::uint32_t steps_max = 0;
    Spread sends_per_rank;
    Spread recvs_per_rank;
    Spread naive_sends_per_rank;  ///< out-degree: what the naive pattern sends
    /// Ranks without neighbors, and those of them the pattern gives a message (libnbr runs
    /// fixed-size calls on another candidate then: docs/architecture.md, "Block sizes").
    std::uint32_t ranks_without_neighbors = 0;
    std::uint32_t forwarding_without_neighbors = 0;
    std::map<std::string, Spread> metrics;  ///< per-algorithm statistics
};

/// @brief Computes the summary from the manifest and every rank's pattern.
[[nodiscard]] PatternSummary summarize(const schema::Manifest& manifest,
                                       const std::vector<schema::RankPattern>& patterns);

/// @brief Human-readable summary.
[[nodiscard]] std::string format_summary(const PatternSummary& summary);
/// @brief Human-readable schedule of one rank.
[[nodiscard]] std::string format_rank(const schema::RankPattern& pattern);

/// @brief JSON object with the summary keys (ranks, edges, algorithm, steps_max,
/// sends_per_rank, recvs_per_rank, naive_sends_per_rank, metrics, ...) and, when `rank`
/// is given, its schedule and its own metrics under "rank".
[[nodiscard]] std::string format_json(const PatternSummary& summary, const schema::RankPattern* rank = nullptr);

/// @brief Human-readable account of an auto (multi-variant) directory: its bands and why each
/// band's variant won, the v-variants' choice, candidates left out, and every candidate's
/// predicted latency per size.
[[nodiscard]] std::string format_auto(const schema::Manifest& manifest);

/// @brief The same as JSON: `sizes`, `variants`, `bands` (collective, from_bytes, variant,
/// reason), `allgatherv_variant`, `alltoallv_variant`, and `candidates` with their latencies.
[[nodiscard]] std::string format_auto_json(const schema::Manifest& manifest);

/// @brief What a wisdom file measured for the directory (entries of its compile id), beside the
/// model's predictions: per shape the measured winner and each candidate's slowest-rank median,
/// with the model's latency at the simulated size nearest the shape's smallest block.
[[nodiscard]] std::string format_wisdom(const schema::Manifest& manifest, const schema::Wisdom& wisdom);

}  // namespace nbr::compiler
