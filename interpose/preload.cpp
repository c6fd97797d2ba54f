// libnbr-preload: replays compiled patterns under an unmodified application.
//
// Preloaded (LD_PRELOAD) into the application's processes with NBR_PATTERNS=DIR[:DIR...],
// it wraps the topology constructors through the MPI profiling interface (constructors.cpp).
// After each creation the new communicator's ranks compute its topology hash from what MPI
// reports; rank 0 looks for a pattern directory of that hash and size (each DIR is a pattern
// directory or holds pattern directories; the first match in NBR_PATTERNS order wins; rank 0's
// NBR_PATTERNS and NBR_CACHE settings hold for every rank, which need not have them); the
// ranks load it collectively (nbr_load_pattern checks every rank's neighbors) and attach it
// to the communicator as an attribute whose delete callback frees it. On such communicators
// the neighborhood collectives — blocking, nonblocking, persistent, fixed-size and v — are
// replayed by libnbr; every other call passes through. When no pattern matches or a load
// fails, rank 0 prints one line saying why and the communicator runs natively.
//
// Requests. The application gets, for each nonblocking or persistent nbr request, a proxy:
// a real MPI request, a persistent zero-byte send to MPI_PROC_NULL (MPI_Send_init: a distinct
// handle each, which MPI completes at once when started). A persistent call gets one of its
// own; a nonblocking call one from a pool, never started (an inactive request, which
// completion calls complete at once), which returns to the pool when a completion call
// completes it (the application's handle then becomes MPI_REQUEST_NULL, as for any
// nonblocking request). The completion calls are wrapped: while the nbr request behind a proxy
// is incomplete, the proxy is hidden from MPI (passed as MPI_REQUEST_NULL) and the nbr request
// is progressed; once it is complete, the proxy is handed to MPI, which completes it as it
// would any request (completion.hpp). So proxies mix with the application's own requests in
// every completion call, and MPI_Start, MPI_Startall and MPI_Request_free act on both.
// Single-threaded use (MPI_THREAD_SINGLE or FUNNELED).
//
// Fortran: where the MPI library's Fortran binding calls PMPI_* directly (Open MPI), the same
// calls are wrapped at their Fortran entry points too (preload_fortran.cpp); where it calls the
// C binding (MPICH), the C wrappers serve Fortran programs as they are.
//
// libnbr itself calls MPI: while a wrapper is inside libnbr, every wrapper passes straight to
// PMPI, so nbr's own traffic never meets the proxy logic.
//
// NBR_REPORT=1: rank 0 prints at MPI_Finalize "nbr: replayed <calls> calls on <communicators>
// communicators" (calls counted once per collective call, on each communicator's rank 0), then
// per communicator and call shape what ran, its calls and time per call (patterns are loaded
// with NBR_LOAD_STATS for it) and, with NBR_MEASURE=1, what the trials measured and saved
// (report.hpp); NBR_REPORT=json:FILE writes the same as JSON to FILE.
// NBR_MEASURE=1 loads patterns with NBR_LOAD_MEASURE; NBR_WISDOM=FILE imports FILE (when it
// exists) before the first load and writes every rank's wisdom, merged, to it at MPI_Finalize.
#include "preload.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "agreement.hpp"
#include "collective_table.hpp"
#include "completion.hpp"
#include "nbr/graphs/topology.hpp"
#include "nbr/schema/file_io.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "report.hpp"

namespace nbr::interpose {
int inside_nbr = 0;
}  // namespace nbr::interpose

namespace {

namespace fs = std::filesystem;
using nbr::interpose::Agreed;
using nbr::interpose::decode_agreed;
using nbr::interpose::encode_agreed;
using nbr::interpose::inside_nbr;
using nbr::interpose::InsideNbr;
using nbr::interpose::kCacheKeys;
using nbr::interpose::kCacheOptions;
using nbr::interpose::mpi_result;
using nbr::interpose::Proxy;

// ---- state ---------------------------------------------------------------------------------

int keyval = MPI_KEYVAL_INVALID;
unsigned long long replayed_calls = 0;  // on communicators' reporting ranks (Attached::counts)
unsigned long long attached = 0;        // communicators, on their rank 0

/// What a communicator's attribute holds: its pattern, and whether this process counts its
/// calls for the report (rank 0 of the communicator, with NBR_REPORT=1), decided at attach so
/// that the collectives make no MPI call for the report.
struct Attached {
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    bool counts = false;  // this rank counts the calls and describes the communicator in the report
    std::string dir;      // the pattern directory
    std::string origin;   // loaded, loaded from the cache, built (nbr_pattern_origin)
    int rank = 0;         // this process's rank in the communicator
    int ranks = 0;
    std::string id;  // the communicator's name in the report: "W.N", the N-th attached on world rank W
    mutable unsigned long long calls = 0;  // counted when `counts`
    int communicators = 1;                 // the communicator and its live duplicates
    int duplicates = 0;                    // duplicates made (MPI_Comm_dup, _idup, _dup_with_info)
};

/// A communicator's attribute: its communicator (MPI_COMM_NULL until the first call on a
/// duplicate, whose handle the copy callback does not know) and the pattern record it shares
/// with the communicator it was duplicated from. MPI copies the attribute into every duplicate
/// (MPI_Comm_dup, MPI_Comm_idup, MPI_Comm_dup_with_info keep the topology), so duplicates
/// replay the same pattern: nbr's traffic runs on the pattern's own communicator.
struct Alias {
    MPI_Comm comm = MPI_COMM_NULL;
    Attached* shared = nullptr;
};

/// With NBR_REPORT: the communicators with a pattern this process is part of, and what the
/// patterns of those freed already did here (every rank's times go into the report).
std::vector<const Attached*>& reported() {
    static std::vector<const Attached*> list;
    return list;
}
std::vector<nbr::interpose::PatternSnapshot>& finished_snapshots() {
    static std::vector<nbr::interpose::PatternSnapshot> list;
    return list;
}

/// The record the last collective found: a repeated call on the same communicator finds it
/// here without asking MPI for the attribute (a hash lookup under MPI's lock, most of what
/// the drop-in added to a call). Cleared when its communicator's attribute is deleted, so a
/// freed communicator's handle, reused by MPI for another, finds nothing here.
std::atomic<const Alias*> last_found{nullptr};

/// Whether the switch `name` is set to 1 in the environment (docs/environment.md).
bool switched_on(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::strcmp(value, "1") == 0;
}

/// NBR_REPORT=json:FILE: the report's JSON file, else "".
std::string report_json_file() {
    const char* value = std::getenv("NBR_REPORT");
    return value != nullptr && std::strncmp(value, "json:", 5) == 0 ? std::string(value + 5) : std::string();
}

/// NBR_REPORT=1 or json:FILE: the report at MPI_Finalize.
bool report_wanted() {
    return switched_on("NBR_REPORT") || !report_json_file().empty();
}

/// NBR_REPLAY_NAIVE=1: load patterns with NBR_LOAD_NO_NATIVE; NBR_MEASURE=1: NBR_LOAD_MEASURE;
/// a report (`report`: some rank of the communicator wants one): NBR_LOAD_STATS, its call shapes.
unsigned long load_flags(bool report) {
    return (switched_on("NBR_REPLAY_NAIVE") ? NBR_LOAD_NO_NATIVE : 0UL) |
           (switched_on("NBR_MEASURE") ? NBR_LOAD_MEASURE : 0UL) | (report ? NBR_LOAD_STATS : 0UL);
}

/// NBR_WISDOM=FILE, or "".
std::string wisdom_file() {
    const char* value = std::getenv("NBR_WISDOM");
    return value != nullptr ? std::string(value) : std::string();
}

/// Before the first load: the tag (NBR_WISDOM_TAG) and the wisdom file, if it exists; a file
/// that cannot be used is said once (by `rank` 0) and ignored.
void import_wisdom_once(int rank) {
    static bool done = false;
    if (done) return;
    done = true;
    if (const char* tag = std::getenv("NBR_WISDOM_TAG")) (void)nbr_wisdom_set_tag(tag);
    const std::string file = wisdom_file();
    std::error_code ec;
    if (file.empty() || !fs::exists(file, ec)) return;
    const int code = nbr_wisdom_import(file.c_str());
    if (code != NBR_SUCCESS && rank == 0) {
        std::fprintf(stderr, "nbr: NBR_WISDOM: %s: %s; ignored (it is rewritten at MPI_Finalize)\n", nbr_strerror(code),
                     nbr_last_error());
    }
}

/// Every proxy, in use or pooled, by its C handle.
std::unordered_map<MPI_Request, Proxy>& proxies() {
    static std::unordered_map<MPI_Request, Proxy> map;
    return map;
}

/// The nonblocking calls' proxies not in use (inactive), handed out again by pooled_proxy.
std::vector<MPI_Request>& proxy_pool() {
    static std::vector<MPI_Request> pool;
    return pool;
}

/// The proxies the application holds.
std::size_t proxies_in_use = 0;

// ---- attaching patterns ----------------------------------------------------------------------

/// The record's origin for the report, with its duplicates.
std::string origin_text(const Attached& record) {
    if (record.duplicates == 0) return record.origin;
    return record.origin + "; with " + std::to_string(record.duplicates) + " duplicate" +
           (record.duplicates == 1 ? "" : "s");
}

/// What the record's pattern did on this rank, for the report.
nbr::interpose::PatternSnapshot snapshot_of(const Attached& record) {
    return nbr::interpose::snapshot_pattern(record.pattern, record.id, record.rank, record.ranks, record.counts,
                                            record.dir, origin_text(record), record.calls);
}

/// The copy callback: a duplicate shares the pattern (see Alias).
int copy_pattern(MPI_Comm, int, void*, void* value_in, void* value_out, int* flag) {
    auto* alias = static_cast<Alias*>(value_in);
    ++alias->shared->communicators;
    ++alias->shared->duplicates;
    *static_cast<void**>(value_out) = new Alias{MPI_COMM_NULL, alias->shared};
    *flag = 1;
    return MPI_SUCCESS;
}

int delete_pattern(MPI_Comm, int, void* value, void*) {
    auto* alias = static_cast<Alias*>(value);
    const Alias* expected = alias;
    last_found.compare_exchange_strong(expected, nullptr);
    Attached* record = alias->shared;
    delete alias;
    if (--record->communicators > 0) return MPI_SUCCESS;
    const InsideNbr guard;
    auto& list = reported();
    if (std::find(list.begin(), list.end(), record) != list.end()) {
        // agreements in flight decide now (the free would complete them): the report shows it
        const int settled = nbr_pattern_settle(record->pattern);
        if (settled != NBR_SUCCESS) (void)mpi_result(settled, "MPI_Comm_free");
        finished_snapshots().push_back(snapshot_of(*record));
        list.erase(std::remove(list.begin(), list.end(), record), list.end());
    }
    const int code = nbr_pattern_free(&record->pattern);
    if (code != NBR_SUCCESS) (void)mpi_result(code, "MPI_Comm_free");
    delete record;
    return MPI_SUCCESS;
}

/// What in NBR_PATTERNS is not a pattern directory, said once per process on stderr (by the
/// rank that searches: a communicator's rank 0), so that a mistyped path or a damaged directory
/// does not pass for "no pattern for this communicator".
void note_pattern_problem(const std::string& what) {
    static std::mutex lock;
    static std::set<std::string> said;
    const std::lock_guard<std::mutex> guard(lock);
    if (said.insert(what).second) std::fprintf(stderr, "nbr: NBR_PATTERNS: %s; left out\n", what.c_str());
}

/// Pattern directories named by NBR_PATTERNS: each entry itself, or its subdirectories (sorted).
std::vector<fs::path> pattern_dirs(const char* list) {
    std::vector<fs::path> dirs;
    std::string entries(list);
    for (std::size_t start = 0; start <= entries.size();) {
        const auto end = std::min(entries.find(':', start), entries.size());
        const fs::path entry = entries.substr(start, end - start);
        start = end + 1;
        std::error_code ec;
        if (entry.empty()) continue;
        if (!fs::is_directory(entry, ec)) {
            note_pattern_problem(entry.string() +
                                 (fs::exists(entry, ec) ? ": not a directory" : ": no such directory"));
            continue;
        }
        if (fs::exists(entry / nbr::manifest_file_name(), ec)) {
            dirs.push_back(entry);
            continue;
        }
        std::vector<fs::path> inside;
        for (const auto& sub : fs::directory_iterator(entry, ec)) {
            if (fs::exists(sub.path() / nbr::manifest_file_name(), ec)) inside.push_back(sub.path());
        }
        if (inside.empty()) note_pattern_problem(entry.string() + ": neither a pattern directory nor holds one");
        std::sort(inside.begin(), inside.end());
        dirs.insert(dirs.end(), inside.begin(), inside.end());
    }
    return dirs;
}

/// Rank 0: the first pattern directory for `size` ranks and topology `hash`, or "".
std::string find_pattern(const char* list, int size, std::uint64_t hash) {
    for (const auto& dir : pattern_dirs(list)) {
        try {
            const auto manifest = nbr::read_manifest(dir);
            if (manifest.num_ranks() == static_cast<std::uint32_t>(size) && manifest.topology_hash() == hash) {
                return dir.string();
            }
        } catch (const std::exception& error) {
            note_pattern_problem(std::string("unreadable manifest (") + error.what() + ")");
        }
    }
    return {};
}

/// The communicator's topology hash, from every rank's lists (collective).
std::uint64_t topology_hash(MPI_Comm comm, int rank, int size, const std::vector<int>& in,
                            const std::vector<int>& out) {
    const std::vector<std::uint32_t> in_list(in.begin(), in.end()), out_list(out.begin(), out.end());
    std::uint64_t mine = nbr::rank_neighborhood_hash(static_cast<std::uint32_t>(rank), in_list, out_list);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
    PMPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
    return nbr::topology_hash_of(all);
}

/// NBR_CACHE=DIR, or "".
std::string cache_dir() {
    const char* value = std::getenv("NBR_CACHE");
    return value != nullptr ? std::string(value) : std::string();
}

/// The in-job build's options as nbr_pattern_build's info.
MPI_Info cache_info(const Agreed& agreed) {
    MPI_Info info = MPI_INFO_NULL;
    PMPI_Info_create(&info);
    for (std::size_t k = 0; k < kCacheOptions; ++k) {
        if (!agreed.options[k].empty()) PMPI_Info_set(info, kCacheKeys[k].second, agreed.options[k].c_str());
    }
    return info;
}

/// Rank 0's settings for a new topology communicator (agreement.hpp).
Agreed rank0_settings(int size, std::uint64_t hash) {
    int world_rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    Agreed agreed;
    agreed.id = std::to_string(world_rank) + "." + std::to_string(attached);
    agreed.cache = cache_dir();
    for (std::size_t k = 0; k < kCacheOptions; ++k) {
        const char* value = std::getenv(kCacheKeys[k].first);
        agreed.options[k] = value != nullptr ? value : "";
    }
    const char* list = std::getenv("NBR_PATTERNS");
    if (list != nullptr && *list != '\0') agreed.dir = find_pattern(list, size, hash);
    return agreed;
}

/// Rank 0's decision, on every rank (collective; `hash` is the topology's).
Agreed agree_on_pattern(MPI_Comm comm, int rank, int size, const std::vector<int>& in, const std::vector<int>& out,
                        std::uint64_t& hash) {
    hash = topology_hash(comm, rank, size, in, out);
    const std::string text =
        nbr::interpose::broadcast_text(rank == 0 ? encode_agreed(rank0_settings(size, hash)) : std::string(), comm);
    return decode_agreed(text).value_or(Agreed{});  // (rank 0's own encoding: always decodes)
}

/// libnbr's message in the drop-in's terms: "info nbr_algo" is NBR_CACHE_ALGO here, the load
/// flags are the switches that set them (load_flags).
std::string in_environment_terms(std::string message) {
    const auto replace_all = [&message](const std::string& from, const std::string& to) {
        for (auto at = message.find(from); at != std::string::npos; at = message.find(from, at + to.size())) {
            message.replace(at, from.size(), to);
        }
    };
    for (const auto& [variable, key] : kCacheKeys)
        replace_all(std::string("info ") + key + " ", std::string(variable) + " ");
    replace_all("NBR_LOAD_MEASURE", "NBR_MEASURE=1");
    replace_all("NBR_LOAD_NO_NATIVE", "NBR_REPLAY_NAIVE=1");
    return message;
}

/// A communicator that runs natively, for the report (its rank 0 keeps them).
struct Native {
    std::string function;
    int ranks = 0;
    std::string why;
};
std::vector<Native>& natives() {
    static std::vector<Native> list;
    return list;
}

/// Says on rank 0 why the communicator runs natively, and keeps it for the report.
void run_natively(int rank, int size, const char* function, const std::string& why, bool report) {
    if (rank != 0) return;
    std::fprintf(stderr, "nbr: %s: %s; it runs natively\n", function, why.c_str());
    if (report) natives().push_back({function, size, why});
}

/// The communicator's pattern: loaded from NBR_PATTERNS' `dir`, else found in or built into
/// the cache (rank 0's NBR_CACHE); NBR_PATTERN_NULL with the reason in `why`. Collective.
nbr_pattern_t load_or_build(MPI_Comm comm, int size, const Agreed& agreed, std::uint64_t hash, bool report,
                            std::string& why) {
    const std::string& dir = agreed.dir;
    nbr_pattern_t pattern = NBR_PATTERN_NULL;
    int code = NBR_SUCCESS;
    if (!dir.empty()) {
        code = nbr_load_pattern_flags(dir.c_str(), comm, load_flags(report), &pattern);
        if (code != NBR_SUCCESS)
            why = "pattern " + dir + " not loaded (" + nbr_strerror(code) + ": " +
                  in_environment_terms(nbr_last_error()) + ")";
        return pattern;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    if (agreed.cache.empty()) {
        why = "no pattern in NBR_PATTERNS for this communicator (" + std::to_string(size) + " ranks, topology hash " +
              hex + ")";
        return pattern;
    }
    MPI_Info info = cache_info(agreed);
    code = nbr_pattern_build(comm, agreed.cache.c_str(), info, load_flags(report), &pattern);
    PMPI_Info_free(&info);
    if (code != NBR_SUCCESS) {
        why = std::string(code == NBR_ERR_DECLINED ? "not built" : "no pattern built") + " (" + std::to_string(size) +
              " ranks, topology hash " + hex + "): " + in_environment_terms(nbr_last_error());
    }
    return pattern;
}

/// After a topology communicator's creation: finds (NBR_PATTERNS, then NBR_CACHE) or builds
/// (NBR_CACHE) its pattern, loads it and attaches it.
void attach(MPI_Comm comm, const char* function) {
    if (comm == MPI_COMM_NULL || inside_nbr > 0) return;
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    const auto [kind, in, out, slots] = nbr::internal::comm_neighbors(comm, rank);
    if (kind == nbr::internal::CommKind::plain) return;  // (every rank alike)
    // NBR_PATTERNS or NBR_CACHE on some ranks only (a launcher's per-rank environment): every
    // rank takes part, with rank 0's (agree_on_pattern). NBR_REPORT on some ranks: every rank
    // keeps its times and rank 0 counts the calls, so the report is the communicator's.
    const char* list = std::getenv("NBR_PATTERNS");
    // The report's rank: the lowest with neighbors (a rank without them keeps no fixed-size
    // shapes under measurement: nbr.h), else 0.
    int wanted[3] = {(list != nullptr && *list != '\0') || !cache_dir().empty() ? 1 : 0, report_wanted() ? 1 : 0,
                     -(in.empty() && out.empty() ? size : rank)};
    PMPI_Allreduce(MPI_IN_PLACE, wanted, 3, MPI_INT, MPI_MAX, comm);
    if (wanted[0] == 0) return;
    const bool report = wanted[1] != 0;
    const int reporter = -wanted[2] == size ? 0 : -wanted[2];
    std::uint64_t hash = 0;
    const Agreed agreed = agree_on_pattern(comm, rank, size, in, out, hash);
    const InsideNbr guard;
    import_wisdom_once(rank);
    std::string why;
    nbr_pattern_t pattern = load_or_build(comm, size, agreed, hash, report, why);
    if (pattern == NBR_PATTERN_NULL) return run_natively(rank, size, function, why, report);
    const char* origin_dir = "";
    const char* origin = "";
    (void)nbr_pattern_origin(pattern, &origin_dir, &origin);
    if (rank == 0 && std::strncmp(origin, "built", 5) == 0) {
        std::fprintf(stderr, "nbr: %s: pattern %s into %s\n", function, origin, origin_dir);
    }
    if (keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(copy_pattern, delete_pattern, &keyval, nullptr);
    const char* note = "";
    if (rank == 0 && nbr_pattern_wisdom(pattern, &note) == NBR_SUCCESS && *note != '\0') {
        std::fprintf(stderr, "nbr: %s: %s\n", function, note);
    }
    auto* record = new Attached{pattern, rank == reporter && report, origin_dir, origin, rank, size, agreed.id};
    PMPI_Comm_set_attr(comm, keyval, new Alias{comm, record});
    if (report) reported().push_back(record);
    if (rank == 0) ++attached;
}

// ---- proxies ---------------------------------------------------------------------------------

/// A nonblocking call's proxy: one from the pool, or a new one.
int pooled_proxy(MPI_Request* out) {
    if (proxy_pool().empty()) return PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, out);
    *out = proxy_pool().back();
    proxy_pool().pop_back();
    return MPI_SUCCESS;
}

/// At MPI_Finalize: frees the pooled proxies.
void free_proxy_pool() {
    for (MPI_Request handle : proxy_pool()) {
        proxies().erase(handle);
        PMPI_Request_free(&handle);
    }
    proxy_pool().clear();
}

}  // namespace

namespace nbr::interpose {

nbr_pattern_t pattern_of(MPI_Comm comm) {
    if (keyval == MPI_KEYVAL_INVALID || inside_nbr > 0 || comm == MPI_COMM_NULL) return nullptr;
    const Alias* alias = last_found.load(std::memory_order_acquire);
    if (alias == nullptr || alias->comm != comm) {
        void* value = nullptr;
        int flag = 0;
        if (PMPI_Comm_get_attr(comm, keyval, &value, &flag) != MPI_SUCCESS || flag == 0) return nullptr;
        auto* found = static_cast<Alias*>(value);
        found->comm = comm;  // a duplicate's first call names it
        alias = found;
        last_found.store(alias, std::memory_order_release);
    }
    const Attached* record = alias->shared;
    if (record->counts) {
        ++replayed_calls;
        ++record->calls;
    }
    return record->pattern;
}

int mpi_result(int nbr_code, const char* call) {
    if (nbr_code == NBR_SUCCESS) return MPI_SUCCESS;
    std::fprintf(stderr, "nbr: %s: %s: %s\n", call, nbr_strerror(nbr_code), nbr_last_error());
    return MPI_ERR_OTHER;
}

int make_proxy(nbr_request_t request, bool persistent, MPI_Request* out) {
    // A nonblocking call's proxy is never started: inactive, so complete at once for MPI.
    const int code =
        persistent ? PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, out) : pooled_proxy(out);
    if (code != MPI_SUCCESS) return code;
    proxies()[*out] = Proxy{*out, request, persistent, !persistent, true};
    ++proxies_in_use;
    return MPI_SUCCESS;
}

bool proxies_live() {
    return inside_nbr == 0 && proxies_in_use > 0;
}

Proxy* proxy_of(MPI_Request request) {
    if (!proxies_live() || request == MPI_REQUEST_NULL) return nullptr;
    const auto it = proxies().find(request);
    return it == proxies().end() || !it->second.in_use ? nullptr : &it->second;
}

bool progress(Proxy& proxy, bool block) {
    if (!proxy.pending) return true;
    const InsideNbr guard;
    int done = 0;
    const int code = block ? nbr_wait(&proxy.request) : nbr_test(&proxy.request, &done);
    (void)mpi_result(code, block ? "MPI_Wait" : "MPI_Test");
    if (block || done != 0 || code != NBR_SUCCESS) {
        proxy.pending = false;
        if (!proxy.persistent) proxy.request = NBR_REQUEST_NULL;  // nbr released it (also after a failure)
    }
    return !proxy.pending;
}

void release(Proxy& proxy) {
    proxy.in_use = false;
    --proxies_in_use;
    proxy_pool().push_back(proxy.handle);
}

int start_proxy(Proxy& proxy) {
    const InsideNbr guard;
    const int code = mpi_result(nbr_start(&proxy.request), "MPI_Start");
    if (code == MPI_SUCCESS) proxy.pending = true;
    return code;
}

bool free_proxy(Proxy& proxy) {
    // MPI lets an active request be freed and complete on its own; nbr completes it here.
    progress(proxy, true);
    if (!proxy.persistent) {
        release(proxy);
        return false;
    }
    {
        const InsideNbr guard;
        (void)mpi_result(nbr_request_free(&proxy.request), "MPI_Request_free");
    }
    --proxies_in_use;
    proxies().erase(proxy.handle);
    return true;
}

/// Every process's part of the report, gathered on world rank 0 (collective over MPI_COMM_WORLD).
std::vector<std::string> gather_on_root(const std::string& mine, int rank, int size) {
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
    PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank == 0) {
        int total = 0;
        for (int r = 0; r < size; ++r) {
            offsets[static_cast<std::size_t>(r)] = total;
            total += lengths[static_cast<std::size_t>(r)];
        }
        all.resize(static_cast<std::size_t>(total));
    }
    PMPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                 MPI_COMM_WORLD);
    std::vector<std::string> parts;
    for (int r = 0; rank == 0 && r < size; ++r) {
        parts.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                   static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    }
    return parts;
}

/// Every shape's time per call over its communicator's ranks: each rank's spreads merged up a
/// binomial tree to world rank 0, which broadcasts the result (collective over MPI_COMM_WORLD;
/// messages on a duplicate of it, apart from the application's).
nbr::interpose::Spreads spreads_over_ranks(const std::vector<nbr::interpose::PatternSnapshot>& snapshots, int rank,
                                           int size) {
    MPI_Comm comm = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
    auto spreads = nbr::interpose::spreads_of(snapshots);
    for (int step = 1; step < size; step *= 2) {
        if (rank % (2 * step) != 0) {  // send what this subtree timed to its parent, done
            const std::string text = nbr::interpose::encode_spreads(spreads);
            PMPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, rank - step, 0, comm);
            break;
        }
        if (rank + step >= size) continue;
        MPI_Status status;
        int length = 0;
        PMPI_Probe(rank + step, 0, comm, &status);
        PMPI_Get_count(&status, MPI_CHAR, &length);
        std::string text(static_cast<std::size_t>(length), '\0');
        PMPI_Recv(text.data(), length, MPI_CHAR, rank + step, 0, comm, MPI_STATUS_IGNORE);
        nbr::interpose::merge_spreads(spreads, nbr::interpose::decode_spreads(text));
    }
    PMPI_Comm_free(&comm);
    return nbr::interpose::decode_spreads(nbr::interpose::broadcast_text(
        rank == 0 ? nbr::interpose::encode_spreads(spreads) : std::string(), MPI_COMM_WORLD));
}

/// The report (collective over MPI_COMM_WORLD): world rank `reporter`, the lowest whose
/// NBR_REPORT is set, chooses text or JSON:FILE for all; world rank 0 writes it.
void print_report(int rank, int size, int reporter) {
    unsigned long long mine[2] = {replayed_calls, attached}, total[2] = {0, 0};
    PMPI_Reduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    auto snapshots = finished_snapshots();  // the freed communicators', then the live ones'
    const std::size_t freed = snapshots.size();
    {
        const InsideNbr guard;
        for (const Attached* record : reported()) snapshots.push_back(snapshot_of(*record));
    }
    const auto spreads = spreads_over_ranks(snapshots, rank, size);
    std::vector<nbr::interpose::CommunicatorReport> reports;
    const auto describe = [&](std::size_t from, std::size_t to) {  // by each communicator's reporting rank
        for (std::size_t i = from; i < to; ++i) {
            if (snapshots[i].reporter) reports.push_back(nbr::interpose::describe_pattern(snapshots[i], spreads));
        }
    };
    describe(0, freed);
    for (const auto& native : natives()) {
        reports.push_back(nbr::interpose::describe_native(native.function, native.ranks, native.why));
    }
    describe(freed, snapshots.size());
    const std::string json_file =
        nbr::interpose::broadcast_text(rank == reporter ? report_json_file() : std::string(), MPI_COMM_WORLD, reporter);
    std::string part;
    for (const auto& report : reports)
        part += json_file.empty() ? report.text : (part.empty() ? "" : ",\n") + report.json;
    const auto parts = gather_on_root(part, rank, size);
    if (rank != 0) return;
    if (json_file.empty()) {
        std::printf("nbr: replayed %llu call%s on %llu communicator%s\n", total[0], total[0] == 1 ? "" : "s", total[1],
                    total[1] == 1 ? "" : "s");
        for (const auto& p : parts) std::fputs(p.c_str(), stdout);
        std::fflush(stdout);
        return;
    }
    std::string json = "{\"replayed_calls\": " + std::to_string(total[0]) + ", \"communicators\": [\n";
    bool first = true;
    for (const auto& p : parts) {
        if (p.empty()) continue;
        json += (first ? "" : ",\n") + p;
        first = false;
    }
    json += "\n]}\n";
    try {
        nbr::replace_whole_file(json_file, json);  // whole or not at all
    } catch (const nbr::FileError& error) {
        std::fprintf(stderr, "nbr: NBR_REPORT: not written: %s\n", error.what());
    }
}

}  // namespace nbr::interpose

namespace nbr::interpose {

void finalize_report() {
    if (proxies_in_use > 0) {
        std::fprintf(stderr, "nbr: %zu nonblocking or persistent requests were not completed or freed\n",
                     proxies_in_use);
    }
    free_proxy_pool();
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    // What the ranks want at the end, agreed, so that a switch set on some ranks only (a
    // launcher's per-rank environment) never leaves the others in a collective: the wisdom is
    // written when every rank measured with NBR_WISDOM, the report's collectives run on every
    // rank when any wants it, in the form the lowest such rank asked for.
    // One reduction: the least of the wisdom switch says "everywhere", the least of its negation
    // (minus the most) "somewhere", and the least of the reporting ranks' ranks is the reporter.
    const int wisdom = !wisdom_file().empty() && switched_on("NBR_MEASURE") ? 1 : 0;
    int least[3] = {wisdom, -wisdom, report_wanted() ? rank : size};
    PMPI_Allreduce(MPI_IN_PLACE, least, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const bool wisdom_everywhere = least[0] != 0, wisdom_somewhere = least[1] != 0;
    const int reporter = least[2];
    if (wisdom_everywhere) {
        const InsideNbr guard;
        const int code = nbr_wisdom_export_all(wisdom_file().c_str(), MPI_COMM_WORLD);
        if (code != NBR_SUCCESS && rank == 0) {
            std::fprintf(stderr, "nbr: NBR_WISDOM: not written: %s: %s\n", nbr_strerror(code), nbr_last_error());
        }
    } else if (wisdom_somewhere && rank == 0) {
        std::fprintf(stderr, "nbr: NBR_WISDOM: not written: NBR_MEASURE=1 and NBR_WISDOM are set on some ranks only\n");
    }
    if (reporter < size) print_report(rank, size, reporter);
    std::fflush(stdout);
}

void on_topology_created(MPI_Comm comm, const char* function) {
    try {
        attach(comm, function);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nbr: %s: no pattern attached: %s; it runs natively\n", function, error.what());
    } catch (...) {
        std::fprintf(stderr, "nbr: %s: no pattern attached; it runs natively\n", function);
    }
}

}  // namespace nbr::interpose

// ---- wrapped MPI functions (C) ---------------------------------------------------------------

namespace {

using nbr::interpose::pattern_of;
using nbr::interpose::replay_blocking;
using nbr::interpose::start_with_proxy;

/// The C binding's completion calls, for Completion<>.
struct CBinding {
    using Handle = MPI_Request;
    using Status = MPI_Status;
    static constexpr int kFirstIndex = 0;
    static MPI_Request key(Handle handle) { return handle; }
    static Status* status_at(Status* statuses, int k) {
        return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + k;
    }
    static Handle null() { return MPI_REQUEST_NULL; }
    static int wait(Handle* r, Status* s) { return PMPI_Wait(r, s); }
    static int test(Handle* r, int* flag, Status* s) { return PMPI_Test(r, flag, s); }
    static int request_get_status(Handle r, int* flag, Status* s) { return PMPI_Request_get_status(r, flag, s); }
    static int waitall(int n, Handle* r, Status* s) { return PMPI_Waitall(n, r, s); }
    static int testall(int n, Handle* r, int* flag, Status* s) { return PMPI_Testall(n, r, flag, s); }
    static int waitany(int n, Handle* r, int* index, Status* s) { return PMPI_Waitany(n, r, index, s); }
    static int testany(int n, Handle* r, int* index, int* flag, Status* s) {
        return PMPI_Testany(n, r, index, flag, s);
    }
    static int waitsome(int n, Handle* r, int* outcount, int* indices, Status* s) {
        return PMPI_Waitsome(n, r, outcount, indices, s);
    }
    static int testsome(int n, Handle* r, int* outcount, int* indices, Status* s) {
        return PMPI_Testsome(n, r, outcount, indices, s);
    }
    static int start(Handle* r) { return PMPI_Start(r); }
    static int startall(int n, Handle* r) { return PMPI_Startall(n, r); }
    static int request_free(Handle* r) { return PMPI_Request_free(r); }
};

using C = nbr::interpose::Completion<CBinding>;

}  // namespace

extern "C" {

// The 15 neighborhood collectives, generated from collective_table.hpp: on a communicator
// with a pattern, libnbr replays the call (nonblocking and persistent ones behind a proxy);
// otherwise the MPI library's own entry runs with the arguments untouched.
#define NBR_C_REPLAY_BLOCKING(fname, call, ...) replay_blocking(call, [&] { return nbr_##fname(__VA_ARGS__, p); })
#define NBR_C_REPLAY_NONBLOCKING(fname, call, ...) \
    start_with_proxy([&](nbr_request_t* r) { return nbr_##fname(__VA_ARGS__, p, r); }, false, call, request)
#define NBR_C_REPLAY_PERSISTENT(fname, call, ...) \
    start_with_proxy([&](nbr_request_t* r) { return nbr_##fname(__VA_ARGS__, p, 0, r); }, true, call, request)
#define NBR_C_WRAPPER(mode, shape, Cname, fname)                                                     \
    NBR_CAT(NBR_WHEN_, NBR_HAVE_##mode)                                                              \
    (int NBR_C_NAME(mode, Cname)(NBR_C_PARAMS_##shape, NBR_C_TAIL_PARAMS_##mode) {                   \
        if (nbr_pattern_t p = pattern_of(comm)) {                                                    \
            return NBR_C_REPLAY_##mode(fname, NBR_STR(NBR_C_NAME(mode, Cname)), NBR_C_ARGS_##shape); \
        }                                                                                            \
        return NBR_PMPI_NAME(mode, Cname)(NBR_C_ARGS_##shape, NBR_C_TAIL_ARGS_##mode);               \
    })

NBR_NEIGHBOR_COLLECTIVES(NBR_C_WRAPPER)
static_assert(NBR_WRAP_LARGE_COUNT == NBR_HAVE_LARGE_COUNT, "libnbr has the large-count forms it wraps");
#if NBR_WRAP_LARGE_COUNT
NBR_LARGE_COUNT_COLLECTIVES(NBR_C_WRAPPER)
#endif

// Completion (completion.hpp).

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
    return C::wait(request, status);
}
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
    return C::test(request, flag, status);
}
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
    return C::request_get_status(request, flag, status);
}
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    return C::waitall(count, requests, statuses);
}
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
    return C::testall(count, requests, flag, statuses);
}
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
    return C::waitany(count, requests, index, status);
}
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
    return C::testany(count, requests, index, flag, status);
}
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    return C::waitsome(incount, requests, outcount, indices, statuses);
}
int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    return C::testsome(incount, requests, outcount, indices, statuses);
}
int MPI_Start(MPI_Request* request) {
    return C::start(request);
}
int MPI_Startall(int count, MPI_Request requests[]) {
    return C::startall(count, requests);
}
int MPI_Request_free(MPI_Request* request) {
    return C::request_free(request);
}

int MPI_Finalize(void) {
    nbr::interpose::finalize_report();
    return PMPI_Finalize();
}

}  // extern "C"
