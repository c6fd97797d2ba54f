/* Test hooks of libnbr: exported (nbr_*), not part of the public API, not installed. */
#ifndef NBR_TESTING_H
#define NBR_TESTING_H

#include "nbr.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Measured selection counts `microseconds` more for every timed trial call of the variant named
 * `variant` on this process (0 removes it): a test makes a candidate slow, or slow on some ranks
 * only, without depending on the machine's timing. NBR_ERR_ARG for NULL or a negative time.
 */
int nbr_testing_slow_variant(const char* variant, double microseconds);

/**
 * Measured selection counts `microseconds` more for every second timed trial sample (the 2nd, 4th,
 * ...) of the variant named `variant` on this process (0 removes it): noise wide enough that
 * the trials cannot tell such a variant apart from another, whatever the machine does.
 * NBR_ERR_ARG for NULL or a negative time.
 */
int nbr_testing_noisy_variant(const char* variant, double microseconds);

/**
 * Patterns loaded with NBR_LOAD_MEASURE from now on count as running on cores their ranks share
 * (1), as not (0), or as the load finds (-1, the default): a test decides what the rule for
 * oversubscribed nodes does whatever the machine it runs on. Call it alike on every rank.
 * NBR_ERR_ARG for any other value.
 */
int nbr_testing_oversubscribed(int state);

/**
 * The barriers measured selection made before the trial turns of shape `shape` of the pattern
 * (nbr_pattern_shape_stats' index) in this communicator: one per turn of a blocking shape, none
 * for nonblocking and persistent ones. NBR_ERR_ARG for an invalid pattern, shape or pointer.
 */
int nbr_testing_turn_barriers(nbr_pattern_t pattern, int shape, unsigned long long* barriers);

#ifdef __cplusplus
}
#endif

#endif
