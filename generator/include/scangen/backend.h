// Where a program's functions run (backends.def is the table): the reference interpreter,
// compiled C++, CUDA kernels on a GPU, or those kernels compiled for the CPU. The names are the
// ones the CLI's --backend, scangen_add_library's BACKEND and the JIT's options share.
#pragma once

#include <optional>
#include <string_view>

namespace scangen {

enum class Backend {
#define SCANGEN_BACKEND(id, name, code, offline, summary) id,
#include "scangen/backends.def"
#undef SCANGEN_BACKEND
};

// The source a backend runs: none (the interpreter runs the IR), C++ or CUDA.
enum class BackendCode { None, Cpp, Cuda };

struct BackendInfo {
  Backend backend;
  std::string_view name;
  BackendCode code;
  bool offline;  // `scangen compile` writes its sources for a build system
  std::string_view summary;
};

inline constexpr BackendInfo kBackends[] = {
#define SCANGEN_BACKEND(id, name, code, offline, summary) {Backend::id, name, BackendCode::code, offline, summary},
#include "scangen/backends.def"
#undef SCANGEN_BACKEND
};

inline constexpr Backend kAllBackends[] = {
#define SCANGEN_BACKEND(id, name, code, offline, summary) Backend::id,
#include "scangen/backends.def"
#undef SCANGEN_BACKEND
};

inline const BackendInfo& backend_info(Backend backend) {
  for (const BackendInfo& b : kBackends)
    if (b.backend == backend) return b;
  return kBackends[0];  // unreachable: every enumerator has its row
}

// "interp", "cpu", "cuda", "cuda-emulation".
inline std::string_view backend_name(Backend backend) { return backend_info(backend).name; }

inline std::optional<Backend> backend_from_name(std::string_view name) {
  for (const BackendInfo& b : kBackends)
    if (b.name == name) return b.backend;
  return std::nullopt;
}

// The most threads compiled CPU code runs on (JitOptions::threads, --threads, THREADS).
inline constexpr int kMaxThreads = 256;

}  // namespace scangen
