#include "nbr/compiler/verify.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/rank_blocks.hpp"
#include "nbr/plan/plan.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "nbr/simulator/simulate.hpp"
#include "segment_proof.hpp"

namespace nbr::compiler {

namespace {

class Violation : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::string describe(std::uint32_t rank, std::uint32_t step, std::uint32_t index) {
    return "rank " + std::to_string(rank) + " step " + std::to_string(step) + " operation " + std::to_string(index);
}

/// The ranks each process holds: contiguous blocks in process order.
class Blocks {
public:
    Blocks(MPI_Comm comm, std::uint32_t n) : blocks_(n, size_of(comm)) { MPI_Comm_rank(comm, &process_); }
    [[nodiscard]] std::uint32_t local_begin() const { return blocks_.begin(process_); }
    [[nodiscard]] std::uint32_t local_end() const { return blocks_.end(process_); }
    [[nodiscard]] int owner(std::uint32_t rank) const { return blocks_.owner(rank); }
    [[nodiscard]] int processes() const { return blocks_.parts(); }
    [[nodiscard]] int process() const { return process_; }
    [[nodiscard]] std::uint32_t num_ranks() const { return blocks_.num_ranks(); }
    /// Counts and displacements of the blocks, for gathering one value per rank.
    [[nodiscard]] std::pair<std::vector<int>, std::vector<int>> layout() const { return blocks_.gather_layout(); }

private:
    static int size_of(MPI_Comm comm) {
        int size = 1;
        MPI_Comm_size(comm, &size);
        return size;
    }
    RankBlocks blocks_;
    int process_ = 0;
};

/// Words for each process, exchanged with one MPI_Alltoallv; returns what arrived, in process
/// order (so the words one process sent keep their order).
std::vector<std::uint32_t> exchange_words(MPI_Comm comm, const std::vector<std::vector<std::uint32_t>>& out) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
    const auto p = out.size();
    std::vector<int> send_counts(p), recv_counts(p), send_displs(p), recv_displs(p);
    std::uint64_t sent = 0;
    for (std::size_t q = 0; q < p; ++q) {
        send_displs[q] = static_cast<int>(std::min(sent, kMax));
        send_counts[q] = static_cast<int>(std::min<std::uint64_t>(out[q].size(), kMax));
        sent += out[q].size();
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
    std::uint64_t received = 0;
    for (std::size_t q = 0; q < p; ++q) {
        recv_displs[q] = static_cast<int>(std::min(received, kMax));
        received += static_cast<std::uint64_t>(recv_counts[q]);
    }
    int too_big = sent >= kMax || received >= kMax ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &too_big, 1, MPI_INT, MPI_MAX, comm);
    if (too_big != 0) throw std::runtime_error("verify: more than 2^31 words in one exchange; use more processes");
    std::vector<std::uint32_t> flat;
    flat.reserve(sent);
    for (const auto& words : out) flat.insert(flat.end(), words.begin(), words.end());
    std::vector<std::uint32_t> in(received);
    MPI_Alltoallv(flat.data(), send_counts.data(), send_displs.data(), MPI_UINT32_T, in.data(), recv_counts.data(),
                  recv_displs.data(), MPI_UINT32_T, comm);
    return in;
}

/// One rank's in-edges (o, s) sorted, with their positions in the in-list.
struct InEdge {
    std::uint32_t origin, slot, position;
    bool operator<(const InEdge& other) const {  // by edge, then by position in the in-list
        if (origin != other.origin) return origin < other.origin;
        return slot != other.slot ? slot < other.slot : position < other.position;
    }
};

std::vector<InEdge> sorted_in_edges(const schema::RankPattern& p) {
    std::vector<InEdge> edges;
    edges.reserve(static_cast<std::size_t>(p.in_neighbors_size()));
    for (int j = 0; j < p.in_neighbors_size(); ++j) {
        edges.push_back({p.in_neighbors(j), p.in_source_slots(j), static_cast<std::uint32_t>(j)});
    }
    std::sort(edges.begin(), edges.end());
    return edges;
}

/// The verification of one set of patterns spread over the processes of a communicator.
class DistributedVerify {
public:
    DistributedVerify(MPI_Comm comm, const std::vector<schema::RankPattern>& local, std::uint32_t n,
                      std::uint64_t topology_hash, const Topology* expected)
        : comm_(comm), local_(local), blocks_(comm, n), hash_(topology_hash), expected_(expected) {}

    void run(VerifyReport& report) {
        internal::collective_try(comm_, [&] { check_local_structure(); });
        gather_out_degrees();
        check_in_lists(exchange_words(comm_, out_edge_records()));
        check_topology_hash();
        internal::collective_try(comm_, [&] { check_items_in_range(); });
        const auto sends = exchange_words(comm_, send_records());
        internal::collective_try(comm_, [&] { match_messages(sends); });
        internal::collective_try(comm_, [&] { check_causality_and_delivery(); });
        sum_figures(report);
    }

private:
    [[nodiscard]] std::uint32_t first() const { return blocks_.local_begin(); }
    [[nodiscard]] const schema::RankPattern& pattern(std::uint32_t r) const { return local_[r - first()]; }

    /// Every local pattern names its rank and N, is well formed, and (if given) has the
    /// expected topology's lists.
    void check_local_structure() const {
        const auto n = blocks_.num_ranks();
        if (local_.size() != blocks_.local_end() - first()) throw Violation("verify: wrong number of local patterns");
        if (expected_ != nullptr && expected_->num_ranks() != n) {
            throw Violation("pattern has " + std::to_string(n) + " ranks, topology has " +
                            std::to_string(expected_->num_ranks()));
        }
        for (std::uint32_t r = first(); r < blocks_.local_end(); ++r) {
            const auto& p = pattern(r);
            if (p.rank() != r || p.num_ranks() != n) {
                throw Violation("pattern " + std::to_string(r) + " claims rank " + std::to_string(p.rank()) + " of " +
                                std::to_string(p.num_ranks()));
            }
            validate_rank_pattern(p, "rank " + std::to_string(r));
            if (expected_ == nullptr) continue;
            const auto in = expected_->in_neighbors(r);
            const auto out = expected_->out_neighbors(r);
            if (!std::equal(in.begin(), in.end(), p.in_neighbors().begin(), p.in_neighbors().end()) ||
                !std::equal(out.begin(), out.end(), p.out_neighbors().begin(), p.out_neighbors().end())) {
                throw Violation("rank " + std::to_string(r) + ": neighbor lists differ from the given topology");
            }
        }
    }

    void gather_out_degrees() {
        std::vector<std::uint32_t> mine;
        for (const auto& p : local_) mine.push_back(static_cast<std::uint32_t>(p.out_neighbors_size()));
        const auto [counts, displs] = blocks_.layout();
        out_degree_.assign(blocks_.num_ranks(), 0);
        MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT32_T, out_degree_.data(), counts.data(),
                       displs.data(), MPI_UINT32_T, comm_);
    }

    /// (d, o, s) for every out-edge of every local rank o, to d's process.
    [[nodiscard]] std::vector<std::vector<std::uint32_t>> out_edge_records() const {
        std::vector<std::vector<std::uint32_t>> out(static_cast<std::size_t>(blocks_.processes()));
        for (std::uint32_t o = first(); o < blocks_.local_end(); ++o) {
            const auto& list = pattern(o).out_neighbors();
            for (int s = 0; s < list.size(); ++s) {
                auto& words = out[static_cast<std::size_t>(blocks_.owner(list[s]))];
                words.insert(words.end(), {list[s], o, static_cast<std::uint32_t>(s)});
            }
        }
        return out;
    }

    /// Every in-edge (o, s) of d is out-slot s of o pointing at d, each edge once, duplicate
    /// edges in the order MPI matches them (slots increasing).
    void check_in_lists(const std::vector<std::uint32_t>& records) {
        internal::collective_try(comm_, [&] {
            std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> pointing(local_.size());
            for (std::size_t i = 0; i + 2 < records.size(); i += 3) {
                pointing[records[i] - first()].emplace_back(records[i + 1], records[i + 2]);
            }
            in_edges_.resize(local_.size());
            for (std::uint32_t d = first(); d < blocks_.local_end(); ++d) {
                check_in_list(d, pointing[d - first()]);
            }
        });
    }

    void check_in_list(std::uint32_t d, std::vector<std::pair<std::uint32_t, std::uint32_t>>& pointing) {
        const auto& p = pattern(d);
        std::sort(pointing.begin(), pointing.end());
        for (int j = 0; j < p.in_neighbors_size(); ++j) {
            const std::pair edge{p.in_neighbors(j), p.in_source_slots(j)};
            if (std::binary_search(pointing.begin(), pointing.end(), edge)) continue;
            throw Violation("rank " + std::to_string(d) + " in-neighbor " + std::to_string(j) + " names out-slot " +
                            std::to_string(edge.second) + " of rank " + std::to_string(edge.first) +
                            ", which does not point at rank " + std::to_string(d));
        }
        auto& edges = in_edges_[d - first()];
        edges = sorted_in_edges(p);
        for (std::size_t k = 1; k < edges.size(); ++k) {
            // Sorted by edge: one origin's edges must sit in the in-list in slot order, each once.
            if (edges[k].origin == edges[k - 1].origin &&
                (edges[k].slot == edges[k - 1].slot || edges[k].position < edges[k - 1].position)) {
                throw Violation("rank " + std::to_string(d) + ": in-edges from rank " +
                                std::to_string(edges[k].origin) +
                                " are not in out-slot order (duplicate edges mismatched)");
            }
        }
        if (edges.size() != pointing.size()) {
            throw Violation("rank " + std::to_string(d) + " lists " + std::to_string(edges.size()) +
                            " in-neighbors but " + std::to_string(pointing.size()) + " out-edges point at it");
        }
    }

    /// The neighbor lists hash to the manifest's topology hash (and the given topology's).
    void check_topology_hash() const {
        std::vector<std::uint64_t> mine;
        for (std::uint32_t r = first(); r < blocks_.local_end(); ++r) {
            const auto& p = pattern(r);
            const std::span<const std::uint32_t> in(p.in_neighbors().data(),
                                                    static_cast<std::size_t>(p.in_neighbors_size()));
            const std::span<const std::uint32_t> out(p.out_neighbors().data(),
                                                     static_cast<std::size_t>(p.out_neighbors_size()));
            mine.push_back(rank_neighborhood_hash(r, in, out));
        }
        const auto [counts, displs] = blocks_.layout();
        const bool root = blocks_.process() == 0;
        std::vector<std::uint64_t> all(root ? blocks_.num_ranks() : 0);
        MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(), counts.data(), displs.data(),
                    MPI_UINT64_T, 0, comm_);
        internal::collective_try(comm_, [&] {
            if (!root) return;
            nbr::internal::Hasher hasher;
            hasher.update(blocks_.num_ranks());
            for (auto h : all) hasher.update(h);
            if (hasher.digest() != hash_) throw Violation("neighbor lists do not hash to the manifest's topology hash");
            if (expected_ != nullptr && expected_->hash() != hash_) {
                throw Violation("pattern belongs to another topology than the one given");
            }
        });
    }

    /// Every item names an existing out-slot of its origin.
    void check_items_in_range() const {
        for (std::uint32_t r = first(); r < blocks_.local_end(); ++r) {
            const auto& p = pattern(r);
            for (int s = 0; s < p.steps_size(); ++s) {
                const auto& ops = p.steps(s).operations();
                for (int i = 0; i < ops.size(); ++i) {
                    for (int k = 0; k < ops[i].origins_size(); ++k) {
                        const auto origin = ops[i].origins(k);
                        if (ops[i].slots(k) < out_degree_[origin]) continue;
                        throw Violation(describe(r, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i)) +
                                        ": item (" + std::to_string(origin) + ", " + std::to_string(ops[i].slots(k)) +
                                        ") names a slot rank " + std::to_string(origin) + " does not have");
                    }
                }
            }
        }
    }

    /// Every SEND as (peer, rank, step, index, items, origins and slots) to its peer's process.
    [[nodiscard]] std::vector<std::vector<std::uint32_t>> send_records() const {
        std::vector<std::vector<std::uint32_t>> out(static_cast<std::size_t>(blocks_.processes()));
        for (std::uint32_t r = first(); r < blocks_.local_end(); ++r) {
            const auto& p = pattern(r);
            for (int s = 0; s < p.steps_size(); ++s) {
                const auto& ops = p.steps(s).operations();
                for (int i = 0; i < ops.size(); ++i) {
                    if (ops[i].kind() != schema::Operation::SEND) continue;
                    auto& words = out[static_cast<std::size_t>(blocks_.owner(ops[i].peer()))];
                    words.insert(words.end(),
                                 {ops[i].peer(), r, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i),
                                  static_cast<std::uint32_t>(ops[i].origins_size())});
                    for (int k = 0; k < ops[i].origins_size(); ++k) {
                        words.insert(words.end(), {ops[i].origins(k), ops[i].slots(k)});
                    }
                }
            }
        }
        return out;
    }

    /// The k-th send from a to b matches the k-th receive of b from a: same step, same items.
    void match_messages(const std::vector<std::uint32_t>& records) const {
        struct Send {
            std::uint32_t dst, src, step, index;
            std::size_t items;  // position of the first origin in `records`
            std::uint32_t count;
        };
        std::vector<Send> sends;
        for (std::size_t i = 0; i + 5 <= records.size();) {
            const Send send{records[i], records[i + 1], records[i + 2], records[i + 3], i + 5, records[i + 4]};
            sends.push_back(send);
            i += 5 + 2 * std::size_t{send.count};
        }
        struct Recv {
            std::uint32_t dst, src, step, index;
            const schema::Operation* op;
        };
        std::vector<Recv> recvs;
        for (std::uint32_t r = first(); r < blocks_.local_end(); ++r) {
            const auto& p = pattern(r);
            for (int s = 0; s < p.steps_size(); ++s) {
                const auto& ops = p.steps(s).operations();
                for (int i = 0; i < ops.size(); ++i) {
                    if (ops[i].kind() != schema::Operation::RECV) continue;
                    recvs.push_back(
                        {r, ops[i].peer(), static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i), &ops[i]});
                }
            }
        }
        // Per channel (src, dst) in step and operation order: the records of one sender arrive
        // in its order, and stable sorts keep it.
        const auto by_channel = [](const auto& a, const auto& b) {
            return a.src != b.src ? a.src < b.src : a.dst < b.dst;
        };
        std::stable_sort(sends.begin(), sends.end(), by_channel);
        std::stable_sort(recvs.begin(), recvs.end(), by_channel);
        std::size_t i = 0, j = 0;
        while (i < sends.size() || j < recvs.size()) {
            if (j == recvs.size() || (i < sends.size() && by_channel(sends[i], recvs[j]))) {
                throw Violation(describe(sends[i].src, sends[i].step, sends[i].index) + ": send to rank " +
                                std::to_string(sends[i].dst) + " has no matching receive");
            }
            if (i == sends.size() || by_channel(recvs[j], sends[i])) {
                throw Violation(describe(recvs[j].dst, recvs[j].step, recvs[j].index) + ": receive from rank " +
                                std::to_string(recvs[j].src) + " has no matching send");
            }
            const auto& send = sends[i];
            const auto& recv = recvs[j];
            const std::string where = describe(recv.dst, recv.step, recv.index);
            if (send.step != recv.step) {
                throw Violation(where + ": receive from rank " + std::to_string(send.src) +
                                " is matched by a send in step " + std::to_string(send.step));
            }
            bool same = static_cast<int>(send.count) == recv.op->origins_size();
            for (std::uint32_t k = 0; same && k < send.count; ++k) {
                same = records[send.items + 2 * k] == recv.op->origins(static_cast<int>(k)) &&
                       records[send.items + 2 * k + 1] == recv.op->slots(static_cast<int>(k));
            }
            if (!same) {
                throw Violation(where + ": items differ from those " + describe(send.src, send.step, send.index) +
                                " sends");
            }
            ++i;
            ++j;
        }
    }

    /// Per local rank: a send carries only items the rank owns or received in an earlier step;
    /// every in-edge arrives exactly once.
    void check_causality_and_delivery() const {
        for (std::uint32_t r = first(); r < blocks_.local_end(); ++r) check_rank_schedule(r);
    }

    void check_rank_schedule(std::uint32_t r) const {
        const auto& p = pattern(r);
        const auto& edges = in_edges_[r - first()];
        std::vector<std::uint32_t> delivered(edges.size(), 0);
        std::unordered_map<std::uint64_t, std::uint32_t> first_step;  // item -> step it first arrives
        for (int s = 0; s < p.steps_size(); ++s) {
            const auto& ops = p.steps(s).operations();
            for (int i = 0; i < ops.size(); ++i) {
                if (ops[i].kind() != schema::Operation::RECV) continue;
                for (int k = 0; k < ops[i].origins_size(); ++k) {
                    const auto origin = ops[i].origins(k);
                    const auto slot = ops[i].slots(k);
                    first_step.try_emplace((std::uint64_t{origin} << 32) | slot, static_cast<std::uint32_t>(s));
                    const auto it = std::lower_bound(edges.begin(), edges.end(), InEdge{origin, slot, 0});
                    if (it == edges.end() || it->origin != origin || it->slot != slot) continue;
                    if (++delivered[static_cast<std::size_t>(it - edges.begin())] > 1) {
                        throw Violation(describe(r, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i)) +
                                        ": edge " + std::to_string(origin) + " -> " + std::to_string(r) + " (slot " +
                                        std::to_string(slot) + ") is delivered more than once");
                    }
                }
            }
        }
        for (int s = 0; s < p.steps_size(); ++s) {
            const auto& ops = p.steps(s).operations();
            for (int i = 0; i < ops.size(); ++i) {
                if (ops[i].kind() != schema::Operation::SEND) continue;
                check_send(r, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i), ops[i], first_step);
            }
        }
        for (std::size_t k = 0; k < edges.size(); ++k) {
            if (delivered[k] == 0) {
                throw Violation("edge " + std::to_string(edges[k].origin) + " -> " + std::to_string(r) + " (slot " +
                                std::to_string(edges[k].slot) + ") is never delivered");
            }
        }
    }

    static void check_send(std::uint32_t r, std::uint32_t step, std::uint32_t index, const schema::Operation& op,
                           const std::unordered_map<std::uint64_t, std::uint32_t>& first_step) {
        for (int k = 0; k < op.origins_size(); ++k) {
            const auto origin = op.origins(k);
            if (origin == r) continue;
            const auto it = first_step.find((std::uint64_t{origin} << 32) | op.slots(k));
            if (it != first_step.end() && it->second < step) continue;
            throw Violation(describe(r, step, index) + ": sends item (" + std::to_string(origin) + ", " +
                            std::to_string(op.slots(k)) + ") " +
                            (it == first_step.end() ? std::string("it never receives")
                                                    : "before it arrives (step " + std::to_string(it->second) + ")"));
        }
    }

    void sum_figures(VerifyReport& report) const {
        std::uint64_t mine[3] = {0, 0, 0};  // edges, messages, items
        std::uint32_t steps = 0;
        for (const auto& p : local_) {
            mine[0] += static_cast<std::uint64_t>(p.out_neighbors_size());
            steps = std::max(steps, static_cast<std::uint32_t>(p.steps_size()));
            for (const auto& step : p.steps()) {
                for (const auto& op : step.operations()) {
                    if (op.kind() != schema::Operation::SEND) continue;
                    ++mine[1];
                    mine[2] += static_cast<std::uint64_t>(op.origins_size());
                }
            }
        }
        std::uint64_t all[3] = {0, 0, 0};
        MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, comm_);
        MPI_Allreduce(&steps, &report.steps, 1, MPI_UINT32_T, MPI_MAX, comm_);
        report.edges = all[0];
        report.messages = all[1];
        report.items_moved = all[2];
    }

    MPI_Comm comm_;
    const std::vector<schema::RankPattern>& local_;
    Blocks blocks_;
    std::uint64_t hash_;
    const Topology* expected_;
    std::vector<std::uint32_t> out_degree_;
    std::vector<std::vector<InEdge>> in_edges_;
};

}  // namespace

std::pair<std::uint32_t, std::uint32_t> verify_block(MPI_Comm comm, std::uint32_t num_ranks) {
    const Blocks blocks(comm, num_ranks);
    return {blocks.local_begin(), blocks.local_end()};
}

VerifyReport verify_patterns(MPI_Comm comm, const std::vector<schema::RankPattern>& local, std::uint32_t num_ranks,
                             std::uint64_t topology_hash, const Topology* expected) {
    VerifyReport report;
    report.ranks = num_ranks;
    try {
        DistributedVerify(comm, local, num_ranks, topology_hash, expected).run(report);
        report.ok = true;
    } catch (const std::runtime_error& error) {  // the same on every process (collective_try)
        report.violation = error.what();
    }
    return report;
}

VerifyReport verify_patterns(const std::vector<schema::RankPattern>& patterns, std::uint64_t topology_hash,
                             const Topology* expected) {
    return verify_patterns(MPI_COMM_SELF, patterns, static_cast<std::uint32_t>(patterns.size()), topology_hash,
                           expected);
}

std::vector<schema::RankPattern> read_all_rank_patterns(const std::filesystem::path& dir,
                                                        const schema::Manifest& manifest) {
    std::vector<schema::RankPattern> patterns;
    patterns.resize(manifest.num_ranks());
    RankPatternReader reader(dir, manifest, 0, manifest.num_ranks());
    for (auto& pattern : patterns) reader.next(pattern);
    return patterns;
}

namespace {

// ---- Segmented forms ------------------------------------------------------------------------
// A pattern with a segment size runs its staged messages in segments of
// segment_units(segment_bytes, block) blocks, a power of two for every block size
// (nbr/plan/plan.hpp), so the forms are finitely many: one per power of two below the longest
// message segment_plan may split (longest_segmentable). Each is proven for both collectives:
// per rank (each process its block), every segment sends only units that are the rank's own or
// that a receive it waits for brings, its count of waits is the number of receives that release
// it, and every in-slot is delivered once; over the ranks (process 0, reading rank by rank),
// every segment matches one receive of the same blocks (simulator::load_program) and no chain of
// waits closes on itself.

std::string in_segments(std::uint32_t units) {
    return " in segments of " + std::to_string(units) + (units == 1 ? " block" : " blocks");
}

constexpr nbr::internal::Collective kPlanCollectives[] = {nbr::internal::Collective::allgather,
                                                          nbr::internal::Collective::alltoall};

/// Every rank's segmented forms (its block of ranks, from `begin`); returns the longest staged
/// message of the block.
std::uint32_t check_local_segments(const std::vector<schema::RankPattern>& local, std::uint32_t begin) {
    std::uint32_t most = 0;
    for (std::uint32_t i = 0; i < local.size(); ++i) {
        for (const auto collective : kPlanCollectives) {
            const auto plan = nbr::internal::build_plan(local[i], collective);
            const auto longest = nbr::internal::longest_segmentable(plan);
            most = std::max(most, longest);
            for (std::uint32_t units = 1; units < longest; units *= 2) {
                internal::check_segmented_plan(nbr::internal::segment_plan(plan, units),
                                               static_cast<std::uint32_t>(local[i].in_neighbors_size()),
                                               "rank " + std::to_string(begin + i) + in_segments(units));
            }
        }
    }
    return most;
}

/// The proof of the segmented forms of one pattern directory; the number of forms. Process 0
/// reads the rank files once per form rather than holding every rank's pattern.
std::uint32_t verify_segments(MPI_Comm comm, const std::filesystem::path& dir, const schema::Manifest& manifest,
                              const std::vector<schema::RankPattern>& local, std::uint32_t begin) {
    std::uint32_t longest = 0;
    internal::collective_try(comm, [&] { longest = check_local_segments(local, begin); });
    MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_UINT32_T, MPI_MAX, comm);
    std::uint32_t forms = 0;
    for (std::uint32_t units = 1; units < longest; units *= 2) ++forms;
    internal::collective_try(comm, [&] {
        int process = 0;
        MPI_Comm_rank(comm, &process);
        if (process != 0) return;
        for (const auto collective : {simulator::Collective::allgather, simulator::Collective::alltoall}) {
            for (std::uint32_t units = 1; units < longest; units *= 2) {
                internal::check_acyclic(
                    simulator::load_program(dir, manifest, collective, units),
                    (collective == simulator::Collective::allgather ? "allgather" : "alltoall") + in_segments(units));
            }
        }
    });
    return forms;
}

VerifyReport verify_single(MPI_Comm comm, const std::filesystem::path& dir, const schema::Manifest& manifest,
                           const Topology* expected) {
    const auto block = verify_block(comm, manifest.num_ranks());
    const std::uint32_t begin = block.first, end = block.second;  // the lambda captures them (clang 14: no bindings)
    std::vector<schema::RankPattern> local(end - begin);
    internal::collective_try(comm, [&] {
        RankPatternReader reader(dir, manifest, begin, end);
        for (auto& pattern : local) reader.next(pattern);
    });
    VerifyReport report = verify_patterns(comm, local, manifest.num_ranks(), manifest.topology_hash(), expected);
    if (report.ok && report.edges != manifest.num_edges()) {
        report.ok = false;
        report.violation = (dir / manifest_file_name()).string() + ": declares " +
                           std::to_string(manifest.num_edges()) + " edges, rank files hold " +
                           std::to_string(report.edges);
    }
    if (report.ok && manifest.segment_bytes() != 0) {
        try {
            report.segment_forms = verify_segments(comm, dir, manifest, local, begin);
        } catch (const std::runtime_error& error) {  // the same on every process (collective_try)
            report.ok = false;
            report.violation = std::string("segmented: ") + error.what();
        }
    }
    return report;
}

/// Every variant of an auto directory, each proven on its own; figures summed (steps: the longest).
VerifyReport verify_variants(MPI_Comm comm, const std::filesystem::path& dir, const schema::Manifest& manifest,
                             const Topology* expected) {
    VerifyReport report;
    for (int i = 0; i < manifest.variants_size(); ++i) {
        const auto& name = manifest.variants(i).name();
        schema::Manifest inner;
        internal::collective_try(comm, [&] { inner = read_variant_manifest(dir, manifest, i); });
        const auto one = verify_single(comm, variant_directory(dir, manifest, i), inner, expected);
        if (!one.ok) {
            report.violation = "variant '" + name + "': " + one.violation;
            return report;
        }
        report.ranks = one.ranks;
        report.edges = one.edges;
        report.messages += one.messages;
        report.items_moved += one.items_moved;
        report.steps = std::max(report.steps, one.steps);
        report.segment_forms = std::max(report.segment_forms, one.segment_forms);
        report.variants.push_back(name);
    }
    report.ok = true;
    return report;
}

}  // namespace

VerifyReport verify_directory(MPI_Comm comm, const std::filesystem::path& dir, const Topology* expected) {
    VerifyReport report;
    try {
        schema::Manifest manifest;
        internal::collective_try(comm, [&] { manifest = read_manifest(dir); });
        report = is_multi_variant(manifest) ? verify_variants(comm, dir, manifest, expected)
                                            : verify_single(comm, dir, manifest, expected);
    } catch (const std::runtime_error& error) {  // the same on every process (collective_try)
        report.ok = false;
        report.violation = error.what();
    }
    return report;
}

VerifyReport verify_directory(const std::filesystem::path& dir, const Topology* expected) {
    return verify_directory(MPI_COMM_SELF, dir, expected);
}

}  // namespace nbr::compiler
