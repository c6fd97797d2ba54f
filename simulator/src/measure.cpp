// nbr-calibrate's measurements between two ranks (methods: docs/simulate.md, "Calibration").
#include "nbr/simulator/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "statistics.hpp"

namespace nbr::simulator {

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Busy-waits without calling MPI, so that no progress happens meanwhile.
void spin_us(double us) {
    const double until = now_us() + us;
    while (now_us() < until) {
    }
}

using internal::median;

/// The two measuring ranks over their own communicator; every quantity is timed on rank 0.
class Pair {
public:
    Pair(MPI_Comm comm, int repeat) : comm_(comm), repeat_(repeat) { MPI_Comm_rank(comm, &rank_); }

    [[nodiscard]] MPI_Comm comm() const { return comm_; }

    /// Messages per burst: enough to amortize the timer, few enough to stay in eager buffers
    /// (with a per-pair buffer found, eager bursts that fit it, at least 2).
    [[nodiscard]] int burst(std::uint64_t bytes) const {
        auto n = std::clamp<std::uint64_t>((256 * 1024) / std::max<std::uint64_t>(bytes, 1), 4, 64);
        if (buffer_.capacity > 0 && bytes <= eager_limit_) {
            n = std::clamp<std::uint64_t>(buffer_.capacity / (bytes + buffer_.message_bytes), 2, n);
        }
        return static_cast<int>(n);
    }

    /// From now on, bursts of eager sizes (up to `eager_limit`) stay within `buffer`.
    void fit_bursts_to(const EagerBuffer& buffer, std::uint64_t eager_limit) {
        buffer_ = buffer;
        eager_limit_ = eager_limit;
    }

    /// Rank 0's time for exchanges of n = 1..`max_messages` messages of `bytes` each way.
    ExchangeBursts exchanges(std::uint64_t bytes, int max_messages) {
        ExchangeBursts e;
        e.bytes = bytes;
        for (int n = 1; n <= max_messages; ++n) e.us.push_back(exchange(bytes, n));
        return e;
    }

    /// Each rank posts n receives from the other, then n sends to it, and waits for all: rank
    /// 0's time (median of the repetitions), on both ranks (what they measure next depends on it).
    double exchange(std::uint64_t bytes, int n) {
        resize(bytes, 2 * n);
        double t = repeat_median([&] {
            MPI_Barrier(comm_);
            const double t0 = now_us();
            exchange_once(bytes, n);
            return now_us() - t0;
        });
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm_);
        return t;
    }

    /// n messages each way, back to back, `inner_rounds` times per repetition: the time per
    /// exchange, as a loop of neighborhood calls over n edges sees it (no barrier's skew in it).
    double exchange_loop(std::uint64_t bytes, int n) {
        const int inner = inner_rounds(bytes * static_cast<std::uint64_t>(n));
        resize(bytes, 2 * n);
        return timed([&] {
                   for (int k = 0; k < inner; ++k) exchange_once(bytes, n);
               }) /
               inner;
    }

    double one_way(std::uint64_t bytes) {
        const int inner = inner_rounds(bytes);
        resize(bytes, 1);
        return timed([&] {
                   for (int k = 0; k < inner; ++k) ping_pong(bytes);
               }) /
               (2.0 * inner);
    }

    double send_overhead(std::uint64_t bytes) {
        const int n = burst(bytes);
        resize(bytes, n);
        return repeat_median([&] { return timed_burst(bytes, n, false); }) / n;
    }

    /// Rank 1 times completing a burst that rank 0 sent well before (eager sizes only).
    double recv_overhead(std::uint64_t bytes, double send_us) {
        const int n = burst(bytes);
        resize(bytes, n);
        const double delay = 100 + 10 * n * send_us;
        double t = repeat_median([&] {
            post_receives(bytes, n);
            MPI_Barrier(comm_);
            double elapsed = 0;
            if (rank_ == 0) {
                post_sends(bytes, n);
                MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE);
            } else {
                spin_us(delay);
                const double t0 = now_us();
                MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE);
                elapsed = now_us() - t0;
            }
            return elapsed;
        });
        MPI_Bcast(&t, 1, MPI_DOUBLE, 1, comm_);
        return t / n;
    }

    /// Rank 0 times a nonblocking send from its post to its completion while rank 1 waits in
    /// the matching receive (posted, then announced by an empty message; rank 0 lets the
    /// announcement's sender reach its wait before it starts the clock).
    double send_completion(std::uint64_t bytes) {
        resize(bytes, 1);
        constexpr int kInner = 20;
        double t = repeat_median([&] {
            double sum = 0;
            for (int k = 0; k < kInner; ++k) {
                MPI_Request request = MPI_REQUEST_NULL;
                if (rank_ == 1) {
                    MPI_Irecv(recv_.data(), static_cast<int>(bytes), MPI_BYTE, 0, 2, comm_, &request);
                    MPI_Send(nullptr, 0, MPI_BYTE, 0, 3, comm_);
                    MPI_Wait(&request, MPI_STATUS_IGNORE);
                    continue;
                }
                MPI_Recv(nullptr, 0, MPI_BYTE, 1, 3, comm_, MPI_STATUS_IGNORE);
                spin_us(5);
                const double t0 = now_us();
                MPI_Isend(send_.data(), static_cast<int>(bytes), MPI_BYTE, 1, 2, comm_, &request);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
                sum += now_us() - t0;
            }
            return sum / kInner;
        });
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm_);
        return t;
    }

    /// (PRTT(n) − PRTT(1)) / (n − 1): a stream of n messages answered by one empty message.
    double rate(std::uint64_t bytes) {
        const int n = burst(bytes);
        resize(bytes, n);
        const double one = repeat_median([&] { return timed_burst(bytes, 1, true); });
        const double many = repeat_median([&] { return timed_burst(bytes, n, true); });
        return std::max(0.0, many - one) / (n - 1);
    }

    /// A send the receiver posts only 2 ms later completes early if and only if it is eager.
    bool eager(std::uint64_t bytes) {
        resize(bytes, 1);
        int votes = 0;
        for (int r = 0; r < 3; ++r) {
            MPI_Barrier(comm_);
            if (rank_ == 0) {
                const double t0 = now_us();
                MPI_Send(send_.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, comm_);
                votes += now_us() - t0 < 1000 ? 1 : 0;
            } else {
                spin_us(2000);
                MPI_Recv(recv_.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, comm_, MPI_STATUS_IGNORE);
            }
        }
        int eager = votes >= 2 ? 1 : 0;
        MPI_Bcast(&eager, 1, MPI_INT, 0, comm_);
        return eager == 1;
    }

    /// Rank 1 times posting n receives (rank 0 then sends them, so they complete); per receive.
    double post_recv(std::uint64_t bytes) {
        const int n = burst(bytes);
        resize(bytes, n);
        double t = repeat_median([&] {
            MPI_Barrier(comm_);
            double elapsed = 0;
            if (rank_ == 1) {
                const double t0 = now_us();
                post_receives(bytes, n);
                elapsed = now_us() - t0;
            }
            MPI_Barrier(comm_);
            if (rank_ == 0) post_sends(bytes, n);
            MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE);
            return elapsed;
        });
        MPI_Bcast(&t, 1, MPI_DOUBLE, 1, comm_);
        return t / n;
    }

    /// Time per call of a blocking MPI_Neighbor_alltoall of `bytes` over one edge each way
    /// (a loop of calls, as nbr-bench times them).
    double neighbor_call(std::uint64_t bytes) {
        const int other = 1 - rank_;
        MPI_Comm graph = MPI_COMM_NULL;
        MPI_Dist_graph_create_adjacent(comm_, 1, &other, MPI_UNWEIGHTED, 1, &other, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                       &graph);
        resize(bytes, 1);
        constexpr int kCalls = 1000;
        const int count = static_cast<int>(bytes);
        const double t = timed([&] {
            for (int k = 0; k < kCalls; ++k) {
                MPI_Neighbor_alltoall(send_.data(), count, MPI_BYTE, recv_.data(), count, MPI_BYTE, graph);
            }
        });
        MPI_Comm_free(&graph);
        return t / kCalls;
    }

private:
    /// Round trips or exchanges per timed repetition: 4 MiB of messages, 2 to 100.
    static int inner_rounds(std::uint64_t bytes) {
        return static_cast<int>(std::clamp<std::uint64_t>((1 << 22) / std::max<std::uint64_t>(bytes, 1), 2, 100));
    }

    /// Each rank posts n receives from the other, then n sends to it, and waits for all.
    void exchange_once(std::uint64_t bytes, int n) {
        const int other = 1 - rank_;
        const int count = static_cast<int>(bytes);
        for (int k = 0; k < n; ++k) {
            MPI_Irecv(recv_.data() + k * bytes, count, MPI_BYTE, other, 0, comm_, &requests_[k]);
        }
        for (int k = 0; k < n; ++k) {
            MPI_Isend(send_.data() + k * bytes, count, MPI_BYTE, other, 0, comm_, &requests_[n + k]);
        }
        MPI_Waitall(2 * n, requests_.data(), MPI_STATUSES_IGNORE);
    }

    void resize(std::uint64_t bytes, int n) {
        const auto need = static_cast<std::size_t>(bytes) * static_cast<std::size_t>(n);
        if (send_.size() < need) send_.assign(need, std::byte{1});
        if (recv_.size() < need) recv_.assign(need, std::byte{0});
        requests_.resize(static_cast<std::size_t>(n));
    }

    void post_receives(std::uint64_t bytes, int n) {
        if (rank_ != 1) return;
        for (int k = 0; k < n; ++k) {
            MPI_Irecv(recv_.data() + k * bytes, static_cast<int>(bytes), MPI_BYTE, 0, 0, comm_, &requests_[k]);
        }
    }

    void post_sends(std::uint64_t bytes, int n) {
        for (int k = 0; k < n; ++k) {
            MPI_Isend(send_.data() + k * bytes, static_cast<int>(bytes), MPI_BYTE, 1, 0, comm_, &requests_[k]);
        }
    }

    void ping_pong(std::uint64_t bytes) {
        const int other = 1 - rank_;
        const int count = static_cast<int>(bytes);
        if (rank_ == 0) {
            MPI_Send(send_.data(), count, MPI_BYTE, other, 0, comm_);
            MPI_Recv(recv_.data(), count, MPI_BYTE, other, 0, comm_, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(recv_.data(), count, MPI_BYTE, other, 0, comm_, MPI_STATUS_IGNORE);
            MPI_Send(send_.data(), count, MPI_BYTE, other, 0, comm_);
        }
    }

    /// Rank 1 pre-posts n receives; rank 0 times posting n sends, and with `answered` until
    /// rank 1's empty answer to the whole burst arrives. Returns rank 0's time.
    double timed_burst(std::uint64_t bytes, int n, bool answered) {
        post_receives(bytes, n);
        MPI_Barrier(comm_);
        double t = 0;
        const double t0 = now_us();
        if (rank_ == 0) post_sends(bytes, n);
        if (rank_ == 0 && !answered) t = now_us() - t0;
        MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE);
        if (answered && rank_ == 0) {
            MPI_Recv(nullptr, 0, MPI_BYTE, 1, 1, comm_, MPI_STATUS_IGNORE);
            t = now_us() - t0;
        } else if (answered) {
            MPI_Send(nullptr, 0, MPI_BYTE, 0, 1, comm_);
        }
        return t;
    }

    /// Median over the repetitions (after one warm-up) of what `body` returns.
    double repeat_median(const std::function<double()>& body) {
        (void)body();
        std::vector<double> times;
        for (int r = 0; r < repeat_; ++r) times.push_back(body());
        return median(times);
    }

    double timed(const std::function<void()>& body) {
        return repeat_median([&] {
            MPI_Barrier(comm_);
            const double t0 = now_us();
            body();
            return now_us() - t0;
        });
    }

    MPI_Comm comm_;
    int repeat_;
    int rank_ = 0;
    EagerBuffer buffer_;
    std::uint64_t eager_limit_ = 0;
    std::vector<std::byte> send_, recv_;
    std::vector<MPI_Request> requests_;
};

/// Largest eager size: doubling until a send waits for the receiver, then bisection.
std::uint64_t find_eager_limit(Pair& pair, std::uint64_t max_probe) {
    std::uint64_t lo = 0, hi = 1;
    while (hi <= max_probe && pair.eager(hi)) {
        lo = hi;
        hi *= 2;
    }
    if (hi > max_probe) return 0;
    while (hi - lo > 1) {
        const auto mid = lo + (hi - lo) / 2;
        (pair.eager(mid) ? lo : hi) = mid;
    }
    return lo;
}

/// Per number of messages, the median over `runs` of its time.
ExchangeBursts median_series(const std::vector<ExchangeBursts>& runs) {
    ExchangeBursts series = runs.front();
    for (std::size_t n = 0; n < series.us.size(); ++n) {
        std::vector<double> times;
        for (const auto& run : runs) times.push_back(run.us[n]);
        series.us[n] = median(std::move(times));
    }
    return series;
}

/// The per-pair eager buffer: exchanges of up to 64 messages each way of 128 and 64 B (at most
/// half and a quarter of the eager limit), small enough that a buffer of a few KiB fills
/// within them, in `passes` series each whose medians are fitted (the overflow cost is a
/// difference of slopes, which one slow series moves); the bursts of the points then stay
/// within the buffer.
void measure_eager_buffer(Pair& pair, Calibration& c, int passes) {
    constexpr int kMaxMessages = 64;
    const std::uint64_t larger = std::min<std::uint64_t>(128, c.eager_limit / 2);
    if (larger < 4) return;
    std::vector<ExchangeBursts> large, small;
    for (int k = 0; k < std::max(1, passes); ++k) {
        large.push_back(pair.exchanges(larger, kMaxMessages));
        small.push_back(pair.exchanges(larger / 2, kMaxMessages));
    }
    c.buffer_exchanges.push_back(median_series(large));
    c.buffer_exchanges.push_back(median_series(small));
    c.buffer = fit_eager_buffer(c.buffer_exchanges);
    pair.fit_bursts_to(c.buffer, c.eager_limit);
}

/// Single-core memcpy time per byte, 1 MiB at a time (beyond the private caches).
double copy_ns_per_byte(int repeat) {
    constexpr std::size_t kBytes = 1024 * 1024;
    std::vector<std::byte> from(kBytes, std::byte{1}), to(kBytes);
    std::vector<double> times;
    for (int r = 0; r <= repeat; ++r) {
        const double t0 = now_us();
        for (int k = 0; k < 16; ++k) {
            std::memcpy(to.data(), from.data(), kBytes);
            from[static_cast<std::size_t>(k)] = to[kBytes - 1 - static_cast<std::size_t>(k)];
        }
        if (r > 0) times.push_back((now_us() - t0) * 1e3 / (16.0 * kBytes));
    }
    return median(times);
}

CalibrationPoint measure_point(Pair& pair, std::uint64_t bytes, std::uint64_t eager_limit) {
    CalibrationPoint p;
    p.bytes = bytes;
    p.one_way_us = pair.one_way(bytes);
    p.send_us = pair.send_overhead(bytes);
    if (eager_limit == 0 || bytes <= eager_limit) {
        p.recv_us = pair.recv_overhead(bytes, p.send_us);
    } else {
        p.complete_us = pair.send_completion(bytes);
        p.exchange_us = pair.exchange_loop(bytes, 1);
        p.exchange_many_us = pair.exchange_loop(bytes, kExchangeMessages);
        p.exchange_more_us = pair.exchange_loop(bytes, kExchangeMoreMessages);
    }
    p.rate_us = pair.rate(bytes);
    p.stream_messages = pair.burst(bytes);
    return p;
}

/// Runs `body(pair, rank)` on ranks 0 and 1 of `comm` over their own communicator; the
/// other ranks only wait. Collective over `comm`.
void with_pair(MPI_Comm comm, int repeat, const std::function<void(Pair&, int)>& body) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size < 2) throw std::invalid_argument("nbr-calibrate needs two ranks");
    MPI_Comm pair_comm = MPI_COMM_NULL;
    MPI_Comm_split(comm, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair_comm);
    if (pair_comm != MPI_COMM_NULL) {
        Pair pair(pair_comm, std::max(1, repeat));
        body(pair, rank);
        MPI_Comm_free(&pair_comm);
    }
    MPI_Barrier(comm);
}

/// The pattern checks on the pair's communicator: each check size naive, then combined.
void measure_pattern_points(MPI_Comm pair, const MeasureOptions& options, Calibration& c) {
    for (const auto bytes : options.check_sizes) {
        const double naive = options.time_call(pair, bytes, c.blocks_call_edges, false, options.repeat);
        const double combined = options.time_call(pair, bytes, c.blocks_call_edges, true, options.repeat);
        c.pattern_points.push_back({bytes, naive, combined});
    }
}

/// The sizes of `options` with the eager limit and one byte more, increasing, once each.
std::vector<std::uint64_t> point_sizes(const MeasureOptions& options, std::uint64_t eager_limit) {
    std::vector<std::uint64_t> sizes = options.sizes;
    if (eager_limit > 0) {
        sizes.push_back(eager_limit);
        sizes.push_back(eager_limit + 1);
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

/// One pass over every size, the calls and the pattern checks, into a copy of `c` (which
/// holds the eager limit and the buffer).
Calibration measure_pass(Pair& pair, const MeasureOptions& options, const Calibration& c) {
    Calibration pass = c;
    const auto sizes = point_sizes(options, c.eager_limit);
    for (const auto bytes : sizes) pass.points.push_back(measure_point(pair, bytes, c.eager_limit));
    pass.post_recv_us = pair.post_recv(sizes.front());
    pass.call_bytes = sizes.front();
    pass.call_us = options.time_call ? options.time_call(pair.comm(), pass.call_bytes, 1, false, options.repeat)
                                     : pair.neighbor_call(pass.call_bytes);
    if (options.time_call) {
        pass.blocks_call_us =
            options.time_call(pair.comm(), pass.call_bytes, pass.blocks_call_edges, true, options.repeat);
        for (auto& call : pass.byte_calls) {
            call.us = options.time_call(pair.comm(), call.bytes, pass.blocks_call_edges, true, options.repeat);
        }
        measure_pattern_points(pair.comm(), options, pass);
    }
    return pass;
}

/// `measure(pass)` `options.passes` times, each into a copy of `c`; their medians.
template <typename Measure>
Calibration median_of(const MeasureOptions& options, const Calibration& c, Measure measure) {
    std::vector<Calibration> passes;
    for (int k = 0; k < std::max(1, options.passes); ++k) passes.push_back(measure(c));
    return median_of_passes(passes);
}

}  // namespace

Calibration measure_patterns(MPI_Comm comm, const MeasureOptions& options) {
    if (!options.time_call) throw std::invalid_argument("measure_patterns needs a call to time");
    Calibration c;
    with_pair(comm, options.repeat, [&](Pair& pair, int) {
        c = median_of(options, c, [&](Calibration pass) {
            measure_pattern_points(pair.comm(), options, pass);
            return pass;
        });
    });
    return c;
}

double measure_one_way(MPI_Comm comm, std::uint64_t bytes, int repeat) {
    double t = 0;
    with_pair(comm, repeat, [&](Pair& pair, int) { t = pair.one_way(bytes); });
    return t;
}

Calibration measure_link(MPI_Comm comm, const MeasureOptions& options) {
    Calibration c;
    with_pair(comm, options.repeat, [&](Pair& pair, int rank) {
        c.eager_limit = find_eager_limit(pair, options.max_eager_probe);
        measure_eager_buffer(pair, c, options.passes);
        c = median_of(options, c, [&](const Calibration& base) { return measure_pass(pair, options, base); });
        if (options.time_call) c.late_one_way_us = pair.one_way(c.points.front().bytes);  // did the state hold?
        if (rank == 0) c.copy_ns_per_byte = copy_ns_per_byte(options.repeat);
    });
    return c;
}

}  // namespace nbr::simulator
