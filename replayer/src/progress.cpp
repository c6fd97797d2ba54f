#include "progress.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>

#include "nbr.h"

namespace nbr::internal::progress {

namespace {

/// The number of registered executions, on the hand-off's page (hand_off.hpp).
std::atomic<std::size_t>& registered = hand_off_page.registered;

struct Entry {
    Execution* execution;
    bool claimed;  // a thread blocks in MPI on it; sweeps leave it alone
};

std::mutex registry_mutex;
std::vector<Entry> registry;

void remove_locked(Execution* execution) {
    registry.erase(
        std::remove_if(registry.begin(), registry.end(), [&](const Entry& e) { return e.execution == execution; }),
        registry.end());
    registered.store(registry.size());
}

/// One nonblocking progress call on every unclaimed execution; completed and failed ones leave.
void sweep_locked() {
    for (std::size_t i = 0; i < registry.size();) {
        Entry& entry = registry[i];
        bool done = false;
        if (!entry.claimed) {
            try {
                done = entry.execution->progress(false);
            } catch (const NbrError&) {
                done = true;  // progress() recorded the failure in the execution
            } catch (const std::bad_alloc&) {
                done = true;
            }
        }
        if (done || !entry.execution->active()) {
            registry.erase(registry.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
    registered.store(registry.size());
}

/// Drives `execution` to completion (or failure), progressing the others meanwhile.
void drive(Execution& execution) {
    for (;;) {
        std::unique_lock lock(registry_mutex);  // released between sweeps: other threads may start requests
        if (!execution.active()) return;
        if (registry.size() == 1 && registry[0].execution == &execution && !registry[0].claimed) {
            // Nothing else to progress: block in MPI, without holding the registry.
            registry[0].claimed = true;
            lock.unlock();
            try {
                execution.progress(true);
            } catch (...) {
                // The failure is recorded in the execution.
            }
            lock.lock();
            remove_locked(&execution);
            return;
        }
        sweep_locked();
    }
}

}  // namespace

void add(Execution& execution) {
    std::lock_guard lock(registry_mutex);
    registry.push_back({&execution, false});
    registered.store(registry.size());
}

void wait_all(std::span<Execution* const> executions) {
    if (executions.size() == 1) {
        drive(*executions[0]);
        return;
    }
    auto any_active = [&] {
        return std::any_of(executions.begin(), executions.end(), [](const Execution* e) { return e->active(); });
    };
    while (any_active()) poll();
}

void poll() {
    if (registered.load() == 0) return;
    std::lock_guard lock(registry_mutex);
    sweep_locked();
}

void complete_registered() {
    while (registered.load() != 0) {
        const std::lock_guard lock(registry_mutex);
        if (std::all_of(registry.begin(), registry.end(), [](const Entry& e) { return e.claimed; })) return;
        sweep_locked();
    }
}

void run_blocking(Execution& execution) {
    if (registered.load() == 0) {
        execution.progress(true);
        return;
    }
    while (!execution.progress(false)) poll();
}

}  // namespace nbr::internal::progress
