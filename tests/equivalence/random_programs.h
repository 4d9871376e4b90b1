// A generator of random, valid .scan programs for the equivalence tests (equivalence_test.cpp).
//
// generate_program(seed) returns one function that always compiles: 1 to 3 scans with sequences
// read at several taps, states with lags and inits of the right shape, per-step outputs, `steps`,
// `until`, `reverse`, nested scans, lets, element-wise math, broadcasting, `@`, reductions,
// indexing, set/inc and casts, with the scans' results used after the loop in various ways (and
// some not used at all), bool states, step values and inner results whose size changes from step
// to step, and `?` dimensions in argument types. It also returns matching arguments. Values are kept bounded (tanh, clip,
// small integer-valued inputs) so that results stay finite. The same seed gives the same program
// and arguments on every platform (the generator has its own random number generator).
//
// The program is valid, but it may still fail at run time on purpose (a `steps` larger than a
// sequence allows, `max` of an empty array, an index out of range on a dimension of size 0): the
// backends must then report the same error at the same place.
//
// The generator is in generator.h (its model and class) and gen_*.cpp (one job each); this
// header's formatting helpers are in random_programs.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scangen/runtime/tensor.h"

namespace scangen::equivalence {

struct GeneratorOptions {
  // The function's name; empty means "prog<seed>", which is unique per seed so that many programs
  // can share one .scan file.
  std::string fn_name;
  int max_dim = 6;                      // dimension sizes are drawn from 1..max_dim (or 0, rarely)
  int max_steps = 8;                    // steps and sequence lengths are drawn around 0..max_steps
  double zero_size_probability = 0.05;  // probability that a dimension has size 0
  int max_scans = 3;                    // top-level scans per program (at least 1)
  int max_depth = 3;                    // depth of generated expressions
  bool nested_scans = true;             // scans inside step bodies
};

struct RandomProgram {
  std::string text;                     // the .scan source: one function
  std::string fn;                       // its name
  std::vector<std::string> arg_names;   // the parameters' names, in order
  std::vector<HostTensor> args;         // matching arguments
};

RandomProgram generate_program(uint64_t seed, const GeneratorOptions& options = {});

// One value as nested JSON arrays (floats printed so that they round-trip; "NaN", "Infinity").
std::string format_tensor(const HostTensor& t);

// `text` with the function header `fn OLD(` renamed to `fn NEW(`.
std::string rename_function(const std::string& text, const std::string& old_name, const std::string& new_name);

// The arguments as `scangen run` takes them: NAME=JSON separated by spaces (floats printed so that
// they round-trip). An empty array of rank 2 or more cannot be written in JSON (`[]` does not give
// its inner sizes); it is shown with its shape, e.g. `x=<zeros f32[3, 0]>` (pass it as an .npy
// file: SCANGEN_EQUIVALENCE_DUMP writes one).
std::string format_arguments(const std::vector<std::string>& names, const std::vector<HostTensor>& args);

}  // namespace scangen::equivalence
