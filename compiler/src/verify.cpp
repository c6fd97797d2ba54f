#include "nbr/compiler/verify.hpp"

#include <algorithm>
#include <unordered_map>

#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace nbr::compiler {

namespace {

using Key = std::uint64_t;
Key key(std::uint32_t a, std::uint32_t b) {
    return (std::uint64_t{a} << 32) | b;
}

struct OpRef {
    std::uint32_t rank;
    std::uint32_t step;
    std::uint32_t index;  // operation index within the step
    const schema::Operation* op;
};

std::string describe(const OpRef& ref) {
    return "rank " + std::to_string(ref.rank) + " step " + std::to_string(ref.step) + " operation " +
           std::to_string(ref.index);
}

class Violation : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

void check_topology(const std::vector<schema::RankPattern>& patterns, std::uint64_t topology_hash,
                    const Topology* expected) {
    const auto n = static_cast<std::uint32_t>(patterns.size());
    for (std::uint32_t r = 0; r < n; ++r) {
        if (patterns[r].rank() != r || patterns[r].num_ranks() != n) {
            throw Violation("pattern " + std::to_string(r) + " claims rank " + std::to_string(patterns[r].rank()) +
                            " of " + std::to_string(patterns[r].num_ranks()));
        }
        validate_rank_pattern(patterns[r], "rank " + std::to_string(r));
    }
    // Every in-edge (o, s) of d must be out-slot s of o pointing at d, each edge once, and
    // duplicate edges in the order MPI matches them (slots increasing).
    std::vector<std::uint64_t> in_count(n, 0);
    for (std::uint32_t d = 0; d < n; ++d) {
        const auto& p = patterns[d];
        std::unordered_map<std::uint32_t, std::uint32_t> last_slot;
        for (int j = 0; j < p.in_neighbors_size(); ++j) {
            const std::uint32_t o = p.in_neighbors(j);
            const std::uint32_t s = p.in_source_slots(j);
            const auto& origin = patterns[o];
            if (s >= static_cast<std::uint32_t>(origin.out_neighbors_size()) ||
                origin.out_neighbors(static_cast<int>(s)) != d) {
                throw Violation("rank " + std::to_string(d) + " in-neighbor " + std::to_string(j) + " names out-slot " +
                                std::to_string(s) + " of rank " + std::to_string(o) +
                                ", which does not point at rank " + std::to_string(d));
            }
            auto [it, inserted] = last_slot.try_emplace(o, s);
            if (!inserted) {
                if (s <= it->second) {
                    throw Violation("rank " + std::to_string(d) + ": in-edges from rank " + std::to_string(o) +
                                    " are not in out-slot order (duplicate edges mismatched)");
                }
                it->second = s;
            }
        }
        in_count[d] = static_cast<std::uint64_t>(p.in_neighbors_size());
    }
    std::vector<std::uint64_t> out_to(n, 0);
    for (std::uint32_t o = 0; o < n; ++o) {
        for (auto d : patterns[o].out_neighbors()) ++out_to[d];
    }
    for (std::uint32_t d = 0; d < n; ++d) {
        if (out_to[d] != in_count[d]) {
            throw Violation("rank " + std::to_string(d) + " lists " + std::to_string(in_count[d]) +
                            " in-neighbors but " + std::to_string(out_to[d]) + " out-edges point at it");
        }
    }
    if (expected != nullptr) {
        if (expected->num_ranks() != n) {
            throw Violation("pattern has " + std::to_string(n) + " ranks, topology has " +
                            std::to_string(expected->num_ranks()));
        }
        for (std::uint32_t r = 0; r < n; ++r) {
            const auto& p = patterns[r];
            const auto in = expected->in_neighbors(r);
            const auto out = expected->out_neighbors(r);
            if (!std::equal(in.begin(), in.end(), p.in_neighbors().begin(), p.in_neighbors().end()) ||
                !std::equal(out.begin(), out.end(), p.out_neighbors().begin(), p.out_neighbors().end())) {
                throw Violation("rank " + std::to_string(r) + ": neighbor lists differ from the given topology");
            }
        }
    }
    // Recompute the topology hash from the files' lists.
    nbr::internal::Hasher hasher;
    hasher.update(n);
    for (std::uint32_t r = 0; r < n; ++r) {
        const auto& p = patterns[r];
        const std::span<const std::uint32_t> in(p.in_neighbors().data(),
                                                static_cast<std::size_t>(p.in_neighbors_size()));
        const std::span<const std::uint32_t> out(p.out_neighbors().data(),
                                                 static_cast<std::size_t>(p.out_neighbors_size()));
        hasher.update(rank_neighborhood_hash(r, in, out));
    }
    if (hasher.digest() != topology_hash) {
        throw Violation("neighbor lists do not hash to the manifest's topology hash");
    }
    if (expected != nullptr && expected->hash() != topology_hash) {
        throw Violation("pattern belongs to another topology than the one given");
    }
}

void check_schedule(const std::vector<schema::RankPattern>& patterns, VerifyReport& report) {
    const auto n = static_cast<std::uint32_t>(patterns.size());
    // Channels: (src, dst) -> sends in order, receives in order.
    std::unordered_map<Key, std::vector<OpRef>> sends, recvs;
    for (std::uint32_t r = 0; r < n; ++r) {
        const auto& p = patterns[r];
        report.steps = std::max(report.steps, static_cast<std::uint32_t>(p.steps_size()));
        for (int s = 0; s < p.steps_size(); ++s) {
            const auto& step = p.steps(s);
            for (int i = 0; i < step.operations_size(); ++i) {
                const auto& op = step.operations(i);
                const OpRef ref{r, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i), &op};
                for (int k = 0; k < op.origins_size(); ++k) {
                    const auto origin = op.origins(k);
                    if (op.slots(k) >= static_cast<std::uint32_t>(patterns[origin].out_neighbors_size())) {
                        throw Violation(describe(ref) + ": item (" + std::to_string(origin) + ", " +
                                        std::to_string(op.slots(k)) + ") names a slot rank " + std::to_string(origin) +
                                        " does not have");
                    }
                }
                if (op.kind() == schema::Operation::SEND) {
                    sends[key(r, op.peer())].push_back(ref);
                    ++report.messages;
                    report.items_moved += static_cast<std::uint64_t>(op.origins_size());
                } else {
                    recvs[key(op.peer(), r)].push_back(ref);
                }
            }
        }
    }
    // Step at which each rank first receives each item.
    std::vector<std::unordered_map<Key, std::uint32_t>> received(n);
    std::unordered_map<Key, std::uint32_t> delivered;  // (origin, slot) -> receipts at its destination
    for (const auto& [channel, channel_sends] : sends) {
        const auto src = static_cast<std::uint32_t>(channel >> 32);
        const auto dst = static_cast<std::uint32_t>(channel & 0xffffffffu);
        const auto it = recvs.find(channel);
        const std::size_t matched = it == recvs.end() ? 0 : it->second.size();
        if (matched < channel_sends.size()) {
            throw Violation(describe(channel_sends[matched]) + ": send to rank " + std::to_string(dst) +
                            " has no matching receive");
        }
        for (std::size_t k = 0; k < channel_sends.size(); ++k) {
            const OpRef& send = channel_sends[k];
            const OpRef& recv = it->second[k];
            if (send.step != recv.step) {
                throw Violation(describe(recv) + ": receive from rank " + std::to_string(src) +
                                " is matched by a send in step " + std::to_string(send.step));
            }
            if (send.op->origins_size() != recv.op->origins_size() ||
                !std::equal(send.op->origins().begin(), send.op->origins().end(), recv.op->origins().begin()) ||
                !std::equal(send.op->slots().begin(), send.op->slots().end(), recv.op->slots().begin())) {
                throw Violation(describe(recv) + ": items differ from those " + describe(send) + " sends");
            }
            for (int i = 0; i < recv.op->origins_size(); ++i) {
                const std::uint32_t origin = recv.op->origins(i);
                const std::uint32_t slot = recv.op->slots(i);
                auto [pos, inserted] = received[dst].try_emplace(key(origin, slot), recv.step);
                if (!inserted) pos->second = std::min(pos->second, recv.step);
                if (patterns[origin].out_neighbors(static_cast<int>(slot)) == dst) {
                    if (++delivered[key(origin, slot)] > 1) {
                        throw Violation(describe(recv) + ": edge " + std::to_string(origin) + " -> " +
                                        std::to_string(dst) + " (slot " + std::to_string(slot) +
                                        ") is delivered more than once");
                    }
                }
            }
        }
    }
    for (const auto& [channel, channel_recvs] : recvs) {
        const auto it = sends.find(channel);
        const std::size_t matched = it == sends.end() ? 0 : it->second.size();
        if (matched < channel_recvs.size()) {
            throw Violation(describe(channel_recvs[matched]) + ": receive from rank " + std::to_string(channel >> 32) +
                            " has no matching send");
        }
    }
    // Causality: a send carries only items its rank owns or received in an earlier step.
    for (const auto& [channel, channel_sends] : sends) {
        for (const OpRef& send : channel_sends) {
            for (int i = 0; i < send.op->origins_size(); ++i) {
                const std::uint32_t origin = send.op->origins(i);
                if (origin == send.rank) continue;
                const auto it = received[send.rank].find(key(origin, send.op->slots(i)));
                if (it == received[send.rank].end() || it->second >= send.step) {
                    throw Violation(describe(send) + ": sends item (" + std::to_string(origin) + ", " +
                                    std::to_string(send.op->slots(i)) + ") " +
                                    (it == received[send.rank].end()
                                         ? "it never receives"
                                         : "before it arrives (step " + std::to_string(it->second) + ")"));
                }
            }
        }
    }
    // Completeness: every edge delivered.
    for (std::uint32_t o = 0; o < n; ++o) {
        const auto& out = patterns[o].out_neighbors();
        for (int s = 0; s < out.size(); ++s) {
            if (delivered.find(key(o, static_cast<std::uint32_t>(s))) == delivered.end()) {
                throw Violation("edge " + std::to_string(o) + " -> " + std::to_string(out[s]) + " (slot " +
                                std::to_string(s) + ") is never delivered");
            }
        }
    }
}

}  // namespace

VerifyReport verify_patterns(const std::vector<schema::RankPattern>& patterns, std::uint64_t topology_hash,
                             const Topology* expected) {
    VerifyReport report;
    report.ranks = static_cast<std::uint32_t>(patterns.size());
    for (const auto& p : patterns) report.edges += static_cast<std::uint64_t>(p.out_neighbors_size());
    try {
        check_topology(patterns, topology_hash, expected);
        check_schedule(patterns, report);
        report.ok = true;
    } catch (const Violation& violation) {
        report.violation = violation.what();
    } catch (const PatternError& error) {
        report.violation = error.what();
    }
    return report;
}

std::vector<schema::RankPattern> read_all_rank_patterns(const std::filesystem::path& dir,
                                                        const schema::Manifest& manifest) {
    std::vector<schema::RankPattern> patterns;
    patterns.reserve(manifest.num_ranks());
    for (std::uint32_t r = 0; r < manifest.num_ranks(); ++r) {
        patterns.push_back(read_rank_pattern(dir, r, manifest));
    }
    return patterns;
}

VerifyReport verify_directory(const std::filesystem::path& dir, const Topology* expected) {
    VerifyReport report;
    try {
        const auto manifest = read_manifest(dir);
        const auto patterns = read_all_rank_patterns(dir, manifest);
        report = verify_patterns(patterns, manifest.topology_hash(), expected);
        if (report.ok && report.edges != manifest.num_edges()) {
            report.ok = false;
            report.violation = (dir / manifest_file_name()).string() + ": declares " +
                               std::to_string(manifest.num_edges()) + " edges, rank files hold " +
                               std::to_string(report.edges);
        }
    } catch (const PatternError& error) {
        report.ok = false;
        report.violation = error.what();
    }
    return report;
}

}  // namespace nbr::compiler
