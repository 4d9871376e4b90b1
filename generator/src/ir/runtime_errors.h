// The run-time errors of .scan programs: one catalogue (runtime_errors.def) and one formatter,
// generic over how a domain holds an integer known only when the program runs: int64_t in the
// interpreter, a loop-IR expression in the lowering, a C++ expression's text in the printers. Each
// check formats its entry from the same words, so the backends cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/check.h"

namespace scangen::ir {

enum class RuntimeErrorId {
#define RUNTIME_ERROR(id, raised_by, format) id,
#include "ir/runtime_errors.def"
#undef RUNTIME_ERROR
};

inline constexpr int kRuntimeErrorCount = 0
#define RUNTIME_ERROR(id, raised_by, format) +1
#include "ir/runtime_errors.def"
#undef RUNTIME_ERROR
    ;

// Who raises an entry (runtime_errors.def says what each means).
enum class RaisedBy { Program, Signature, TypedApi };

// What a placeholder holds: text known when the check is made, an integer or sizes known when
// the program runs.
enum class ArgKind { Text, Int, Shape };

const char* runtime_error_name(RuntimeErrorId id);
RaisedBy runtime_error_raised_by(RuntimeErrorId id);
const char* runtime_error_format(RuntimeErrorId id);

// A format cut at its placeholders: pieces of text, and placeholders with their name and kind.
struct FormatPiece {
  std::string text;  // the text, or the placeholder's name
  bool placeholder = false;
  ArgKind kind = ArgKind::Text;
};
// The pieces of an entry's format (parsed once); an ill-formed format is an InternalError.
const std::vector<FormatPiece>& runtime_error_pieces(RuntimeErrorId id);

// One argument of a message, for the placeholder of the same position. V holds an integer known
// when the program runs.
template <class V> struct ErrorArg {
  ArgKind kind = ArgKind::Text;
  std::string text;
  std::vector<V> values;  // the integer, or the sizes

  static ErrorArg text_of(std::string t) { return {ArgKind::Text, std::move(t), {}}; }
  static ErrorArg number(V v) { return {ArgKind::Int, {}, {std::move(v)}}; }
  static ErrorArg shape(std::vector<V> dims) { return {ArgKind::Shape, {}, std::move(dims)}; }
};

// Formats entry `id` with `args`, handing its pieces in order to sink.text(std::string) and
// sink.value(const V&); a shape is text and values: "[", d0, ", ", d1, "]". The arguments must
// match the placeholders in number and kind (else InternalError: a scangen bug).
template <class V, class Sink>
void format_runtime_error(RuntimeErrorId id, const std::vector<ErrorArg<V>>& args, Sink& sink) {
  size_t next = 0;
  for (const FormatPiece& p : runtime_error_pieces(id)) {
    if (!p.placeholder) {
      sink.text(p.text);
      continue;
    }
    SCANGEN_CHECK(next < args.size() && args[next].kind == p.kind,
                  std::string("the arguments of run-time error ") + runtime_error_name(id) + " at {" + p.text + "}");
    const ErrorArg<V>& a = args[next++];
    switch (a.kind) {
      case ArgKind::Text: sink.text(a.text); break;
      case ArgKind::Int: sink.value(a.values.at(0)); break;
      case ArgKind::Shape:
        sink.text("[");
        for (size_t i = 0; i < a.values.size(); ++i) {
          if (i) sink.text(", ");
          sink.value(a.values[i]);
        }
        sink.text("]");
        break;
    }
  }
  SCANGEN_CHECK(next == args.size(), std::string("too many arguments for run-time error ") + runtime_error_name(id));
}

// The message with integers known now (the interpreter's, and the tests' expectations).
std::string runtime_error_text(RuntimeErrorId id, const std::vector<ErrorArg<int64_t>>& args);

}  // namespace scangen::ir
