// libFuzzer target: the values of `scangen run NAME=VALUE` arguments (JSON numbers and nested
// arrays, NaN/Infinity, true/false) parsed for a parameter type. The first byte picks the element
// type, the second the rank, the rest is the text. A value that parses must print back
// (format_value) to text that parses to the same bits: the CLI's output is valid input.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_support.h"
#include "scangen/runtime/json_io.h"

namespace {

bool same_value(const scangen::HostTensor& a, const scangen::HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  constexpr size_t kTypes = sizeof(scangen::kAllDTypes) / sizeof(scangen::kAllDTypes[0]);
  const scangen::DType dtype = scangen::kAllDTypes[data[0] % kTypes];
  const int rank = data[1] % 5;
  std::string_view text = scangen::fuzz::as_text(data + 2, size - 2);
  // `@path` reads a file: the .npy reader has its own target, and fuzzing must not open files.
  if (!text.empty() && text.front() == '@') return 0;
  scangen::fuzz::expect_user_errors_only([&] {
    scangen::HostTensor value = scangen::parse_argument(text, dtype, rank, "x");
    std::string printed = scangen::format_value(value);
    scangen::HostTensor again = scangen::parse_argument(printed, dtype, rank, "x");
    // NaN prints as NaN and parses back as the canonical NaN; compare those by value.
    if (!same_value(value, again) && printed.find("NaN") == std::string::npos)
      scangen::fuzz::crash("round trip", ("format_value printed " + printed.substr(0, 200) +
                                          ", which parses to another value").c_str());
  });
  return 0;
}
