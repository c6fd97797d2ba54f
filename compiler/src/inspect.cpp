#include "nbr/compiler/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "nbr/common/json_text.hpp"
#include "nbr/compiler/algorithm.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace nbr::compiler {

namespace {

using nbr::common::internal::json_string;
using nbr::common::internal::number;

class SpreadAccumulator {
public:
    void add(double value) {
        min_ = count_ == 0 ? value : std::min(min_, value);
        max_ = count_ == 0 ? value : std::max(max_, value);
        sum_ += value;
        ++count_;
    }
    [[nodiscard]] Spread get() const {
        return count_ == 0 ? Spread{} : Spread{min_, sum_ / static_cast<double>(count_), max_};
    }

private:
    double min_ = 0, max_ = 0, sum_ = 0;
    std::uint64_t count_ = 0;
};

std::string json_spread(const Spread& s) {
    return "{\"min\": " + number(s.min) + ", \"mean\": " + number(s.mean) + ", \"max\": " + number(s.max) + "}";
}

template <class List>
std::string json_list(const List& list) {
    std::string out = "[";
    bool first = true;
    for (auto v : list) {
        out += (first ? "" : ", ") + std::to_string(v);
        first = false;
    }
    return out + "]";
}

const char* kind_name(schema::Operation::Kind kind) {
    return kind == schema::Operation::SEND ? "send" : "recv";
}

}  // namespace

PatternSummary summarize(const schema::Manifest& manifest, const std::vector<schema::RankPattern>& patterns) {
    PatternSummary summary;
    summary.ranks = manifest.num_ranks();
    summary.edges = manifest.num_edges();
    summary.algorithm = manifest.algorithm();
    summary.source = manifest.source();
    summary.layout = is_packed(manifest) ? "packed" : "per-rank";
    summary.segment_bytes = manifest.segment_bytes();
    for (const auto& p : manifest.parameters()) summary.parameters.emplace_back(p.name(), p.value());
    summary.configuration = configuration_of(summary.algorithm, summary.parameters);
    SpreadAccumulator sends, recvs, naive;
    std::map<std::string, SpreadAccumulator> metrics;
    for (const auto& pattern : patterns) {
        std::uint64_t s = 0, r = 0;
        for (const auto& step : pattern.steps()) {
            for (const auto& op : step.operations()) {
                (op.kind() == schema::Operation::SEND ? s : r) += 1;
            }
        }
        if (pattern.in_neighbors_size() == 0 && pattern.out_neighbors_size() == 0) {
            ++summary.ranks_without_neighbors;
            if (s + r > 0) ++summary.forwarding_without_neighbors;
        }
        sends.add(static_cast<double>(s));
        recvs.add(static_cast<double>(r));
        naive.add(static_cast<double>(pattern.out_neighbors_size()));
        summary.steps_max = std::max(summary.steps_max, static_cast<std::uint32_t>(pattern.steps_size()));
        for (const auto& metric : pattern.metrics()) metrics[metric.name()].add(metric.value());
    }
    summary.sends_per_rank = sends.get();
    summary.recvs_per_rank = recvs.get();
    summary.naive_sends_per_rank = naive.get();
    for (const auto& [name, acc] : metrics) summary.metrics[name] = acc.get();
    return summary;
}

std::string format_summary(const PatternSummary& s) {
    std::ostringstream out;
    out << "algorithm        " << s.algorithm;
    for (const auto& [name, value] : s.parameters) out << " " << name << "=" << value;
    out << "\nconfiguration    " << s.configuration << " (--algo)";
    out << "\nsource           " << (s.source.empty() ? "-" : s.source) << "\n";
    out << "layout           " << s.layout << "\n";
    out << "segments         "
        << (s.segment_bytes == 0 ? std::string("whole messages")
                                 : "up to " + std::to_string(s.segment_bytes) + " bytes of whole blocks (--segment)")
        << "\n";
    out << "ranks            " << s.ranks << "\n";
    out << "edges            " << s.edges << "\n";
    out << "steps (max)      " << s.steps_max << "\n";
    if (s.ranks_without_neighbors > 0) {
        out << "no neighbors     " << s.ranks_without_neighbors << " rank"
            << (s.ranks_without_neighbors == 1 ? "" : "s") << ", " << s.forwarding_without_neighbors
            << " of them with messages"
            << (s.forwarding_without_neighbors > 0 ? " (libnbr runs fixed-size calls on another variant)" : "") << "\n";
    }
    auto row = [&](const std::string& name, const Spread& sp) {
        char buffer[160];
        std::snprintf(buffer, sizeof buffer, "%-16s min %-8s mean %-10s max %s\n", name.c_str(), number(sp.min).c_str(),
                      number(sp.mean).c_str(), number(sp.max).c_str());
        out << buffer;
    };
    row("sends/rank", s.sends_per_rank);
    row("recvs/rank", s.recvs_per_rank);
    row("naive sends/rank", s.naive_sends_per_rank);
    for (const auto& [name, sp] : s.metrics) row(name, sp);
    return out.str();
}

std::string format_rank(const schema::RankPattern& p) {
    std::ostringstream out;
    out << "rank " << p.rank() << " of " << p.num_ranks() << " (" << p.algorithm() << ")\n";
    out << "  in  (" << p.in_neighbors_size() << "): " << json_list(p.in_neighbors()) << "\n";
    out << "  out (" << p.out_neighbors_size() << "): " << json_list(p.out_neighbors()) << "\n";
    for (int s = 0; s < p.steps_size(); ++s) {
        out << "  step " << s << "\n";
        for (const auto& op : p.steps(s).operations()) {
            out << "    " << kind_name(op.kind()) << (op.kind() == schema::Operation::SEND ? " to   " : " from ")
                << op.peer() << ": " << op.origins_size() << " item(s)";
            for (int i = 0; i < op.origins_size(); ++i) {
                out << (i == 0 ? " " : ", ") << op.origins(i) << ":" << op.slots(i);
            }
            out << "\n";
        }
    }
    for (const auto& metric : p.metrics()) {
        out << "  " << metric.name() << " = " << number(metric.value()) << "\n";
    }
    return out.str();
}

std::string format_json(const PatternSummary& s, const schema::RankPattern* rank) {
    std::ostringstream out;
    out << "{\n";
    out << "  \"ranks\": " << s.ranks << ",\n";
    out << "  \"edges\": " << s.edges << ",\n";
    out << "  \"algorithm\": " << json_string(s.algorithm) << ",\n";
    out << "  \"configuration\": " << json_string(s.configuration) << ",\n";
    out << "  \"parameters\": {";
    for (std::size_t i = 0; i < s.parameters.size(); ++i) {
        out << (i ? ", " : "") << json_string(s.parameters[i].first) << ": " << json_string(s.parameters[i].second);
    }
    out << "},\n";
    out << "  \"source\": " << json_string(s.source) << ",\n";
    out << "  \"layout\": " << json_string(s.layout) << ",\n";
    out << "  \"segment_bytes\": " << s.segment_bytes << ",\n";
    out << "  \"steps_max\": " << s.steps_max << ",\n";
    out << "  \"ranks_without_neighbors\": " << s.ranks_without_neighbors << ",\n";
    out << "  \"forwarding_without_neighbors\": " << s.forwarding_without_neighbors << ",\n";
    out << "  \"sends_per_rank\": " << json_spread(s.sends_per_rank) << ",\n";
    out << "  \"recvs_per_rank\": " << json_spread(s.recvs_per_rank) << ",\n";
    out << "  \"naive_sends_per_rank\": " << json_spread(s.naive_sends_per_rank) << ",\n";
    out << "  \"metrics\": {";
    bool first = true;
    for (const auto& [name, sp] : s.metrics) {
        out << (first ? "" : ", ") << json_string(name) << ": " << json_spread(sp);
        first = false;
    }
    out << "}";
    if (rank != nullptr) {
        out << ",\n  \"rank\": {\n    \"rank\": " << rank->rank() << ",\n";
        out << "    \"in_neighbors\": " << json_list(rank->in_neighbors()) << ",\n";
        out << "    \"out_neighbors\": " << json_list(rank->out_neighbors()) << ",\n";
        out << "    \"steps\": [";
        for (int s2 = 0; s2 < rank->steps_size(); ++s2) {
            out << (s2 ? ", " : "") << "[";
            const auto& ops = rank->steps(s2).operations();
            for (int i = 0; i < ops.size(); ++i) {
                const auto& op = ops[i];
                out << (i ? ", " : "") << "{\"op\": \"" << kind_name(op.kind()) << "\", \"peer\": " << op.peer()
                    << ", \"items\": [";
                for (int k = 0; k < op.origins_size(); ++k) {
                    out << (k ? ", " : "") << "[" << op.origins(k) << ", " << op.slots(k) << "]";
                }
                out << "]}";
            }
            out << "]";
        }
        out << "],\n    \"metrics\": {";
        for (int i = 0; i < rank->metrics_size(); ++i) {
            out << (i ? ", " : "") << json_string(rank->metrics(i).name()) << ": " << number(rank->metrics(i).value());
        }
        out << "}\n  }";
    }
    out << "\n}\n";
    return out.str();
}

}  // namespace nbr::compiler
