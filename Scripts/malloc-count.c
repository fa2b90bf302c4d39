// An LD_PRELOAD allocation counter for glibc: counts malloc, calloc, realloc,
// posix_memalign, aligned_alloc and memalign calls of a process and writes the total to
// the file named by MALLOC_COUNT_FILE when the process exits. Used by
// Scripts/count-allocations and the test that checks `drummer sample` allocates nothing
// per generated note.
#define _GNU_SOURCE
#include <stdlib.h>
#include <stdio.h>
#include <stdatomic.h>
#include <unistd.h>
#include <string.h>
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static atomic_long n_alloc;
void *malloc(size_t s) { atomic_fetch_add(&n_alloc, 1); return __libc_malloc(s); }
void *calloc(size_t a, size_t b) { atomic_fetch_add(&n_alloc, 1); return __libc_calloc(a, b); }
void *realloc(void *p, size_t s) { atomic_fetch_add(&n_alloc, 1); return __libc_realloc(p, s); }
int posix_memalign(void **p, size_t a, size_t s) { atomic_fetch_add(&n_alloc, 1); *p = __libc_memalign(a, s); return *p ? 0 : 12; }
void *aligned_alloc(size_t a, size_t s) { atomic_fetch_add(&n_alloc, 1); return __libc_memalign(a, s); }
void *memalign(size_t a, size_t s) { atomic_fetch_add(&n_alloc, 1); return __libc_memalign(a, s); }
__attribute__((destructor)) static void report(void) {
  const char *path = getenv("MALLOC_COUNT_FILE");
  if (!path) return;
  FILE *f = fopen(path, "w"); if (!f) return;
  fprintf(f, "%ld\n", atomic_load(&n_alloc)); fclose(f);
}
