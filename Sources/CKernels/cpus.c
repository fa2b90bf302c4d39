// The CPUs in this process's affinity mask, for DrummerCore's CPUCount: sched_getaffinity and
// CPU_COUNT need _GNU_SOURCE, which Swift's Glibc module does not import.
#define _GNU_SOURCE
#include <sched.h>
#include "drummer_kernels.h"

int drummer_affinity_cpu_count(void) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
#else
    return 0;
#endif
}
