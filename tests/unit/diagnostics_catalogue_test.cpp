// The diagnostics catalogue (generator/src/support/diagnostics.def): every entry is used by the
// generator, well formed (lower-case start, no final period, placeholders that fmt accepts), and
// rendered as FILE:LINE:COL: severity: message with the source line and a caret.
#define BOOST_TEST_MODULE diagnostics_catalogue
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/diagnostics.h"

namespace fs = std::filesystem;
using namespace scangen;

namespace {

std::string generator_sources() {
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SCANGEN_SOURCE_DIR) / "generator")) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".h") continue;
    std::ifstream in(e.path());
    std::stringstream s;
    s << in.rdbuf();
    all += s.str();
  }
  return all;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_entry_is_used) {
  std::string sources = generator_sources();
  for (int i = 0; i < static_cast<int>(DiagId::kCount); ++i) {
    std::string name = diag_name(static_cast<DiagId>(i));
    BOOST_TEST((sources.find("DiagId::" + name) != std::string::npos), "catalogue entry " << name << " is never reported");
  }
}

BOOST_AUTO_TEST_CASE(entries_are_well_formed) {
  for (int i = 0; i < static_cast<int>(DiagId::kCount); ++i) {
    DiagId id = static_cast<DiagId>(i);
    std::string name = diag_name(id);
    std::string format = diag_format(id);
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(!format.empty());
      BOOST_TEST(format.back() != '.');
      if (format[0] != '{' && format[0] != '\'') BOOST_TEST(!std::isupper(static_cast<unsigned char>(format[0])));
      bool is_note = name.rfind("note_", 0) == 0;
      BOOST_TEST((diag_severity(id) == (is_note ? Severity::Note : Severity::Error)));
      // The format must be valid for fmt with enough arguments.
      BOOST_CHECK_NO_THROW((void)fmt::format(fmt::runtime(format), "a", "b", "c", "d", "e", "f"));
    }
  }
}

BOOST_AUTO_TEST_CASE(rendering_has_location_source_line_caret_and_notes) {
  SourceManager sources;
  int file = sources.add("demo.scan", "fn f(x: f32) -> f32 {\n\treturn y + 1\n}\n");
  DiagnosticEngine diags(sources);
  auto& d = diags.report(DiagId::err_unknown_name, Loc{file, 2, 9, 1}, "y");
  diags.note(d, DiagId::note_did_you_mean, Loc{file, 1, 6, 1}, "x");
  BOOST_TEST(diags.render(d) ==
             "demo.scan:2:9: error: unknown name 'y'\n"
             "\treturn y + 1\n"
             "\t       ^\n"
             "demo.scan:1:6: note: did you mean 'x'?\n"
             "fn f(x: f32) -> f32 {\n"
             "     ^\n");
  // A range is underlined with '~' after the caret.
  auto& r = diags.report(DiagId::err_unknown_name, Loc{file, 2, 9, 5}, "y");
  BOOST_TEST(diags.render(r).find("\t       ^~~~~\n") != std::string::npos);
  BOOST_TEST(diags.error_count() == 2);
}
