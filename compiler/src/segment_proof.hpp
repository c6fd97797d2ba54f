#pragma once
// The checks behind nbrc verify's proof of segmented forms (verify.cpp, "Segmented forms"):
// one rank's segmented plan on its own, and the whole program's waits.

#include <cstdint>
#include <string>

#include "nbr/plan/plan.hpp"
#include "nbr/simulator/simulate.hpp"

namespace nbr::compiler::internal {

/// @brief Checks one rank's plan (segmented or not): every send packs only units that are
/// the rank's own or that a receive it waits for brings, its count of waits is the number of
/// receives that release it, and each of the rank's `in_slots` in-slots is delivered once.
/// @throws std::runtime_error starting with `where`.
void check_segmented_plan(const nbr::internal::Plan& plan, std::uint32_t in_slots, const std::string& where);

/// @brief Checks that no message of `program` waits, through the receives it depends on, for
/// itself (then every message is sent once its receives are in).
/// @throws std::runtime_error starting with `where`.
void check_acyclic(const simulator::SimProgram& program, const std::string& where);

}  // namespace nbr::compiler::internal
