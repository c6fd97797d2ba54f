#pragma once

#include <cstdint>

#include <mpi.h>

#include "nbr/simulator/measure.hpp"

namespace nbr::simulator {

/// @brief Time per call of libnbr's blocking `nbr_neighbor_alltoall` of `bytes` over one edge
/// each way between the two ranks of `pair` (median of `repeat` loops of 1000 calls): the
/// one-edge naive pattern, compiled by each rank into a temporary directory of its own (the
/// two need not share a file system), loaded on a dist-graph communicator of the pair, so
/// libnbr hands it to MPI's neighborhood alltoall. This is the per-call quantity
/// `nbr-calibrate` and `nbr-bench --calibrate` measure: the call libnbr's users make, with
/// libnbr's own argument checks and band choice. Collective over `pair` (2 ranks); valid on
/// both. @throws std::runtime_error on both ranks if either cannot compile, load or call.
[[nodiscard]] double time_libnbr_call(MPI_Comm pair, std::uint64_t bytes, int repeat);

/// @brief `measure_link` with the per-call quantity timed on libnbr's call
/// (`time_libnbr_call`): what nbr-calibrate and nbr-bench --calibrate measure.
[[nodiscard]] Calibration measure_link_with_libnbr_call(MPI_Comm comm, MeasureOptions options);

}  // namespace nbr::simulator
