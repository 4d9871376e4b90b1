// C++ headers imported by a .scan file (`import "helpers.h"`): what Clang finds in them.
//
// A header offers functions to scangen by defining them in `namespace scangen_export`. Each such
// function becomes callable from .scan expressions under its own name, element-wise with
// broadcasting, when its parameters and result are scalars of the five dtypes (bool, i32 as
// int/int32_t, i64 as long/long long/int64_t, f32 as float, f64 as double) passed by value.
// `f_d<i>` (i counting parameters from 0), also in the namespace, with f's parameter types and
// result type, is the partial derivative of f with respect to its parameter i: grad flows through
// f only when every floating-point parameter has one.
//
// Only functions are offered, and every other function-like declaration directly in the namespace
// makes its name unusable (a template, overloads, a variadic function, a declaration the header
// does not define, a parameter or result of another type). Classes (with their members), nested
// namespaces, variables, types and operators are left alone, silently: they are the header's
// helpers. f_d<i> whose types differ from f's, or whose i is not a parameter of f, is unusable;
// f_d<i> without a usable f is an ordinary function. An unusable function is not an error of the
// header: the program that calls one is (frontend/sema_imports.cpp), so that a header stays usable
// for the functions it offers well.
//
// The header is parsed in-process with Clang's libTooling (src/imports/cxx_header.cpp): once as
// C++17 (the truth for the CPU backends and the interpreter) and once as CUDA host code that sees
// what NVRTC shows a header in scangen's kernels (__CUDACC__ and __CUDACC_RTC__, no standard
// header, the math functions of templates/cuda/scangen_nvrtc_math.h and scangen's scalar header),
// to learn which functions are `__host__ __device__` (the CUDA backend calls only those). The CUDA
// parse is skipped when the header offers no function. Both parses are safe to run from several
// threads. A missing or unreadable header is one problem without a location. header_cache.h keeps
// the results on disk.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "scangen/runtime/dtype.h"

namespace scangen::imports {

// A place in a C++ file, from Clang (1-based line and column).
struct CxxLocation {
  std::string file;  // the path as Clang saw it
  int line = 0;
  int column = 0;
};

// An error Clang reported while parsing the header, or why a function cannot be used.
struct HeaderProblem {
  CxxLocation loc;
  std::string message;  // one sentence, without "error:"; a reason names its function
};

// A function of namespace scangen_export that scangen cannot call: each reason is located at the
// declaration it concerns (an overloaded name has one per overload after the first).
struct UnusableFunction {
  std::string name;
  std::vector<HeaderProblem> reasons;
};

struct ImportedFunction {
  std::string name;  // unqualified, as a .scan file calls it
  std::vector<DType> params;
  std::vector<std::string> param_names;  // as written; empty where unnamed
  DType result = DType::F32;
  bool host_device = false;  // declared __host__ __device__ explicitly (from the CUDA-mode parse)
  // For each parameter: the index in HeaderAnalysis::functions of its partial derivative
  // (f_d<i>), or -1 when the header has none.
  std::vector<int> partials;
  CxxLocation loc;  // of the function's name
};

struct HeaderAnalysis {
  std::filesystem::path header;  // absolute and normalized
  std::vector<ImportedFunction> functions;  // the usable ones, in declaration order
  // The functions of the namespace that cannot be used, in the order of their first problem.
  std::vector<UnusableFunction> unusable;
  // Errors of the C++ parse: the header cannot be used. `functions` and `unusable` still hold
  // what Clang could parse, so that all problems show at once.
  std::vector<HeaderProblem> errors;
  // Why the CUDA-mode parse failed (empty when it succeeded). Not an error for CPU use: the CUDA
  // backend reports it when a program that calls the header's functions is compiled for CUDA.
  std::string cuda_parse_problem;
  // Every file the header includes, directly or not, outside the system's include directories
  // (for depfiles and cache keys), with the header itself first (also when it is missing), then
  // the files entered by the C++ parse, then those only the CUDA parse entered.
  std::vector<std::filesystem::path> dependencies;
  // What the result depends on, for a cache of it: every file either parse read (system headers
  // too, absolute), and the paths where an #include looked for a file that was not there.
  std::vector<std::filesystem::path> inputs;
  std::vector<std::filesystem::path> absent;
};

struct HeaderOptions {
  std::vector<std::filesystem::path> include_dirs;  // -I, searched after the header's directory
};

// Parses `header` (which must exist; a missing file is an error in the result, not an exception).
HeaderAnalysis analyze_header(const std::filesystem::path& header, const HeaderOptions& options);

// What decides analyze_header's result besides the files it reads: Clang's version and both
// parses' command lines (the header's path and the include directories among them) and the text
// the CUDA parse reads first.
std::string analysis_identity(const std::filesystem::path& header, const HeaderOptions& options);

}  // namespace scangen::imports
