// The CPUs in this process's affinity mask, for DrummerCore's CPUCount, and a thread's name:
// sched_getaffinity, CPU_COUNT and pthread_setname_np need _GNU_SOURCE, which Swift's Glibc
// module does not import.
#define _GNU_SOURCE
#include <pthread.h>
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

void drummer_name_this_thread(const char *name) {
#ifdef __linux__
    pthread_setname_np(pthread_self(), name);  // at most 15 bytes; a longer name is refused, harmlessly
#else
    (void)name;
#endif
}
