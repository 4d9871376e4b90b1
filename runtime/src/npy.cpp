#include "scangen/runtime/npy.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include "file_util.h"
#include "scangen/runtime/errors.h"
#include "zip.h"

// Element bytes are copied between files and memory as they are; the formats are little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the scangen runtime supports little-endian machines only");

namespace scangen {
namespace {

constexpr std::string_view kNpyMagic("\x93NUMPY", 6);
// numpy pads the header so that the data starts at a multiple of 64 bytes.
constexpr std::size_t kNpyAlignment = 64;
// numpy (since 1.23) leaves room for the first dimension to grow to this many digits in place.
constexpr std::size_t kGrowthAxisMaxDigits = 21;

std::string single_quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

using detail::fail_to_read;

// ---------------------------------------------------------------------------------------------
// The header: a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3,), }

struct HeaderValue {
  enum class Kind { String, Bool, IntTuple, List };
  Kind kind = Kind::String;
  std::string text;   // String
  bool flag = false;  // Bool
  Shape ints;         // IntTuple
};

// A tiny parser for the subset of Python literals that .npy headers use: a dict with string keys
// whose values are strings, True/False, tuples of integers and (for structured dtypes, which are
// then rejected) lists.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {}

  std::vector<std::pair<std::string, HeaderValue>> parse_dict() {
    std::vector<std::pair<std::string, HeaderValue>> entries;
    skip_space();
    expect('{', "the header must start with '{'");
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      if (peek() != '\'' && peek() != '"') error("expected a quoted key");
      std::string key = parse_string();
      skip_space();
      expect(':', "expected ':' after key " + single_quoted(key));
      skip_space();
      entries.emplace_back(key, parse_value(key));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') error("expected ',' or '}' after the value of " + single_quoted(key));
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after the closing '}'");
    return entries;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }

  void skip_space() {
    while (!at_end() && std::strchr(" \t\n\r\f\v", text_[pos_]) != nullptr) ++pos_;
  }

  [[noreturn]] void error(const std::string& what) const {
    std::string where = at_end() ? "at the end of the header"
                                 : "at offset " + std::to_string(pos_) + " of the header";
    fail_to_read(origin_, "malformed header: " + what + " " + where);
  }

  void expect(char c, const std::string& what) {
    if (peek() != c) error(what);
    ++pos_;
  }

  std::string parse_string() {
    char quote = text_[pos_++];
    std::string value;
    for (;;) {
      if (at_end() || peek() == '\n') error("unterminated string");
      char c = text_[pos_++];
      if (c == quote) return value;
      if (c == '\\') error("escape sequences in strings are not supported");
      value += c;
    }
  }

  int64_t parse_dimension() {
    bool negative = peek() == '-';
    if (negative) ++pos_;
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      error("expected an integer in the shape");
    int64_t value = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        error("a dimension of the shape is too large");
      value = value * 10 + digit;
    }
    // Python 2 wrote long integers with an 'L' suffix; numpy still reads such files.
    if (peek() == 'L' || peek() == 'l') ++pos_;
    return negative ? -value : value;
  }

  Shape parse_int_tuple() {
    ++pos_;  // '('
    Shape dims;
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      dims.push_back(parse_dimension());
      skip_space();
      trailing_comma = peek() == ',';
      if (trailing_comma) {
        ++pos_;
      } else if (peek() != ')') {
        error("expected ',' or ')' in the shape");
      }
    }
    ++pos_;  // ')'
    // In Python "(3)" is the integer 3, not a tuple.
    if (dims.size() == 1 && !trailing_comma)
      error("the shape (" + std::to_string(dims[0]) + ") is not a tuple");
    return dims;
  }

  void skip_list() {
    int depth = 0;
    do {
      if (at_end()) error("unterminated list");
      char c = peek();
      if (c == '\'' || c == '"') {
        parse_string();
        continue;
      }
      if (c == '[' || c == '(') ++depth;
      if (c == ']' || c == ')') --depth;
      ++pos_;
    } while (depth > 0);
  }

  HeaderValue parse_value(const std::string& key) {
    HeaderValue value;
    char c = peek();
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::Kind::String;
      value.text = parse_string();
    } else if (c == '(') {
      value.kind = HeaderValue::Kind::IntTuple;
      value.ints = parse_int_tuple();
    } else if (c == '[') {
      value.kind = HeaderValue::Kind::List;
      skip_list();
    } else if (text_.substr(pos_, 4) == "True") {
      value.kind = HeaderValue::Kind::Bool;
      value.flag = true;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "False") {
      value.kind = HeaderValue::Kind::Bool;
      value.flag = false;
      pos_ += 5;
    } else {
      error("unsupported value for key " + single_quoted(key));
    }
    return value;
  }

  std::string_view text_;
  std::string_view origin_;
  std::size_t pos_ = 0;
};

// The header's "descr" for each dtype, as numpy writes it.
std::string_view npy_descr(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return "|b1";
    case DType::I32:
      return "<i4";
    case DType::I64:
      return "<i8";
    case DType::F32:
      return "<f4";
    case DType::F64:
      return "<f8";
  }
  throw std::logic_error("npy_descr: invalid dtype");
}

DType dtype_from_descr(const std::string& descr, std::string_view origin) {
  const std::string supported = " (supported: <f4, <f8, <i4, <i8, |b1)";
  if (descr.size() >= 2 && descr[1] == 'O') fail_to_read(origin, "object arrays are not supported");
  if (descr.size() == 3) {
    char order = descr[0];
    std::string_view code = std::string_view(descr).substr(1);
    if (code == "b1" && (order == '|' || order == '<' || order == '=')) return DType::Bool;
    if (order == '<' || order == '=') {
      if (code == "f4") return DType::F32;
      if (code == "f8") return DType::F64;
      if (code == "i4") return DType::I32;
      if (code == "i8") return DType::I64;
    }
    if (order == '>' &&
        (code == "f4" || code == "f8" || code == "i4" || code == "i8" || code == "b1"))
      fail_to_read(origin, "big-endian data (" + single_quoted(descr) +
                               ") is not supported; convert it with arr.astype('<" +
                               std::string(code) + "')");
  }
  fail_to_read(origin, "unsupported dtype " + single_quoted(descr) + supported);
}

// Python's repr of a shape tuple: (), (3,), (2, 3).
std::string python_tuple(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

struct Preamble {
  int major_version = 1;
  std::size_t header_start = 0;  // offset of the header text
  std::size_t header_length = 0;
  std::size_t data_offset() const { return header_start + header_length; }
};

std::size_t preamble_size(int major_version) { return major_version == 1 ? 10 : 12; }

// `bytes` holds the start of the file: at least preamble_size() bytes if the file has them.
Preamble parse_preamble(std::string_view bytes, std::string_view origin) {
  if (bytes.empty()) fail_to_read(origin, "not a .npy file (the file is empty)");
  std::size_t magic_bytes = std::min(bytes.size(), kNpyMagic.size());
  if (bytes.substr(0, magic_bytes) != kNpyMagic.substr(0, magic_bytes))
    fail_to_read(origin, "not a .npy file (it does not start with \\x93NUMPY)");
  if (bytes.size() < 8)
    fail_to_read(origin, "truncated file (" + std::to_string(bytes.size()) + " bytes)");
  Preamble preamble;
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail_to_read(origin, "unsupported .npy format version " + std::to_string(major) + "." +
                             std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  preamble.major_version = major;
  preamble.header_start = preamble_size(major);
  if (bytes.size() < preamble.header_start)
    fail_to_read(origin, "truncated file (" + std::to_string(bytes.size()) + " bytes)");
  auto byte = [&](std::size_t i) { return std::size_t(static_cast<unsigned char>(bytes[i])); };
  preamble.header_length = byte(8) | byte(9) << 8;
  if (major >= 2) preamble.header_length |= byte(10) << 16 | byte(11) << 24;
  return preamble;
}

struct NpyLayout {
  DType dtype = DType::F32;
  Shape shape;
  uint64_t data_bytes = 0;
};

NpyLayout parse_header(std::string_view header_text, std::string_view origin) {
  auto entries = HeaderParser(header_text, origin).parse_dict();
  const HeaderValue* descr = nullptr;
  const HeaderValue* fortran_order = nullptr;
  const HeaderValue* shape = nullptr;
  for (const auto& [key, value] : entries) {
    const HeaderValue** slot = key == "descr"           ? &descr
                               : key == "fortran_order" ? &fortran_order
                               : key == "shape"         ? &shape
                                                        : nullptr;
    if (!slot) fail_to_read(origin, "unexpected key " + single_quoted(key) + " in the header");
    if (*slot) fail_to_read(origin, "the header has key " + single_quoted(key) + " twice");
    *slot = &value;
  }
  for (auto [value, name] : {std::pair{descr, "descr"}, std::pair{fortran_order, "fortran_order"},
                             std::pair{shape, "shape"}})
    if (!value) fail_to_read(origin, std::string("the header has no '") + name + "' key");

  if (descr->kind == HeaderValue::Kind::List)
    fail_to_read(origin, "structured dtypes are not supported");
  if (descr->kind != HeaderValue::Kind::String)
    fail_to_read(origin, "'descr' in the header is not a string");
  if (fortran_order->kind != HeaderValue::Kind::Bool)
    fail_to_read(origin, "'fortran_order' in the header is not True or False");
  if (fortran_order->flag)
    fail_to_read(origin,
                 "Fortran-order arrays are not supported; save np.ascontiguousarray(arr) instead");
  if (shape->kind != HeaderValue::Kind::IntTuple)
    fail_to_read(origin, "'shape' in the header is not a tuple of integers");

  NpyLayout layout;
  layout.dtype = dtype_from_descr(descr->text, origin);
  layout.shape = shape->ints;
  for (int64_t dim : layout.shape)
    if (dim < 0)
      fail_to_read(origin, "the shape " + python_tuple(layout.shape) + " has a negative dimension");
  int64_t numel = 0;
  try {
    numel = shape_numel(layout.shape);
  } catch (const std::length_error&) {
    fail_to_read(origin, "the shape " + python_tuple(layout.shape) + " has too many elements");
  }
  uint64_t item_size = dtype_size(layout.dtype);
  if (static_cast<uint64_t>(numel) > std::numeric_limits<uint64_t>::max() / item_size)
    fail_to_read(origin, "the shape " + python_tuple(layout.shape) + " has too many elements");
  layout.data_bytes = static_cast<uint64_t>(numel) * item_size;
  return layout;
}

// `available` is the number of bytes after the header; `at_least` when more may follow.
std::string size_mismatch(const NpyLayout& layout, uint64_t available, bool at_least = false) {
  std::string need = "the header's shape " + python_tuple(layout.shape) + " of " +
                     std::string(npy_descr(layout.dtype)) + " needs " +
                     std::to_string(layout.data_bytes) + " data bytes, but ";
  if (available < layout.data_bytes)
    return "truncated file: " + need + "only " + std::to_string(available) + " follow the header";
  return "size mismatch: " + need +
         (at_least ? "more than " + std::to_string(layout.data_bytes) : std::to_string(available)) +
         " follow the header";
}

void check_bools(const HostTensor& tensor, std::string_view origin) {
  const auto* bytes = static_cast<const unsigned char*>(tensor.raw_data());
  for (int64_t i = 0; i < tensor.numel(); ++i)
    if (bytes[i] > 1)
      fail_to_read(origin, "bool element " + std::to_string(i) + " has byte value " +
                               std::to_string(bytes[i]) + " (only 0 and 1 are valid)");
}

// Everything before the data: magic, version, header length, header dict, padding, '\n'.
std::string npy_header(DType dtype, const Shape& shape) {
  std::string dict = "{'descr': '" + std::string(npy_descr(dtype)) +
                     "', 'fortran_order': False, 'shape': " + python_tuple(shape) + ", }";
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  int major = 1;
  auto padded_length = [&](std::size_t preamble) {
    std::size_t unpadded = preamble + dict.size() + 1;  // + '\n'
    return dict.size() + 1 + (kNpyAlignment - unpadded % kNpyAlignment) % kNpyAlignment;
  };
  std::size_t header_length = padded_length(preamble_size(1));
  if (header_length > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    header_length = padded_length(preamble_size(2));
    if (header_length > std::numeric_limits<uint32_t>::max())
      throw RuntimeError("cannot write a .npy header of " + std::to_string(header_length) +
                         " bytes");
  }
  std::string out(kNpyMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < preamble_size(major) - 8; ++i)
    out += static_cast<char>((header_length >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_length - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

std::string_view tensor_bytes(const HostTensor& tensor) {
  return {static_cast<const char*>(tensor.raw_data()), tensor.nbytes()};
}

void check_writable(const HostTensor& tensor, const std::filesystem::path& path) {
  if (!tensor.valid())
    throw RuntimeError("cannot write '" + path.string() + "': the tensor is empty (no storage)");
}

}  // namespace

NamedTensors decode_npz(std::string_view bytes, std::string_view origin) {
  detail::ZipReader zip(bytes, origin);
  NamedTensors result;
  std::set<std::string> seen;
  for (uint64_t i = 0; i < zip.entry_count(); ++i) {
    detail::ZipEntry entry = zip.next_entry();
    std::string entry_origin = std::string(origin) + " entry " + single_quoted(entry.name);
    constexpr std::string_view kSuffix = ".npy";
    if (entry.name.size() <= kSuffix.size() ||
        entry.name.compare(entry.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
      fail_to_read(entry_origin, "not a .npy file (entries of a .npz file are named NAME.npy)");
    if (!seen.insert(entry.name).second)
      fail_to_read(entry_origin, "the archive has this entry twice");
    std::string_view data = zip.entry_data(entry, entry_origin);
    result.emplace_back(entry.name.substr(0, entry.name.size() - kSuffix.size()),
                        decode_npy(data, entry_origin));
  }
  return result;
}

std::string encode_npy(const HostTensor& tensor) {
  if (!tensor.valid()) throw RuntimeError("cannot encode an empty tensor (no storage) as .npy");
  return npy_header(tensor.dtype(), tensor.shape()) + std::string(tensor_bytes(tensor));
}

HostTensor decode_npy(std::string_view bytes, std::string_view origin) {
  Preamble preamble = parse_preamble(bytes, origin);
  if (bytes.size() < preamble.data_offset())
    fail_to_read(origin, "truncated file: the header is " + std::to_string(preamble.header_length) +
                             " bytes long, but only " +
                             std::to_string(bytes.size() - preamble.header_start) + " follow");
  NpyLayout layout =
      parse_header(bytes.substr(preamble.header_start, preamble.header_length), origin);
  uint64_t available = bytes.size() - preamble.data_offset();
  if (available != layout.data_bytes) fail_to_read(origin, size_mismatch(layout, available));
  HostTensor tensor(layout.dtype, layout.shape);
  if (layout.data_bytes)
    std::memcpy(tensor.raw_data(), bytes.data() + preamble.data_offset(), layout.data_bytes);
  if (layout.dtype == DType::Bool) check_bools(tensor, origin);
  return tensor;
}

HostTensor read_npy(const std::filesystem::path& path) {
  const std::string origin = single_quoted(path.string());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) throw RuntimeError("cannot read " + detail::quoted_reason(path, errno));
  // Reads up to `size` bytes; a short count means the end of the file.
  auto read_up_to = [&](void* into, std::size_t size) {
    std::size_t got = std::fread(into, 1, size, file.get());
    if (got < size && std::ferror(file.get()))
      throw RuntimeError("cannot read " + detail::quoted_reason(path, errno));
    return got;
  };

  // The header is read first and the data straight into the tensor: arguments may be large.
  std::string prefix(preamble_size(2), '\0');
  prefix.resize(read_up_to(prefix.data(), prefix.size()));
  Preamble preamble = parse_preamble(prefix, origin);
  if (preamble.data_offset() < prefix.size()) {
    // A header of 0 or 1 bytes cannot hold a dict; parse_header says what is wrong.
    parse_header(std::string_view(prefix).substr(preamble.header_start, preamble.header_length),
                 origin);
    fail_to_read(origin, "malformed header");
  }
  std::size_t old_size = prefix.size();
  prefix.resize(preamble.data_offset());
  std::size_t got = read_up_to(prefix.data() + old_size, prefix.size() - old_size);
  if (old_size + got < prefix.size())
    fail_to_read(origin, "truncated file: the header is " + std::to_string(preamble.header_length) +
                             " bytes long, but only " +
                             std::to_string(old_size + got - preamble.header_start) + " follow");
  NpyLayout layout = parse_header(std::string_view(prefix).substr(preamble.header_start), origin);

  // For a regular file, check the size before allocating what a corrupt header may ask for.
  struct stat info {};
  if (::fstat(::fileno(file.get()), &info) == 0 && S_ISREG(info.st_mode)) {
    uint64_t available =
        static_cast<uint64_t>(info.st_size) - std::min<uint64_t>(info.st_size, prefix.size());
    if (available != layout.data_bytes) fail_to_read(origin, size_mismatch(layout, available));
  }
  HostTensor tensor(layout.dtype, layout.shape);
  got = read_up_to(tensor.raw_data(), tensor.nbytes());
  if (got != layout.data_bytes) fail_to_read(origin, size_mismatch(layout, got));
  if (std::fgetc(file.get()) != EOF)
    fail_to_read(origin, size_mismatch(layout, layout.data_bytes + 1, true));
  if (layout.dtype == DType::Bool) check_bools(tensor, origin);
  return tensor;
}

void write_npy(const std::filesystem::path& path, const HostTensor& tensor) {
  check_writable(tensor, path);
  detail::write_file_atomically(path, [&](detail::OutputFile& out) {
    out.write(npy_header(tensor.dtype(), tensor.shape()));
    out.write(tensor_bytes(tensor));
  });
}

NamedTensors read_npz(const std::filesystem::path& path) {
  return decode_npz(detail::read_file(path), single_quoted(path.string()));
}

void write_npz(const std::filesystem::path& path, const NamedTensors& entries) {
  detail::write_npz(path, entries, 0xffffffff);
}

void detail::write_npz(const std::filesystem::path& path, const NamedTensors& entries,
                       uint64_t zip64_threshold) {
  std::set<std::string> seen;
  for (const auto& [name, tensor] : entries) {
    std::string where = "cannot write '" + path.string() + "': ";
    if (name.empty()) throw RuntimeError(where + "an entry has an empty name");
    if (name.find('\0') != std::string::npos)
      throw RuntimeError(where + "an entry name contains a NUL byte");
    if (name.size() + 4 > 0xffff)
      throw RuntimeError(where + "the entry name " + single_quoted(name.substr(0, 40)) +
                         "... is too long");
    if (!seen.insert(name).second)
      throw RuntimeError(where + "two entries are named " + single_quoted(name));
    check_writable(tensor, path);
  }
  detail::write_file_atomically(path, [&](detail::OutputFile& out) {
    detail::ZipWriter zip(out, zip64_threshold);
    for (const auto& [name, tensor] : entries)
      zip.add(name + ".npy", {npy_header(tensor.dtype(), tensor.shape()), tensor_bytes(tensor)});
    zip.finish();
  });
}

}  // namespace scangen
