#pragma once
// The MPI completion calls over a mix of proxies and the application's own requests, written
// once for any binding (preload.cpp: C; preload_fortran.cpp: Fortran).
//
// A Binding names its request handle and status types, how a handle maps to its C request
// (the proxies' key), its null handle, and the MPI library's own (PMPI) completion calls in
// that binding, each returning an MPI error code. Flags and indices are ints in both
// bindings (MPI_Fint is int, a Fortran LOGICAL false is 0); indices count from
// Binding::kFirstIndex (C: 0, Fortran: 1). The logic: while the nbr request
// behind a proxy is incomplete, the proxy is hidden from MPI (passed as the null handle) and
// the nbr request is progressed; once it is complete the proxy is handed to MPI, which
// completes it as it would any request (a persistent proxy is a started persistent
// MPI_PROC_NULL send, a nonblocking call's an inactive one, which MPI completes at once) and
// writes every status. MPI_Testany and MPI_Testsome skip inactive requests, so they report a
// complete nonblocking proxy here, with the empty status. A nonblocking call's proxy, once
// completed, goes back to the pool and the application's handle becomes the null handle
// (`retire`), as MPI does for its own requests.
#include <vector>

#include "preload.hpp"

namespace nbr::interpose {

template <class Binding>
class Completion {
public:
    using Handle = typename Binding::Handle;
    using Status = typename Binding::Status;

    static int wait(Handle* request, Status* status) {
        Proxy* proxy = find(*request);
        if (proxy == nullptr) return Binding::wait(request, status);
        progress(*proxy, true);
        const int code = Binding::wait(request, status);
        if (code == MPI_SUCCESS) retire(*proxy, request);
        return code;
    }

    static int test(Handle* request, int* flag, Status* status) {
        Proxy* proxy = find(*request);
        if (proxy == nullptr) return Binding::test(request, flag, status);
        if (!progress(*proxy, false)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        const int code = Binding::test(request, flag, status);
        if (code == MPI_SUCCESS && *flag != 0) retire(*proxy, request);
        return code;
    }

    static int request_get_status(Handle request, int* flag, Status* status) {
        Proxy* proxy = find(request);
        if (proxy != nullptr && !progress(*proxy, false)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        return Binding::request_get_status(request, flag, status);
    }

    static int waitall(int count, Handle requests[], Status statuses[]) {
        if (!any(count, requests)) return Binding::waitall(count, requests, statuses);
        const auto found = proxies_of(count, requests);
        for (Proxy* proxy : found) {
            if (proxy != nullptr) progress(*proxy, true);
        }
        const int code = Binding::waitall(count, requests, statuses);
        if (code == MPI_SUCCESS) retire_all(found, requests);
        return code;
    }

    static int testall(int count, Handle requests[], int* flag, Status statuses[]) {
        if (!any(count, requests)) return Binding::testall(count, requests, flag, statuses);
        const View view = visible(count, requests);
        if (view.pending) {  // MPI_Testall completes all or none
            *flag = 0;
            return MPI_SUCCESS;
        }
        const int code = Binding::testall(count, requests, flag, statuses);
        if (code == MPI_SUCCESS && *flag != 0) retire_all(view.proxies, requests);
        return code;
    }

    static int testany(int count, Handle requests[], int* index, int* flag, Status* status) {
        if (!any(count, requests)) return Binding::testany(count, requests, index, flag, status);
        const View view = visible(count, requests);
        for (int i = 0; i < count; ++i) {  // a complete nonblocking proxy, which MPI would not report
            Proxy* proxy = completed_nonblocking(view, i);
            if (proxy == nullptr) continue;
            *index = i + Binding::kFirstIndex;
            *flag = 1;
            retire(*proxy, &requests[i]);
            return empty_status(status);
        }
        auto after = view.handles;
        const int code = Binding::testany(count, after.data(), index, flag, status);
        write_back(view, after, requests);
        if (code == MPI_SUCCESS && *flag != 0 && *index == MPI_UNDEFINED && view.pending)
            *flag = 0;  // not all inactive
        return code;
    }

    static int waitany(int count, Handle requests[], int* index, Status* status) {
        if (!any(count, requests)) return Binding::waitany(count, requests, index, status);
        for (;;) {
            int flag = 0;
            const int code = testany(count, requests, index, &flag, status);
            if (code != MPI_SUCCESS || flag != 0) return code;
        }
    }

    static int testsome(int count, Handle requests[], int* outcount, int indices[], Status statuses[]) {
        if (!any(count, requests)) return Binding::testsome(count, requests, outcount, indices, statuses);
        const View view = visible(count, requests);
        auto after = view.handles;
        const int code = Binding::testsome(count, after.data(), outcount, indices, statuses);
        write_back(view, after, requests);
        if (code != MPI_SUCCESS) return code;
        int done = *outcount == MPI_UNDEFINED ? 0 : *outcount;
        for (int i = 0; i < count; ++i) {  // complete nonblocking proxies, which MPI does not report
            Proxy* proxy = completed_nonblocking(view, i);
            if (proxy == nullptr) continue;
            indices[done] = i + Binding::kFirstIndex;
            const int status_code = empty_status(Binding::status_at(statuses, done));
            if (status_code != MPI_SUCCESS) return status_code;
            retire(*proxy, &requests[i]);
            ++done;
        }
        if (done > 0 || view.pending) *outcount = done;  // else MPI's answer: all inactive
        return MPI_SUCCESS;
    }

    static int waitsome(int count, Handle requests[], int* outcount, int indices[], Status statuses[]) {
        if (!any(count, requests)) return Binding::waitsome(count, requests, outcount, indices, statuses);
        for (;;) {
            const int code = testsome(count, requests, outcount, indices, statuses);
            if (code != MPI_SUCCESS || *outcount != 0) return code;
        }
    }

    static int start(Handle* request) {
        Proxy* proxy = find(*request);
        if (proxy != nullptr && !proxy->persistent) return MPI_ERR_REQUEST;  // a nonblocking call's request
        if (proxy != nullptr) {
            const int code = start_proxy(*proxy);
            if (code != MPI_SUCCESS) return code;
        }
        return Binding::start(request);
    }

    static int startall(int count, Handle requests[]) {
        if (!any(count, requests)) return Binding::startall(count, requests);
        for (int i = 0; i < count; ++i) {
            const int code = start(&requests[i]);
            if (code != MPI_SUCCESS) return code;
        }
        return MPI_SUCCESS;
    }

    static int request_free(Handle* request) {
        Proxy* proxy = find(*request);
        if (proxy != nullptr && !free_proxy(*proxy)) {
            *request = Binding::null();  // a nonblocking call's proxy: pooled, not freed
            return MPI_SUCCESS;
        }
        return Binding::request_free(request);
    }

private:
    /// The handles with the proxies of incomplete nbr requests replaced by the null handle
    /// (after progressing every proxy once), their C requests, and whether any was hidden.
    struct View {
        std::vector<Handle> handles;
        std::vector<Proxy*> proxies;  // per handle, its proxy or nullptr
        bool pending = false;
    };

    // proxies_live() first: without proxies, no Fortran handle is converted (the common path).
    static Proxy* find(Handle handle) { return proxies_live() ? proxy_of(Binding::key(handle)) : nullptr; }

    /// Per handle, its proxy or nullptr.
    static std::vector<Proxy*> proxies_of(int count, const Handle requests[]) {
        std::vector<Proxy*> found(static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i) found[static_cast<std::size_t>(i)] = proxy_of(Binding::key(requests[i]));
        return found;
    }

    static bool any(int count, const Handle requests[]) {
        if (!proxies_live()) return false;
        for (int i = 0; i < count; ++i) {
            if (proxy_of(Binding::key(requests[i])) != nullptr) return true;
        }
        return false;
    }

    static View visible(int count, const Handle requests[]) {
        View view{std::vector<Handle>(requests, requests + count), proxies_of(count, requests), false};
        for (std::size_t i = 0; i < view.handles.size(); ++i) {
            Proxy* proxy = view.proxies[i];
            if (proxy != nullptr && !progress(*proxy, false)) {
                view.handles[i] = Binding::null();
                view.pending = true;
            }
        }
        return view;
    }

    /// A proxy MPI has just completed: a nonblocking call's goes back to the pool and the
    /// application's handle becomes the null handle; a persistent one stays (inactive).
    static void retire(Proxy& proxy, Handle* request) {
        if (proxy.persistent) return;
        release(proxy);
        *request = Binding::null();
    }

    /// retire for every proxy among `found` (the handles' proxies before a call that completed
    /// them all).
    static void retire_all(const std::vector<Proxy*>& found, Handle requests[]) {
        for (std::size_t i = 0; i < found.size(); ++i) {
            if (found[i] != nullptr) retire(*found[i], &requests[i]);
        }
    }

    /// The nonblocking call's proxy at `i` of `view` if its nbr request is complete (visible).
    /// It is an inactive persistent request to MPI, which MPI_Testany and MPI_Testsome skip
    /// as they skip null handles, so those report it here.
    static Proxy* completed_nonblocking(const View& view, int i) {
        const auto at = static_cast<std::size_t>(i);
        if (view.handles[at] == Binding::null()) return nullptr;  // pending (hidden) or null
        Proxy* proxy = view.proxies[at];
        return proxy != nullptr && !proxy->persistent ? proxy : nullptr;
    }

    /// Writes the empty status (what MPI writes for a null handle) to `status`.
    static int empty_status(Status* status) {
        Handle none = Binding::null();
        return Binding::wait(&none, status);
    }

    /// Copies back what MPI did to the visible requests.
    static void write_back(const View& view, const std::vector<Handle>& after, Handle requests[]) {
        for (std::size_t i = 0; i < after.size(); ++i) {
            if (view.handles[i] == Binding::null()) continue;  // hidden, or null already
            requests[i] = after[i];
        }
    }
};

}  // namespace nbr::interpose
