// analyze_header (imports/cxx_header.h): the functions of namespace scangen_export that scangen
// can call, with their dtypes, partial derivatives and __host__ __device__-ness, and one located
// problem per declaration it cannot use, on the small headers under data/imports/.
#define BOOST_TEST_MODULE cxx_header
#include "imports/cxx_header.h"

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

using namespace scangen;
using namespace scangen::imports;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(SCANGEN_SOURCE_DIR) / "tests/unit/data/imports";

// "good.h:3:7" for a location in a file under data/imports/ (others stay absolute).
std::string where(const CxxLocation& loc) {
  if (loc.file.empty()) return "";
  const fs::path file(loc.file);
  const std::string shown = file.parent_path() == kData ? file.filename().string() : loc.file;
  return shown + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

// Clang's errors.
std::vector<std::string> problems(const HeaderAnalysis& analysis) {
  std::vector<std::string> out;
  for (const HeaderProblem& problem : analysis.errors)
    out.push_back(where(problem.loc) + ": " + problem.message);
  return out;
}

// Why the unusable functions cannot be used, function after function: "bad.h:3:7: message".
std::vector<std::string> reasons(const HeaderAnalysis& analysis) {
  std::vector<std::string> out;
  for (const UnusableFunction& function : analysis.unusable)
    for (const HeaderProblem& reason : function.reasons)
      out.push_back(where(reason.loc) + ": " + reason.message);
  return out;
}

std::vector<std::string> unusable_names(const HeaderAnalysis& analysis) {
  std::vector<std::string> out;
  for (const UnusableFunction& function : analysis.unusable) out.push_back(function.name);
  return out;
}

// "scale(x: f32, factor: f32) -> f32 [d: -1 -1] hd good.h:18:14"
std::string signature(const ImportedFunction& function) {
  std::string text = function.name + "(";
  for (size_t i = 0; i < function.params.size(); ++i) {
    if (i > 0) text += ", ";
    text += function.param_names.at(i) + ": " + std::string(dtype_name(function.params[i]));
  }
  text += ") -> " + std::string(dtype_name(function.result)) + " [d:";
  for (const int partial : function.partials) text += " " + std::to_string(partial);
  text += "]";
  if (function.host_device) text += " hd";
  return text + " " + where(function.loc);
}

std::vector<std::string> signatures(const HeaderAnalysis& analysis) {
  std::vector<std::string> out;
  for (const ImportedFunction& function : analysis.functions) out.push_back(signature(function));
  return out;
}

// Everything in the result, for comparing results.
std::string everything(const HeaderAnalysis& analysis) {
  std::string text = analysis.header.string() + "\n";
  for (const std::string& line : signatures(analysis)) text += line + "\n";
  for (const std::string& line : problems(analysis)) text += line + "\n";
  for (const std::string& line : reasons(analysis)) text += line + "\n";
  for (const std::string& line : unusable_names(analysis)) text += line + "\n";
  text += analysis.cuda_parse_problem + "\n";
  for (const fs::path& file : analysis.dependencies) text += file.string() + "\n";
  return text;
}

using Lines = std::vector<std::string>;

HeaderAnalysis analyze(const std::string& name, const HeaderOptions& options = {}) {
  return analyze_header(kData / name, options);
}

// A header without errors whose unusable functions have the reasons `expected` and whose usable
// functions are `usable`.
HeaderAnalysis check_rejections(const std::string& name, const Lines& expected, const Lines& usable,
                                const std::string& cuda_problem = "") {
  HeaderAnalysis analysis = analyze(name);
  BOOST_TEST(problems(analysis) == Lines{}, boost::test_tools::per_element());
  const Lines got = reasons(analysis);
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  const Lines functions = signatures(analysis);
  BOOST_TEST(functions == usable, boost::test_tools::per_element());
  BOOST_TEST(analysis.cuda_parse_problem == cuda_problem);
  return analysis;
}

}  // namespace

BOOST_AUTO_TEST_CASE(good_header_offers_every_function) {
  const HeaderAnalysis analysis = analyze("good.h");
  BOOST_TEST(problems(analysis) == Lines{}, boost::test_tools::per_element());
  BOOST_TEST(analysis.cuda_parse_problem == "");
  BOOST_TEST(analysis.header == kData / "good.h");
  const Lines expected = {
      "scale(x: f32, factor: f32) -> f32 [d: -1 -1] good.h:20:14",
      "twice(x: f64) -> f64 [d: -1] good.h:21:15",
      "clamp_index(i: i32, n: i32) -> i32 [d: -1 -1] good.h:22:16",
      "add_long(a: i64, b: i64, c: i64) -> i64 [d: -1 -1 -1] good.h:23:13",
      "positive(x: f32, strict: bool) -> bool [d: -1 -1] good.h:24:13",
      "wave(x: f32, y: f32) -> f32 [d: 6 7] good.h:26:14",
      "wave_d0(: f32, y: f32) -> f32 [d: -1 -1] good.h:27:14",
      "wave_d1(x: f32, y: f32) -> f32 [d: -1 -1] good.h:28:14",
      "hd_square(x: f32) -> f32 [d: -1] hd good.h:30:34",
      "hd_half(x: f64) -> f64 [d: -1] hd good.h:31:35",
      "host_only(x: f32) -> f32 [d: -1] good.h:32:23",
      "third(x: f64) -> f64 [d: -1] good.h:34:18",
      "declared_first(x: f32) -> f32 [d: -1] good.h:48:30",
  };
  BOOST_TEST(signatures(analysis) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dependencies_are_the_local_files_header_first) {
  const HeaderAnalysis analysis = analyze("good.h");
  const std::vector<fs::path> expected = {kData / "good.h", kData / "good_helpers.h"};
  BOOST_TEST(analysis.dependencies == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(relative_paths_are_made_absolute) {
  const fs::path relative = fs::relative(kData) / "extra_dir/../good.h";
  const HeaderAnalysis analysis = analyze_header(relative, {});
  BOOST_TEST(analysis.header == kData / "good.h");
  BOOST_TEST(analysis.dependencies.front() == kData / "good.h");
  BOOST_TEST(analysis.functions.size() == 13u);
}

BOOST_AUTO_TEST_CASE(include_dirs_are_searched) {
  const HeaderAnalysis without = analyze("include_dir.h");
  BOOST_TEST(problems(without) == Lines{"include_dir.h:3:10: 'extra.h' file not found"},
             boost::test_tools::per_element());
  // What Clang could parse after the error is still there.
  BOOST_TEST(signatures(without) == Lines{"plus_extra(x: i32) -> i32 [d: -1] include_dir.h:6:12"},
             boost::test_tools::per_element());

  HeaderOptions options;
  options.include_dirs.push_back(kData / "extra_dir");
  const HeaderAnalysis with = analyze("include_dir.h", options);
  BOOST_TEST(problems(with) == Lines{}, boost::test_tools::per_element());
  BOOST_TEST(signatures(with) == Lines{"plus_extra(x: i32) -> i32 [d: -1] include_dir.h:6:12"},
             boost::test_tools::per_element());
  const std::vector<fs::path> dependencies = {kData / "include_dir.h", kData / "extra_dir/extra.h"};
  BOOST_TEST(with.dependencies == dependencies, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(references) {
  const HeaderAnalysis analysis = check_rejections(
      "bad_reference.h",
      {"bad_reference.h:2:23: parameter 'x' of 'f' is a reference (float &); scangen passes "
       "scalars by value",
       "bad_reference.h:3:39: parameter 'y' of 'g' is a reference (const double &); scangen "
       "passes scalars by value",
       "bad_reference.h:4:36: parameter 'x' of 'h' is a reference (const float &); scangen "
       "passes scalars by value",
       "bad_reference.h:4:21: 'h' returns a reference (const float &); scangen takes results by "
       "value"},
      {});
  // One entry per function, with all its reasons.
  BOOST_TEST(unusable_names(analysis) == (Lines{"f", "g", "h"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(pointers) {
  check_rejections(
      "bad_pointer.h",
      {"bad_pointer.h:3:23: parameter 'x' of 'f' is a pointer (float *); scangen passes scalars "
       "by value",
       "bad_pointer.h:4:25: parameter 'p' of 'g' is a pointer (real_ptr, aka const float *); "
       "scangen passes scalars by value",
       "bad_pointer.h:5:15: 'h' returns a pointer (float *); scangen takes results by value"},
      {});
}

BOOST_AUTO_TEST_CASE(unsupported_types) {
  const std::string passes = "; scangen passes bool, int32_t, int64_t, float or double";
  const std::string takes = "; scangen takes a result of bool, int32_t, int64_t, float or double";
  check_rejections(
      "bad_types.h",
      {"bad_types.h:6:25: parameter 'x' of 'f' has an unsupported type (unsigned int)" + passes,
       "bad_types.h:7:22: parameter 'a' of 'g' has an unsupported type (short)" + passes,
       "bad_types.h:7:30: parameter 'b' of 'g' has an unsupported type (char)" + passes,
       "bad_types.h:7:45: parameter 'c' of 'g' has an unsupported type (long double)" + passes,
       "bad_types.h:8:20: parameter 'v' of 'h' has an unsupported type (scangen_export::Vec)" +
           passes,
       "bad_types.h:8:31: parameter 'n' of 'h' has an unsupported type (count_t, aka unsigned "
       "int)" +
           passes,
       "bad_types.h:9:13: 'k' returns an unsupported type (void)" + takes,
       "bad_types.h:10:22: 'm' returns an unsupported type (unsigned long)" + takes},
      {});
}

BOOST_AUTO_TEST_CASE(function_templates) {
  check_rejections(
      "bad_template.h",
      {"bad_template.h:3:3: 'f' is a function template; scangen calls only plain functions"},
      {"g(x: f32) -> f32 [d: -1] bad_template.h:4:14"});
}

// A call of an overloaded name could mean any overload: the name is unusable, the others stay.
BOOST_AUTO_TEST_CASE(overloads) {
  const HeaderAnalysis analysis = check_rejections(
      "bad_overload.h",
      {"bad_overload.h:3:15: 'f' overloads the function declared at 2:14; scangen calls "
       "functions by name, so give each overload its own name",
       "bad_overload.h:7:14: 'f' overloads the function declared at 2:14; scangen calls "
       "functions by name, so give each overload its own name"},
      {"g(x: f32) -> f32 [d: -1] bad_overload.h:4:14"});
  BOOST_TEST(unusable_names(analysis) == Lines{"f"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(variadic_functions) {
  check_rejections(
      "bad_variadic.h",
      {"bad_variadic.h:2:14: 'f' is variadic; scangen passes a fixed number of scalars"}, {});
}

BOOST_AUTO_TEST_CASE(declarations_without_definition) {
  check_rejections(
      "bad_undefined.h",
      {"bad_undefined.h:2:7: 'f' is declared but not defined; scangen compiles the header into "
       "each generated module: define 'f' in the header (inline)"},
      {"g(x: f32) -> f32 [d: -1] bad_undefined.h:3:14"});
}

BOOST_AUTO_TEST_CASE(partial_derivatives_must_match) {
  const HeaderAnalysis analysis = check_rejections(
      "bad_partial.h",
      {"bad_partial.h:3:14: 'f_d0' must have the parameter and result types of 'f', (float, "
       "float) -> float, to be its partial derivative with respect to parameter 0; it has "
       "(float, double) -> float",
       "bad_partial.h:4:15: 'f_d1' must have the parameter and result types of 'f', (float, "
       "float) -> float, to be its partial derivative with respect to parameter 1; it has "
       "(float, float) -> double",
       "bad_partial.h:5:14: 'f_d2' is named as the partial derivative of 'f' with respect to "
       "parameter 2, but 'f' has 2 parameters"},
      {"f(x: f32, y: f32) -> f32 [d: -1 -1] bad_partial.h:2:14",
       "g_d0(x: f32) -> f32 [d: -1] bad_partial.h:6:14"});
  BOOST_TEST(unusable_names(analysis) == (Lines{"f_d0", "f_d1", "f_d2"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(clang_errors_are_located) {
  const HeaderAnalysis analysis = analyze("syntax_error.h");
  BOOST_TEST(problems(analysis) == (Lines{"syntax_error.h:2:35: expected ';' after return statement",
                                          "syntax_error.h:4:16: unknown type name 'undeclared_t'"}),
             boost::test_tools::per_element());
  // What Clang could parse is still there, so that all problems show at once.
  BOOST_TEST(signatures(analysis) == (Lines{"f(x: f32) -> f32 [d: -1] syntax_error.h:2:14",
                                            "g(x: f32) -> f32 [d: -1] syntax_error.h:3:14"}),
             boost::test_tools::per_element());
  BOOST_TEST(analysis.cuda_parse_problem ==
             (kData / "syntax_error.h").string() + ":2:35: expected ';' after return statement");
}

BOOST_AUTO_TEST_CASE(a_failed_cuda_parse_is_not_an_error) {
  const HeaderAnalysis analysis = analyze("cuda_error.h");
  BOOST_TEST(problems(analysis) == Lines{}, boost::test_tools::per_element());
  BOOST_TEST(signatures(analysis) == Lines{"f(x: f32) -> f32 [d: -1] cuda_error.h:6:14"},
             boost::test_tools::per_element());
  BOOST_TEST(analysis.cuda_parse_problem ==
             (kData / "cuda_error.h").string() + ":3:2: \"not for CUDA\"");
}

BOOST_AUTO_TEST_CASE(the_cuda_parse_sees_what_nvrtc_sees) {
  const HeaderAnalysis analysis = analyze("nvrtc_view.h");
  BOOST_TEST(problems(analysis) == Lines{}, boost::test_tools::per_element());
  BOOST_TEST(analysis.cuda_parse_problem == "");
  BOOST_TEST(signatures(analysis) == (Lines{"root(x: f64) -> f64 [d: -1] hd nvrtc_view.h:16:35",
                                            "squash(x: f32) -> f32 [d: -1] hd nvrtc_view.h:17:34",
                                            "widen(x: i32) -> i64 [d: -1] hd nvrtc_view.h:18:36"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_cuda_parse_has_no_standard_header) {
  const HeaderAnalysis analysis = analyze("cuda_std_include.h");
  BOOST_TEST(problems(analysis) == Lines{}, boost::test_tools::per_element());
  BOOST_TEST(analysis.cuda_parse_problem ==
             (kData / "cuda_std_include.h").string() + ":3:10: 'cstdint' file not found");
}

BOOST_AUTO_TEST_CASE(missing_header) {
  const fs::path missing = kData / "no_such_header.h";
  const HeaderAnalysis analysis = analyze_header(missing, {});
  BOOST_TEST(problems(analysis) == Lines{": the header '" + missing.string() + "' does not exist"},
             boost::test_tools::per_element());
  BOOST_TEST(analysis.functions.empty());
  BOOST_TEST(analysis.dependencies == std::vector<fs::path>{missing},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_directory_is_not_a_header) {
  const HeaderAnalysis analysis = analyze_header(kData, {});
  BOOST_TEST(problems(analysis) == Lines{": the header '" + kData.string() + "' is not a file"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(concurrent_calls_agree) {
  const std::string expected = everything(analyze("good.h"));
  BOOST_TEST(expected.find("hd_square") != std::string::npos);
  std::vector<std::future<std::string>> results;
  for (int i = 0; i < 4; ++i)
    results.push_back(std::async(std::launch::async, [] { return everything(analyze("good.h")); }));
  for (std::future<std::string>& result : results) BOOST_TEST(result.get() == expected);
}
