// An LD_PRELOAD allocation counter for glibc: counts malloc, calloc, realloc,
// posix_memalign, aligned_alloc and memalign calls of a process and writes the total to
// the file named by MALLOC_COUNT_FILE when the process exits. Used by
// Scripts/count-allocations, the test that checks `drummer sample` allocates nothing
// per generated note, and the one that checks `drummer play`'s callback allocates nothing.
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
// drummer play's JACK process callback calls these at its start and end when they are defined
// (weak references in Sources/CJackLive/live.c): allocations between them are the callback's,
// written with the number of callbacks to MALLOC_COUNT_CALLBACK_FILE ("CALLBACKS ALLOCATIONS").
static __thread int in_callback __attribute__((tls_model("initial-exec")));
static atomic_long n_callbacks, n_callback_alloc;
void drummer_live_callback_enter(void) { in_callback = 1; atomic_fetch_add(&n_callbacks, 1); }
void drummer_live_callback_leave(void) { in_callback = 0; }
static void count(void) {
  atomic_fetch_add(&n_alloc, 1);
  if (in_callback) atomic_fetch_add(&n_callback_alloc, 1);
}
void *malloc(size_t s) { count(); return __libc_malloc(s); }
void *calloc(size_t a, size_t b) { count(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t s) { count(); return __libc_realloc(p, s); }
int posix_memalign(void **p, size_t a, size_t s) { count(); *p = __libc_memalign(a, s); return *p ? 0 : 12; }
void *aligned_alloc(size_t a, size_t s) { count(); return __libc_memalign(a, s); }
void *memalign(size_t a, size_t s) { count(); return __libc_memalign(a, s); }
__attribute__((destructor)) static void report(void) {
  const char *path = getenv("MALLOC_COUNT_FILE");
  if (path) {
    FILE *f = fopen(path, "w");
    if (f) { fprintf(f, "%ld\n", atomic_load(&n_alloc)); fclose(f); }
  }
  path = getenv("MALLOC_COUNT_CALLBACK_FILE");
  if (path) {
    FILE *f = fopen(path, "w");
    if (f) { fprintf(f, "%ld %ld\n", atomic_load(&n_callbacks), atomic_load(&n_callback_alloc)); fclose(f); }
  }
}
