#include "scangen/runtime/npy.h"

#include <sys/stat.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "file_util.h"
#include "scangen/runtime/errors.h"

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

[[noreturn]] void fail(std::string_view origin, const std::string& reason) {
  throw RuntimeError("cannot read " + std::string(origin) + ": " + reason);
}

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
    fail(origin_, "malformed header: " + what + " " + where);
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
  if (descr.size() >= 2 && descr[1] == 'O') fail(origin, "object arrays are not supported");
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
      fail(origin, "big-endian data (" + single_quoted(descr) +
                       ") is not supported; convert it with arr.astype('<" + std::string(code) +
                       "')");
  }
  fail(origin, "unsupported dtype " + single_quoted(descr) + supported);
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
  if (bytes.empty()) fail(origin, "not a .npy file (the file is empty)");
  std::size_t magic_bytes = std::min(bytes.size(), kNpyMagic.size());
  if (bytes.substr(0, magic_bytes) != kNpyMagic.substr(0, magic_bytes))
    fail(origin, "not a .npy file (it does not start with \\x93NUMPY)");
  if (bytes.size() < 8) fail(origin, "truncated file (" + std::to_string(bytes.size()) + " bytes)");
  Preamble preamble;
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(origin, "unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  preamble.major_version = major;
  preamble.header_start = preamble_size(major);
  if (bytes.size() < preamble.header_start)
    fail(origin, "truncated file (" + std::to_string(bytes.size()) + " bytes)");
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
    if (!slot) fail(origin, "unexpected key " + single_quoted(key) + " in the header");
    if (*slot) fail(origin, "the header has key " + single_quoted(key) + " twice");
    *slot = &value;
  }
  for (auto [value, name] : {std::pair{descr, "descr"}, std::pair{fortran_order, "fortran_order"},
                             std::pair{shape, "shape"}})
    if (!value) fail(origin, std::string("the header has no '") + name + "' key");

  if (descr->kind == HeaderValue::Kind::List) fail(origin, "structured dtypes are not supported");
  if (descr->kind != HeaderValue::Kind::String)
    fail(origin, "'descr' in the header is not a string");
  if (fortran_order->kind != HeaderValue::Kind::Bool)
    fail(origin, "'fortran_order' in the header is not True or False");
  if (fortran_order->flag)
    fail(origin, "Fortran-order arrays are not supported; save np.ascontiguousarray(arr) instead");
  if (shape->kind != HeaderValue::Kind::IntTuple)
    fail(origin, "'shape' in the header is not a tuple of integers");

  NpyLayout layout;
  layout.dtype = dtype_from_descr(descr->text, origin);
  layout.shape = shape->ints;
  for (int64_t dim : layout.shape)
    if (dim < 0)
      fail(origin, "the shape " + python_tuple(layout.shape) + " has a negative dimension");
  int64_t numel = 0;
  try {
    numel = shape_numel(layout.shape);
  } catch (const std::length_error&) {
    fail(origin, "the shape " + python_tuple(layout.shape) + " has too many elements");
  }
  uint64_t item_size = dtype_size(layout.dtype);
  if (static_cast<uint64_t>(numel) > std::numeric_limits<uint64_t>::max() / item_size)
    fail(origin, "the shape " + python_tuple(layout.shape) + " has too many elements");
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
      fail(origin, "bool element " + std::to_string(i) + " has byte value " +
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

// ---------------------------------------------------------------------------------------------
// ZIP (PKWARE APPNOTE 6.3): just what numpy.savez writes: stored entries, optional ZIP64 records.

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSignature = 0x06054b50;
constexpr uint32_t kZip64EndOfCentralDirSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr std::size_t kLocalHeaderSize = 30;
constexpr std::size_t kCentralHeaderSize = 46;
constexpr std::size_t kEndOfCentralDirSize = 22;
constexpr std::size_t kZip64EndOfCentralDirSize = 56;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kFlagEncrypted = 1 << 0;
constexpr uint16_t kFlagUtf8Name = 1 << 11;
constexpr uint16_t kVersionDefault = 20;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
// A fixed timestamp (1980-01-01 00:00, the DOS epoch) makes archives reproducible.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (1 << 5) | 1;
constexpr uint32_t kRegularFileMode = 0100644;

// Bounds-checked little-endian reads from an archive held in memory.
class ByteView {
 public:
  ByteView(std::string_view bytes, std::string_view origin) : bytes_(bytes), origin_(origin) {}

  void require(uint64_t offset, uint64_t size, const char* what) const {
    if (offset > bytes_.size() || size > bytes_.size() - offset)
      fail(origin_,
           std::string("truncated or corrupt archive: the ") + what + " lies outside the file");
  }
  uint64_t read(uint64_t offset, int size) const {
    uint64_t value = 0;
    for (int i = size - 1; i >= 0; --i)
      value = value << 8 | static_cast<unsigned char>(bytes_[offset + i]);
    return value;
  }
  uint16_t u16(uint64_t offset) const { return static_cast<uint16_t>(read(offset, 2)); }
  uint32_t u32(uint64_t offset) const { return static_cast<uint32_t>(read(offset, 4)); }
  uint64_t u64(uint64_t offset) const { return read(offset, 8); }
  std::string_view slice(uint64_t offset, uint64_t size) const {
    return bytes_.substr(offset, size);
  }
  std::size_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
  std::string_view origin_;
};

struct CentralDirectory {
  uint64_t entry_count = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

CentralDirectory find_central_directory(const ByteView& zip, std::string_view origin) {
  // The end record is the last thing in the file, followed only by a comment of up to 64 KiB.
  if (zip.size() < kEndOfCentralDirSize)
    fail(origin, "not a .npz file (too short to be a zip archive)");
  std::optional<uint64_t> end_record;
  uint64_t lowest =
      zip.size() > kEndOfCentralDirSize + 0xffff ? zip.size() - kEndOfCentralDirSize - 0xffff : 0;
  for (uint64_t pos = zip.size() - kEndOfCentralDirSize + 1; pos-- > lowest;) {
    if (zip.u32(pos) == kEndOfCentralDirSignature &&
        pos + kEndOfCentralDirSize + zip.u16(pos + 20) == zip.size()) {
      end_record = pos;
      break;
    }
  }
  if (!end_record) fail(origin, "not a .npz file (no zip end-of-central-directory record)");
  uint64_t end = *end_record;
  if (zip.u16(end + 4) != 0 || zip.u16(end + 6) != 0 || zip.u16(end + 8) != zip.u16(end + 10))
    fail(origin, "multi-part zip archives are not supported");
  CentralDirectory directory{zip.u16(end + 10), zip.u32(end + 16), zip.u32(end + 12)};

  // Like Python's zipfile, a ZIP64 locator right before the end record takes precedence.
  if (end >= kZip64LocatorSize && zip.u32(end - kZip64LocatorSize) == kZip64LocatorSignature) {
    uint64_t record = zip.u64(end - kZip64LocatorSize + 8);
    zip.require(record, kZip64EndOfCentralDirSize, "ZIP64 end-of-central-directory record");
    if (zip.u32(record) != kZip64EndOfCentralDirSignature)
      fail(origin, "corrupt archive: bad ZIP64 end-of-central-directory record");
    if (zip.u32(record + 16) != 0 || zip.u32(record + 20) != 0 ||
        zip.u64(record + 24) != zip.u64(record + 32))
      fail(origin, "multi-part zip archives are not supported");
    directory = {zip.u64(record + 32), zip.u64(record + 48), zip.u64(record + 40)};
  }
  zip.require(directory.offset, directory.size, "central directory");
  return directory;
}

struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

// Reads one central directory record at `pos`; returns the offset of the next one.
uint64_t read_central_record(const ByteView& zip, uint64_t pos, ZipEntry& entry,
                             std::string_view origin) {
  zip.require(pos, kCentralHeaderSize, "central directory");
  if (zip.u32(pos) != kCentralHeaderSignature)
    fail(origin, "corrupt archive: bad central directory record");
  entry.flags = zip.u16(pos + 8);
  entry.method = zip.u16(pos + 10);
  entry.crc = zip.u32(pos + 16);
  entry.compressed_size = zip.u32(pos + 20);
  entry.uncompressed_size = zip.u32(pos + 24);
  uint16_t name_length = zip.u16(pos + 28);
  uint16_t extra_length = zip.u16(pos + 30);
  uint16_t comment_length = zip.u16(pos + 32);
  entry.local_header_offset = zip.u32(pos + 42);
  uint64_t name_start = pos + kCentralHeaderSize;
  zip.require(name_start, uint64_t(name_length) + extra_length + comment_length,
              "central directory");
  entry.name = std::string(zip.slice(name_start, name_length));

  // Sizes and offsets that do not fit in 32 bits are 0xFFFFFFFF here, the real values follow in
  // this order in the ZIP64 extra field.
  std::vector<uint64_t*> in_zip64_extra;
  for (uint64_t* field :
       {&entry.uncompressed_size, &entry.compressed_size, &entry.local_header_offset})
    if (*field == 0xffffffff) in_zip64_extra.push_back(field);
  if (!in_zip64_extra.empty()) {
    bool found = false;
    for (uint64_t extra = name_start + name_length, extra_end = extra + extra_length;
         extra + 4 <= extra_end;) {
      uint16_t id = zip.u16(extra);
      uint16_t size = zip.u16(extra + 2);
      if (extra + 4 + size > extra_end) break;
      if (id == kZip64ExtraId && size >= 8 * in_zip64_extra.size()) {
        for (std::size_t i = 0; i < in_zip64_extra.size(); ++i)
          *in_zip64_extra[i] = zip.u64(extra + 4 + 8 * i);
        found = true;
        break;
      }
      extra += 4 + size;
    }
    if (!found)
      fail(origin,
           "corrupt archive: entry " + single_quoted(entry.name) + " lacks its ZIP64 sizes");
  }
  return name_start + name_length + extra_length + comment_length;
}

std::string_view entry_data(const ByteView& zip, const ZipEntry& entry,
                            const std::string& entry_origin) {
  if (entry.flags & kFlagEncrypted) fail(entry_origin, "encrypted entries are not supported");
  if (entry.method == kMethodDeflate)
    fail(entry_origin,
         "the entry is compressed (deflate); only uncompressed .npz files are supported: save with "
         "numpy.savez, not numpy.savez_compressed");
  if (entry.method != kMethodStored)
    fail(entry_origin, "unsupported zip compression method " + std::to_string(entry.method) +
                           "; only uncompressed (stored) entries are supported");
  if (entry.compressed_size != entry.uncompressed_size)
    fail(entry_origin,
         "corrupt archive: a stored entry's compressed and uncompressed sizes differ");
  zip.require(entry.local_header_offset, kLocalHeaderSize, "local header of an entry");
  if (zip.u32(entry.local_header_offset) != kLocalHeaderSignature)
    fail(entry_origin, "corrupt archive: bad local header");
  uint64_t data_start = entry.local_header_offset + kLocalHeaderSize +
                        zip.u16(entry.local_header_offset + 26) +
                        zip.u16(entry.local_header_offset + 28);
  zip.require(data_start, entry.uncompressed_size, "data of an entry");
  std::string_view data = zip.slice(data_start, entry.uncompressed_size);
  if (crc32(data) != entry.crc) fail(entry_origin, "CRC-32 mismatch: the archive is corrupt");
  return data;
}

}  // namespace

NamedTensors decode_npz(std::string_view bytes, std::string_view origin) {
  ByteView zip(bytes, origin);
  CentralDirectory directory = find_central_directory(zip, origin);
  NamedTensors result;
  std::set<std::string> seen;
  uint64_t pos = directory.offset;
  for (uint64_t i = 0; i < directory.entry_count; ++i) {
    ZipEntry entry;
    pos = read_central_record(zip, pos, entry, origin);
    std::string entry_origin = std::string(origin) + " entry " + single_quoted(entry.name);
    constexpr std::string_view kSuffix = ".npy";
    if (entry.name.size() <= kSuffix.size() ||
        entry.name.compare(entry.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
      fail(entry_origin, "not a .npy file (entries of a .npz file are named NAME.npy)");
    if (!seen.insert(entry.name).second) fail(entry_origin, "the archive has this entry twice");
    std::string_view data = entry_data(zip, entry, entry_origin);
    result.emplace_back(entry.name.substr(0, entry.name.size() - kSuffix.size()),
                        decode_npy(data, entry_origin));
  }
  return result;
}

namespace {

void put_le(std::string& out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

}  // namespace

// -----------------------------------------------------------------------------------------------

uint32_t crc32(std::string_view bytes, uint32_t crc) {
  static const auto table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entries[n] = c;
    }
    return entries;
  }();
  crc = ~crc;
  for (char byte : bytes) crc = table[(crc ^ static_cast<unsigned char>(byte)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::string encode_npy(const HostTensor& tensor) {
  if (!tensor.valid()) throw RuntimeError("cannot encode an empty tensor (no storage) as .npy");
  return npy_header(tensor.dtype(), tensor.shape()) + std::string(tensor_bytes(tensor));
}

HostTensor decode_npy(std::string_view bytes, std::string_view origin) {
  Preamble preamble = parse_preamble(bytes, origin);
  if (bytes.size() < preamble.data_offset())
    fail(origin, "truncated file: the header is " + std::to_string(preamble.header_length) +
                     " bytes long, but only " +
                     std::to_string(bytes.size() - preamble.header_start) + " follow");
  NpyLayout layout =
      parse_header(bytes.substr(preamble.header_start, preamble.header_length), origin);
  uint64_t available = bytes.size() - preamble.data_offset();
  if (available != layout.data_bytes) fail(origin, size_mismatch(layout, available));
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
    fail(origin, "malformed header");
  }
  std::size_t old_size = prefix.size();
  prefix.resize(preamble.data_offset());
  std::size_t got = read_up_to(prefix.data() + old_size, prefix.size() - old_size);
  if (old_size + got < prefix.size())
    fail(origin, "truncated file: the header is " + std::to_string(preamble.header_length) +
                     " bytes long, but only " +
                     std::to_string(old_size + got - preamble.header_start) + " follow");
  NpyLayout layout = parse_header(std::string_view(prefix).substr(preamble.header_start), origin);

  // For a regular file, check the size before allocating what a corrupt header may ask for.
  struct stat info {};
  if (::fstat(::fileno(file.get()), &info) == 0 && S_ISREG(info.st_mode)) {
    uint64_t available =
        static_cast<uint64_t>(info.st_size) - std::min<uint64_t>(info.st_size, prefix.size());
    if (available != layout.data_bytes) fail(origin, size_mismatch(layout, available));
  }
  HostTensor tensor(layout.dtype, layout.shape);
  got = read_up_to(tensor.raw_data(), tensor.nbytes());
  if (got != layout.data_bytes) fail(origin, size_mismatch(layout, got));
  if (std::fgetc(file.get()) != EOF)
    fail(origin, size_mismatch(layout, layout.data_bytes + 1, true));
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
  const uint64_t zip64_entry_count = std::min<uint64_t>(zip64_threshold, 0xffff);

  detail::write_file_atomically(path, [&](detail::OutputFile& out) {
    std::string central_directory;
    uint64_t offset = 0;
    for (const auto& [name, tensor] : entries) {
      const std::string file_name = name + ".npy";
      const std::string header = npy_header(tensor.dtype(), tensor.shape());
      const uint64_t size = header.size() + tensor.nbytes();
      const uint32_t crc = crc32(tensor_bytes(tensor), crc32(header));
      bool utf8_name = false;
      for (char c : file_name) utf8_name |= static_cast<unsigned char>(c) >= 0x80;
      const uint16_t flags = utf8_name ? kFlagUtf8Name : 0;

      // A ZIP64 extra field in a local header must hold both sizes.
      const bool zip64_size = size >= zip64_threshold;
      std::string local;
      put_le(local, kLocalHeaderSignature, 4);
      put_le(local, zip64_size ? kVersionZip64 : kVersionDefault, 2);
      put_le(local, flags, 2);
      put_le(local, kMethodStored, 2);
      put_le(local, kDosTime, 2);
      put_le(local, kDosDate, 2);
      put_le(local, crc, 4);
      put_le(local, zip64_size ? 0xffffffff : size, 4);
      put_le(local, zip64_size ? 0xffffffff : size, 4);
      put_le(local, file_name.size(), 2);
      put_le(local, zip64_size ? 20 : 0, 2);
      local += file_name;
      if (zip64_size) {
        put_le(local, kZip64ExtraId, 2);
        put_le(local, 16, 2);
        put_le(local, size, 8);
        put_le(local, size, 8);
      }
      out.write(local);
      out.write(header);
      out.write(tensor_bytes(tensor));

      // The central record's ZIP64 extra holds only the fields that overflow.
      const bool zip64_offset = offset >= zip64_threshold;
      std::string central_extra;
      if (zip64_size || zip64_offset) {
        put_le(central_extra, kZip64ExtraId, 2);
        put_le(central_extra, (zip64_size ? 16 : 0) + (zip64_offset ? 8 : 0), 2);
        if (zip64_size) {
          put_le(central_extra, size, 8);
          put_le(central_extra, size, 8);
        }
        if (zip64_offset) put_le(central_extra, offset, 8);
      }
      const uint16_t version = central_extra.empty() ? kVersionDefault : kVersionZip64;
      put_le(central_directory, kCentralHeaderSignature, 4);
      put_le(central_directory, kMadeByUnix | version, 2);
      put_le(central_directory, version, 2);
      put_le(central_directory, flags, 2);
      put_le(central_directory, kMethodStored, 2);
      put_le(central_directory, kDosTime, 2);
      put_le(central_directory, kDosDate, 2);
      put_le(central_directory, crc, 4);
      put_le(central_directory, zip64_size ? 0xffffffff : size, 4);
      put_le(central_directory, zip64_size ? 0xffffffff : size, 4);
      put_le(central_directory, file_name.size(), 2);
      put_le(central_directory, central_extra.size(), 2);
      put_le(central_directory, 0, 2);  // comment length
      put_le(central_directory, 0, 2);  // disk number
      put_le(central_directory, 0, 2);  // internal attributes
      put_le(central_directory, uint64_t(kRegularFileMode) << 16, 4);
      put_le(central_directory, zip64_offset ? 0xffffffff : offset, 4);
      central_directory += file_name;
      central_directory += central_extra;
      offset += local.size() + size;
    }
    out.write(central_directory);

    const uint64_t directory_offset = offset;
    const uint64_t directory_size = central_directory.size();
    const bool zip64_end = entries.size() >= zip64_entry_count ||
                           directory_offset >= zip64_threshold || directory_size >= zip64_threshold;
    std::string end;
    if (zip64_end) {
      const uint64_t record_offset = directory_offset + directory_size;
      put_le(end, kZip64EndOfCentralDirSignature, 4);
      put_le(end, kZip64EndOfCentralDirSize - 12, 8);  // size of the rest of the record
      put_le(end, kMadeByUnix | kVersionZip64, 2);
      put_le(end, kVersionZip64, 2);
      put_le(end, 0, 4);  // this disk
      put_le(end, 0, 4);  // disk of the central directory
      put_le(end, entries.size(), 8);
      put_le(end, entries.size(), 8);
      put_le(end, directory_size, 8);
      put_le(end, directory_offset, 8);
      put_le(end, kZip64LocatorSignature, 4);
      put_le(end, 0, 4);
      put_le(end, record_offset, 8);
      put_le(end, 1, 4);  // number of disks
    }
    put_le(end, kEndOfCentralDirSignature, 4);
    put_le(end, 0, 2);
    put_le(end, 0, 2);
    put_le(end, zip64_end ? 0xffff : entries.size(), 2);
    put_le(end, zip64_end ? 0xffff : entries.size(), 2);
    put_le(end, zip64_end ? 0xffffffff : directory_size, 4);
    put_le(end, zip64_end ? 0xffffffff : directory_offset, 4);
    put_le(end, 0, 2);  // comment length
    out.write(end);
  });
}

}  // namespace scangen
