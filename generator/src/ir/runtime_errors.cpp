#include "ir/runtime_errors.h"

#include <array>

namespace scangen::ir {
namespace {

struct Entry {
  const char* name;
  RaisedBy raised_by;
  const char* format;
};

constexpr RaisedBy Program = RaisedBy::Program;
constexpr RaisedBy Signature = RaisedBy::Signature;
constexpr RaisedBy TypedApi = RaisedBy::TypedApi;

const Entry kEntries[] = {
#define RUNTIME_ERROR(id, raised_by, format) {#id, raised_by, format},
#include "ir/runtime_errors.def"
#undef RUNTIME_ERROR
};

const Entry& entry(RuntimeErrorId id) { return kEntries[static_cast<int>(id)]; }

ArgKind kind_named(const std::string& kind, const char* format) {
  if (kind == "text") return ArgKind::Text;
  if (kind == "int") return ArgKind::Int;
  if (kind == "shape") return ArgKind::Shape;
  SCANGEN_UNREACHABLE(std::string("placeholder of unknown kind '") + kind + "' in \"" + format + "\"");
}

// "{name:kind}" placeholders; braces appear nowhere else in a format.
std::vector<FormatPiece> parse(const char* format) {
  std::vector<FormatPiece> pieces;
  std::string text;
  for (const char* p = format; *p; ++p) {
    if (*p != '{') {
      SCANGEN_CHECK(*p != '}', std::string("a lone '}' in \"") + format + "\"");
      text += *p;
      continue;
    }
    if (!text.empty()) pieces.push_back({text, false, ArgKind::Text});
    text.clear();
    std::string inside;
    for (++p; *p && *p != '}'; ++p) inside += *p;
    SCANGEN_CHECK(*p == '}', std::string("an unclosed placeholder in \"") + format + "\"");
    const size_t colon = inside.find(':');
    SCANGEN_CHECK(colon != std::string::npos && colon > 0, std::string("a placeholder without {name:kind} in \"") + format + "\"");
    pieces.push_back({inside.substr(0, colon), true, kind_named(inside.substr(colon + 1), format)});
  }
  if (!text.empty()) pieces.push_back({text, false, ArgKind::Text});
  return pieces;
}

struct TextSink {
  std::string out;
  void text(const std::string& t) { out += t; }
  void value(int64_t v) { out += std::to_string(v); }
};

}  // namespace

const char* runtime_error_name(RuntimeErrorId id) { return entry(id).name; }
RaisedBy runtime_error_raised_by(RuntimeErrorId id) { return entry(id).raised_by; }
const char* runtime_error_format(RuntimeErrorId id) { return entry(id).format; }

const std::vector<FormatPiece>& runtime_error_pieces(RuntimeErrorId id) {
  static const std::array<std::vector<FormatPiece>, kRuntimeErrorCount> all = [] {
    std::array<std::vector<FormatPiece>, kRuntimeErrorCount> pieces;
    for (int i = 0; i < kRuntimeErrorCount; ++i) pieces[size_t(i)] = parse(kEntries[i].format);
    return pieces;
  }();
  return all[size_t(id)];
}

std::string runtime_error_text(RuntimeErrorId id, const std::vector<ErrorArg<int64_t>>& args) {
  TextSink sink;
  format_runtime_error(id, args, sink);
  return sink.out;
}

}  // namespace scangen::ir
