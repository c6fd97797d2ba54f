#pragma once
// libnbr-preload's report (NBR_REPORT): per communicator, collective and call shape what ran,
// what measured selection timed, and what it saved against naive (docs/environment.md).
#include <string>

#include "nbr.h"

namespace nbr::interpose {

/// @brief One communicator's part of the report, as text lines and as a JSON object.
struct CommunicatorReport {
    std::string text;
    std::string json;
};

/// @brief What a communicator's pattern did (its rank 0's view; times are that rank's, the
/// candidates' the slowest rank's). `id` names the communicator in the report ("W.N": the N-th
/// communicator attached on world rank W, its rank 0).
[[nodiscard]] CommunicatorReport describe_pattern(nbr_pattern_t pattern, const std::string& id, int ranks,
                                                  const std::string& dir, const std::string& origin,
                                                  unsigned long long calls);

/// @brief A communicator that ran natively (created by `function`), and why.
[[nodiscard]] CommunicatorReport describe_native(const std::string& function, int ranks, const std::string& why);

}  // namespace nbr::interpose
