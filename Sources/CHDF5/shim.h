#ifndef DRUMMER_CHDF5_SHIM_H
#define DRUMMER_CHDF5_SHIM_H
// HDF5 (found through pkg-config "hdf5"). Its type and property-list ids are
// macros that expand to global variables after an H5open() call; Swift cannot
// import them, so they are exposed here as static inline functions.
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

static inline hid_t drummer_H5T_NATIVE_FLOAT(void) { return H5T_NATIVE_FLOAT; }
static inline hid_t drummer_H5T_NATIVE_DOUBLE(void) { return H5T_NATIVE_DOUBLE; }
static inline hid_t drummer_H5T_NATIVE_INT32(void) { return H5T_NATIVE_INT32; }
static inline hid_t drummer_H5T_NATIVE_INT64(void) { return H5T_NATIVE_INT64; }
static inline hid_t drummer_H5T_NATIVE_UINT64(void) { return H5T_NATIVE_UINT64; }
static inline hid_t drummer_H5T_STD_I32LE(void) { return H5T_STD_I32LE; }
static inline hid_t drummer_H5T_STD_I64LE(void) { return H5T_STD_I64LE; }
static inline hid_t drummer_H5T_STD_U64LE(void) { return H5T_STD_U64LE; }
static inline hid_t drummer_H5T_IEEE_F32LE(void) { return H5T_IEEE_F32LE; }
static inline hid_t drummer_H5T_IEEE_F64LE(void) { return H5T_IEEE_F64LE; }
static inline hid_t drummer_H5T_C_S1(void) { return H5T_C_S1; }
static inline hid_t drummer_H5P_DEFAULT(void) { return H5P_DEFAULT; }
static inline hid_t drummer_H5S_ALL(void) { return H5S_ALL; }
static inline hid_t drummer_H5P_FILE_ACCESS(void) { return H5P_FILE_ACCESS; }
static inline hid_t drummer_H5P_FILE_CREATE(void) { return H5P_FILE_CREATE; }
static inline hid_t drummer_H5P_DATASET_CREATE(void) { return H5P_DATASET_CREATE; }
static inline hid_t drummer_H5P_LINK_CREATE(void) { return H5P_LINK_CREATE; }
static inline unsigned drummer_H5F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }
static inline unsigned drummer_H5F_ACC_EXCL(void) { return H5F_ACC_EXCL; }
static inline unsigned drummer_H5F_ACC_RDONLY(void) { return H5F_ACC_RDONLY; }
static inline unsigned drummer_H5F_ACC_RDWR(void) { return H5F_ACC_RDWR; }
static inline size_t drummer_H5T_VARIABLE(void) { return H5T_VARIABLE; }
static inline H5F_libver_t drummer_H5F_LIBVER_LATEST(void) { return H5F_LIBVER_LATEST; }
static inline H5Z_filter_t drummer_H5Z_FILTER_FLETCHER32(void) { return H5Z_FILTER_FLETCHER32; }

// Silence HDF5's default error-stack printing to stderr; the Swift layer turns
// every negative status into a typed error instead.
static inline herr_t drummer_H5_silence_errors(void) { return H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

// With a thread-safe HDF5 build (Debian's is) each thread has its own error
// stack and its own auto-print setting, so a process-wide "once" is not enough:
// the silencing must run once per thread. This does it on the first call in
// each thread (a thread-local flag: no lock, no race) and is cheap after.
static inline void drummer_H5_silence_errors_on_this_thread(void) {
    static _Thread_local int silenced = 0;
    if (!silenced) {
        if (drummer_H5_silence_errors() >= 0) silenced = 1;
    }
}

// This thread's HDF5 error stack as text: `innermost` receives the message of
// the innermost (most specific) entry, e.g. "unable to open file: name = ...";
// `all` receives every entry's message, innermost first, separated by " | "
// (for classifying the failure: checksum, errno = 28, ...). Both are truncated
// to their buffer and always NUL-terminated.
typedef struct { char *inner; size_t inner_len; char *all; size_t all_len; size_t used; } drummer_H5_stack_text;
static inline herr_t drummer_H5_walk_collect(unsigned n, const H5E_error2_t *err, void *client) {
    drummer_H5_stack_text *t = (drummer_H5_stack_text *)client;
    if (err == NULL || err->desc == NULL) return 0;
    if (n == 0 && t->inner_len > 0) snprintf(t->inner, t->inner_len, "%s", err->desc);
    if (t->all_len > t->used + 1) {
        int w = snprintf(t->all + t->used, t->all_len - t->used, "%s%s", t->used ? " | " : "", err->desc);
        if (w > 0) t->used += (size_t)w < t->all_len - t->used ? (size_t)w : t->all_len - t->used - 1;
    }
    return 0;
}
static inline void drummer_H5_error_stack_text(char *inner, size_t inner_len, char *all, size_t all_len) {
    if (inner != NULL && inner_len > 0) inner[0] = 0;
    if (all != NULL && all_len > 0) all[0] = 0;
    drummer_H5_stack_text t = { inner, inner ? inner_len : 0, all, all ? all_len : 0, 0 };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, drummer_H5_walk_collect, &t);
}
#endif
