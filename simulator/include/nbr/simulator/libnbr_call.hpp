#pragma once

#include <cstdint>

#include <mpi.h>

#include "nbr/simulator/measure.hpp"

namespace nbr::simulator {

/// @brief Time per call of libnbr's blocking `nbr_neighbor_alltoall` of `bytes` over
/// `parallel` edges each way between the two ranks of `pair` (median of `repeat` loops of
/// 1000 calls), compiled by each rank into a temporary directory of its own (the two need not
/// share a file system) and loaded on a dist-graph communicator of the pair. The naive
/// pattern, which libnbr hands to MPI's neighborhood alltoall: over one edge the per-call
/// quantity `nbr-calibrate` and `nbr-bench --calibrate` measure, the call libnbr's users make,
/// with libnbr's own argument checks and band choice. With `combined`, over more edges,
/// distance halving's pattern, one message each way with every block, which libnbr packs and
/// unpacks: the copy per block. Collective over `pair` (2 ranks); valid on both.
/// @throws std::runtime_error on both ranks if either cannot compile, load or call.
[[nodiscard]] double time_libnbr_call(MPI_Comm pair, std::uint64_t bytes, std::uint32_t parallel, bool combined,
                                      int repeat);

/// @brief `measure_link` with the per-call quantity timed on libnbr's call
/// (`time_libnbr_call`): what nbr-calibrate and nbr-bench --calibrate measure.
[[nodiscard]] Calibration measure_link_with_libnbr_call(MPI_Comm comm, MeasureOptions options);

/// @brief `measure_patterns` timed on libnbr's call: what nbr-calibrate --recheck measures.
[[nodiscard]] Calibration measure_patterns_with_libnbr_call(MPI_Comm comm, MeasureOptions options);

}  // namespace nbr::simulator
