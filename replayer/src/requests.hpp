#pragma once
// Nonblocking and persistent neighborhood collectives: a request per call (or per persistent
// init), started here and completed by nbr_wait/nbr_test and their all-forms (requests.cpp).
#include "call_args.hpp"
#include "nbr.h"

namespace nbr::internal {

/// A persistent collective's request (nbr_neighbor_*_init): checks, binds the variant's
/// execution (v-variants: their block sizes exchanged once) and returns it inactive in `out`.
int init_persistent(nbr_pattern_t handle, CallArgs a, unsigned long flags, nbr_request_t* out);

/// A nonblocking collective (nbr_ineighbor_*): checks, starts it and returns its request in `out`.
int start_nonblocking(nbr_pattern_t handle, CallArgs a, nbr_request_t* out);

}  // namespace nbr::internal
