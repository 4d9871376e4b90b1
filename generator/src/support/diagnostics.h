// Diagnostics: one catalogue (diagnostics.def) of every message the compiler can print, an engine
// that collects them, and the renderer that prints
//   FILE:LINE:COL: error: message
//   <the source line>
//       ^~~~
// followed by note lines in the same form.
#pragma once

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "support/source.h"

namespace scangen {

enum class Severity { Error, Warning, Note };

enum class DiagId {
#define DIAG(id, severity, format) id,
#include "support/diagnostics.def"
#undef DIAG
  kCount
};

Severity diag_severity(DiagId id);
const char* diag_format(DiagId id);
const char* diag_name(DiagId id);

struct Diagnostic {
  DiagId id;
  Severity severity;
  Loc loc;
  std::string message;
  struct Note {
    Loc loc;
    std::string message;
  };
  std::vector<Note> notes;
};

class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(sources) {}

  // Reports a catalogue message; the returned reference may receive notes until the next report.
  template <class... Args> Diagnostic& report(DiagId id, Loc loc, Args&&... args) {
    return add(id, loc, fmt::format(fmt::runtime(diag_format(id)), std::forward<Args>(args)...));
  }
  template <class... Args> void note(Diagnostic& d, DiagId id, Loc loc, Args&&... args) {
    d.notes.push_back({loc, fmt::format(fmt::runtime(diag_format(id)), std::forward<Args>(args)...)});
  }

  bool has_errors() const { return error_count_ > 0; }
  int error_count() const { return error_count_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

  // While muted (a nesting count), reports are counted by the returned scratch but not kept; used
  // by dry runs of the frontend that only want to learn types.
  void push_mute() { ++muted_; }
  void pop_mute() { --muted_; }
  bool muted() const { return muted_ > 0; }

  std::string render(const Diagnostic& d) const;
  void print_all(std::ostream& out) const;

 private:
  Diagnostic& add(DiagId id, Loc loc, std::string message);
  std::string render_one(Severity severity, const Loc& loc, const std::string& message) const;

  const SourceManager& sources_;
  std::vector<Diagnostic> diags_;
  Diagnostic scratch_{DiagId::kCount, Severity::Error, {}, {}, {}};
  int error_count_ = 0;
  int muted_ = 0;
};

// Thrown to stop compiling after errors have been reported (the driver prints them).
struct CompilationFailed {};

}  // namespace scangen
