#include "nbr/compiler/verify.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace nbr::compiler {

namespace {

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
    // Every edge gets a dense id: the origin's first edge id plus the slot.
    std::vector<std::uint64_t> edge_base(std::size_t{n} + 1, 0);
    for (std::uint32_t r = 0; r < n; ++r) {
        edge_base[r + 1] = edge_base[r] + static_cast<std::uint64_t>(patterns[r].out_neighbors_size());
    }
    auto edge_of = [&](const OpRef& ref, int k) {
        const std::uint32_t origin = ref.op->origins(k);
        const std::uint32_t slot = ref.op->slots(k);
        if (slot >= static_cast<std::uint32_t>(patterns[origin].out_neighbors_size())) {
            throw Violation(describe(ref) + ": item (" + std::to_string(origin) + ", " + std::to_string(slot) +
                            ") names a slot rank " + std::to_string(origin) + " does not have");
        }
        return edge_base[origin] + slot;
    };
    // All operations, in (rank, step, operation) order.
    struct Channel {
        std::uint32_t src, dst;
        OpRef ref;
    };
    std::vector<Channel> sends, recvs;
    for (std::uint32_t r = 0; r < n; ++r) {
        const auto& p = patterns[r];
        report.steps = std::max(report.steps, static_cast<std::uint32_t>(p.steps_size()));
        for (int s = 0; s < p.steps_size(); ++s) {
            const auto& step = p.steps(s);
            for (int i = 0; i < step.operations_size(); ++i) {
                const auto& op = step.operations(i);
                const OpRef ref{r, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i), &op};
                for (int k = 0; k < op.origins_size(); ++k) (void)edge_of(ref, k);
                if (op.kind() == schema::Operation::SEND) {
                    sends.push_back({r, op.peer(), ref});
                    ++report.messages;
                    report.items_moved += static_cast<std::uint64_t>(op.origins_size());
                } else {
                    recvs.push_back({op.peer(), r, ref});
                }
            }
        }
    }
    std::vector<std::uint32_t> send_order(sends.size());
    for (std::uint32_t i = 0; i < send_order.size(); ++i) send_order[i] = i;  // rank order, for causality
    // Per channel, in step and operation order (stable sorts keep it).
    auto by_channel = [](const Channel& a, const Channel& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; };
    std::vector<Channel> sends_by_channel = sends;
    std::stable_sort(sends_by_channel.begin(), sends_by_channel.end(), by_channel);
    std::stable_sort(recvs.begin(), recvs.end(), by_channel);

    std::vector<std::uint8_t> delivered(edge_base[n], 0);
    struct Receipt {
        std::uint32_t rank;
        std::uint32_t step;
        std::uint64_t edge;
    };
    std::vector<Receipt> receipts;
    std::size_t i = 0, j = 0;
    while (i < sends_by_channel.size() || j < recvs.size()) {
        if (j == recvs.size() || (i < sends_by_channel.size() && by_channel(sends_by_channel[i], recvs[j]))) {
            throw Violation(describe(sends_by_channel[i].ref) + ": send to rank " +
                            std::to_string(sends_by_channel[i].dst) + " has no matching receive");
        }
        if (i == sends_by_channel.size() || by_channel(recvs[j], sends_by_channel[i])) {
            throw Violation(describe(recvs[j].ref) + ": receive from rank " + std::to_string(recvs[j].src) +
                            " has no matching send");
        }
        const OpRef& send = sends_by_channel[i].ref;
        const OpRef& recv = recvs[j].ref;
        const std::uint32_t src = sends_by_channel[i].src;
        const std::uint32_t dst = sends_by_channel[i].dst;
        if (send.step != recv.step) {
            throw Violation(describe(recv) + ": receive from rank " + std::to_string(src) +
                            " is matched by a send in step " + std::to_string(send.step));
        }
        if (send.op->origins_size() != recv.op->origins_size() ||
            !std::equal(send.op->origins().begin(), send.op->origins().end(), recv.op->origins().begin()) ||
            !std::equal(send.op->slots().begin(), send.op->slots().end(), recv.op->slots().begin())) {
            throw Violation(describe(recv) + ": items differ from those " + describe(send) + " sends");
        }
        for (int k = 0; k < recv.op->origins_size(); ++k) {
            const std::uint64_t e = edge_of(recv, k);
            receipts.push_back({dst, recv.step, e});
            const std::uint32_t origin = recv.op->origins(k);
            if (patterns[origin].out_neighbors(static_cast<int>(recv.op->slots(k))) == dst && ++delivered[e] > 1) {
                throw Violation(describe(recv) + ": edge " + std::to_string(origin) + " -> " + std::to_string(dst) +
                                " (slot " + std::to_string(recv.op->slots(k)) + ") is delivered more than once");
            }
        }
        ++i;
        ++j;
    }
    // Causality: a send carries only items its rank owns or received in an earlier step.
    std::stable_sort(receipts.begin(), receipts.end(),
                     [](const Receipt& a, const Receipt& b) { return a.rank < b.rank; });
    constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> first_step(edge_base[n], kNever);
    std::size_t next_receipt = 0, next_send = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
        const std::size_t receipts_begin = next_receipt;
        for (; next_receipt < receipts.size() && receipts[next_receipt].rank == r; ++next_receipt) {
            auto& f = first_step[receipts[next_receipt].edge];
            f = std::min(f, receipts[next_receipt].step);
        }
        for (; next_send < sends.size() && sends[next_send].src == r; ++next_send) {
            const OpRef& send = sends[next_send].ref;
            for (int k = 0; k < send.op->origins_size(); ++k) {
                const std::uint32_t origin = send.op->origins(k);
                if (origin == r) continue;
                const std::uint32_t arrives = first_step[edge_of(send, k)];
                if (arrives >= send.step) {
                    throw Violation(describe(send) + ": sends item (" + std::to_string(origin) + ", " +
                                    std::to_string(send.op->slots(k)) + ") " +
                                    (arrives == kNever ? "it never receives"
                                                       : "before it arrives (step " + std::to_string(arrives) + ")"));
                }
            }
        }
        for (std::size_t k = receipts_begin; k < next_receipt; ++k) first_step[receipts[k].edge] = kNever;
    }
    // Completeness: every edge delivered.
    for (std::uint32_t o = 0; o < n; ++o) {
        const auto& out = patterns[o].out_neighbors();
        for (int s = 0; s < out.size(); ++s) {
            if (!delivered[edge_base[o] + static_cast<std::uint64_t>(s)]) {
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

namespace {

VerifyReport verify_single(const std::filesystem::path& dir, const schema::Manifest& manifest,
                           const Topology* expected) {
    const auto patterns = read_all_rank_patterns(dir, manifest);
    VerifyReport report = verify_patterns(patterns, manifest.topology_hash(), expected);
    if (report.ok && report.edges != manifest.num_edges()) {
        report.ok = false;
        report.violation = (dir / manifest_file_name()).string() + ": declares " +
                           std::to_string(manifest.num_edges()) + " edges, rank files hold " +
                           std::to_string(report.edges);
    }
    return report;
}

/// Every variant of an auto directory, each proven on its own; figures summed (steps: the longest).
VerifyReport verify_variants(const std::filesystem::path& dir, const schema::Manifest& manifest,
                             const Topology* expected) {
    VerifyReport report;
    for (int i = 0; i < manifest.variants_size(); ++i) {
        const auto& name = manifest.variants(i).name();
        const auto one = verify_single(dir / name, read_variant_manifest(dir, manifest, i), expected);
        if (!one.ok) {
            report.violation = "variant '" + name + "': " + one.violation;
            return report;
        }
        report.ranks = one.ranks;
        report.edges = one.edges;
        report.messages += one.messages;
        report.items_moved += one.items_moved;
        report.steps = std::max(report.steps, one.steps);
        report.variants.push_back(name);
    }
    report.ok = true;
    return report;
}

}  // namespace

VerifyReport verify_directory(const std::filesystem::path& dir, const Topology* expected) {
    VerifyReport report;
    try {
        const auto manifest = read_manifest(dir);
        report = is_multi_variant(manifest) ? verify_variants(dir, manifest, expected)
                                            : verify_single(dir, manifest, expected);
    } catch (const PatternError& error) {
        report.ok = false;
        report.violation = error.what();
    }
    return report;
}

}  // namespace nbr::compiler
