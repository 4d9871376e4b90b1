#define BOOST_TEST_MODULE runtime_json_io
#include <stdlib.h>

#include <boost/test/unit_test.hpp>

#include "temp_dir.h"
#include <clocale>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "scangen/runtime/errors.h"
#include "scangen/runtime/json_io.h"
#include "scangen/runtime/npy.h"

using namespace scangen;
namespace fs = std::filesystem;

namespace scangen {
// For Boost.Test's messages.
std::ostream& operator<<(std::ostream& out, DType dtype) { return out << dtype_name(dtype); }
}  // namespace scangen

namespace {

// A fresh directory per test, removed afterwards.
struct TempDir : scangen::testing::TempDir {
  TempDir() : scangen::testing::TempDir("scangen-json-test") {}
};

// Parses and formats back, the easiest way to check values and shapes together.
std::string round_trip(std::string_view text, DType dtype, int rank) {
  return format_value(parse_argument(text, dtype, rank, "x"));
}

// Checks that parsing fails with a RuntimeError containing `expected`.
void expect_error(std::string_view text, DType dtype, int rank, std::string_view name,
                  const std::string& expected) {
  try {
    HostTensor t = parse_argument(text, dtype, rank, name);
    BOOST_ERROR("'" << text << "' was accepted as " << dtype_name(dtype) << " of rank " << rank
                    << "; expected an error containing: " << expected);
  } catch (const RuntimeError& e) {
    std::string message = e.what();
    BOOST_TEST_INFO("input: " << text << ", message: " << message);
    BOOST_TEST(message.find(expected) != std::string::npos);
    BOOST_TEST(message.rfind("argument '" + std::string(name) + "': ", 0) == 0u);
  }
}

uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(parse)

BOOST_AUTO_TEST_CASE(scalars) {
  BOOST_TEST(round_trip("3", DType::I32, 0) == "3");
  BOOST_TEST(round_trip(" -2147483648 ", DType::I32, 0) == "-2147483648");
  BOOST_TEST(round_trip("9223372036854775807", DType::I64, 0) == "9223372036854775807");
  BOOST_TEST(round_trip("-9223372036854775808", DType::I64, 0) == "-9223372036854775808");
  BOOST_TEST(round_trip("2.0", DType::I32, 0) == "2");
  BOOST_TEST(round_trip("1e3", DType::I64, 0) == "1000");
  BOOST_TEST(round_trip("1.5E1", DType::I32, 0) == "15");
  BOOST_TEST(round_trip("-0", DType::I32, 0) == "0");
  BOOST_TEST(round_trip("0.0e-5", DType::I32, 0) == "0");
  BOOST_TEST(round_trip("7", DType::F32, 0) == "7");
  BOOST_TEST(round_trip("0.1", DType::F32, 0) == "0.100000001");
  BOOST_TEST(round_trip("0.1", DType::F64, 0) == "0.10000000000000001");
  BOOST_TEST(round_trip("-2.5e-3", DType::F64, 0) == "-0.0025000000000000001");
  BOOST_TEST(round_trip("true", DType::Bool, 0) == "true");
  BOOST_TEST(round_trip("false", DType::Bool, 0) == "false");
  BOOST_TEST(round_trip("3.4028234e38", DType::F32, 0) == "3.40282347e+38");
  BOOST_TEST(round_trip("1e-50", DType::F32, 0) == "0");  // below the smallest subnormal
  BOOST_TEST(round_trip("-1e-50", DType::F32, 0) == "-0.0");
  BOOST_TEST(round_trip("1e-40", DType::F32, 0) == "9.9999461e-41");
  BOOST_TEST(round_trip("1e-400", DType::F64, 0) == "0");
  BOOST_TEST(round_trip("16777217", DType::F32, 0) == "16777216");
  // Rounded once, from the decimal text: going through double would round twice, to 0x3f800000.
  BOOST_TEST(float_bits(*parse_argument("1.000000059604644775390625000001", DType::F32, 0, "x")
                             .data<float>()) == 0x3f800001u);
  BOOST_TEST(float_bits(*parse_argument("1.0000000596046447753906249", DType::F32, 0, "x")
                             .data<float>()) == 0x3f800000u);
}

BOOST_AUTO_TEST_CASE(non_finite_floats) {
  BOOST_TEST(round_trip("NaN", DType::F32, 0) == "NaN");
  BOOST_TEST(round_trip("Infinity", DType::F64, 0) == "Infinity");
  BOOST_TEST(round_trip("-Infinity", DType::F32, 0) == "-Infinity");
  BOOST_TEST(round_trip("\"NaN\"", DType::F64, 0) == "NaN");
  BOOST_TEST(round_trip("[\"Infinity\", 1, \"-Infinity\", \"NaN\"]", DType::F32, 1) ==
             "[Infinity,1,-Infinity,NaN]");
  BOOST_TEST(std::isnan(*parse_argument("NaN", DType::F64, 0, "x").data<double>()));
}

BOOST_AUTO_TEST_CASE(arrays) {
  BOOST_TEST(round_trip("[1, 2, 3]", DType::F32, 1) == "[1,2,3]");
  BOOST_TEST(round_trip("[[1,2,3],[4,5,6]]", DType::I64, 2) == "[[1,2,3],[4,5,6]]");
  BOOST_TEST(round_trip("[[[true],[false]]]", DType::Bool, 3) == "[[[true],[false]]]");
  BOOST_TEST(round_trip("[]", DType::F64, 1) == "[]");
  BOOST_TEST(round_trip("[[], []]", DType::I32, 2) == "[[],[]]");
  HostTensor t = parse_argument("[[1,2,3],[4,5,6]]", DType::I32, 2, "x");
  BOOST_TEST(t.shape() == Shape({2, 3}));
  BOOST_TEST(t.data<int32_t>()[5] == 6);
  BOOST_TEST(parse_argument("[]", DType::F32, 1, "x").shape() == Shape({0}));
  BOOST_TEST(parse_argument("[[],[]]", DType::F32, 2, "x").shape() == Shape({2, 0}));
}

BOOST_AUTO_TEST_CASE(npy_files) {
  TempDir dir;
  fs::path path = dir.path / "a.npy";
  HostTensor data = HostTensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  write_npy(path, data);
  BOOST_TEST(identical(parse_argument("@" + path.string(), DType::F32, 2, "A"), data));
  expect_error("@" + path.string(), DType::F64, 2, "A",
               "holds f32 values, but A is f64; save it in that dtype, e.g. np.save(path, a.astype(np.float64))");
  // NumPy's default float is f64: the hint names the cast that fits an f32 parameter.
  const fs::path doubles = dir.path / "d.npy";
  write_npy(doubles, HostTensor::from_vector<double>({1, 2}, {2}));
  expect_error("@" + doubles.string(), DType::F32, 1, "x",
               "holds f64 values, but x is f32; save it in that dtype, e.g. np.save(path, a.astype(np.float32))");
  expect_error("@" + path.string(), DType::F32, 1, "A",
               "holds an array of rank 2 (shape [2, 3]), but A has rank 1");
  expect_error("@" + (dir.path / "missing.npy").string(), DType::F32, 2, "A",
               "No such file or directory");
  expect_error("@", DType::F32, 2, "A", "'@' must be followed by the path");
}

BOOST_AUTO_TEST_CASE(error_messages) {
  expect_error("2.5", DType::I32, 0, "k", "2.5 is not an integer (k is i32)");
  expect_error("1e-1", DType::I64, 0, "k", "1e-1 is not an integer (k is i64)");
  expect_error("[1, 2.5]", DType::I32, 1, "v", "element [1]: 2.5 is not an integer (v holds i32)");
  expect_error("2147483648", DType::I32, 0, "k", "2147483648 is out of range for i32");
  expect_error("-2147483649", DType::I32, 0, "k", "out of range for i32");
  expect_error("9223372036854775808", DType::I64, 0, "k", "out of range for i64");
  expect_error("1e19", DType::I64, 0, "k", "out of range for i64");
  expect_error("1.5e30", DType::I32, 0, "k", "out of range");
  expect_error("true", DType::I32, 0, "k", "expected an integer, got true");
  expect_error("1", DType::Bool, 0, "b", "expected true or false, got a number (b is bool)");
  expect_error("\"true\"", DType::Bool, 0, "b", "expected true or false, got a string");
  expect_error("true", DType::F32, 0, "x", "expected a number, got true");
  expect_error("\"abc\"", DType::F64, 0, "x", "expected a number, got the string \"abc\"");
  expect_error("NaN", DType::I32, 0, "k", "NaN is only valid for f32 and f64 (k is i32)");
  expect_error("\"Infinity\"", DType::I64, 0, "k", "Infinity is only valid for f32 and f64");
  expect_error("NaN", DType::F32, 1, "A", "expected a rank-1 array of f32, got NaN");
  expect_error("1e39", DType::F32, 0, "x", "1e39 is outside the range of f32");
  expect_error("-3.5e38", DType::F32, 0, "x", "outside the range of f32");
  expect_error("1e400", DType::F64, 0, "x", "a number is too large");
  expect_error("[1, -1e400]", DType::F32, 1, "x", "a number is too large");
  expect_error("null", DType::F32, 0, "x", "expected a number, got null");
  expect_error("{\"a\": 1}", DType::F32, 0, "x", "expected a number, got an object");

  expect_error("3", DType::F32, 1, "A", "expected a rank-1 array of f32, got a number");
  expect_error("[1, 2]", DType::F32, 0, "x", "expected a single f32 value, got an array");
  expect_error("[1, 2]", DType::F32, 2, "M",
               "expected a rank-2 array of f32, but element [0] is a number, not an array");
  expect_error("[[1], 2]", DType::F32, 2, "M", "element [1] is a number, not an array");
  expect_error(
      "[[1, 2], [3]]", DType::I32, 2, "M",
      "not rectangular: element [1] has length 1, but the first array at that depth has length 2");
  expect_error("[[1], [2, 3]]", DType::I32, 2, "M", "not rectangular");
  expect_error("[[1]]", DType::F32, 1, "A", "element [0] is an array (nested too deep)");
  expect_error("[1, [[[[[2]]]]]]", DType::F32, 1, "A", "element [1] is an array (nested too deep)");
  expect_error("[]", DType::F32, 2, "M", "use an .npy file");
  expect_error("[[]]", DType::F32, 3, "T", "use an .npy file");
  expect_error("[[[]], []]", DType::F32, 3, "T", "not rectangular");
  expect_error("[{\"a\": [1]}]", DType::F32, 1, "A", "got an object");

  expect_error("", DType::F32, 0, "x", "no value given");
  expect_error("   ", DType::F32, 0, "x", "no value given");
  expect_error("1 2", DType::F32, 0, "x", "invalid JSON value");
  expect_error("[1, 2", DType::F32, 1, "A", "invalid JSON value");
  expect_error("1.x", DType::F32, 0, "x", "invalid JSON value");
  expect_error("nan", DType::F32, 0, "x", "invalid JSON value");
  expect_error("+1", DType::I32, 0, "k", "invalid JSON value");
}

BOOST_AUTO_TEST_CASE(messages_do_not_show_nlohmann_prefixes) {
  try {
    parse_argument("[1,", DType::F32, 1, "A");
    BOOST_ERROR("accepted");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()).find("[json.exception") == std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(format)

BOOST_AUTO_TEST_CASE(numbers) {
  BOOST_TEST(format_value(HostTensor::scalar<float>(0.1f)) == "0.100000001");
  BOOST_TEST(format_value(HostTensor::scalar<double>(0.1)) == "0.10000000000000001");
  BOOST_TEST(format_value(HostTensor::scalar<float>(1.0f)) == "1");
  BOOST_TEST(format_value(HostTensor::scalar<double>(-2.5)) == "-2.5");
  BOOST_TEST(format_value(HostTensor::scalar<double>(1e20)) == "1e+20");
  // Negative zero keeps its sign through print and parse (found by fuzz_cli_values: "-0" read
  // back as the integer 0).
  BOOST_TEST(format_value(HostTensor::scalar<double>(-0.0)) == "-0.0");
  BOOST_TEST(format_value(HostTensor::scalar<float>(-0.0f)) == "-0.0");
  BOOST_TEST(std::signbit(parse_argument("-0.0", DType::F64, 0, "x").data<double>()[0]));
  BOOST_TEST(round_trip("[90993,-0e3]", DType::F32, 1) == "[90993,-0.0]");
  BOOST_TEST(format_value(HostTensor::scalar<float>(std::numeric_limits<float>::denorm_min())) ==
             "1.40129846e-45");
  BOOST_TEST(format_value(HostTensor::scalar<int32_t>(-2147483647 - 1)) == "-2147483648");
  BOOST_TEST(format_value(HostTensor::scalar<int64_t>(std::numeric_limits<int64_t>::max())) ==
             "9223372036854775807");
  BOOST_TEST(format_value(HostTensor::scalar<bool>(true)) == "true");
  BOOST_TEST(format_value(HostTensor::scalar<bool>(false)) == "false");
  BOOST_TEST(format_value(HostTensor::scalar<float>(std::numeric_limits<float>::quiet_NaN())) ==
             "NaN");
  BOOST_TEST(format_value(HostTensor::scalar<double>(std::numeric_limits<double>::infinity())) ==
             "Infinity");
  BOOST_TEST(format_value(HostTensor::scalar<float>(-std::numeric_limits<float>::infinity())) ==
             "-Infinity");
}

BOOST_AUTO_TEST_CASE(results_and_nesting) {
  std::vector<HostTensor> results = {HostTensor::from_vector<int32_t>({0, 1, 4}, {3}),
                                     HostTensor::scalar<int64_t>(19),
                                     HostTensor::scalar<bool>(true)};
  BOOST_TEST(format_results(results) == "[[0,1,4],19,true]");
  BOOST_TEST(format_results({}) == "[]");
  BOOST_TEST(format_value(HostTensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 1, 3})) ==
             "[[[1,2,3]],[[4,5,6]]]");
  BOOST_TEST(format_value(HostTensor(DType::F32, {0})) == "[]");
  BOOST_TEST(format_value(HostTensor(DType::F32, {2, 0})) == "[[],[]]");
  BOOST_TEST(format_value(HostTensor(DType::F32, {0, 2})) == "[]");
  BOOST_TEST(format_value(HostTensor(DType::I32, {2, 1, 0})) == "[[[]],[[]]]");
  BOOST_TEST(format_results({HostTensor(DType::Bool, {0}), HostTensor::scalar<float>(1.5f)}) ==
             "[[],1.5]");
  BOOST_CHECK_THROW(format_results({HostTensor()}), InternalError);
}

BOOST_AUTO_TEST_CASE(independent_of_the_locale) {
  // A locale with a decimal comma must not change the output (skipped where none is installed).
  for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8"}) {
    if (!std::setlocale(LC_ALL, name)) continue;
    BOOST_TEST(format_value(HostTensor::scalar<double>(0.5)) == "0.5");
    BOOST_TEST(round_trip("0.25", DType::F64, 0) == "0.25");
    std::setlocale(LC_ALL, "C");
    return;
  }
  BOOST_TEST_MESSAGE("no decimal-comma locale installed; locale test skipped");
}

BOOST_AUTO_TEST_SUITE_END()
