#include "scangen/runtime/json_io.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>

#include "scangen/runtime/errors.h"
#include "scangen/runtime/npy.h"

namespace scangen {
namespace {

// ---------------------------------------------------------------------------------------------
// A JSON value with the text of every number as it was written, so that integers are checked
// exactly and floats are rounded once, straight from the decimal text.

struct JsonNode {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;  // the number as a double, as nlohmann parsed it
  std::string text;   // a number's text, or a string's value
  std::vector<JsonNode> elements;
};

// Builds a JsonNode from nlohmann's SAX events. Arrays deeper than `max_array_depth` and the
// contents of objects are skipped: their kind alone is enough to report the error.
class TreeBuilder {
 public:
  using json = nlohmann::json;

  explicit TreeBuilder(int max_array_depth) : max_array_depth_(max_array_depth) {}

  JsonNode& root() { return root_; }
  const std::string& error() const { return error_; }
  bool number_overflow() const { return number_overflow_; }

  bool null() { return add(JsonNode{}); }
  bool boolean(bool value) {
    JsonNode node;
    node.kind = JsonNode::Kind::Bool;
    node.boolean = value;
    return add(std::move(node));
  }
  bool number_integer(json::number_integer_t value) {
    return add_number(static_cast<double>(value), std::to_string(value));
  }
  bool number_unsigned(json::number_unsigned_t value) {
    return add_number(static_cast<double>(value), std::to_string(value));
  }
  bool number_float(json::number_float_t value, const json::string_t& text) {
    return add_number(value, text);
  }
  bool string(json::string_t& value) {
    JsonNode node;
    node.kind = JsonNode::Kind::String;
    node.text = value;
    return add(std::move(node));
  }
  bool binary(json::binary_t&) { return true; }  // not produced by the JSON text parser
  bool start_object(std::size_t) {
    if (skip_depth_ == 0) {
      JsonNode node;
      node.kind = JsonNode::Kind::Object;
      add(std::move(node));
    }
    ++skip_depth_;
    return true;
  }
  bool key(json::string_t&) { return true; }
  bool end_object() {
    --skip_depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (skip_depth_ > 0 || static_cast<int>(stack_.size()) >= max_array_depth_) {
      if (skip_depth_ == 0) {
        JsonNode node;
        node.kind = JsonNode::Kind::Array;
        add(std::move(node));
      }
      ++skip_depth_;
      return true;
    }
    JsonNode node;
    node.kind = JsonNode::Kind::Array;
    stack_.push_back(add_node(std::move(node)));
    return true;
  }
  bool end_array() {
    if (skip_depth_ > 0)
      --skip_depth_;
    else
      stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    // Strip nlohmann's "[json.exception.parse_error.101] " prefix: users do not need it.
    std::string message = error.what();
    if (std::size_t end = message.find("] ");
        message.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
      message.erase(0, end + 2);
    error_ = message;
    number_overflow_ = error.id == 406;  // out_of_range.406: "number overflow parsing '1e400'"
    return false;
  }

 private:
  bool add_number(double value, const std::string& text) {
    JsonNode node;
    node.kind = JsonNode::Kind::Number;
    node.number = value;
    node.text = text;
    return add(std::move(node));
  }
  bool add(JsonNode&& node) {
    if (skip_depth_ == 0) add_node(std::move(node));
    return true;
  }
  // Ancestors on stack_ stay put: a vector only grows while its own array is the innermost one.
  JsonNode* add_node(JsonNode&& node) {
    if (stack_.empty()) {
      root_ = std::move(node);
      return &root_;
    }
    stack_.back()->elements.push_back(std::move(node));
    return &stack_.back()->elements.back();
  }

  int max_array_depth_;
  int skip_depth_ = 0;
  JsonNode root_;
  std::vector<JsonNode*> stack_;
  std::string error_;
  bool number_overflow_ = false;
};

// ---------------------------------------------------------------------------------------------
// Numbers

enum class IntegerCheck { Ok, NotInteger, OutOfRange };

// The exact value of a JSON number's text if it is an integer within [min, max].
IntegerCheck exact_integer(std::string_view text, int64_t min, int64_t max, int64_t& value) {
  std::size_t pos = 0;
  bool negative = pos < text.size() && text[pos] == '-';
  if (negative) ++pos;
  std::string digits;  // integer and fraction digits, without the point
  int64_t exponent = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
    digits += text[pos++];
  if (pos < text.size() && text[pos] == '.') {
    for (++pos; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos) {
      digits += text[pos];
      --exponent;
    }
  }
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool negative_exponent = pos < text.size() && text[pos] == '-';
    if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) ++pos;
    int64_t written = 0;
    // Saturate: anything beyond a million digits is out of range or not an integer anyway.
    for (; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos)
      written = std::min<int64_t>(written * 10 + (text[pos] - '0'), 1000000);
    exponent += negative_exponent ? -written : written;
  }
  // value = digits * 10^exponent; normalize so that `digits` has no leading or trailing zeros.
  std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    value = 0;
    return IntegerCheck::Ok;
  }
  digits.erase(0, first);
  std::size_t last = digits.find_last_not_of('0');
  exponent += static_cast<int64_t>(digits.size() - 1 - last);
  digits.erase(last + 1);
  if (exponent < 0) return IntegerCheck::NotInteger;
  if (static_cast<int64_t>(digits.size()) + exponent > 19) return IntegerCheck::OutOfRange;
  uint64_t magnitude = 0;  // at most 19 digits: fits in uint64
  for (char digit : digits) magnitude = magnitude * 10 + static_cast<uint64_t>(digit - '0');
  for (int64_t i = 0; i < exponent; ++i) magnitude *= 10;
  uint64_t limit = negative ? uint64_t(0) - static_cast<uint64_t>(min) : static_cast<uint64_t>(max);
  if (magnitude > limit) return IntegerCheck::OutOfRange;
  value =
      negative ? static_cast<int64_t>(uint64_t(0) - magnitude) : static_cast<int64_t>(magnitude);
  return IntegerCheck::Ok;
}

std::optional<double> special_float(std::string_view text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Converting the JSON value into a tensor of the parameter's type

class ArgumentBuilder {
 public:
  ArgumentBuilder(DType dtype, int rank, std::string_view name)
      : dtype_(dtype), rank_(rank), name_(name) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw RuntimeError("argument '" + name_ + "': " + message);
  }

  // "a rank-1 array of f32" / "a single f32 value"
  std::string expected() const {
    std::string type(dtype_name(dtype_));
    return rank_ == 0 ? "a single " + type + " value"
                      : "a rank-" + std::to_string(rank_) + " array of " + type;
  }

  static std::string describe(const JsonNode& node) {
    switch (node.kind) {
      case JsonNode::Kind::Null:
        return "null";
      case JsonNode::Kind::Bool:
        return node.boolean ? "true" : "false";
      case JsonNode::Kind::Number:
        return "a number";
      case JsonNode::Kind::String:
        return "a string";
      case JsonNode::Kind::Array:
        return "an array";
      case JsonNode::Kind::Object:
        return "an object";
    }
    return "a value";
  }

  HostTensor build(const JsonNode& root) const {
    Shape shape = shape_of(root);
    HostTensor tensor(dtype_, shape);
    int64_t index = 0;
    std::string path;
    fill(root, 0, tensor, index, path);
    return tensor;
  }

  // A float parameter given a bare NaN/Infinity/-Infinity as the whole value.
  HostTensor build_special(std::string_view token, double value) const {
    if (!is_float(dtype_))
      fail(std::string(token) + " is only valid for f32 and f64" + type_note());
    if (rank_ != 0) fail("expected " + expected() + ", got " + std::string(token));
    HostTensor tensor(dtype_, {});
    store(tensor, 0, value);
    return tensor;
  }

 private:
  // The shape follows the first element at each level; fill() checks that the rest agree.
  Shape shape_of(const JsonNode& root) const {
    Shape shape;
    const JsonNode* node = &root;
    std::string path;
    for (int depth = 0; depth < rank_; ++depth) {
      if (node->kind != JsonNode::Kind::Array) {
        if (depth == 0) fail("expected " + expected() + ", got " + describe(*node));
        fail("expected " + expected() + ", but element " + path + " is " + describe(*node) +
             ", not an array");
      }
      shape.push_back(static_cast<int64_t>(node->elements.size()));
      if (node->elements.empty()) {
        if (depth + 1 < rank_)
          fail("[] cannot give the sizes of the inner dimensions of " + expected() +
               "; use an .npy file (@path.npy)");
        break;
      }
      node = &node->elements.front();
      path += "[0]";
    }
    return shape;
  }

  void fill(const JsonNode& node, int depth, HostTensor& tensor, int64_t& index,
            std::string& path) const {
    if (depth == rank_) {
      if (node.kind == JsonNode::Kind::Array) {
        if (rank_ == 0) fail("expected " + expected() + ", got an array");
        fail("expected " + expected() + ", but element " + path + " is an array (nested too deep)");
      }
      store_scalar(node, tensor, index++, path);
      return;
    }
    if (node.kind != JsonNode::Kind::Array)
      fail("expected " + expected() + ", but element " + path + " is " + describe(node) +
           ", not an array");
    int64_t expected_length = tensor.dim(depth);
    if (static_cast<int64_t>(node.elements.size()) != expected_length)
      fail("the array is not rectangular: element " + path + " has length " +
           std::to_string(node.elements.size()) +
           ", but the first array at that depth has length " + std::to_string(expected_length));
    for (std::size_t i = 0; i < node.elements.size(); ++i) {
      std::size_t path_length = path.size();
      path += "[" + std::to_string(i) + "]";
      fill(node.elements[i], depth + 1, tensor, index, path);
      path.resize(path_length);
    }
  }

  // " (k is i32)" for scalars, " (A holds i32)" for arrays.
  std::string type_note() const {
    return " (" + name_ + (rank_ == 0 ? " is " : " holds ") + std::string(dtype_name(dtype_)) + ")";
  }

  [[noreturn]] void fail_element(const std::string& path, const std::string& problem) const {
    fail((path.empty() ? "" : "element " + path + ": ") + problem + type_note());
  }

  void store_scalar(const JsonNode& node, HostTensor& tensor, int64_t index,
                    const std::string& path) const {
    switch (dtype_) {
      case DType::Bool:
        if (node.kind != JsonNode::Kind::Bool)
          fail_element(path, "expected true or false, got " + describe(node));
        tensor.data<bool>()[index] = node.boolean;
        return;
      case DType::I32:
      case DType::I64: {
        if (node.kind == JsonNode::Kind::String && special_float(node.text))
          fail_element(path, node.text + " is only valid for f32 and f64");
        if (node.kind != JsonNode::Kind::Number)
          fail_element(path, "expected an integer, got " + describe(node));
        int64_t value = 0;
        bool is_i32 = dtype_ == DType::I32;
        switch (exact_integer(
            node.text,
            is_i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min(),
            is_i32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max(),
            value)) {
          case IntegerCheck::NotInteger:
            fail_element(path, node.text + " is not an integer");
          case IntegerCheck::OutOfRange:
            fail_element(path,
                         node.text + " is out of range for " + std::string(dtype_name(dtype_)));
          case IntegerCheck::Ok:
            break;
        }
        if (is_i32)
          tensor.data<int32_t>()[index] = static_cast<int32_t>(value);
        else
          tensor.data<int64_t>()[index] = value;
        return;
      }
      case DType::F32:
      case DType::F64:
        if (node.kind == JsonNode::Kind::String) {
          std::optional<double> special = special_float(node.text);
          if (!special)
            fail_element(path, "expected a number, got the string \"" + node.text + "\"");
          store(tensor, index, *special);
          return;
        }
        if (node.kind != JsonNode::Kind::Number)
          fail_element(path, "expected a number, got " + describe(node));
        if (dtype_ == DType::F32)
          tensor.data<float>()[index] = parse_float<float>(node, path);
        else
          tensor.data<double>()[index] = parse_float<double>(node, path);
        return;
    }
  }

  // Correctly rounded from the decimal text (going through double first could round twice).
  template <class T>
  T parse_float(const JsonNode& node, const std::string& path) const {
    T value{};
    const char* begin = node.text.data();
    const char* end = begin + node.text.size();
    auto [ptr, error] = std::from_chars(begin, end, value);
    if (error == std::errc::result_out_of_range) {
      // Too small to be represented (even as a subnormal) rounds to zero; too large is an error.
      if (std::fabs(node.number) < 1) return node.text[0] == '-' ? -T(0) : T(0);
      fail_element(path, node.text + " is outside the range of " + std::string(dtype_name(dtype_)));
    }
    if (error != std::errc() || ptr != end)
      fail_element(path, "cannot convert " + node.text + " to a number");
    return value;
  }

  void store(HostTensor& tensor, int64_t index, double value) const {
    if (dtype_ == DType::F32)
      tensor.data<float>()[index] = static_cast<float>(value);
    else
      tensor.data<double>()[index] = value;
  }

  DType dtype_;
  int rank_;
  std::string name_;
};

// NumPy's name of a dtype, for the hints of the messages.
std::string numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool_";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
  }
  return "?";
}

HostTensor argument_from_npy(std::string_view path_text, DType dtype, int rank,
                             const ArgumentBuilder& builder, std::string_view name) {
  if (path_text.empty()) builder.fail("'@' must be followed by the path of an .npy file");
  HostTensor tensor;
  try {
    tensor = read_npy(std::filesystem::path(std::string(path_text)));
  } catch (const RuntimeError& error) {
    builder.fail(error.what());
  }
  std::string file = "'" + std::string(path_text) + "'";
  if (tensor.dtype() != dtype)
    builder.fail(file + " holds " + std::string(dtype_name(tensor.dtype())) + " values, but " +
                 std::string(name) + " is " + std::string(dtype_name(dtype)) +
                 "; save it in that dtype, e.g. np.save(path, a.astype(np." + numpy_dtype(dtype) + "))");
  if (tensor.rank() != rank)
    builder.fail(file + " holds an array of rank " + std::to_string(tensor.rank()) + " (shape " +
                 shape_to_string(tensor.shape()) + "), but " + std::string(name) + " has rank " +
                 std::to_string(rank));
  return tensor;
}

// ---------------------------------------------------------------------------------------------
// Output

template <class T>
void append_float(std::string& out, T value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
  } else if (value == 0 && std::signbit(value)) {
    // Not "-0": JSON readers (this one included) take that for the integer 0 and lose the sign.
    out += "-0.0";
  } else {
    // to_chars with a precision behaves like printf's %.*g, without printf's locale.
    char buffer[64];
    int precision = std::is_same_v<T, float> ? 9 : 17;
    auto result =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, precision);
    out.append(buffer, result.ptr);
  }
}

template <class T>
void append_integer(std::string& out, T value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void append_element(std::string& out, const HostTensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::Bool:
      // Read the byte: a bool object holding anything but 0 or 1 is undefined behaviour.
      out += static_cast<const unsigned char*>(tensor.raw_data())[index] ? "true" : "false";
      return;
    case DType::I32:
      append_integer(out, tensor.data<int32_t>()[index]);
      return;
    case DType::I64:
      append_integer(out, tensor.data<int64_t>()[index]);
      return;
    case DType::F32:
      append_float(out, tensor.data<float>()[index]);
      return;
    case DType::F64:
      append_float(out, tensor.data<double>()[index]);
      return;
  }
}

void append_nested(std::string& out, const HostTensor& tensor, int depth, int64_t& index) {
  if (depth == tensor.rank()) {
    append_element(out, tensor, index++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < tensor.dim(depth); ++i) {
    if (i) out += ',';
    append_nested(out, tensor, depth + 1, index);
  }
  out += ']';
}

void append_value(std::string& out, const HostTensor& value, std::size_t position) {
  if (!value.valid())
    throw InternalError("result " + std::to_string(position) + " to format is an empty tensor");
  int64_t index = 0;
  append_nested(out, value, 0, index);
}

}  // namespace

HostTensor parse_argument(std::string_view text, DType dtype, int rank, std::string_view arg_name) {
  if (rank < 0)
    throw InternalError("parse_argument: negative rank for argument '" + std::string(arg_name) +
                        "'");
  ArgumentBuilder builder(dtype, rank, arg_name);
  if (!text.empty() && text.front() == '@')
    return argument_from_npy(text.substr(1), dtype, rank, builder, arg_name);

  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  if (trimmed.empty()) builder.fail("no value given (expected " + builder.expected() + ")");
  if (std::optional<double> special = special_float(trimmed))
    return builder.build_special(trimmed, *special);

  // One level deeper than the rank is kept so that "nested too deep" can be reported.
  TreeBuilder tree(rank + 1);
  if (!nlohmann::json::sax_parse(trimmed.begin(), trimmed.end(), &tree)) {
    if (tree.number_overflow()) builder.fail("a number is too large: " + tree.error());
    builder.fail("invalid JSON value: " + tree.error());
  }
  return builder.build(tree.root());
}

std::string format_value(const HostTensor& value) {
  std::string out;
  append_value(out, value, 0);
  return out;
}

std::string format_results(const std::vector<HostTensor>& results) {
  std::string out = "[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i) out += ',';
    append_value(out, results[i], i);
  }
  return out + "]";
}

}  // namespace scangen
