// The table of builtins (generator/src/frontend/builtins.def) against what uses it: the builtins
// docs/language.md lists (its tables "Builtins" and "Selection and layout" name exactly the
// table's builtins), and the names it reserves (a function or a `let`-free call of each).
#define BOOST_TEST_MODULE builtins_table
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "generator_test_support.h"

using namespace scangen::testing;

namespace {

// The names of builtins.def, in its order.
const std::vector<std::string>& table_names() {
  static const std::vector<std::string> names = {
#define BUILTIN(name, ...) name,
#include "frontend/builtins.def"
#undef BUILTIN
  };
  return names;
}

// Every `name(` in the code spans of the first column of the tables of the given sections of a
// Markdown page (casts, `f32(x)`, are dtypes, not builtins).
std::set<std::string> documented_builtins(const std::string& path, const std::set<std::string>& sections) {
  std::ifstream in(path);
  BOOST_TEST_REQUIRE(in.good(), "cannot read " << path);
  const std::set<std::string> dtypes = {"f32", "f64", "i32", "i64", "bool"};
  const std::regex span("`([^`]*)`"), call("([a-z_][a-z0-9_]*)\\(");
  std::set<std::string> found;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) inside = sections.count(line) > 0;
    if (!inside || line.rfind("| ", 0) != 0) continue;
    std::string first = line.substr(2, line.find(" |", 2) - 2);
    for (std::sregex_iterator s(first.begin(), first.end(), span), end; s != end; ++s) {
      std::string code = (*s)[1];
      for (std::sregex_iterator c(code.begin(), code.end(), call); c != end; ++c)
        if (!dtypes.count((*c)[1])) found.insert((*c)[1]);
    }
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_CASE(docs_list_exactly_the_table) {
  std::set<std::string> documented = documented_builtins(std::string(SCANGEN_SOURCE_DIR) + "/docs/language.md",
                                                         {"### Builtins", "### Selection and layout"});
  std::set<std::string> table(table_names().begin(), table_names().end());
  BOOST_TEST(table.size() == table_names().size(), "builtins.def names a builtin twice");
  for (const std::string& n : table)
    BOOST_TEST(documented.count(n) == 1u, "docs/language.md does not list the builtin '" << n << "'");
  for (const std::string& n : documented)
    BOOST_TEST(table.count(n) == 1u, "docs/language.md lists '" << n << "', which builtins.def does not have");
}

BOOST_AUTO_TEST_CASE(every_builtin_name_is_reserved) {
  for (const std::string& n : table_names()) {
    std::string text = "fn " + n + "(x: f32) -> f32 {\n  return x\n}\n";
    BOOST_TEST(first_error(text) == "1:4: error: '" + n + "' is a builtin function and cannot be redefined");
  }
}
