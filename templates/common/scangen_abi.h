/* The C ABI between code that scangen emits and the scangen runtime.
 *
 * A shared object built from emitted C++ exports one symbol, `scangen_module_v1`, that describes
 * its functions. The runtime (runtime/src/cpu_jit.cpp) loads it with dlopen and calls entries
 * through this interface only, so the loader and the emitted code share no C++ types. The file
 * is embedded verbatim into every emitted source (see templates/CMakeLists.txt) and included by the
 * runtime; keep it plain C. */
#ifndef SCANGEN_ABI_H
#define SCANGEN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added `into_entries` at the end of scangen_module_info; the runtime loads versions 1
 * and 2 (a version 1 module has no entries that write into the caller's memory). */
#define SCANGEN_ABI_VERSION 2
#define SCANGEN_ABI_OLDEST_VERSION 1
/* The largest rank a tensor may have at a function boundary (the frontend rejects more). */
#define SCANGEN_MAX_RANK 8
#define SCANGEN_ERROR_CAPACITY 2048

/* Element types; the values are part of the ABI. */
enum scangen_dtype {
  SCANGEN_DTYPE_BOOL = 0, /* 1 byte, 0 or 1 */
  SCANGEN_DTYPE_I32 = 1,
  SCANGEN_DTYPE_I64 = 2,
  SCANGEN_DTYPE_F32 = 3,
  SCANGEN_DTYPE_F64 = 4
};

/* A dense, C-ordered tensor. Scalars have rank 0 and one element at `data`. */
typedef struct scangen_tensor {
  void* data;     /* first element */
  void* owner;    /* results: the pointer to pass to free() (may differ from data); args, and
                   * results in the caller's memory: NULL */
  int64_t shape[SCANGEN_MAX_RANK];
  int32_t rank;
  int32_t dtype;  /* enum scangen_dtype */
} scangen_tensor;

enum scangen_status {
  SCANGEN_OK = 0,
  SCANGEN_USER_ERROR = 1,     /* bad argument, shape mismatch, index out of range, ... */
  SCANGEN_INTERNAL_ERROR = 2  /* a failed invariant of the emitted code: a scangen bug */
};

typedef struct scangen_error {
  int32_t line;   /* location in the .scan file the error belongs to; 0 when none */
  int32_t column;
  char message[SCANGEN_ERROR_CAPACITY]; /* NUL-terminated, without location prefix */
} scangen_error;

/* Runs one function. On SCANGEN_OK every result is filled in and owns its memory (free(owner));
 * otherwise no result owns memory and `error` says why. */
typedef int32_t (*scangen_entry)(const scangen_tensor* args, int32_t num_args,
                                 scangen_tensor* results, int32_t num_results,
                                 scangen_error* error);

/* Runs one function with its results written into the caller's memory: `results` holds the
 * caller's tensors (data, shape, rank and dtype, owner NULL), which must have the shapes of the
 * results and overlap no argument or each other (a user error otherwise). On SCANGEN_OK they hold
 * the results; otherwise their contents are unspecified and `error` says why. Same signature as
 * scangen_entry. */
typedef scangen_entry scangen_into_entry;

typedef struct scangen_function_info {
  const char* name;       /* the fn's name in the .scan file */
  const char* signature;  /* e.g. "(A: f32[n], k: i32) -> f32[n]" for messages */
  scangen_entry entry;
  int32_t num_args;
  int32_t num_results;
  const int32_t* arg_dtypes;
  const int32_t* arg_ranks;
  const int32_t* result_dtypes;
  const int32_t* result_ranks;
} scangen_function_info;

typedef struct scangen_module_info {
  int32_t abi_version;    /* SCANGEN_ABI_VERSION */
  const char* source_file;
  int32_t num_functions;
  const scangen_function_info* functions;
  /* Since version 2: per function, the entry that writes into the caller's memory, or NULL for a
   * function whose result shapes are known only while it runs (docs/cli.md). */
  const scangen_into_entry* into_entries;
} scangen_module_info;

/* The one symbol a loaded module exports. */
#define SCANGEN_MODULE_SYMBOL "scangen_module_v1"
typedef const scangen_module_info* (*scangen_module_getter)(void);

#ifdef __cplusplus
}
#endif

#endif /* SCANGEN_ABI_H */
