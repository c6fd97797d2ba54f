// nbr_pattern_build: a pattern found in, or built into, a cache directory in the job
// (docs/architecture.md, "Patterns built in the job").
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "comm_neighbors.hpp"
#include "handles.hpp"
#include "nbr.h"
#include "nbr/common/json_text.hpp"
#include "nbr/common/mpi_program.hpp"
#include "nbr/compiler/algorithm.hpp"
#include "nbr/compiler/compile.hpp"
#include "nbr/compiler/job_build.hpp"
#include "nbr/schema/pattern_io.hpp"

namespace {

namespace fs = std::filesystem;
using nbr::internal::fail;
using nbr::internal::guarded;
using nbr::internal::NbrError;

/// The value of `key` in info, or "" if absent.
std::string info_value(MPI_Info info, const char* key) {
    if (info == MPI_INFO_NULL) return {};
    int length = 0, flag = 0;
    nbr::internal::check_mpi(MPI_Info_get_valuelen(info, key, &length, &flag), "MPI_Info_get_valuelen");
    if (flag == 0) return {};
    std::string value(static_cast<std::size_t>(length) + 1, '\0');
    nbr::internal::check_mpi(MPI_Info_get(info, key, length + 1, value.data(), &flag), "MPI_Info_get");
    value.resize(static_cast<std::size_t>(length));
    return value;
}

/// A non-negative number with an optional suffix K, M or G (powers of 1024 when `binary`).
double parse_number(const std::string& key, const std::string& text, bool suffixes) {
    errno = 0;
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (suffixes && end != nullptr && *end != '\0' && end[1] == '\0') {
        switch (*end) {
            case 'K':
            case 'k':
                value *= 1024.0;
                ++end;
                break;
            case 'M':
            case 'm':
                value *= 1024.0 * 1024.0;
                ++end;
                break;
            case 'G':
            case 'g':
                value *= 1024.0 * 1024.0 * 1024.0;
                ++end;
                break;
            default: break;
        }
    }
    if (text.empty() || end == nullptr || *end != '\0' || errno != 0 || !(value >= 0) || value > 1e18) {
        throw NbrError(NBR_ERR_ARG, "nbr_pattern_build: info " + key + " = '" + text +
                                        "' is not a non-negative number" + (suffixes ? " (suffix K, M or G)" : ""));
    }
    return value;
}

std::uint32_t parse_count(const std::string& key, const std::string& text) {
    const double value = parse_number(key, text, false);
    if (value < 1 || value > 1e9 || value != static_cast<double>(static_cast<std::uint32_t>(value))) {
        throw NbrError(NBR_ERR_ARG, "nbr_pattern_build: info " + key + " = '" + text + "' is not a positive integer");
    }
    return static_cast<std::uint32_t>(value);
}

nbr::compiler::JobBuildOptions options_of(MPI_Info info, unsigned long flags) {
    nbr::compiler::JobBuildOptions options;
    if (auto v = info_value(info, "nbr_algo"); !v.empty()) options.algorithm = v;
    if (options.algorithm != "default" && options.algorithm != "auto") {
        bool known = false;
        try {
            known = nbr::compiler::parse_configuration(options.algorithm).has_value();
        } catch (const std::invalid_argument&) {
        }
        if (!known)
            throw NbrError(NBR_ERR_ARG, "nbr_pattern_build: info nbr_algo = '" + options.algorithm +
                                            "' names no algorithm (default, auto, or an nbrc --algo name)");
    }
    if (auto v = info_value(info, "nbr_machine"); !v.empty()) options.machine = v;
    if (auto v = info_value(info, "nbr_ranks_per_node"); !v.empty())
        options.ranks_per_node = parse_count("nbr_ranks_per_node", v);
    if (auto v = info_value(info, "nbr_ranks_per_socket"); !v.empty()) {
        options.ranks_per_socket = parse_count("nbr_ranks_per_socket", v);
    }
    if (auto v = info_value(info, "nbr_budget"); !v.empty())
        options.budget_seconds = parse_number("nbr_budget", v, false);
    options.keep = (flags & NBR_LOAD_MEASURE) != 0 ? 3 : 1;
    if (auto v = info_value(info, "nbr_keep"); !v.empty()) options.keep = parse_count("nbr_keep", v);
    if (options.keep > 16) throw NbrError(NBR_ERR_ARG, "nbr_pattern_build: info nbr_keep must lie in [1, 16]");
    if (auto v = info_value(info, "nbr_cache_limit"); !v.empty()) {
        options.cache_limit_bytes = static_cast<std::uint64_t>(parse_number("nbr_cache_limit", v, true));
    }
    return options;
}

/// The calling rank's neighbor lists; NBR_ERR_UNSUPPORTED for a communicator without a topology
/// nbr can express.
nbr::internal::CommNeighbors topology_lists(MPI_Comm comm, int rank) {
    auto lists = nbr::internal::comm_neighbors(comm, rank);
    if (lists.kind == nbr::internal::CommKind::plain) {
        throw NbrError(NBR_ERR_UNSUPPORTED,
                       "nbr_pattern_build: the communicator has no topology (give its neighbors to "
                       "nbr_pattern_build_adjacent, or build for a dist-graph, graph or Cartesian communicator)");
    }
    return lists;
}

/// What every rank must pass alike: the cache directory, the shared load flags and the info
/// values options_of reads ("" where absent); each named for the message, with its info key.
struct Setting {
    const char* name;
    const char* info_key;  // nullptr: not an info value
};
constexpr Setting kSettingList[] = {{"cache directory", nullptr},
                                    {"flags", nullptr},
                                    {"info nbr_algo", "nbr_algo"},
                                    {"info nbr_machine", "nbr_machine"},
                                    {"info nbr_budget", "nbr_budget"},
                                    {"info nbr_keep", "nbr_keep"},
                                    {"info nbr_cache_limit", "nbr_cache_limit"},
                                    {"info nbr_ranks_per_node", "nbr_ranks_per_node"},
                                    {"info nbr_ranks_per_socket", "nbr_ranks_per_socket"}};
constexpr int kSettings = static_cast<int>(std::size(kSettingList));

/// The calling rank's settings, in kSettingList's order.
std::vector<std::string> settings_of(const char* cache_dir, MPI_Info info, unsigned long flags) {
    std::vector<std::string> settings{cache_dir != nullptr ? cache_dir : "",
                                      std::to_string(flags & nbr::internal::kSharedLoadFlags)};
    for (const auto& setting : kSettingList) {
        if (setting.info_key != nullptr) settings.push_back(info_value(info, setting.info_key));
    }
    return settings;
}

/// NBR_ERR_ARG on every rank when some rank passed a NULL pattern pointer, or another cache
/// directory, flags or info than rank 0 (the lowest such rank named, with its first differing
/// setting); the ranks would otherwise look up, build or load different entries, or leave the
/// others waiting, and fail to meet in their collectives.
int same_settings_everywhere(MPI_Comm comm, const char* cache_dir, MPI_Info info, unsigned long flags,
                             bool null_pattern) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    return guarded([&] {
        const auto mine = settings_of(cache_dir, info, flags);
        const auto root = nbr::common::broadcast_strings(comm, mine);
        const long long none = static_cast<long long>(size) * kSettings;
        // [0]: (rank, setting) of the first difference; [1]: the first rank with a NULL pointer
        long long first[2] = {none, null_pattern ? rank : static_cast<long long>(size)};
        for (int k = 0; k < kSettings; ++k) {
            if (mine[static_cast<std::size_t>(k)] != root[static_cast<std::size_t>(k)]) {
                first[0] = static_cast<long long>(rank) * kSettings + k;
                break;
            }
        }
        nbr::internal::check_mpi(MPI_Allreduce(MPI_IN_PLACE, first, 2, MPI_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce");
        if (first[1] < size) {
            return fail(NBR_ERR_ARG,
                        "nbr_pattern_build: rank " + std::to_string(first[1]) + " passed a NULL pattern pointer");
        }
        if (first[0] == none) return NBR_SUCCESS;
        return fail(NBR_ERR_ARG, "nbr_pattern_build: rank " + std::to_string(first[0] / kSettings) +
                                     " passed another " + kSettingList[first[0] % kSettings].name +
                                     " than rank 0 (every rank must pass the same cache directory, info and flags)");
    });
}

/// Rank 0's answer, broadcast.
bool on_root(MPI_Comm comm, int rank, bool (*question)(const fs::path&), const fs::path& path) {
    int answer = rank == 0 && question(path) ? 1 : 0;
    nbr::internal::check_mpi(MPI_Bcast(&answer, 1, MPI_INT, 0, comm), "MPI_Bcast");
    return answer != 0;
}

bool has_manifest(const fs::path& entry) {
    std::error_code ec;
    return fs::exists(entry / nbr::manifest_file_name(), ec);
}

std::string seconds_text(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", seconds);
    return text;
}

/// What a build did, for nbr_pattern_origin.
std::string built_note(const nbr::compiler::JobBuildReport& report) {
    std::string note = "built in " + seconds_text(report.seconds) + " s (" +
                       nbr::common::internal::join(report.variants) + ") and cached";
    if (report.kept_existing) note += " (another job stored it first; its copy is used)";
    if (!report.over_budget.empty())
        note += "; over the budget, left out: " + nbr::common::internal::join(report.over_budget);
    return note;
}

/// Everything up to the entry's name, agreed on every rank.
struct Lookup {
    nbr::compiler::JobBuildOptions options;
    nbr::Topology topology;
    std::optional<nbr::Placement> placement;
    fs::path entry;
};

/// The lists nbr_pattern_build_adjacent is given (nullptr: the communicator's own).
struct GivenLists {
    int indegree;
    const int* sources;
    int outdegree;
    const int* destinations;
};

nbr::internal::CommNeighbors lists_given(const GivenLists& given) {
    if (given.indegree < 0 || given.outdegree < 0 || (given.indegree > 0 && given.sources == nullptr) ||
        (given.outdegree > 0 && given.destinations == nullptr)) {
        throw NbrError(NBR_ERR_ARG, "nbr_pattern_build_adjacent: a negative degree or a NULL list");
    }
    nbr::internal::CommNeighbors lists;
    lists.in.assign(given.sources, given.sources + given.indegree);
    lists.out.assign(given.destinations, given.destinations + given.outdegree);
    return lists;
}

int prepare(MPI_Comm comm, const char* cache_dir, MPI_Info info, unsigned long flags, const GivenLists* given,
            Lookup& lookup) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    nbr::internal::CommNeighbors lists;
    int code = guarded([&] {
        if ((flags & ~nbr::internal::kLoadFlags) != 0) {
            return fail(NBR_ERR_ARG, "nbr_pattern_build: unknown flags " + std::to_string(flags));
        }
        lookup.options = options_of(info, flags);
        lists = given != nullptr ? lists_given(*given) : topology_lists(comm, rank);
        return NBR_SUCCESS;
    });
    code = nbr::internal::agree(comm, code);
    if (code != NBR_SUCCESS) return code;
    // From here every failure is the same on every rank (collective_try inside).
    return guarded([&] {
        try {
            lookup.topology = nbr::compiler::gather_topology(comm, lists.in, lists.out);
        } catch (const nbr::InputError& error) {
            throw NbrError(NBR_ERR_NEIGHBORS, std::string("nbr_pattern_build: ") + error.what());
        }
        if (auto why = nbr::compiler::not_worth_building(lookup.topology)) throw NbrError(NBR_ERR_DECLINED, *why);
        try {
            lookup.placement = nbr::compiler::job_placement(comm, lookup.options, lookup.topology.num_ranks());
        } catch (const std::exception& error) {
            throw NbrError(NBR_ERR_ARG, std::string("nbr_pattern_build: ") + error.what());
        }
        lookup.entry =
            fs::path(cache_dir) / nbr::compiler::cache_entry_name(lookup.topology, *lookup.placement, lookup.options);
        return NBR_SUCCESS;
    });
}

/// Builds the entry (collective); the same result on every rank.
int build(MPI_Comm comm, const Lookup& lookup, const char* cache_dir, nbr::compiler::JobBuildReport& report) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return guarded([&] {
        try {
            nbr::compiler::internal::collective_try(comm, [&] {
                if (rank == 0) fs::create_directories(cache_dir);
            });
            report = nbr::compiler::build_into(comm, lookup.topology, *lookup.placement, lookup.options, lookup.entry);
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception& error) {
            throw NbrError(NBR_ERR_BUILD, std::string("nbr_pattern_build: ") + error.what());
        }
        return NBR_SUCCESS;
    });
}

void set_origin(nbr_pattern_t pattern, const std::string& note) {
    if (auto* state = nbr::internal::resolve(pattern)) state->origin = note;
}

/// nbr_pattern_build and nbr_pattern_build_adjacent: found in the cache, or built and stored.
int find_or_build(MPI_Comm comm, const char* cache_dir, MPI_Info info, unsigned long flags, const GivenLists* given,
                  nbr_pattern_t* out) {
    if (out != nullptr) *out = NBR_PATTERN_NULL;
    if (comm == MPI_COMM_NULL) return fail(NBR_ERR_ARG, "nbr_pattern_build: communicator is MPI_COMM_NULL");
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return fail(NBR_ERR_MPI, "nbr_pattern_build: cannot query comm");
    int code = same_settings_everywhere(comm, cache_dir, info, flags, out == nullptr);
    if (code != NBR_SUCCESS) return code;
    // From here the settings are rank 0's on every rank: each check below fails everywhere alike.
    if (cache_dir == nullptr || *cache_dir == '\0') return fail(NBR_ERR_ARG, "nbr_pattern_build: no cache directory");
    Lookup lookup;
    code = prepare(comm, cache_dir, info, flags, given, lookup);
    if (code != NBR_SUCCESS) return code;
    std::string replaced;
    if (on_root(comm, rank, has_manifest, lookup.entry)) {
        code = nbr_load_pattern_flags(lookup.entry.c_str(), comm, flags, out);
        if (code == NBR_SUCCESS) {
            if (rank == 0) nbr::compiler::touch_entry(lookup.entry);
            set_origin(*out, "loaded from the cache");
            return NBR_SUCCESS;
        }
        // Never trusted: the entry goes and is built again.
        replaced = std::string("; the cache entry found did not load (") + nbr_strerror(code) + ": " +
                   nbr_last_error() + ") and was replaced";
        if (rank == 0) nbr::compiler::discard_entry(lookup.entry);
        MPI_Barrier(comm);
    }
    nbr::compiler::JobBuildReport report;
    code = build(comm, lookup, cache_dir, report);
    if (code != NBR_SUCCESS) return code;
    if (rank == 0) (void)nbr::compiler::evict(cache_dir, lookup.options.cache_limit_bytes, lookup.entry);
    code = nbr_load_pattern_flags(lookup.entry.c_str(), comm, flags, out);
    if (code == NBR_SUCCESS) set_origin(*out, built_note(report) + replaced);
    return code;
}

}  // namespace

extern "C" int nbr_pattern_build(MPI_Comm comm, const char* cache_dir, MPI_Info info, unsigned long flags,
                                 nbr_pattern_t* pattern) {
    return find_or_build(comm, cache_dir, info, flags, nullptr, pattern);
}

extern "C" int nbr_pattern_build_adjacent(MPI_Comm comm, int indegree, const int sources[], int outdegree,
                                          const int destinations[], const char* cache_dir, MPI_Info info,
                                          unsigned long flags, nbr_pattern_t* pattern) {
    const GivenLists given{indegree, sources, outdegree, destinations};
    return find_or_build(comm, cache_dir, info, flags, &given, pattern);
}
