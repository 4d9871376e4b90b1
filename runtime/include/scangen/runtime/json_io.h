// Values on the command line: `scangen run NAME=VALUE` arguments in, one JSON line of results out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scangen/runtime/dtype.h"
#include "scangen/runtime/tensor.h"

namespace scangen {

// Parses the VALUE of argument `arg_name`, a parameter of element type `dtype` and rank `rank`
// (0 for scalars). VALUE is one of
//   - a JSON number, true/false, or a JSON array nested exactly `rank` deep;
//   - for float parameters also "NaN", "Infinity", "-Infinity" (as JSON strings anywhere, or as
//     bare tokens for the whole value);
//   - @path.npy: the file's dtype and rank must match exactly.
// Integers may feed float parameters; integer parameters take only numbers with an integral
// value in range (2.0 and 1e3 are fine, 2.5 is not); bool parameters take only true/false;
// f32 values must lie within f32's range (tiny values round to zero or a subnormal as usual).
// Numbers are converted from their decimal text with correct rounding. Every problem is a
// RuntimeError whose message starts with "argument '<arg_name>': ".
HostTensor parse_argument(std::string_view text, DType dtype, int rank, std::string_view arg_name);

// One value as JSON without spaces: a number, true/false, or nested arrays ([] for zero-length
// dimensions). f32 is printed with %.9g, f64 with %.17g (both round-trip exactly), independent of
// the locale; non-finite floats as the bare tokens NaN, Infinity, -Infinity.
std::string format_value(const HostTensor& value);
// All results in one JSON array, e.g. [[0,1,4],19,true]; no trailing newline.
std::string format_results(const std::vector<HostTensor>& results);

}  // namespace scangen
