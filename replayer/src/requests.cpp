// Nonblocking and persistent requests (requests.hpp): what a request keeps of its call, the
// persistent requests' bindings (native persistent collectives where they are the same
// schedule), the nonblocking calls' tag windows, and nbr_start, nbr_wait, nbr_test, their
// all-forms and nbr_request_free. Every entry point catches every C++ exception (guarded).
#include "requests.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "handles.hpp"
#include "progress.hpp"

// Native persistent neighborhood collectives: MPI-4 (MPICH 4), or Open MPI 4.1's MPIX extension.
#if !defined(NBR_SMPI) && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if !defined(NBR_SMPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_NATIVE_INIT(name) MPIX_Neighbor_##name##_init
#elif !defined(NBR_SMPI) && MPI_VERSION >= 4
#define NBR_NATIVE_INIT(name) MPI_Neighbor_##name##_init
#endif

namespace nbr::internal {

namespace {

// ---- requests -------------------------------------------------------------------------------

/// Keeps a datatype alive for a pending operation: derived types are duplicated (the caller
/// may free theirs), predefined ones used as they are.
MPI_Datatype retain_type(MPI_Datatype type, bool* owned) {
    *owned = !is_named_type(type);
    if (!*owned) return type;
    MPI_Datatype copy = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_dup(type, &copy), "MPI_Type_dup");
    return copy;
}

/// keep_arrays for the large-count forms.
void keep_large_arrays(RequestState& request, CallArgs& a, const PatternState& pattern, std::size_t in,
                       std::size_t out) {
    request.recv_counts_c.assign(a.recvcounts_c, a.recvcounts_c + in);
    a.recvcounts_c = request.recv_counts_c.data();
    const bool sends = a.collective == Collective::alltoall;
    if (sends) {
        request.send_counts_c.assign(a.sendcounts_c, a.sendcounts_c + out);
        a.sendcounts_c = request.send_counts_c.data();
    }
    if (!a.per_block_types) {
        request.recv_displs_c.assign(a.rdispls_c, a.rdispls_c + in);
        a.rdispls_c = request.recv_displs_c.data();
        if (sends) {
            request.send_displs_c.assign(a.sdispls_c, a.sdispls_c + out);
            a.sdispls_c = request.send_displs_c.data();
        }
        return;
    }
    request.recv_byte_displs.assign(a.rbyte_displs, a.rbyte_displs + in);
    request.send_byte_displs.assign(a.sbyte_displs, a.sbyte_displs + out);
    a.rbyte_displs = request.recv_byte_displs.data();
    a.sbyte_displs = request.send_byte_displs.data();
    hold_types(a, pattern, request.send_types, request.recv_types, true);
    a.sendtypes = request.send_types.types.data();
    a.recvtypes = request.recv_types.types.data();
}

/// Copies the v-variants' arrays into the request and points `a` at the copies.
void keep_arrays(RequestState& request, CallArgs& a, const PatternState& pattern) {
    if (!a.variable) return;
    // The communicator's arrays, every slot; none where the pattern has no neighbor that way
    // (arrays may then be NULL: check_counts requires them only for real neighbors).
    const auto in = pattern.in.empty() ? 0 : pattern.slots.in_blocks;
    const auto out = pattern.out.empty() ? 0 : pattern.slots.out_blocks;
    if (a.large) {
        keep_large_arrays(request, a, pattern, in, out);
        return;
    }
    if (a.per_block_types) {
        request.recv_counts.assign(a.recvcounts, a.recvcounts + in);
        request.recv_byte_displs.assign(a.rbyte_displs, a.rbyte_displs + in);
        request.send_counts.assign(a.sendcounts, a.sendcounts + out);
        request.send_byte_displs.assign(a.sbyte_displs, a.sbyte_displs + out);
        a.recvcounts = request.recv_counts.data();
        a.rbyte_displs = request.recv_byte_displs.data();
        a.sendcounts = request.send_counts.data();
        a.sbyte_displs = request.send_byte_displs.data();
        hold_types(a, pattern, request.send_types, request.recv_types, true);
        a.sendtypes = request.send_types.types.data();
        a.recvtypes = request.recv_types.types.data();
        return;
    }
    request.recv_counts.assign(a.recvcounts, a.recvcounts + in);
    request.recv_displs.assign(a.rdispls, a.rdispls + in);
    a.recvcounts = request.recv_counts.data();
    a.rdispls = request.recv_displs.data();
    if (a.collective == Collective::alltoall) {
        request.send_counts.assign(a.sendcounts, a.sendcounts + out);
        request.send_displs.assign(a.sdispls, a.sdispls + out);
        a.sendcounts = request.send_counts.data();
        a.sdispls = request.send_displs.data();
    }
}

/// Frees what a request holds except its execution and its place on the pattern.
void release_resources(RequestState& request) {
    if (request.own_send_type) MPI_Type_free(&request.send_type);
    if (request.own_recv_type) MPI_Type_free(&request.recv_type);
    request.send_types.release();
    request.recv_types.release();
    request.own_send_type = request.own_recv_type = false;
    if (request.kind == RequestState::Kind::persistent) release_comm(&request.comm);
}

/// Releases a request: a nonblocking request's execution goes back to the pattern for reuse,
/// and the request object stays in its handle slot for the next request.
void destroy(RequestState* request) {
    PatternState& pattern = *request->pattern;
    release_resources(*request);
    if (request->kind == RequestState::Kind::nonblocking) {
        auto& flight = pattern.in_flight;
        flight.erase(std::remove(flight.begin(), flight.end(), request), flight.end());
        if (request->execution && !request->execution->active()) {
            idle_of(pattern.variants[request->variant], request->collective, *request->execution)
                .push_back(std::move(request->execution));
        }
    }
    request->execution.reset();
    request->candidate_executions.clear();
    request->pick = Pick{};
    request->pattern = nullptr;
    --pattern.requests;
    request_table().release(request->handle, true);
}

using RequestPtr = std::unique_ptr<RequestState, void (*)(RequestState*)>;

/// A new request with its datatypes retained and arrays copied; `a` is updated to the copies.
/// The object comes from the handle table (a released one when there is one: no allocation).
RequestPtr make_request(PatternState& pattern, CallArgs& a, RequestState::Kind kind) {
    auto [object, handle] = request_table().acquire();
    RequestPtr request(object, destroy);
    request->handle = handle;
    request->kind = kind;
    request->pattern = &pattern;
    request->collective = a.collective;
    request->comm = MPI_COMM_NULL;
    request->call = 0;
    request->variant = 0;
    ++pattern.requests;
    request->send_type = retain_type(a.sendtype, &request->own_send_type);
    request->recv_type = retain_type(a.recvtype, &request->own_recv_type);
    a.sendtype = request->send_type;
    a.recvtype = request->recv_type;
    keep_arrays(*request, a, pattern);
    return request;
}

// ---- persistent -----------------------------------------------------------------------------

/// Persistent v-variants learn every unit's byte size once: the fixed-size collective of the
/// same plan replays the origins' block sizes (one uint64 per block) through the pattern.
std::vector<std::uint64_t> exchange_sizes(const PatternState& pattern, const RequestState& request, const CallArgs& a,
                                          const BlockBuffer& send, std::uint32_t variant) {
    const auto& plan = pattern.variants[variant].plans[index_of(a.collective)];
    const MPI_Comm comm = request.comm;
    const std::size_t blocks = a.collective == Collective::allgather ? 1 : pattern.out.size();
    std::vector<std::uint64_t> own(blocks + 1), got(pattern.in.size() + 1);
    for (std::uint32_t b = 0; b < blocks; ++b) own[b] = send.bytes(b);
    Execution sizes(plan, comm);
    sizes.bind(describe_buffer(own.data(), 1, MPI_UINT64_T), describe_buffer(got.data(), 1, MPI_UINT64_T));
    sizes.start();
    progress::run_blocking(sizes);
    std::vector<std::uint64_t> table(plan.homes.size());
    for (std::uint32_t u = 0; u < table.size(); ++u)
        std::memcpy(&table[u], sizes.unit_address(u), sizeof(std::uint64_t));
    return table;
}

/// Smallest block for which persistent fixed-size calls of an all-direct plan go to the native
/// persistent collective. Below it nbr's engine is 1.2-1.4x faster than Open MPI 4.1's
/// libnbc, from it libnbc is a few percent ahead (bench/overhead/README.md, measured side by side).
constexpr std::size_t kNativePersistentMinBytes = 512;

/// Whether a persistent request goes to the native persistent collective: when its variant's
/// blocking calls may (all-direct everywhere, on the pattern's topology communicator; see
/// nbr.cpp), for fixed-size calls whose blocks are at least kNativePersistentMinBytes. Every
/// rank decides alike: matching calls have blocks of one size on all ranks, so never where a
/// rank has no neighbors (its counts are free: it cannot tell the size; fixed_native).
bool native_persistent(const PatternState& pattern, const Variant& variant, const CallArgs& a,
                       const BlockBuffer& recv) {
#if defined(NBR_NATIVE_INIT)
    return !a.variable && !a.large && variant.native[index_of(a.collective)] && !pattern.isolated_ranks &&
           recv.bytes(0) >= kNativePersistentMinBytes;
#else
    (void)pattern, (void)variant, (void)a, (void)recv;
    return false;
#endif
}

MPI_Request native_persistent_init(const CallArgs& a, MPI_Comm comm) {
    MPI_Request request = MPI_REQUEST_NULL;
#if defined(NBR_NATIVE_INIT)
    const int code =
        a.collective == Collective::allgather
            ? NBR_NATIVE_INIT(allgather)(a.sendbuf, static_cast<int>(a.sendcount), a.sendtype, a.recvbuf,
                                         static_cast<int>(a.recvcount), a.recvtype, comm, MPI_INFO_NULL, &request)
            : NBR_NATIVE_INIT(alltoall)(a.sendbuf, static_cast<int>(a.sendcount), a.sendtype, a.recvbuf,
                                        static_cast<int>(a.recvcount), a.recvtype, comm, MPI_INFO_NULL, &request);
    check_mpi(code, "native persistent collective init");
#else
    (void)a, (void)comm;
#endif
    return request;
}

/// Persistent v-variants choose their variant once, at init, by the fixed-size bands, from the
/// mean bytes per edge over all ranks (one MPI_Allreduce on the request's communicator), which
/// this returns; nothing for a single-variant pattern that is not measured (nothing to choose,
/// and NBR_LOAD_STATS communicates nothing of its own).
std::optional<std::uint64_t> persistent_mean_bytes(const PatternState& pattern, const RequestState& request,
                                                   const CallArgs& a, const BlockBuffer& send) {
    if (pattern.variants.size() == 1 && (!pattern.tuner || pattern.tuner->model_only)) return std::nullopt;
    const auto out = static_cast<std::uint32_t>(pattern.out.size());
    double totals[2] = {0, static_cast<double>(out)};  // bytes, edges
    for (std::uint32_t j = 0; j < out; ++j) {
        totals[0] += static_cast<double>(send.bytes(a.collective == Collective::allgather ? 0 : j));
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_DOUBLE, MPI_SUM, request.comm), "MPI_Allreduce");
    return totals[1] > 0 ? static_cast<std::uint64_t>(totals[0] / totals[1]) : 0;
}

/// Binds one variant's execution of a persistent request (collective for v-variants: their
/// block sizes travel once); failures are agreed by the caller.
std::unique_ptr<Execution> persistent_execution(PatternState& pattern, RequestState& request, const CallArgs& a,
                                                const BlockBuffer& send, const BlockBuffer& recv, std::uint32_t v) {
    Variant& variant = pattern.variants[v];
    const Plan& plan = plan_use(variant, a.collective, a.variable, a.variable ? 0 : recv.bytes(0)).plan;
    auto execution = std::make_unique<Execution>(plan, request.comm, pattern.step_synchronized);
    if (!a.variable) {
        execution->bind(send, recv);
        if (native_persistent(pattern, variant, a, recv))
            execution->bind_native(native_persistent_init(a, request.comm));
    } else {
        execution->bind_sized(send, recv, exchange_sizes(pattern, request, a, send, v));
    }
    return execution;
}

/// The executions of a persistent request: the variant's; for a measured shape still in its
/// trials one per candidate (each start then runs the tuner's pick).
void bind_persistent(PatternState& pattern, RequestState& request, const CallArgs& a, const BlockBuffer& send,
                     const BlockBuffer& recv, std::optional<std::uint64_t> bytes) {
    const std::uint32_t model =
        a.variable ? band_of(pattern, a.collective, bytes.value_or(0)) : variant_of_call(pattern, a, send, recv);
    request.variant = model;
    request.pick = Pick{};
    if (measures(pattern, a.variable)) {
        auto key = shape_key(pattern, a.collective, a.variable, CallMode::persistent, bytes.value_or(0));
        if (!bytes) key.size_class = ShapeKey::kAnySize;
        request.pick.shape = pattern.tuner->shape_of(pattern, key);
        const auto& shape = pattern.tuner->shapes[static_cast<std::size_t>(request.pick.shape)];
        if (shape.state == Shape::State::trial) {
            for (const auto& candidate : shape.candidates) {
                request.candidate_executions.push_back(
                    persistent_execution(pattern, request, a, send, recv, candidate.variant));
            }
            request.current_candidate = 0;
            request.execution = std::move(request.candidate_executions[0]);
            request.variant = shape.candidates[0].variant;
            return;
        }
        request.variant = shape.candidates[shape.chosen].variant;
    }
    request.execution = persistent_execution(pattern, request, a, send, recv, request.variant);
}

/// A persistent start of a measured shape: the tuner's pick, its execution swapped in.
void pick_persistent(RequestState& request) {
    PatternState& pattern = *request.pattern;
    const int shape = request.pick.shape;
    request.pick = pattern.tuner->next(pattern, shape);
    if (!request.candidate_executions.empty() && request.pick.candidate != request.current_candidate) {
        std::swap(request.candidate_executions[request.current_candidate], request.execution);
        std::swap(request.candidate_executions[request.pick.candidate], request.execution);
        request.current_candidate = request.pick.candidate;
    }
    request.variant = request.pick.variant;
    request.execution->set_timed(request.pick.timed);
}

// ---- nonblocking ----------------------------------------------------------------------------

/// Before call `call` reuses a tag window, the call that last used it must be complete here.
void reserve_window(PatternState& pattern, std::uint64_t call) {
    if (pattern.windows < 2) {
        throw NbrError(NBR_ERR_PATTERN, "the pattern needs " + std::to_string(pattern.tag_window) +
                                            " tags per call: MPI_TAG_UB leaves none for nonblocking calls");
    }
    const auto reuse = static_cast<std::uint64_t>(pattern.windows - 1);
    auto& flight = pattern.in_flight;  // in call order
    while (!flight.empty()) {
        RequestState* oldest = flight.front();
        if (!oldest->execution->active()) {
            flight.erase(flight.begin());
        } else if (call - oldest->call >= reuse) {
            Execution* execution = oldest->execution.get();
            progress::wait_all({&execution, 1});
        } else {
            break;
        }
    }
}

/// Names a nonblocking call in messages (built only when there is something to say).
std::string nonblocking_name(const CallArgs& a) {
    return std::string("nbr_ineighbor_") + name_of(a);
}

/// After completion: nonblocking requests are released (MPI semantics), persistent ones stay.
void finish(RequestState* request, nbr_request_t* handle) {
    if (request->kind == RequestState::Kind::nonblocking) {
        destroy(request);
        *handle = NBR_REQUEST_NULL;
    }
}

/// The requests behind `handles` (nullptr for NBR_REQUEST_NULL), in `states`.
/// @throws NbrError(NBR_ERR_ARG) naming the index of a handle that is not live.
void resolve_all(int count, const nbr_request_t handles[], RequestState* states[], const char* what) {
    for (int i = 0; i < count; ++i) {
        states[i] = handles[i] == NBR_REQUEST_NULL ? nullptr : resolve(handles[i]);
        if (handles[i] != NBR_REQUEST_NULL && states[i] == nullptr) {
            throw NbrError(NBR_ERR_ARG, std::string(what) + ": requests[" + std::to_string(i) +
                                            "] is not a live request (released already, or a stale copy?)");
        }
    }
}

/// Gives measured selection the time of a completed nonblocking call or persistent start (once).
void record_completion(RequestState& request) {
    Pick& pick = request.pick;
    if (!pick.timed || request.pattern == nullptr || !request.pattern->tuner) return;
    if (request.execution->error_code() == 0) {
        request.pattern->tuner->record(*request.pattern, pick, request.execution->elapsed_us());
    }
    pick.timed = false;
}

/// Completes every request of `states` (nullptr entries and inactive persistent ones are
/// skipped; released ones get NBR_REQUEST_NULL in `handles`); the first failure is returned,
/// naming its index.
int complete_all(int count, RequestState* const states[], nbr_request_t handles[], const char* what) {
    int first_error = NBR_SUCCESS;
    std::string message;
    for (int i = 0; i < count; ++i) {
        if (states[i] == nullptr) continue;
        Execution& execution = *states[i]->execution;
        record_completion(*states[i]);
        if (execution.error_code() != 0 && first_error == NBR_SUCCESS) {
            first_error = execution.error_code();
            message = std::string(what) + ": request " + std::to_string(i) + ": " + execution.error_message();
        }
        execution.clear_error();
        finish(states[i], &handles[i]);
    }
    if (first_error != NBR_SUCCESS) return fail(first_error, message);
    return NBR_SUCCESS;
}

/// Whether every request of `states` is complete (none active).
bool all_complete(int count, RequestState* const states[]) {
    return std::none_of(states, states + count, [](const RequestState* r) { return r && r->execution->active(); });
}

/// The calling thread's scratch space for one waitall or testall: reused, so a repeated call
/// allocates nothing.
struct Scratch {
    std::vector<RequestState*> states;
    std::vector<Execution*> active;

    static Scratch& of_thread(int count) {
        thread_local Scratch scratch;
        scratch.states.assign(static_cast<std::size_t>(count), nullptr);
        scratch.active.clear();
        return scratch;
    }
    /// The executions still active among the states.
    std::span<Execution* const> active_executions() {
        for (RequestState* r : states) {
            if (r != nullptr && r->execution->active()) active.push_back(r->execution.get());
        }
        return active;
    }
};

}  // namespace

int init_persistent(nbr_pattern_t handle, CallArgs a, unsigned long flags, nbr_request_t* out) {
    return guarded([&] {
        const std::string what = std::string("nbr_neighbor_") + name_of(a) + "_init";
        if (out == nullptr) return fail(NBR_ERR_ARG, what + ": request is NULL");
        *out = NBR_REQUEST_NULL;
        PatternState* pattern = resolve(handle);
        if (pattern == nullptr) return fail(NBR_ERR_ARG, what + ": invalid pattern handle");
        if (flags != 0) return fail(NBR_ERR_ARG, what + ": flags must be 0");
        check_counts(a, *pattern);
        auto request = make_request(*pattern, a, RequestState::Kind::persistent);
        // Collective from here: every rank dups, so no rank may bail out before this point on its own.
        private_comm(pattern->comm, &request->comm);
        BlockBuffer send = send_buffer(a, request->send_type, *pattern);
        BlockBuffer recv = recv_buffer(a, request->recv_type, *pattern);
        match_fixed_blocks(a, *pattern, send, recv);
        const std::optional<std::uint64_t> bytes =
            a.variable ? persistent_mean_bytes(*pattern, *request, a, send) : block_bytes(a, recv);
        if (!a.variable) {
            bind_persistent(*pattern, *request, a, send, recv, bytes);
            *out = handle_of(*request.release());
            return NBR_SUCCESS;
        }
        int code = guarded([&] {
            bind_persistent(*pattern, *request, a, send, recv, bytes);
            return NBR_SUCCESS;
        });
        code = agree(request->comm, code);
        if (code != NBR_SUCCESS) return code;
        *out = handle_of(*request.release());
        return NBR_SUCCESS;
    });
}

int start_nonblocking(nbr_pattern_t handle, CallArgs a, nbr_request_t* out) {
    return guarded([&] {
        if (out == nullptr) return fail(NBR_ERR_ARG, nonblocking_name(a) + ": request is NULL");
        *out = NBR_REQUEST_NULL;
        PatternState* pattern = resolve(handle);
        if (pattern == nullptr) return fail(NBR_ERR_ARG, nonblocking_name(a) + ": invalid pattern handle");
        check_counts(a, *pattern);
        const std::uint64_t call = pattern->calls++;
        reserve_window(*pattern, call);
        auto request = make_request(*pattern, a, RequestState::Kind::nonblocking);
        request->call = call;
        BlockBuffer send = send_buffer(a, request->send_type, *pattern);
        BlockBuffer recv = recv_buffer(a, request->recv_type, *pattern);
        match_fixed_blocks(a, *pattern, send, recv);
        request->pick = pick_for(*pattern, a.collective, a.variable, CallMode::nonblocking, block_bytes(a, recv),
                                 [&] { return variant_of_call(*pattern, a, send, recv); });
        request->variant = request->pick.variant;
        const PlanUse use =
            plan_use(pattern->variants[request->variant], a.collective, a.variable, a.variable ? 0 : recv.bytes(0));
        if (!use.idle.empty()) {
            request->execution = std::move(use.idle.back());
            use.idle.pop_back();
        } else {
            request->execution = std::make_unique<Execution>(use.plan, pattern->comm, pattern->step_synchronized);
        }
        Execution& execution = *request->execution;
        if (a.variable) {
            execution.bind_in_band(send, recv);
        } else {
            execution.bind(send, recv);
        }
        const auto window = 1 + static_cast<std::int64_t>(call % static_cast<std::uint64_t>(pattern->windows - 1));
        execution.set_tag_offset(static_cast<int>(window * pattern->tag_window));
        execution.set_timed(request->pick.timed);
        execution.start();
        progress::add(execution);
        pattern->in_flight.push_back(request.get());
        *out = handle_of(*request.release());
        return NBR_SUCCESS;
    });
}

}  // namespace nbr::internal

namespace {

using nbr::internal::all_complete;
using nbr::internal::complete_all;
using nbr::internal::destroy;
using nbr::internal::Execution;
using nbr::internal::fail;
using nbr::internal::guarded;
using nbr::internal::pick_persistent;
using nbr::internal::RequestState;
using nbr::internal::resolve;
using nbr::internal::resolve_all;
using nbr::internal::Scratch;

}  // namespace

extern "C" {

int nbr_start(nbr_request_t* handle) {
    return guarded([&] {
        RequestState* request = handle == nullptr ? nullptr : resolve(*handle);
        if (request == nullptr) return fail(NBR_ERR_ARG, "nbr_start: request is NULL or not live");
        if (request->kind != RequestState::Kind::persistent) {
            return fail(NBR_ERR_STATE, "nbr_start: not a persistent request");
        }
        if (request->execution->active()) return fail(NBR_ERR_STATE, "nbr_start: request is already active");
        if (request->pick.shape >= 0) pick_persistent(*request);
        request->execution->start();
        nbr::internal::progress::add(*request->execution);
        return NBR_SUCCESS;
    });
}

int nbr_wait(nbr_request_t* handle) {
    return guarded([&] {
        if (handle == nullptr) return fail(NBR_ERR_ARG, "nbr_wait: request pointer is NULL");
        if (*handle == NBR_REQUEST_NULL) return NBR_SUCCESS;
        RequestState* request = resolve(*handle);
        if (request == nullptr) {
            return fail(NBR_ERR_ARG, "nbr_wait: request is not live (released already, or a stale copy?)");
        }
        Execution* execution = request->execution.get();
        nbr::internal::progress::wait_all({&execution, 1});
        return complete_all(1, &request, handle, "nbr_wait");
    });
}

int nbr_test(nbr_request_t* handle, int* flag) {
    return guarded([&] {
        if (handle == nullptr || flag == nullptr) return fail(NBR_ERR_ARG, "nbr_test: request or flag pointer is NULL");
        *flag = 0;
        if (*handle == NBR_REQUEST_NULL) {
            *flag = 1;
            return NBR_SUCCESS;
        }
        RequestState* request = resolve(*handle);
        if (request == nullptr) {
            return fail(NBR_ERR_ARG, "nbr_test: request is not live (released already, or a stale copy?)");
        }
        nbr::internal::progress::poll();
        *flag = request->execution->active() ? 0 : 1;
        return *flag ? complete_all(1, &request, handle, "nbr_test") : NBR_SUCCESS;
    });
}

int nbr_waitall(int count, nbr_request_t requests[]) {
    return guarded([&] {
        if (count < 0 || (count > 0 && requests == nullptr)) return fail(NBR_ERR_ARG, "nbr_waitall: invalid argument");
        Scratch& scratch = Scratch::of_thread(count);
        resolve_all(count, requests, scratch.states.data(), "nbr_waitall");
        nbr::internal::progress::wait_all(scratch.active_executions());
        return complete_all(count, scratch.states.data(), requests, "nbr_waitall");
    });
}

int nbr_testall(int count, nbr_request_t requests[], int* flag) {
    return guarded([&] {
        if (count < 0 || (count > 0 && requests == nullptr) || flag == nullptr) {
            return fail(NBR_ERR_ARG, "nbr_testall: invalid argument");
        }
        Scratch& scratch = Scratch::of_thread(count);
        resolve_all(count, requests, scratch.states.data(), "nbr_testall");
        nbr::internal::progress::poll();
        *flag = all_complete(count, scratch.states.data()) ? 1 : 0;
        return *flag ? complete_all(count, scratch.states.data(), requests, "nbr_testall") : NBR_SUCCESS;
    });
}

int nbr_request_free(nbr_request_t* handle) {
    return guarded([&] {
        RequestState* request = handle == nullptr ? nullptr : resolve(*handle);
        if (request == nullptr) return fail(NBR_ERR_ARG, "nbr_request_free: request is NULL or not live");
        if (request->execution->active()) {
            return fail(NBR_ERR_STATE, "nbr_request_free: request is still active (complete it first)");
        }
        destroy(request);
        *handle = NBR_REQUEST_NULL;
        return NBR_SUCCESS;
    });
}

}  // extern "C"
