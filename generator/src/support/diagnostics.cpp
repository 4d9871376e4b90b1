#include "support/diagnostics.h"

namespace scangen {
namespace {

struct CatalogueEntry {
  const char* name;
  Severity severity;
  const char* format;
};

constexpr Severity Error = Severity::Error;
[[maybe_unused]] constexpr Severity Warning = Severity::Warning;  // no catalogue entry is one yet
constexpr Severity Note = Severity::Note;

const CatalogueEntry kCatalogue[] = {
#define DIAG(id, severity, format) {#id, severity, format},
#include "support/diagnostics.def"
#undef DIAG
};

const char* severity_word(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

}  // namespace

Severity diag_severity(DiagId id) { return kCatalogue[static_cast<int>(id)].severity; }
const char* diag_format(DiagId id) { return kCatalogue[static_cast<int>(id)].format; }
const char* diag_name(DiagId id) { return kCatalogue[static_cast<int>(id)].name; }

Diagnostic& DiagnosticEngine::add(DiagId id, Loc loc, std::string message) {
  Severity sev = diag_severity(id);
  if (muted_ > 0) {
    scratch_ = Diagnostic{id, sev, loc, std::move(message), {}};
    return scratch_;
  }
  if (sev == Severity::Error) ++error_count_;
  diags_.push_back(Diagnostic{id, sev, loc, std::move(message), {}});
  return diags_.back();
}

std::string DiagnosticEngine::render_one(Severity severity, const Loc& loc,
                                         const std::string& message) const {
  std::string out;
  if (!loc.valid()) return fmt::format("scangen: {}: {}\n", severity_word(severity), message);
  const SourceFile& file = sources_.file(loc.file);
  out += fmt::format("{}:{}:{}: {}: {}\n", file.name(), loc.line, loc.col, severity_word(severity),
                     message);
  std::string_view line = file.line(loc.line);
  if (loc.line < 1 || loc.line > file.line_count()) return out;
  out += line;
  out += '\n';
  // Keep tabs so that the caret lines up under the same character.
  std::string marker;
  for (int i = 1; i < loc.col && static_cast<size_t>(i - 1) < line.size(); ++i)
    marker += line[static_cast<size_t>(i - 1)] == '\t' ? '\t' : ' ';
  marker += '^';
  int visible = static_cast<int>(line.size()) - (loc.col - 1);
  for (int i = 1; i < std::min(loc.length, visible); ++i) marker += '~';
  out += marker;
  out += '\n';
  return out;
}

std::string DiagnosticEngine::render(const Diagnostic& d) const {
  std::string out = render_one(d.severity, d.loc, d.message);
  for (const Diagnostic::Note& n : d.notes) out += render_one(Severity::Note, n.loc, n.message);
  return out;
}

void DiagnosticEngine::print_all(std::ostream& out) const {
  for (const Diagnostic& d : diags_) out << render(d);
}

}  // namespace scangen
