#ifndef DRUMMER_CLAPACKE_SHIM_H
#define DRUMMER_CLAPACKE_SHIM_H
// LAPACKE (found through pkg-config "lapacke"); nothing here needs a shim.
#include <lapacke.h>
#endif
