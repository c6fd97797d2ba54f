// C boundary of libnbr: every entry point catches every C++ exception.
#include "nbr.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "comm_neighbors.hpp"
#include "hand_off.hpp"
#include "handles.hpp"
#include "nbr/plan/plan.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "progress.hpp"

namespace {

using nbr::internal::Collective;
using nbr::internal::fail;
using nbr::internal::guarded;
using nbr::internal::NbrError;

int code_of(nbr::PatternErrorKind kind) {
    switch (kind) {
        case nbr::PatternErrorKind::io: return NBR_ERR_IO;
        case nbr::PatternErrorKind::corrupt: return NBR_ERR_CORRUPT;
        case nbr::PatternErrorKind::version: return NBR_ERR_VERSION;
        case nbr::PatternErrorKind::checksum: return NBR_ERR_CHECKSUM;
        case nbr::PatternErrorKind::rank: return NBR_ERR_RANK;
        case nbr::PatternErrorKind::size: return NBR_ERR_COMM_SIZE;
        case nbr::PatternErrorKind::topology_hash: return NBR_ERR_TOPOLOGY_HASH;
        case nbr::PatternErrorKind::mixed: return NBR_ERR_MIXED;
    }
    return NBR_ERR_INTERNAL;
}

void mpi_check(int code, const char* what) {
    nbr::internal::check_mpi(code, what);
}

std::string list_difference(const char* which, const std::vector<int>& comm_list,
                            const std::vector<int>& pattern_list) {
    if (comm_list.size() != pattern_list.size()) {
        return std::string("communicator has ") + std::to_string(comm_list.size()) + " " + which +
               "-neighbors, pattern has " + std::to_string(pattern_list.size());
    }
    for (std::size_t i = 0; i < comm_list.size(); ++i) {
        if (comm_list[i] != pattern_list[i]) {
            return std::string(which) + "-neighbor " + std::to_string(i) + " is rank " + std::to_string(comm_list[i]) +
                   " in the communicator, rank " + std::to_string(pattern_list[i]) + " in the pattern";
        }
    }
    return {};
}

/// Checks a topology communicator's neighbor lists against the pattern's and returns where the
/// pattern's neighbors sit in its buffers; a plain communicator (no topology) takes the
/// pattern's lists as they are.
nbr::internal::BufferSlots check_neighbors(MPI_Comm comm, int rank, const std::vector<int>& in,
                                           const std::vector<int>& out, bool& topology) {
    auto lists = nbr::internal::comm_neighbors(comm, rank);
    topology = lists.kind != nbr::internal::CommKind::plain;
    if (!topology) {
        nbr::internal::BufferSlots slots;
        slots.in_blocks = static_cast<std::uint32_t>(in.size());
        slots.out_blocks = static_cast<std::uint32_t>(out.size());
        return slots;
    }
    std::string difference = list_difference("in", lists.in, in);
    if (difference.empty()) difference = list_difference("out", lists.out, out);
    if (!difference.empty()) {
        throw NbrError(NBR_ERR_NEIGHBORS, "rank " + std::to_string(rank) + ": " + difference);
    }
    return std::move(lists.slots);
}

using nbr::internal::PatternState;
using nbr::internal::Variant;

nbr::schema::Collective schema_collective(int index) {
    return index == 0 ? nbr::schema::ALLGATHER : nbr::schema::ALLTOALL;
}

/// The variant of one rank file: its plans for both collectives, and the segment size its
/// manifest gives.
Variant make_variant(const nbr::schema::RankPattern& file, const std::string& where, const std::string& name,
                     std::uint64_t segment_bytes) {
    Variant variant;
    variant.name = name;
    variant.algorithm = file.algorithm();
    try {
        variant.plans[0] = nbr::internal::build_plan(file, Collective::allgather);
        variant.plans[1] = nbr::internal::build_plan(file, Collective::alltoall);
    } catch (const nbr::internal::PlanError& error) {
        throw NbrError(NBR_ERR_PATTERN, where + ": " + error.what());
    }
    variant.segment_bytes = segment_bytes;
    for (int c = 0; c < 2; ++c) variant.longest[c] = nbr::internal::longest_segmentable(variant.plans[c]);
    return variant;
}

/// The most tags a variant's messages to one peer take: with segmentation, every block of a
/// staged message may travel alone.
int max_tag_of(const Variant& variant) {
    int max_tag = 0;
    for (const auto& plan : variant.plans) {
        max_tag =
            std::max(max_tag, variant.segment_bytes == 0 ? plan.max_tag : nbr::internal::segmented_max_tag(plan, 1));
    }
    return max_tag;
}

/// Adds a variant of the rank's slice; the first one defines the neighbor lists, later ones
/// must repeat them.
void add_variant(PatternState& pattern, const nbr::VariantSlice& slice) {
    const auto& file = slice.pattern;
    const std::vector<int> in(file.in_neighbors().begin(), file.in_neighbors().end());
    const std::vector<int> out(file.out_neighbors().begin(), file.out_neighbors().end());
    if (pattern.variants.empty()) {
        pattern.in = in;
        pattern.out = out;
        pattern.in_source_slots.assign(file.in_source_slots().begin(), file.in_source_slots().end());
    } else if (in != pattern.in || out != pattern.out) {
        throw NbrError(NBR_ERR_CORRUPT, slice.source + ": neighbor lists differ from the first variant's");
    }
    pattern.variants.push_back(make_variant(file, slice.source, slice.name, slice.manifest.segment_bytes()));
}

/// The rank's part of a pattern directory, one way: the slice read (manifests and the rank's
/// pattern of every variant) in one call, then planned; an auto directory's bands kept.
void read_variants(PatternState& pattern, const char* dir) {
    const auto slice =
        nbr::read_rank_slice(dir, static_cast<std::uint32_t>(pattern.rank), static_cast<std::uint32_t>(pattern.size));
    pattern.algorithm = slice.manifest.algorithm();
    pattern.compile_id = slice.manifest.compile_id();
    for (const auto& variant : slice.variants) add_variant(pattern, variant);
    if (!nbr::is_multi_variant(slice.manifest)) {
        for (auto& bands : pattern.bands) bands.assign(1, nbr::internal::Band{0, 0, {0}});
        for (auto& candidates : pattern.variable_candidates) candidates = {0};
        return;
    }
    const auto& top = slice.manifest;
    for (int c = 0; c < 2; ++c) {
        for (const auto& band : top.bands()) {
            if (band.collective() == schema_collective(c))
                pattern.bands[c].push_back({band.from_bytes(), band.variant(), nbr::band_candidates(band)});
        }
    }
    pattern.variable_variant[0] = top.allgatherv_variant();
    pattern.variable_variant[1] = top.alltoallv_variant();
    pattern.variable_candidates[0] = {top.allgatherv_variant()};
    pattern.variable_candidates[0].insert(pattern.variable_candidates[0].end(), top.allgatherv_alternatives().begin(),
                                          top.allgatherv_alternatives().end());
    pattern.variable_candidates[1] = {top.alltoallv_variant()};
    pattern.variable_candidates[1].insert(pattern.variable_candidates[1].end(), top.alltoallv_alternatives().begin(),
                                          top.alltoallv_alternatives().end());
}

std::unique_ptr<PatternState> load_local(const char* dir, MPI_Comm comm, int rank, int size) {
    auto pattern = std::make_unique<PatternState>();
    pattern->rank = rank;
    pattern->size = size;
    try {
        read_variants(*pattern, dir);
    } catch (const nbr::PatternError& error) {
        throw NbrError(code_of(error.kind()), error.what());
    }
    pattern->slots = check_neighbors(comm, rank, pattern->in, pattern->out, pattern->topology_comm);
    int* tag_ub_attr = nullptr;
    int flag = 0;
    mpi_check(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub_attr, &flag), "MPI_Comm_get_attr");
    int max_tag = 0;
    for (const auto& variant : pattern->variants) max_tag = std::max(max_tag, max_tag_of(variant));
    const std::int64_t tag_ub = flag ? *tag_ub_attr : 32767;  // MPI guarantees at least 32767
    if (max_tag > tag_ub) {
        throw NbrError(NBR_ERR_PATTERN, std::string(dir) + ": rank " + std::to_string(rank) + " needs " +
                                            std::to_string(max_tag + 1) +
                                            " messages between one pair of ranks, more than MPI_TAG_UB");
    }
    pattern->tag_window = std::int64_t{max_tag} + 1;
    pattern->tag_ub = tag_ub;
    return pattern;
}

/// A rank receives two edges from one source (MPICH 4.0's native alltoall mismatches those).
bool has_duplicate_in_edges(std::vector<int> in) {
    std::sort(in.begin(), in.end());
    return std::adjacent_find(in.begin(), in.end()) != in.end();
}

#if !defined(NBR_SMPI)
bool is_mpich() {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return true;  // assume the worst
    return std::string(version, static_cast<std::size_t>(length)).find("MPICH") != std::string::npos;
}
#endif

/// Messages between one pair of ranks in MPI's own schedule: the most edges one peer shares
/// with this rank in one direction (the tags a naive plan takes).
std::int64_t naive_tag_window(const PatternState& pattern) {
    std::int64_t most = 1;
    for (const auto* list : {&pattern.in, &pattern.out}) {
        std::vector<int> peers = *list;
        std::sort(peers.begin(), peers.end());
        for (std::size_t i = 0; i < peers.size();) {
            std::size_t j = i;
            while (j < peers.size() && peers[j] == peers[i]) ++j;
            most = std::max(most, static_cast<std::int64_t>(j - i));
            i = j;
        }
    }
    return most;
}

/// The naive variant of the rank (MPI's own schedule: one message per edge, in one step), for
/// communicators where no kept variant may run (avoid_isolated_roles). Messages to one peer go
/// in slot order and receives from one peer in the order of their slots there, so that the
/// k-th of each match (the format's rule).
Variant naive_variant(const PatternState& pattern) {
    nbr::schema::RankPattern file;
    file.set_rank(static_cast<std::uint32_t>(pattern.rank));
    file.set_num_ranks(static_cast<std::uint32_t>(pattern.size));
    for (const int peer : pattern.in) file.add_in_neighbors(static_cast<std::uint32_t>(peer));
    for (const int peer : pattern.out) file.add_out_neighbors(static_cast<std::uint32_t>(peer));
    for (const auto slot : pattern.in_source_slots) file.add_in_source_slots(slot);
    file.set_algorithm("naive");
    auto* step = file.add_steps();
    for (std::size_t slot = 0; slot < pattern.out.size(); ++slot) {
        auto* send = step->add_operations();
        send->set_kind(nbr::schema::Operation::SEND);
        send->set_peer(static_cast<std::uint32_t>(pattern.out[slot]));
        send->add_origins(static_cast<std::uint32_t>(pattern.rank));
        send->add_slots(static_cast<std::uint32_t>(slot));
    }
    std::vector<std::size_t> edges(pattern.in.size());
    for (std::size_t j = 0; j < edges.size(); ++j) edges[j] = j;
    std::stable_sort(edges.begin(), edges.end(), [&](std::size_t a, std::size_t b) {
        return std::pair(pattern.in[a], pattern.in_source_slots[a]) <
               std::pair(pattern.in[b], pattern.in_source_slots[b]);
    });
    for (const std::size_t j : edges) {
        auto* recv = step->add_operations();
        recv->set_kind(nbr::schema::Operation::RECV);
        recv->set_peer(static_cast<std::uint32_t>(pattern.in[j]));
        recv->add_origins(static_cast<std::uint32_t>(pattern.in[j]));
        recv->add_slots(pattern.in_source_slots[j]);
    }
    return make_variant(file, "the naive schedule of rank " + std::to_string(pattern.rank), "naive", 0);
}

/// The variant running naive's schedule: the pattern's own naive variant where it keeps one,
/// else MPI's schedule added as a variant of its own.
std::uint32_t naive_fallback(PatternState& pattern) {
    for (std::uint32_t v = 0; v < pattern.variants.size(); ++v) {
        if (pattern.variants[v].algorithm == "naive") return v;
    }
    pattern.variants.push_back(naive_variant(pattern));
    if (max_tag_of(pattern.variants.back()) >= pattern.tag_window) {
        throw NbrError(NBR_ERR_INTERNAL, "the naive schedule needs more tags than agreed at load");
    }
    return static_cast<std::uint32_t>(pattern.variants.size() - 1);
}

/// A rank without neighbors cannot tell a fixed-size call's block size: MPI leaves its counts
/// free. So no fixed-size call runs a variant in which such a rank has a message (`roles`, per
/// variant and collective, agreed over the ranks): each band keeps the candidates without one,
/// its variant the first of them, else naive's schedule (in which such a rank has none). The
/// v-calls keep theirs: their blocks' sizes travel with them.
void avoid_isolated_roles(PatternState& pattern, const std::vector<std::int64_t>& roles) {
    for (int c = 0; c < 2; ++c) {
        for (auto& band : pattern.bands[c]) {
            std::vector<std::uint32_t> kept;
            for (const auto v : band.candidates) {
                if (roles[2 * v + static_cast<std::size_t>(c)] == 0) kept.push_back(v);
            }
            if (kept.empty()) kept.push_back(naive_fallback(pattern));
            band.variant = kept.front();
            band.candidates = std::move(kept);
        }
    }
}

/// What the ranks' plans say, agreed over the communicator (one reduction): per variant and
/// collective, whether some rank's plan is not all-direct and whether some rank without
/// neighbors has a message in it; and whether some rank has no neighbors.
struct PlanFacts {
    std::vector<std::int64_t> indirect;
    std::vector<std::int64_t> isolated_roles;
    bool isolated_ranks = false;
};

PlanFacts agree_on_plans(const PatternState& pattern, MPI_Comm comm) {
    const std::size_t plans = 2 * pattern.variants.size();
    std::vector<std::int64_t> all;  // indirect, isolated_roles, isolated_ranks
    for (const auto& variant : pattern.variants) {
        for (const auto& plan : variant.plans) all.push_back(plan.all_direct ? 0 : 1);
    }
    for (const auto& variant : pattern.variants) {
        for (const auto& plan : variant.plans) {
            all.push_back(pattern.isolated && (!plan.sends.empty() || !plan.recvs.empty()) ? 1 : 0);
        }
    }
    all.push_back(pattern.isolated ? 1 : 0);
    nbr::internal::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_INT64_T, MPI_MAX, comm),
        "MPI_Allreduce");
    const auto at = [&](std::size_t i) { return all.begin() + static_cast<std::ptrdiff_t>(i); };
    return {{at(0), at(plans)}, {at(plans), at(2 * plans)}, all[2 * plans] != 0};
}

/// What every rank must agree on after a successful load: one tag window for all (the widest
/// plan's, naive's schedule included), per collective whether blocking calls go to the native
/// collective, and where some rank has no neighbors, the variants fixed-size calls may run
/// (avoid_isolated_roles; fixed_native in handles.hpp).
///
/// A plan whose every message is direct is MPI's own naive schedule. Through MPI's public
/// point-to-point API it costs a few percent more than the native collective, which calls the
/// layer below (docs/performance.md), so when the communicator carries the pattern's topology
/// and every rank's plan is all-direct, blocking calls use the native collective: the same
/// messages, without that cost. Not with NBR_LOAD_NO_NATIVE, nor for alltoall with duplicate
/// in-edges on MPICH (its native alltoall mismatches them there, pmodels/mpich#7945), nor for
/// alltoallw on MPICH (4.0's mismatches blocks where in- and out-degree differ, #6233), nor on a
/// Cartesian communicator with a periodic dimension of extent 1 or 2 (Open MPI 4.1's
/// nonblocking and persistent forms deliver those blocks in list order, not crosswise as
/// MPI-4.1 defines and its blocking form does: open-mpi/ompi#14416).
void settle_collectively(PatternState& pattern, MPI_Comm comm, unsigned long flags) {
    const auto variants = static_cast<std::int64_t>(pattern.variants.size());
    const auto shared_flags = static_cast<std::int64_t>(flags & nbr::internal::kSharedLoadFlags);
    std::int64_t worst[7] = {std::max(pattern.tag_window, naive_tag_window(pattern)),
                             has_duplicate_in_edges(pattern.in) ? 1 : 0,
                             variants,
                             -variants,
                             pattern.slots.exchanged ? 1 : 0,
                             shared_flags,
                             -shared_flags};
    nbr::internal::check_mpi(MPI_Allreduce(MPI_IN_PLACE, worst, 7, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
    if (worst[2] != -worst[3]) {
        throw NbrError(NBR_ERR_MIXED, "ranks loaded pattern directories with different numbers of variants");
    }
    if (worst[5] != -worst[6]) {  // the bits some rank set and not every rank
        const auto some = static_cast<unsigned long>(worst[5] ^ -worst[6]);
        throw NbrError(NBR_ERR_ARG, std::string("nbr_load_pattern_flags: ") +
                                        ((some & NBR_LOAD_MEASURE) != 0 ? "NBR_LOAD_MEASURE" : "NBR_LOAD_NO_NATIVE") +
                                        " given on some ranks only (every rank must pass the same flags)");
    }
    pattern.tag_window = worst[0];
    pattern.windows = (pattern.tag_ub + 1) / pattern.tag_window;
    pattern.isolated = pattern.in.empty() && pattern.out.empty();
    const auto facts = agree_on_plans(pattern, comm);
    pattern.isolated_ranks = facts.isolated_ranks;
    if (pattern.isolated_ranks) avoid_isolated_roles(pattern, facts.isolated_roles);
    const bool allowed = pattern.topology_comm && (flags & NBR_LOAD_NO_NATIVE) == 0 && worst[4] == 0;
#if defined(NBR_SMPI)
    (void)allowed;
#else
    const bool alltoall_mismatches = worst[1] != 0 && is_mpich();
    for (std::size_t v = 0; v < facts.indirect.size() / 2; ++v) {  // not naive's schedule added above
        auto& variant = pattern.variants[v];
        variant.native[0] = allowed && facts.indirect[2 * v] == 0;
        variant.native[1] = allowed && facts.indirect[2 * v + 1] == 0 && !alltoall_mismatches;
        // MPICH 4.0's alltoallw mismatches blocks where in- and out-degree differ
        // (pmodels/mpich#6233): never handed to it.
        variant.native_alltoallw = variant.native[1] && !is_mpich();
    }
#endif
}

/// Per collective, whether every band's variant goes to MPI's own collective and no trials choose
/// among others (measurement with a band of several candidates): then a rank without neighbors,
/// which cannot tell the block size, goes there too (fixed_native in handles.hpp). The same on
/// every rank: bands, candidates, native flags and the load flags are agreed.
void native_at_every_size(PatternState& pattern) {
    const bool measuring = pattern.tuner && !pattern.tuner->model_only;
    for (int c = 0; c < 2; ++c) {
        const auto& bands = pattern.bands[c];
        pattern.native_at_every_size[c] = std::all_of(bands.begin(), bands.end(), [&](const auto& band) {
            return pattern.variants[band.variant].native[c] && !(measuring && band.candidates.size() > 1);
        });
    }
}

}  // namespace

namespace nbr::internal {

PlanUse plan_use(Variant& variant, Collective collective, bool variable, std::uint64_t block_bytes) {
    const int c = index_of(collective);
    const std::uint32_t units = variable ? kWholeMessages : segment_units(variant.segment_bytes, block_bytes);
    if (units >= variant.longest[c]) return {variant.plans[c], variant.blocking[c], variant.idle[c]};
    auto& slot = variant.segmented[c][units];
    if (!slot) {
        slot = std::make_unique<Variant::Segmented>();
        slot->plan = segment_plan(variant.plans[c], units);
    }
    return {slot->plan, slot->blocking, slot->idle};
}

std::vector<std::unique_ptr<Execution>>& idle_of(Variant& variant, Collective collective, const Execution& execution) {
    const int c = index_of(collective);
    for (auto& [units, slot] : variant.segmented[c]) {
        if (&slot->plan == &execution.plan()) return slot->idle;
    }
    return variant.idle[c];
}

HandleTable<PatternState>& pattern_table() {
    static auto* table = new HandleTable<PatternState>;  // never destroyed: handles outlive static destruction
    return *table;
}

HandleTable<RequestState>& request_table() {
    static auto* table = new HandleTable<RequestState>;
    return *table;
}

std::string& last_error() {
    thread_local std::string message;
    return message;
}

/// A private communicator for nbr's traffic (collective over comm), so that nbr's messages never
/// match the application's. SimGrid SMPI 3.32 builds: creating a communicator costs host time
/// superlinear in its size there (about 2 s per MPI_Comm_dup at 1024 ranks, doubling a
/// simulation's host time), so nbr uses the communicator itself; its messages are then
/// isolated only by nbr's tags, which the simulated benchmarks suffice with.
void private_comm(MPI_Comm comm, MPI_Comm* out) {
#if defined(NBR_SMPI)
    *out = comm;
#else
    nbr::internal::check_mpi(MPI_Comm_dup(comm, out), "MPI_Comm_dup");
    nbr::internal::check_mpi(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
#endif
}

void release_comm(MPI_Comm* comm) {
#if defined(NBR_SMPI)
    *comm = MPI_COMM_NULL;
#else
    if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
#endif
}

/// Every rank learns whether any failed; the lowest failing rank's message is shared.
int agree(MPI_Comm comm, int local_code) {
    int rank = 0, size = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        return fail(NBR_ERR_MPI, "cannot query the communicator while agreeing on a result");
    }
    int mine = local_code == NBR_SUCCESS ? size : rank;
    int first = size;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        return fail(NBR_ERR_MPI, "MPI_Allreduce failed while agreeing on a result");
    }
    if (first == size) return NBR_SUCCESS;
    std::string message = last_error();
    int length = static_cast<int>(message.size());
    MPI_Bcast(&length, 1, MPI_INT, first, comm);
    message.resize(static_cast<std::size_t>(length));
    MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
    if (local_code != NBR_SUCCESS) return local_code;
    return fail(NBR_ERR_REMOTE, "rank " + std::to_string(first) + " failed: " + message);
}

}  // namespace nbr::internal

using nbr::internal::resolve;

extern "C" {

unsigned nbr_get_api_version(void) {
    return NBR_API_VERSION;
}

const char* nbr_strerror(int error) {
    switch (error) {
        case NBR_SUCCESS: return "success";
        case NBR_ERR_ARG: return "invalid argument";
        case NBR_ERR_IO: return "file missing, unreadable or not writable";
        case NBR_ERR_CORRUPT: return "file malformed or truncated";
        case NBR_ERR_VERSION: return "file format version missing or newer than this library";
        case NBR_ERR_CHECKSUM: return "rank file does not match the manifest checksum";
        case NBR_ERR_COMM_SIZE: return "communicator size differs from the pattern's number of ranks";
        case NBR_ERR_RANK: return "rank file holds another rank's pattern";
        case NBR_ERR_TOPOLOGY_HASH: return "rank file and manifest describe different topologies";
        case NBR_ERR_NEIGHBORS: return "communicator neighbors differ from the pattern's";
        case NBR_ERR_PATTERN: return "pattern schedule is inconsistent";
        case NBR_ERR_DATATYPE: return "send and receive block sizes differ";
        case NBR_ERR_MPI: return "MPI call failed";
        case NBR_ERR_NOMEM: return "out of memory";
        case NBR_ERR_REMOTE: return "another rank failed";
        case NBR_ERR_UNSUPPORTED: return "communicator kind not supported";
        case NBR_ERR_STATE: return "request in the wrong state";
        case NBR_ERR_INTERNAL: return "internal error";
        case NBR_ERR_MIXED: return "pattern directory mixes files of different compiles";
        case NBR_ERR_BUILD: return "in-job build of the pattern failed";
        case NBR_ERR_DECLINED: return "in-job build declined: not worth it for this topology";
        default: return "unknown error code";
    }
}

const char* nbr_last_error(void) {
    return nbr::internal::last_error().c_str();
}

int nbr_load_pattern(const char* dir, MPI_Comm comm, nbr_pattern_t* out) {
    return nbr_load_pattern_flags(dir, comm, 0, out);
}

int nbr_load_pattern_flags(const char* dir, MPI_Comm comm, unsigned long flags, nbr_pattern_t* out) {
    if (out != nullptr) *out = NBR_PATTERN_NULL;
    if (comm == MPI_COMM_NULL) return fail(NBR_ERR_ARG, "nbr_load_pattern: communicator is MPI_COMM_NULL");
    int rank = 0, size = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        return fail(NBR_ERR_MPI, "nbr_load_pattern: cannot query the communicator");
    }
    std::unique_ptr<nbr::internal::PatternState> pattern;
    int code = guarded([&] {  // argument errors too are agreed: no rank leaves the others waiting
        if (out == nullptr) return fail(NBR_ERR_ARG, "nbr_load_pattern: pattern pointer is NULL");
        if (dir == nullptr) return fail(NBR_ERR_ARG, "nbr_load_pattern: directory is NULL");
        if ((flags & ~nbr::internal::kLoadFlags) != 0) {
            return fail(NBR_ERR_ARG, "nbr_load_pattern_flags: unknown flags " + std::to_string(flags));
        }
        pattern = load_local(dir, comm, rank, size);
        return NBR_SUCCESS;
    });
    code = nbr::internal::agree(comm, code);
    if (code != NBR_SUCCESS) return code;
    // settle_collectively's failures are the same on every rank (they come from reductions);
    // measurement's set-up is collective too, and its outcome is agreed.
    code = guarded([&] {
        settle_collectively(*pattern, comm, flags);
        return NBR_SUCCESS;
    });
    if (code != NBR_SUCCESS) return code;
    code = guarded([&] {
        pattern->step_synchronized = (flags & NBR_LOAD_STEP_SYNC) != 0;
        if ((flags & NBR_LOAD_MEASURE) != 0) {
            pattern->tuner = std::make_unique<nbr::internal::Tuner>();
            const auto facts = nbr::internal::machine_facts(comm);
            pattern->machine = facts.fingerprint;
            pattern->tuner->oversubscribed = nbr::internal::testing_oversubscribed(facts.oversubscribed);
            pattern->wisdom_note = nbr::internal::recall_measurements(*pattern, comm);
        } else if ((flags & NBR_LOAD_STATS) != 0) {  // local: no fingerprint, no wisdom
            pattern->tuner = std::make_unique<nbr::internal::Tuner>();
            pattern->tuner->model_only = true;
        }
        return NBR_SUCCESS;
    });
    if ((flags & NBR_LOAD_MEASURE) != 0) code = nbr::internal::agree(comm, code);
    if (code != NBR_SUCCESS) return code;
    native_at_every_size(*pattern);
    return guarded([&] {
        nbr::internal::private_comm(comm, &pattern->comm);
        auto [state, handle] = nbr::internal::pattern_table().acquire(std::move(pattern));
        state->handle = handle;
        state->origin_dir = dir;
        state->origin = "loaded";
        nbr::internal::publish_hand_off(*state);          // measured: its shapes add to it as they choose
        if (state->tuner && !state->tuner->model_only) {  // the agreements' communicator
#if defined(NBR_SMPI)
            nbr::internal::check_mpi(MPI_Comm_dup(comm, &state->tuner->comm), "MPI_Comm_dup");
#else
            state->tuner->comm = state->comm;
#endif
            state->tuner->fixed_comm = state->tuner->comm;
            if (state->isolated_ranks) {  // agreed: every rank splits or none
                nbr::internal::check_mpi(
                    MPI_Comm_split(comm, state->isolated ? MPI_UNDEFINED : 0, rank, &state->tuner->fixed_comm),
                    "MPI_Comm_split");
            }
        }
        *out = nbr::internal::handle_of(*state);
        return NBR_SUCCESS;
    });
}

int nbr_pattern_settle(nbr_pattern_t pattern) {
    PatternState* state = resolve(pattern);
    if (state == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_settle: not a live pattern (freed already?)");
    return guarded([&] {
        if (state->tuner && !state->tuner->model_only) state->tuner->complete_agreements(*state);
        return NBR_SUCCESS;
    });
}

int nbr_pattern_free(nbr_pattern_t* pattern) {
    if (pattern == nullptr || *pattern == NBR_PATTERN_NULL) return fail(NBR_ERR_ARG, "nbr_pattern_free: NULL pattern");
    PatternState* state = resolve(*pattern);
    if (state == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_free: not a live pattern (freed already?)");
    if (state->requests > 0) {
        return fail(NBR_ERR_STATE, "nbr_pattern_free: " + std::to_string(state->requests) +
                                       " requests still use the pattern (free or complete them first)");
    }
    const int carried = guarded([&] {  // trials unfinished go on in the pattern's next communicator
        nbr::internal::carry_trials(*state);
        return NBR_SUCCESS;
    });
    nbr::internal::retract_hand_off(state->handle);
    if (state->tuner && state->tuner->fixed_comm != state->tuner->comm && state->tuner->fixed_comm != MPI_COMM_NULL) {
        MPI_Comm_free(&state->tuner->fixed_comm);
    }
    nbr::internal::release_comm(&state->comm);
#if defined(NBR_SMPI)
    if (state->tuner && !state->tuner->model_only) MPI_Comm_free(&state->tuner->comm);
#endif
    nbr::internal::pattern_table().release(state->handle, false);
    *pattern = NBR_PATTERN_NULL;
    return carried;
}

int nbr_pattern_neighbors_count(nbr_pattern_t handle, int* indegree, int* outdegree) {
    const PatternState* pattern = resolve(handle);
    if (pattern == nullptr || indegree == nullptr || outdegree == nullptr) {
        return fail(NBR_ERR_ARG, "nbr_pattern_neighbors_count: invalid argument");
    }
    *indegree = static_cast<int>(pattern->in.size());
    *outdegree = static_cast<int>(pattern->out.size());
    return NBR_SUCCESS;
}

int nbr_pattern_neighbors(nbr_pattern_t handle, int maxindegree, int sources[], int maxoutdegree, int destinations[]) {
    const PatternState* pattern = resolve(handle);
    if (pattern == nullptr || maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && sources == nullptr) ||
        (maxoutdegree > 0 && destinations == nullptr)) {
        return fail(NBR_ERR_ARG, "nbr_pattern_neighbors: invalid argument");
    }
    std::copy_n(pattern->in.begin(), std::min<std::size_t>(pattern->in.size(), static_cast<std::size_t>(maxindegree)),
                sources);
    std::copy_n(pattern->out.begin(),
                std::min<std::size_t>(pattern->out.size(), static_cast<std::size_t>(maxoutdegree)), destinations);
    return NBR_SUCCESS;
}

int nbr_pattern_algorithm(nbr_pattern_t handle, const char** name) {
    const PatternState* pattern = resolve(handle);
    if (pattern == nullptr || name == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_algorithm: invalid argument");
    *name = pattern->algorithm.c_str();
    return NBR_SUCCESS;
}

int nbr_pattern_origin(nbr_pattern_t handle, const char** dir, const char** note) {
    const PatternState* pattern = resolve(handle);
    if (pattern == nullptr || dir == nullptr || note == nullptr) {
        return fail(NBR_ERR_ARG, "nbr_pattern_origin: invalid argument");
    }
    *dir = pattern->origin_dir.c_str();
    *note = pattern->origin.c_str();
    return NBR_SUCCESS;
}

int nbr_pattern_wisdom(nbr_pattern_t handle, const char** note) {
    const PatternState* pattern = resolve(handle);
    if (pattern == nullptr || note == nullptr) return fail(NBR_ERR_ARG, "nbr_pattern_wisdom: invalid argument");
    *note = pattern->wisdom_note.c_str();
    return NBR_SUCCESS;
}

int nbr_pattern_variant(nbr_pattern_t handle, nbr_collective_t collective, size_t bytes, const char** name) {
    const PatternState* pattern = resolve(handle);
    if (pattern == nullptr || name == nullptr || collective < NBR_ALLGATHER || collective > NBR_ALLTOALLV) {
        return fail(NBR_ERR_ARG, "nbr_pattern_variant: invalid argument");
    }
    const Collective which =
        collective == NBR_ALLGATHER || collective == NBR_ALLGATHERV ? Collective::allgather : Collective::alltoall;
    std::uint32_t variant = collective >= NBR_ALLGATHERV ? pattern->variable_variant[nbr::internal::index_of(which)]
                                                         : nbr::internal::band_of(*pattern, which, bytes);
    if (pattern->tuner) {  // what measurement chose for blocking calls of that shape, once chosen
        nbr::internal::ShapeKey key;
        key.collective = nbr::internal::index_of(which);
        key.variable = collective >= NBR_ALLGATHERV;
        if (!key.variable) {
            key.band = nbr::internal::band_index_of(*pattern, which, bytes);
            key.size_class = nbr::internal::size_class_of(bytes);
        }
        for (const auto& shape : pattern->tuner->shapes) {
            if (shape.key == key && shape.state != nbr::internal::Shape::State::trial) {
                variant = shape.candidates[shape.chosen].variant;
            }
        }
    }
    *name = pattern->variants[variant].name.c_str();
    return NBR_SUCCESS;
}

}  // extern "C"
