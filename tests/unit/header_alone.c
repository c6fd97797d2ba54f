/* nbr.h on its own, first in a C file: it includes everything its declarations use (the
   build fails otherwise). MPICH's mpi.h, unlike Open MPI's, does not bring <stddef.h>. */
#include "nbr.h"

size_t nbr_header_alone_size(void);
size_t nbr_header_alone_size(void) {
    return sizeof(nbr_pattern_t) + sizeof(size_t);
}
