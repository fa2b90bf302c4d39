#ifndef DRUMMER_CHDF5_SHIM_H
#define DRUMMER_CHDF5_SHIM_H
// HDF5 (found through pkg-config "hdf5"). Its type and property-list ids are
// macros that expand to global variables after an H5open() call; Swift cannot
// import them, so they are exposed here as static inline functions.
#include <hdf5.h>

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
static inline unsigned drummer_H5F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }
static inline unsigned drummer_H5F_ACC_EXCL(void) { return H5F_ACC_EXCL; }
static inline unsigned drummer_H5F_ACC_RDONLY(void) { return H5F_ACC_RDONLY; }
static inline unsigned drummer_H5F_ACC_RDWR(void) { return H5F_ACC_RDWR; }
static inline size_t drummer_H5T_VARIABLE(void) { return H5T_VARIABLE; }

// Silence HDF5's default error-stack printing to stderr; the Swift layer turns
// every negative status into a typed error instead.
static inline void drummer_H5_silence_errors(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }
#endif
