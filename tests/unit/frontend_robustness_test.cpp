// Robustness of the frontend: thousands of mutated versions of the samples (characters and tokens
// deleted, duplicated, swapped or replaced) must each either compile or be reported as errors with
// a location: never an internal error, a crash or a hang.
//
// SCANGEN_ROBUSTNESS_MUTANTS sets the number of mutants per sample (default 150).
#define BOOST_TEST_MODULE frontend_robustness
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "driver/driver.h"
#include "scangen/runtime/errors.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> sample_texts() {
  std::vector<std::string> texts;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SCANGEN_SOURCE_DIR) / "samples"))
    if (e.is_regular_file() && e.path().extension() == ".scan") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream s;
    s << in.rdbuf();
    texts.push_back(s.str());
  }
  return texts;
}

const char* const kFragments[] = {
    "(", ")", "[", "]", "{", "}", ",", ";", "\n", "=", "==", "->", ":", "?", "@", "**", "-", "+", "*", "/",
    "%", "!", "&&", "||", "<", ">=", "t", "t-1", "t+1", "x[t]", "x[t-1]", "0", "1", "2.5", "-1", "1e9",
    "9223372036854775807", "true", "let", "init", "until", "scan", "scan {", "scan(steps = 3)", "fn",
    "return", "f32", "i32", "bool", "i64(", "sum(", "set(", "inc(", "arange(", "zeros(f32, 2)", "len(",
    "index = s", "reverse", "steps", "axis = 0", "where(", "?", "//", "/*", "*/", "\t", "\xff", "s[t-3]",
    "u[t+2]", "[:]", "[1:]", "[-1]", "let (a, b) = ", "x", "y", "n", "k", "A"};

std::string mutate(const std::string& text, std::mt19937& rng) {
  std::string s = text;
  int edits = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = std::uniform_int_distribution<size_t>(0, s.size() - 1)(rng);
    size_t len = std::uniform_int_distribution<size_t>(1, 8)(rng);
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0: s.erase(pos, len); break;                                  // delete
      case 1: s.insert(pos, s.substr(pos, len)); break;                   // duplicate
      case 2: {                                                           // insert a fragment
        const char* f = kFragments[std::uniform_int_distribution<size_t>(0, std::size(kFragments) - 1)(rng)];
        s.insert(pos, f);
        break;
      }
      case 3: {                                                           // replace a stretch
        const char* f = kFragments[std::uniform_int_distribution<size_t>(0, std::size(kFragments) - 1)(rng)];
        s.replace(pos, std::min(len, s.size() - pos), f);
        break;
      }
      default: {                                                          // swap two stretches
        size_t other = std::uniform_int_distribution<size_t>(0, s.size() - 1)(rng);
        std::string a = s.substr(pos, len), b = s.substr(other, len);
        if (pos < other && pos + len <= other) {
          s.replace(other, b.size(), a);
          s.replace(pos, a.size(), b);
        }
        break;
      }
    }
  }
  return s;
}

int mutants_per_sample() {
  const char* env = std::getenv("SCANGEN_ROBUSTNESS_MUTANTS");
  return env ? std::max(1, std::atoi(env)) : 150;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mutated_samples_compile_or_report_errors) {
  std::mt19937 rng(7);
  int compiled = 0, rejected = 0;
  for (const std::string& text : sample_texts()) {
    for (int i = 0; i < mutants_per_sample(); ++i) {
      std::string mutant = mutate(text, rng);
      try {
        auto driver = scangen::driver::Compilation::of_text("mutant.scan", mutant, scangen::driver::Options());
        if (driver.reach(scangen::driver::Stage::Rewritten)) {
          ++compiled;
        } else {
          ++rejected;
          std::string diags = driver.rendered_diagnostics();
          // Rejected programs say why, at a place in the file.
          BOOST_TEST(diags.find("error: ") != std::string::npos, "no message for a rejected mutant:\n" << mutant);
        }
      } catch (const scangen::InternalError& e) {
        BOOST_ERROR("internal error on a mutant: " << e.what() << "\n--- mutant ---\n" << mutant);
      } catch (const std::exception& e) {
        BOOST_ERROR("unexpected exception on a mutant: " << e.what() << "\n--- mutant ---\n" << mutant);
      }
    }
  }
  BOOST_TEST_MESSAGE(compiled << " mutants compiled, " << rejected << " rejected with diagnostics");
  BOOST_TEST(rejected > 0);
}

// Deep nesting is reported, not a stack overflow.
BOOST_AUTO_TEST_CASE(deep_nesting_is_an_error_not_a_crash) {
  for (const char* open_close : {"()", "[]"}) {
    std::string expr;
    for (int i = 0; i < 100000; ++i) expr += open_close[0];
    expr += "1";
    for (int i = 0; i < 100000; ++i) expr += open_close[1];
    std::string text = "fn f(x: f32[n]) -> f32 {\n  return " + std::string(open_close[0] == '[' ? "x" : "") + expr + "\n}\n";
    BOOST_CHECK_NO_THROW(scangen::driver::Compilation::of_text("deep.scan", text, {}).reach(scangen::driver::Stage::Rewritten));
  }
  std::string minus = "fn f() -> i64 {\n  return ";
  for (int i = 0; i < 100000; ++i) minus += "-";
  minus += "1\n}\n";
  BOOST_CHECK_NO_THROW(scangen::driver::Compilation::of_text("deep.scan", minus, {}).reach(scangen::driver::Stage::Rewritten));
}

// The limits are reported as such, without follow-up errors.
BOOST_AUTO_TEST_CASE(nesting_and_chain_limits_are_reported_once) {
  std::string deep = "fn f(x: f32) -> f32 {\n  return " + std::string(600, '(') + "x" + std::string(600, ')') + "\n}\n";
  auto a = scangen::driver::Compilation::of_text("deep.scan", deep, {});
  BOOST_TEST(!a.reach(scangen::driver::Stage::Rewritten));
  std::string diags = a.rendered_diagnostics();
  BOOST_TEST(diags.find("deep.scan:2:") != std::string::npos);
  BOOST_TEST(diags.find("may nest at most 500 levels deep") != std::string::npos);
  BOOST_TEST(a.diagnostics().error_count() == 1);

  std::string chain = "fn f(x: f32) -> f32 {\n  return x";
  for (int i = 0; i < 25000; ++i) chain += " + x";
  chain += "\n}\n";
  auto b = scangen::driver::Compilation::of_text("chain.scan", chain, {});
  BOOST_TEST(!b.reach(scangen::driver::Stage::Rewritten));
  BOOST_TEST(b.rendered_diagnostics().find("at most 20000 operators") != std::string::npos);
  BOOST_TEST(b.diagnostics().error_count() == 1);

  // Below the limits, deep programs compile.
  std::string fine = "fn f(x: f32) -> f32 {\n  return " + std::string(400, '(') + "x" + std::string(400, ')') + "\n}\n";
  auto c = scangen::driver::Compilation::of_text("fine.scan", fine, {});
  BOOST_TEST(c.reach(scangen::driver::Stage::Rewritten));
}
