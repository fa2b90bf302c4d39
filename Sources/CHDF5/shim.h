#ifndef DRUMMER_CHDF5_SHIM_H
#define DRUMMER_CHDF5_SHIM_H
// HDF5 (found through pkg-config "hdf5"). Its type and property-list ids are
// macros that expand to global variables after an H5open() call; Swift cannot
// import them, so they are exposed here as static inline functions.
#include <hdf5.h>
#include <stdio.h>

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
static inline hid_t drummer_H5P_DATASET_CREATE(void) { return H5P_DATASET_CREATE; }
static inline hid_t drummer_H5P_LINK_CREATE(void) { return H5P_LINK_CREATE; }
static inline unsigned drummer_H5F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }
static inline unsigned drummer_H5F_ACC_EXCL(void) { return H5F_ACC_EXCL; }
static inline unsigned drummer_H5F_ACC_RDONLY(void) { return H5F_ACC_RDONLY; }
static inline unsigned drummer_H5F_ACC_RDWR(void) { return H5F_ACC_RDWR; }
static inline size_t drummer_H5T_VARIABLE(void) { return H5T_VARIABLE; }

// Silence HDF5's default error-stack printing to stderr; the Swift layer turns
// every negative status into a typed error instead.
static inline void drummer_H5_silence_errors(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

// With a thread-safe HDF5 build (Debian's is) each thread has its own error
// stack and its own auto-print setting, so the silencing must run once per
// thread; this does it on the first call in each thread and is cheap after.
static inline void drummer_H5_silence_errors_on_this_thread(void) {
    static _Thread_local int silenced = 0;
    if (!silenced) {
        drummer_H5_silence_errors();
        silenced = 1;
    }
}

// Copies the innermost (most specific) message of this thread's HDF5 error
// stack into buf, e.g. "unable to open file: name = '...', errno = 2, ...".
typedef struct { char *buf; size_t len; } drummer_H5_message_buffer;
static inline herr_t drummer_H5_walk_innermost(unsigned n, const H5E_error2_t *err, void *client) {
    drummer_H5_message_buffer *b = (drummer_H5_message_buffer *)client;
    if (n == 0 && err != NULL && err->desc != NULL) {
        snprintf(b->buf, b->len, "%s", err->desc);
    }
    return 0;
}
static inline void drummer_H5_last_error(char *buf, size_t len) {
    if (buf == NULL || len == 0) return;
    buf[0] = 0;
    drummer_H5_message_buffer b = { buf, len };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, drummer_H5_walk_innermost, &b);
}
#endif
