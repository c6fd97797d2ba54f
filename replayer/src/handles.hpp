#pragma once
// The objects behind nbr.h's handles and the C boundary's error handling, shared by the files of libnbr.

#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm_neighbors.hpp"
#include "execution.hpp"
#include "handle_table.hpp"
#include "nbr.h"
#include "nbr/common/mpi_program.hpp"
#include "nbr/plan/plan.hpp"
#include "nbr/schema/pattern_io.hpp"
#include "tuner.hpp"

namespace nbr::internal {

struct RequestState;

/// One variant of a loaded pattern: one algorithm's plans and the executions reused for them.
/// A single-algorithm directory loads as one variant; an auto directory as several.
struct Variant {
    std::string name;  // the variant's subdirectory in an auto directory, else the algorithm
    std::string algorithm;
    Plan plans[2];                                    // indexed by Collective: allgather, alltoall
    bool native[2] = {false, false};                  // blocking calls use the native collective (see nbr.cpp)
    bool native_alltoallw = false;                    // ... and blocking alltoallw calls MPI's
    std::unique_ptr<Execution> blocking[2];           // reused by blocking calls
    std::vector<std::unique_ptr<Execution>> idle[2];  // for nonblocking calls
    /// Segmented forwarding (the manifest's segment_bytes; 0: none): a fixed-size call whose
    /// blocks make some staged message longer than a segment runs a segmented plan
    /// (segment_plan), built on first use per blocks-per-segment, with executions of its own.
    std::uint64_t segment_bytes = 0;
    std::uint32_t longest[2] = {0, 0};  // per collective: longest_segmentable of its plan
    struct Segmented {
        Plan plan;
        std::unique_ptr<Execution> blocking;
        std::vector<std::unique_ptr<Execution>> idle;
    };
    std::map<std::uint32_t, std::unique_ptr<Segmented>> segmented[2];  // by blocks per segment
};

/// What a call runs: a plan of a variant and the executions kept for it.
struct PlanUse {
    const Plan& plan;
    std::unique_ptr<Execution>& blocking;
    std::vector<std::unique_ptr<Execution>>& idle;
};

/// The plan a call of `block_bytes` per block runs on `variant` (v-calls: whole messages).
PlanUse plan_use(Variant& variant, Collective collective, bool variable, std::uint64_t block_bytes);

/// Where an execution of `variant` goes back to when its nonblocking request is released.
std::vector<std::unique_ptr<Execution>>& idle_of(Variant& variant, Collective collective, const Execution& execution);

/// Calls of a collective whose blocks have at least `from_bytes` bytes run `variant`.
struct Band {
    std::uint64_t from_bytes = 0;
    std::uint32_t variant = 0;
    std::vector<std::uint32_t> candidates;  // variant, then the alternatives kept for measurement
};

inline int index_of(Collective collective) {
    return collective == Collective::allgather ? 0 : 1;
}

/// Every flag nbr_load_pattern_flags and nbr_pattern_build take.
inline constexpr unsigned long kLoadFlags = NBR_LOAD_NO_NATIVE | NBR_LOAD_MEASURE | NBR_LOAD_STEP_SYNC | NBR_LOAD_STATS;
/// The load flags every rank of the communicator must pass alike: with one on some ranks only,
/// those ranks would run MPI's collective or measured selection's agreements where the others
/// do not (NBR_ERR_ARG on every rank instead). NBR_LOAD_STATS is local; NBR_LOAD_STEP_SYNC only
/// orders a rank's own sends.
inline constexpr unsigned long kSharedLoadFlags = NBR_LOAD_NO_NATIVE | NBR_LOAD_MEASURE;

/// A loaded pattern (behind an nbr_pattern_t handle). Calls on one pattern are serialized by
/// the application (nbr.h, "Threads"), so nothing here is locked.
struct PatternState {
    std::uintptr_t handle = 0;  // the application's handle
    /// Private duplicate of the user's communicator. Blocking calls use tags [0, tag_window);
    /// nonblocking call c uses window 1 + c mod (windows - 1).
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    int size = 0;
    std::vector<int> in;
    std::vector<int> out;
    BufferSlots slots;                                  // where in and out sit in the communicator's buffers
    std::string algorithm;                              // the manifest's ("auto" for a multi-variant directory)
    std::vector<Variant> variants;                      // at least one
    std::vector<Band> bands[2];                         // per collective: from_bytes increasing, the first at 0
    std::uint32_t variable_variant[2]{};                // the variant of blocking and nonblocking v-variant calls
    std::vector<std::uint32_t> variable_candidates[2];  // it, then the alternatives kept for measurement
    std::uint64_t compile_id = 0;                       // the manifest's (wisdom's key)
    std::unique_ptr<Tuner> tuner;                       // NBR_LOAD_MEASURE or _STATS: call shapes
    std::string machine;                                // NBR_LOAD_MEASURE: machine_facts' fingerprint
    std::string wisdom_note;                            // NBR_LOAD_MEASURE: what wisdom did at load
    std::string origin_dir;                             // the pattern directory loaded (nbr_pattern_origin)
    std::string origin;                                 // how it came to be: loaded, from the cache, built
    std::int64_t tag_window = 1;           // tags one call needs (largest plan tag of any rank and variant + 1)
    std::int64_t tag_ub = 32767;           // MPI_TAG_UB of the communicator
    std::int64_t windows = 1;              // tag windows below MPI_TAG_UB
    std::uint64_t calls = 0;               // nonblocking calls started
    std::vector<RequestState*> in_flight;  // nonblocking, in call order
    int requests = 0;                      // live requests (persistent or nonblocking) that use this pattern
    bool topology_comm = false;            // comm (so also `comm`) has the pattern's (dist-)graph topology
    /// Ranks without neighbors (docs/architecture.md, "Block sizes of the fixed-size
    /// collectives"): this rank has none; some rank of the communicator has none (agreed at
    /// load, settle_collectively).
    bool isolated = false;
    bool isolated_ranks = false;
    /// Per collective: every band runs a variant that goes to MPI's own collective and no
    /// trials choose among others (set at load; see fixed_native).
    bool native_at_every_size[2]{};
    std::vector<std::uint32_t> in_source_slots;  // per in-edge: its slot at its origin (naive fallback)
    bool step_synchronized = false;              // NBR_LOAD_STEP_SYNC: executions follow the step rule
    BlockTypes call_types[2];                    // blocking alltoallw calls: send, receive datatypes (reused)
};

/// A started or startable collective (behind an nbr_request_t handle). Kept in its handle
/// slot after release and reused by the next request, with its arrays' capacity.
struct RequestState {
    enum class Kind { persistent, nonblocking };
    std::uintptr_t handle = 0;  // the application's handle
    Kind kind = Kind::persistent;
    PatternState* pattern = nullptr;
    Collective collective = Collective::allgather;
    MPI_Comm comm = MPI_COMM_NULL;  // persistent: private duplicate per request
    MPI_Datatype send_type = MPI_DATATYPE_NULL;
    MPI_Datatype recv_type = MPI_DATATYPE_NULL;
    bool own_send_type = false;  // duplicated (derived types), freed with the request
    bool own_recv_type = false;
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;  // v-variants: copies
    std::vector<MPI_Aint> send_byte_displs, recv_byte_displs;             // alltoallw: copies
    std::vector<MPI_Count> send_counts_c, recv_counts_c;                  // large-count forms: copies
    std::vector<MPI_Aint> send_displs_c, recv_displs_c;
    BlockTypes send_types, recv_types;  // alltoallw: retained
    std::unique_ptr<Execution> execution;
    std::uint64_t call = 0;     // nonblocking: call number on the pattern
    std::uint32_t variant = 0;  // the pattern's variant the request runs
    Pick pick;                  // measured selection: the shape and candidate of the call or start
    /// Persistent requests of a measured shape: an execution per candidate (bound at init), the
    /// one of the current start moved into `execution`.
    std::vector<std::unique_ptr<Execution>> candidate_executions;
    std::uint32_t current_candidate = 0;
};

/// The calling thread's last failure (nbr_last_error).
std::string& last_error();

/// Records `message` as the last error and returns `code`.
inline int fail(int code, std::string message) {
    last_error() = std::move(message);
    return code;
}

/// Runs `body`, turning every exception into an error code and a last_error message.
template <class Body>
int guarded(Body&& body) {
    try {
        return body();
    } catch (const NbrError& error) {
        return fail(error.code(), error.what());
    } catch (const PlanError& error) {
        return fail(NBR_ERR_PATTERN, error.what());
    } catch (const nbr::PatternError& error) {
        return fail(NBR_ERR_CORRUPT, error.what());
    } catch (const nbr::common::MpiError& error) {
        return fail(NBR_ERR_MPI, error.what());
    } catch (const std::bad_alloc&) {
        return fail(NBR_ERR_NOMEM, "out of memory");
    } catch (const std::exception& error) {
        return fail(NBR_ERR_INTERNAL, error.what());
    } catch (...) {
        return fail(NBR_ERR_INTERNAL, "unknown exception");
    }
}

/// A private communicator for nbr's traffic (collective over comm), see nbr.cpp.
void private_comm(MPI_Comm comm, MPI_Comm* out);
void release_comm(MPI_Comm* comm);

/// Every rank of comm learns whether any failed; the lowest failing rank's message is shared
/// (NBR_ERR_REMOTE on the others).
int agree(MPI_Comm comm, int local_code);

/// The handle tables of patterns and requests (nbr.cpp).
HandleTable<PatternState>& pattern_table();
HandleTable<RequestState>& request_table();

/// The pattern or request behind a handle, or nullptr for NULL, released and stale handles.
inline PatternState* resolve(nbr_pattern_t pattern) {
    return pattern_table().find(reinterpret_cast<std::uintptr_t>(pattern));
}
inline RequestState* resolve(nbr_request_t request) {
    return request_table().find(reinterpret_cast<std::uintptr_t>(request));
}
inline nbr_pattern_t handle_of(const PatternState& pattern) {
    return reinterpret_cast<nbr_pattern_t>(pattern.handle);
}
inline nbr_request_t handle_of(const RequestState& request) {
    return reinterpret_cast<nbr_request_t>(request.handle);
}

/// The variant a call of `collective` with blocks of `bytes` bytes runs (the bands' rule).
/// Every rank passes blocks of one size (MPI's matching rule), so every rank picks alike.
inline std::uint32_t band_index_of(const PatternState& pattern, Collective collective, std::uint64_t bytes) {
    const auto& bands = pattern.bands[index_of(collective)];
    std::uint32_t index = 0;
    for (std::uint32_t b = 1; b < bands.size() && bands[b].from_bytes <= bytes; ++b) index = b;
    return index;
}
inline std::uint32_t band_of(const PatternState& pattern, Collective collective, std::uint64_t bytes) {
    return pattern.bands[index_of(collective)][band_index_of(pattern, collective, bytes)].variant;
}

/// Whether a blocking fixed-size call of `variant` goes to MPI's own collective: as `native`
/// says, except on a communicator with a rank without neighbors where the choice depends on the
/// block size. That rank cannot tell a fixed-size call's block size (its counts are free, as in
/// MPI), so it cannot tell which band the others run, nor what their trials time; there its plans
/// hold no message (settle_collectively) and nbr's schedules on the other ranks keep every rank's
/// sequence of MPI collectives alike. Where every band goes to MPI's collective and no trials
/// choose (`native_at_every_size`), every rank goes there, that rank with its own counts.
inline bool fixed_native(const PatternState& pattern, const Variant& variant, int collective) {
    return variant.native[collective] && (!pattern.isolated_ranks || pattern.native_at_every_size[collective]);
}

}  // namespace nbr::internal
