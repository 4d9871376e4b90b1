// The floating-point mode of generated CPU code: strict (the default: every backend bit for bit
// the interpreter) or fast (FMA contraction, reassociated sums and products, vectorized math
// functions from glibc's libmvec; results within the tolerance of docs/performance.md, "Fast
// floating-point mode"). One table gives the names the CLI's --fp, scangen_add_library's FP_MODE
// and the JIT's options share.
#pragma once

#include <optional>
#include <string_view>

namespace scangen {

enum class FpMode { Strict, Fast };

struct FpModeName {
  FpMode mode;
  std::string_view name;
};

inline constexpr FpModeName kFpModeNames[] = {{FpMode::Strict, "strict"}, {FpMode::Fast, "fast"}};

inline std::string_view fp_mode_name(FpMode mode) {
  for (const FpModeName& m : kFpModeNames)
    if (m.mode == mode) return m.name;
  return "?";
}

inline std::optional<FpMode> fp_mode_from_name(std::string_view name) {
  for (const FpModeName& m : kFpModeNames)
    if (m.name == name) return m.mode;
  return std::nullopt;
}

}  // namespace scangen
