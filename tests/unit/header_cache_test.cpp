// The on-disk cache of imported headers' analyses (imports/header_cache.h): an entry is used while
// the header and every file it includes are unchanged, and parsed again when one changes, when a
// missing include appears, or when the entry is damaged; a refused cache directory is passed by.
// Each test marks the entry it finds so that a hit shows.
#define BOOST_TEST_MODULE header_cache
#include "imports/header_cache.h"

#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "driver/driver.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace scangen;
using namespace scangen::imports;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  // Whatever the umask: the cache uses only entries that no one else can write.
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The one entry of the cache.
fs::path the_entry(const fs::path& cache) {
  std::vector<fs::path> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(cache / "imports")) entries.push_back(e.path());
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  return entries.front();
}

// Marks the cache's entry: an analysis that comes from it has this cuda_parse_problem.
const char* kMark = "from the cache";
void mark_the_entry(const fs::path& cache) {
  const fs::path entry = the_entry(cache);
  nlohmann::json j = nlohmann::json::parse(read(entry));
  j["analysis"]["cuda_parse_problem"] = kMark;
  write(entry, j.dump());
}

// The result type of the header's function `f`, as the analysis says.
std::string result_of_f(const HeaderAnalysis& analysis) {
  for (const ImportedFunction& function : analysis.functions)
    if (function.name == "f") return std::string(dtype_name(function.result));
  return "no f";
}

struct Project {
  testing::TempDir dir;
  fs::path header = dir / "h.h";
  fs::path cache = dir / "cache";
  Project() {
    write(dir / "real.h", "#pragma once\ntypedef double real;\n");
    write(header, "#pragma once\n#include <cmath>\n#include \"real.h\"\n"
                  "namespace scangen_export {\ninline real f(real x) { return std::exp(x); }\n}\n");
  }
  HeaderAnalysis analyze() const { return analyze_header_cached(header, {}, cache); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_second_analysis_comes_from_the_cache) {
  Project p;
  const HeaderAnalysis first = p.analyze();
  BOOST_TEST(result_of_f(first) == "f64");
  BOOST_TEST(first.cuda_parse_problem.find("'cmath' file not found") != std::string::npos);
  mark_the_entry(p.cache);
  const HeaderAnalysis second = p.analyze();
  BOOST_TEST(second.cuda_parse_problem == kMark);
  // Everything else as the parse found it.
  BOOST_TEST(result_of_f(second) == "f64");
  BOOST_TEST(second.header == first.header);
  BOOST_TEST(second.dependencies == first.dependencies, boost::test_tools::per_element());
  BOOST_TEST(second.functions.at(0).loc.line == first.functions.at(0).loc.line);
  // The entry records the system headers it read too.
  BOOST_TEST(read(the_entry(p.cache)).find("/cmath\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_changed_include_is_parsed_again) {
  Project p;
  p.analyze();
  mark_the_entry(p.cache);
  write(p.dir / "real.h", "#pragma once\ntypedef float real;\n");
  const HeaderAnalysis changed = p.analyze();
  BOOST_TEST(changed.cuda_parse_problem != kMark);
  BOOST_TEST(result_of_f(changed) == "f32");
  // The entry was replaced: the same key, the new analysis.
  mark_the_entry(p.cache);
  BOOST_TEST(p.analyze().cuda_parse_problem == kMark);
}

BOOST_AUTO_TEST_CASE(a_changed_header_is_parsed_again) {
  Project p;
  p.analyze();
  mark_the_entry(p.cache);
  write(p.header, "#pragma once\nnamespace scangen_export {\ninline float f(float x) { return x; }\n}\n");
  const HeaderAnalysis changed = p.analyze();
  BOOST_TEST(changed.cuda_parse_problem != kMark);
  BOOST_TEST(result_of_f(changed) == "f32");
}

// late.h, which the header includes, appears beside it.
BOOST_AUTO_TEST_CASE(a_missing_include_that_appears_is_parsed_again) {
  Project p;
  write(p.header, "#pragma once\n#include \"real.h\"\n#include \"late.h\"\n"
                  "namespace scangen_export {\ninline real f(real x) { return x; }\n}\n");
  const HeaderAnalysis first = p.analyze();
  BOOST_REQUIRE_EQUAL(first.errors.size(), 1u);
  BOOST_TEST(first.errors[0].message == "'late.h' file not found");
  mark_the_entry(p.cache);
  BOOST_TEST(p.analyze().cuda_parse_problem == kMark);
  write(p.dir / "late.h", "#pragma once\n");
  const HeaderAnalysis fixed = p.analyze();
  BOOST_TEST(fixed.errors.empty());
  BOOST_TEST(fixed.cuda_parse_problem != kMark);
}

BOOST_AUTO_TEST_CASE(other_include_directories_are_another_entry) {
  Project p;
  p.analyze();
  HeaderOptions options;
  options.include_dirs.push_back(p.dir / "inc");
  write(p.dir / "inc" / "extra.h", "#pragma once\n");
  analyze_header_cached(p.header, options, p.cache);
  size_t entries = 0;
  for ([[maybe_unused]] const fs::directory_entry& e : fs::directory_iterator(p.cache / "imports")) ++entries;
  BOOST_TEST(entries == 2u);
}

BOOST_AUTO_TEST_CASE(a_damaged_entry_is_replaced) {
  Project p;
  p.analyze();
  const fs::path entry = the_entry(p.cache);
  for (const std::string& damage : {std::string("{\"format\": 1"), std::string("[]"),
                                    std::string(read(entry)).replace(read(entry).find("\"f64\""), 5, "\"f65\"")}) {
    write(entry, damage);
    BOOST_TEST(result_of_f(p.analyze()) == "f64");
    BOOST_TEST(nlohmann::json::parse(read(entry)).at("format") == 1);
  }
}

// A cache directory that others can write is refused, as the JIT's is: not used, not written.
BOOST_AUTO_TEST_CASE(a_refused_cache_is_passed_by) {
  Project p;
  fs::create_directories(p.cache / "imports");
  ::chmod((p.cache / "imports").c_str(), 0777);
  BOOST_TEST(result_of_f(p.analyze()) == "f64");
  BOOST_TEST(fs::is_empty(p.cache / "imports"));
}

// The driver keeps its analyses in driver::Options::cache_dir (the JIT cache's).
BOOST_AUTO_TEST_CASE(the_driver_uses_the_cache) {
  Project p;
  write(p.dir / "prog.scan", "import \"h.h\"\nfn g(x: f64) -> f64 {\n    return f(x)\n}\n");
  driver::Options options;
  options.cache_dir = p.cache;
  auto first = driver::Compilation::of_file(p.dir / "prog.scan", options);
  BOOST_REQUIRE_MESSAGE(first.reach(driver::Stage::Analyzed), first.rendered_diagnostics());
  mark_the_entry(p.cache);
  auto second = driver::Compilation::of_file(p.dir / "prog.scan", options);
  BOOST_REQUIRE_MESSAGE(second.reach(driver::Stage::Analyzed), second.rendered_diagnostics());
  const ir::Program* program = &second.program();
  BOOST_TEST(program->imports.at(0)->cuda_parse_problem == kMark);
  // The files read, for depfiles, are the parse's.
  BOOST_TEST(second.dependencies() == first.dependencies(), boost::test_tools::per_element());
}
