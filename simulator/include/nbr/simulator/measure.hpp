#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <mpi.h>

#include "nbr/simulator/calibrate.hpp"

namespace nbr::simulator {

/// @brief The sizes nbr-calibrate measures by default (parse with `parse_sizes`): 1 B to 4 MiB.
inline constexpr const char* kCalibrationSizes =
    "1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M,2M,4M";

/// @brief The block sizes of nbr-calibrate's pattern checks by default: 1 B to 64 KiB in
/// powers of 4.
inline constexpr const char* kCheckSizes = "1,4,16,64,256,1K,4K,16K,64K";

/// @brief How `measure_link` measures.
struct MeasureOptions {
    std::vector<std::uint64_t> sizes;  ///< message sizes; the eager limit and one byte more are added
    int repeat = 11;                   ///< repetitions per quantity (the median is kept)
    /// Passes over the sizes, the calls and the pattern checks, one after another; each
    /// quantity's median over them is kept (median_of_passes), so that a state of the machine
    /// met in fewer than half of them moves nothing.
    int passes = 3;
    std::uint64_t max_eager_probe = 1 << 20;  ///< the eager limit is searched up to this size
    /// Times the per-call quantity: a blocking neighborhood alltoall of `bytes` over `edges`
    /// parallel edges each way between the two ranks of `pair`, per call (median of
    /// `repeat`), valid on rank 0; with `combined` and more than one edge the blocks travel in
    /// one message each way, without it one message per edge (the naive pattern). Empty:
    /// MPI_Neighbor_alltoall itself over one edge (the blocks calls and the pattern checks are
    /// then not measured). nbr-calibrate passes `time_libnbr_call`, the call libnbr's users
    /// make.
    std::function<double(MPI_Comm pair, std::uint64_t bytes, std::uint32_t edges, bool combined, int repeat)> time_call;
    /// Block sizes of the pattern checks (`Calibration::pattern_points`): the call over
    /// `Calibration::blocks_call_edges` parallel edges, naive and combined (with `time_call` only).
    std::vector<std::uint64_t> check_sizes;
};

/// @brief Measures the LogGP quantities between ranks 0 and 1 of `comm` (ping-pong, bursts of
/// nonblocking sends and receives, message streams, a late receiver for the eager limit,
/// memcpy). Collective over `comm`; ranks other than 0 and 1 only wait. The result is valid
/// on rank 0.
[[nodiscard]] Calibration measure_link(MPI_Comm comm, const MeasureOptions& options);

/// @brief The pattern checks alone (`Calibration::pattern_points` at `options.check_sizes`,
/// timed by `options.time_call`, which is required): what `nbr-calibrate --recheck` measures
/// against a machine file fitted in another launch. Collective over `comm`; valid on rank 0.
[[nodiscard]] Calibration measure_patterns(MPI_Comm comm, const MeasureOptions& options);

/// @brief Half the ping-pong round trip of `bytes` between ranks 0 and 1 of `comm` (median of
/// `repeat`); for two ranks that share one core, what `fit_switch` needs. Collective over
/// `comm`; valid on rank 0.
[[nodiscard]] double measure_one_way(MPI_Comm comm, std::uint64_t bytes, int repeat);

}  // namespace nbr::simulator
