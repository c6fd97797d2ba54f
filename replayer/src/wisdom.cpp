// Wisdom: what measured selection found, kept per process, exported to a file and imported by
// later jobs so that they skip the trials (docs/format.md, "Wisdom").
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include "handles.hpp"
#include "nbr/schema/hash.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace nbr::internal {

namespace {

/// A process's wisdom, and so a file it writes, keeps this many entries (pattern, communicator
/// size, machine, tag), the most recently measured or imported last: a wisdom file that many
/// jobs share stays small (docs/format.md, "Wisdom").
constexpr int kWisdomEntries = 256;

std::mutex& store_mutex() {
    static std::mutex mutex;
    return mutex;
}

/// The process's wisdom: imported entries and what its patterns measured.
schema::Wisdom& store() {
    static auto* wisdom = new schema::Wisdom;  // never destroyed: patterns may outlive static destruction
    return *wisdom;
}

std::string& user_tag() {
    static std::string tag;
    return tag;
}

schema::Collective schema_collective_of(int collective) {
    return collective == 0 ? schema::ALLGATHER : schema::ALLTOALL;
}

bool same_shape(const schema::MeasuredShape& shape, const ShapeKey& key) {
    return shape.collective() == schema_collective_of(key.collective) && shape.variable() == key.variable &&
           shape.mode() == schema_mode(key.mode) && shape.band() == key.band && shape.size_class() == key.size_class;
}

ShapeKey key_of(const schema::MeasuredShape& shape) {
    ShapeKey key;
    key.collective = shape.collective() == schema::ALLGATHER ? 0 : 1;
    key.variable = shape.variable();
    key.mode = shape.mode() == schema::BLOCKING      ? CallMode::blocking
               : shape.mode() == schema::NONBLOCKING ? CallMode::nonblocking
                                                     : CallMode::persistent;
    key.band = shape.band();
    key.size_class = shape.size_class();
    return key;
}

bool same_entry(const schema::WisdomEntry& a, const schema::WisdomEntry& b) {
    return a.compile_id() == b.compile_id() && a.num_ranks() == b.num_ranks() && a.machine_hash() == b.machine_hash() &&
           a.tag() == b.tag();
}

/// Merges `entry`'s shapes into `mine`: they replace those of the same key.
void merge_shapes(schema::WisdomEntry& mine, const schema::WisdomEntry& entry) {
    auto* shapes = mine.mutable_shapes();
    for (const auto& shape : entry.shapes()) {
        const auto it = std::find_if(shapes->begin(), shapes->end(),
                                     [&](const schema::MeasuredShape& s) { return same_shape(s, key_of(shape)); });
        if (it != shapes->end()) {
            *it = shape;
        } else {
            *shapes->Add() = shape;
        }
    }
}

/// Merges `entry` into `into`, where it becomes the most recent (last); past kWisdomEntries
/// the least recent entries are dropped.
void merge_entry(schema::Wisdom& into, const schema::WisdomEntry& entry) {
    auto* entries = into.mutable_entries();
    const auto it = std::find_if(entries->begin(), entries->end(),
                                 [&](const schema::WisdomEntry& mine) { return same_entry(mine, entry); });
    if (it == entries->end()) {
        *entries->Add() = entry;
        if (entries->size() > kWisdomEntries) entries->DeleteSubrange(0, entries->size() - kWisdomEntries);
        return;
    }
    merge_shapes(*it, entry);
    for (int i = static_cast<int>(it - entries->begin()); i + 1 < entries->size(); ++i) entries->SwapElements(i, i + 1);
}

void merge(schema::Wisdom& into, const schema::Wisdom& from) {
    for (const auto& entry : from.entries()) merge_entry(into, entry);
}

std::string first_line(std::string text) {
    const auto end = text.find_first_of("\r\n");
    if (end != std::string::npos) text.resize(end);
    while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.pop_back();
    return text;
}

std::string processor_model() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return first_line(line.substr(colon + 2));
        }
    }
    return "unknown processor";
}

#if !defined(NBR_SMPI)  // SMPI's ranks have simulated nodes and cores of their own
/// "K nodes of A-B ranks" from the ranks per node (each rank's node's count), and whether any
/// node is oversubscribed (`oversubscribed`: this rank's node's answer; agreed in the same
/// reduction). Collective.
std::string node_spread(MPI_Comm comm, int node_rank, int node_size, bool& oversubscribed) {
    int nodes = node_rank == 0 ? 1 : 0;
    int values[3] = {node_size, -node_size, oversubscribed ? 1 : 0};  // largest, -smallest, any oversubscribed
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, 3, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
    oversubscribed = values[2] != 0;
    const std::string per_node = values[0] == -values[1] ? std::to_string(values[0])
                                                         : std::to_string(-values[1]) + "-" + std::to_string(values[0]);
    return std::to_string(nodes) + (nodes == 1 ? " node of " : " nodes of ") + per_node + " ranks";
}

/// Whether the node's ranks (`node`) outnumber the logical CPUs they may run on: the union of their
/// affinity masks (collective over `node`).
bool node_oversubscribed(MPI_Comm node, int node_size) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) {  // unknown: every core the system has
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < std::min<long>(cores, CPU_SETSIZE); ++c) CPU_SET(static_cast<int>(c), &mask);
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &mask, static_cast<int>(sizeof mask), MPI_BYTE, MPI_BOR, node),
              "MPI_Allreduce");
    return node_size > CPU_COUNT(&mask);
}
#endif

/// The entry of the process's wisdom for this pattern, machine and tag; nullptr if none. `why`
/// says why an entry for the pattern was passed over.
const schema::WisdomEntry* entry_for(const PatternState& pattern, std::uint64_t machine_hash, std::string& why) {
    for (const auto& entry : store().entries()) {
        if (entry.compile_id() != pattern.compile_id || entry.num_ranks() != static_cast<std::uint32_t>(pattern.size)) {
            continue;
        }
        if (entry.machine_hash() != machine_hash) {
            why = "wisdom for this pattern was measured on another machine (" + entry.machine() + "); ignored";
            continue;
        }
        if (entry.tag() != user_tag()) {
            why = "wisdom for this pattern has tag '" + entry.tag() + "', not '" + user_tag() + "'; ignored";
            continue;
        }
        return &entry;
    }
    return nullptr;
}

/// Whether every shape of `entry` names a band the pattern has and a winner among its candidates.
bool fits(const PatternState& pattern, const schema::WisdomEntry& entry) {
    for (const auto& shape : entry.shapes()) {
        const ShapeKey key = key_of(shape);
        const auto& bands = pattern.bands[key.collective];
        if ((!key.variable || key.mode == CallMode::persistent) && key.band >= bands.size()) return false;
        bool found = false;
        for (const auto v : candidates_for(pattern, key)) found = found || pattern.variants[v].name == shape.winner();
        if (!found) return false;
    }
    return true;
}

/// Decides the pattern's shapes as the wisdom entry every rank found says; returns the note.
std::string apply_entry(PatternState& pattern, const schema::WisdomEntry& entry) {
    for (const auto& shape : entry.shapes()) {
        const int index = pattern.tuner->shape_of(pattern, key_of(shape));
        (void)pattern.tuner->apply_wisdom(index, shape, pattern);
    }
    return "wisdom applied: " + std::to_string(entry.shapes_size()) + " shape" + (entry.shapes_size() == 1 ? "" : "s") +
           " chosen without trials";
}

}  // namespace

std::vector<std::uint32_t> candidates_for(const PatternState& pattern, const ShapeKey& key) {
    if (key.variable && key.mode != CallMode::persistent) return pattern.variable_candidates[key.collective];
    return pattern.bands[key.collective].at(key.band).candidates;
}

MachineFacts machine_facts(MPI_Comm comm) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    MachineFacts facts;  // SimGrid SMPI: simulated cores, never shared
    std::string spread = "SimGrid SMPI";
#if !defined(NBR_SMPI)
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    int node_rank = 0, node_size = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    facts.oversubscribed = node_oversubscribed(node, node_size);
    MPI_Comm_free(&node);
    spread = node_spread(comm, node_rank, node_size, facts.oversubscribed);
#else
    (void)comm;
#endif
    facts.fingerprint = "MPI: " + first_line(std::string(version, static_cast<std::size_t>(std::max(length, 0)))) +
                        "; processor: " + processor_model() + "; " + spread + "; nbr " + NBR_VERSION_STRING;
    return facts;
}

std::string recall_measurements(PatternState& pattern, MPI_Comm comm) {
    std::uint64_t local[2] = {0, 0};  // the wisdom entry's checksum, the carried trials' hash
    std::string why;
    schema::WisdomEntry entry;
    bool any = false;
    {
        const std::lock_guard lock(store_mutex());
        any = store().entries_size() > 0;
        const auto* found = entry_for(pattern, checksum64(pattern.machine), why);
        if (found != nullptr) {
            entry = *found;
            if (fits(pattern, entry)) {
                local[0] = checksum64(serialize_deterministic(entry));
            } else {
                why = "wisdom for this pattern names variants or bands the pattern does not have; ignored";
            }
        }
    }
    local[1] = carried_trials_hash(pattern);
    std::uint64_t agreed[4] = {local[0], ~local[0], local[1], ~local[1]};  // each as min and max
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, agreed, 4, MPI_UINT64_T, MPI_MIN, comm), "MPI_Allreduce");
    const bool same_wisdom = agreed[0] == ~agreed[1];
    const bool same_trials = agreed[2] == ~agreed[3];
    std::string note;
    if (!same_wisdom) {
        note = "ranks found different wisdom for this pattern (or only some found it); ignored";
    } else if (agreed[0] == 0) {
        note = any ? (why.empty() ? "no wisdom for this pattern" : why) : std::string();
    } else {
        note = apply_entry(pattern, entry);
    }
    const std::string carried = resume_trials(pattern, same_trials && agreed[2] != 0, ~agreed[3] != 0);
    if (note.empty() || carried.empty()) return note + carried;
    return note + "; " + carried;
}

void remember(const PatternState& pattern, const Shape& shape) {
    schema::WisdomEntry entry;
    entry.set_compile_id(pattern.compile_id);
    entry.set_num_ranks(static_cast<std::uint32_t>(pattern.size));
    entry.set_machine(pattern.machine);
    entry.set_machine_hash(checksum64(pattern.machine));
    auto* measured = entry.add_shapes();
    measured->set_collective(schema_collective_of(shape.key.collective));
    measured->set_variable(shape.key.variable);
    measured->set_mode(schema_mode(shape.key.mode));
    measured->set_band(shape.key.band);
    measured->set_size_class(shape.key.size_class);
    measured->set_winner(pattern.variants[shape.candidates[shape.chosen].variant].name);
    measured->set_decision(schema_decision(shape.decision));
    for (const auto& candidate : shape.candidates) {
        auto* out = measured->add_candidates();
        out->set_name(pattern.variants[candidate.variant].name);
        out->set_median_us(candidate.agreed_samples > 0 ? candidate.median_us : 0.0);
        out->set_mean_us(candidate.agreed_samples > 0 ? candidate.mean_us : 0.0);
        out->set_samples(candidate.agreed_samples);
    }
    const std::lock_guard lock(store_mutex());
    entry.set_tag(user_tag());
    merge_entry(store(), entry);
}

}  // namespace nbr::internal

namespace {

using nbr::internal::fail;
using nbr::internal::guarded;

int import_bytes(const std::string& bytes, const std::string& source) {
    const auto wisdom = nbr::parse_wisdom(bytes, source);
    const std::lock_guard lock(nbr::internal::store_mutex());
    nbr::internal::merge(nbr::internal::store(), wisdom);
    return NBR_SUCCESS;
}

nbr::schema::Wisdom snapshot() {
    const std::lock_guard lock(nbr::internal::store_mutex());
    nbr::schema::Wisdom copy = nbr::internal::store();
    copy.set_format_version(nbr::kWisdomFormatVersion);
    copy.set_producer("libnbr " NBR_VERSION_STRING);
    return copy;
}

int write_snapshot(const char* path, const nbr::schema::Wisdom& wisdom) {
    try {
        nbr::write_wisdom(path, wisdom);
    } catch (const std::runtime_error& error) {
        return fail(NBR_ERR_IO, error.what());
    }
    return NBR_SUCCESS;
}

}  // namespace

extern "C" {

int nbr_wisdom_import(const char* path) {
    return guarded([&] {
        if (path == nullptr) return fail(NBR_ERR_ARG, "nbr_wisdom_import: path is NULL");
        try {
            return import_bytes(nbr::read_file(path), path);
        } catch (const nbr::PatternError& error) {
            const int code = error.kind() == nbr::PatternErrorKind::io        ? NBR_ERR_IO
                             : error.kind() == nbr::PatternErrorKind::version ? NBR_ERR_VERSION
                                                                              : NBR_ERR_CORRUPT;
            return fail(code, error.what());
        }
    });
}

int nbr_wisdom_export(const char* path) {
    return guarded([&] {
        if (path == nullptr) return fail(NBR_ERR_ARG, "nbr_wisdom_export: path is NULL");
        return write_snapshot(path, snapshot());
    });
}

int nbr_wisdom_export_all(const char* path, MPI_Comm comm) {
    int code = guarded([&] {
        if (path == nullptr) return fail(NBR_ERR_ARG, "nbr_wisdom_export_all: path is NULL");
        if (comm == MPI_COMM_NULL) return fail(NBR_ERR_ARG, "nbr_wisdom_export_all: communicator is MPI_COMM_NULL");
        return NBR_SUCCESS;
    });
    if (code != NBR_SUCCESS || comm == MPI_COMM_NULL) return code;
    code = nbr::internal::agree(comm, code);
    if (code != NBR_SUCCESS) return code;
    code = guarded([&] {
        int rank = 0, size = 0;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        const std::string mine = nbr::serialize_deterministic(snapshot());
        int length = static_cast<int>(mine.size());
        std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
        nbr::internal::check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
        std::string all;
        if (rank == 0) {
            std::size_t total = 0;
            for (int r = 0; r < size; ++r) {
                offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
                total += static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
            }
            all.resize(total);
        }
        nbr::internal::check_mpi(
            MPI_Gatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE, 0, comm),
            "MPI_Gatherv");
        if (rank != 0) return NBR_SUCCESS;
        nbr::schema::Wisdom merged = snapshot();
        for (int r = 1; r < size; ++r) {
            const auto part = all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                         static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
            nbr::internal::merge(merged, nbr::parse_wisdom(part, "rank " + std::to_string(r) + "'s wisdom"));
        }
        return write_snapshot(path, merged);
    });
    return nbr::internal::agree(comm, code);
}

int nbr_wisdom_set_tag(const char* tag) {
    if (tag == nullptr) return fail(NBR_ERR_ARG, "nbr_wisdom_set_tag: tag is NULL");
    const std::lock_guard lock(nbr::internal::store_mutex());
    nbr::internal::user_tag() = tag;
    return NBR_SUCCESS;
}

int nbr_wisdom_forget(void) {
    const std::lock_guard lock(nbr::internal::store_mutex());
    nbr::internal::store().Clear();
    nbr::internal::forget_carried_trials();
    return NBR_SUCCESS;
}

}  // extern "C"
