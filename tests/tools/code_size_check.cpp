// scangen-sizecheck: the house's size limits on scangen's own sources (docs/testing.md): no
// function longer than --max-function-lines (150) and no file longer than --max-file-lines (800).
//
//   scangen-sizecheck [--max-function-lines N] [--max-file-lines N] PATH...
//
// PATH is a file or a directory (searched for .cpp, .h, .cu, .cuh and .def files). Functions are
// found lexically: outside comments, strings and character literals, a `{` that follows the `)`
// of a parameter list (after qualifiers such as const, noexcept, override or a trailing return
// type) at namespace or class level opens a function body; its length is counted from the line
// of the function's name to the line of the matching `}`. Lambdas and local classes count toward
// the function that holds them. Prints each offender as `FILE:LINE: ...` and exits with 1 when
// there is any, 0 otherwise, 2 on bad usage.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Limits {
  int function_lines = 150;
  int file_lines = 800;
};

// The text with comments, string and character literals blanked out (newlines kept), so that
// braces and parentheses inside them do not count.
std::string code_only(const std::string& text) {
  std::string out = text;
  size_t i = 0;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      size_t end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
      blank(i, end);
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      end = end == std::string::npos ? text.size() : end + 2;
      blank(i, end);
      i = end;
    } else if (text.compare(i, 2, "R\"") == 0) {
      // A raw string: R"delim( ... )delim".
      size_t open = text.find('(', i + 2);
      std::string delim = text.substr(i + 2, open - i - 2);
      size_t end = text.find(")" + delim + "\"", open);
      end = end == std::string::npos ? text.size() : end + delim.size() + 2;
      blank(i, end);
      i = end;
    } else if (text[i] == '"' || (text[i] == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1]))))) {
      // A string or character literal (a digit separator like 1'000 is not one).
      const char quote = text[i];
      size_t k = i + 1;
      while (k < text.size() && text[k] != quote && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

int line_of(const std::string& text, size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

size_t matching(const std::string& code, size_t open, char o, char c) {
  int depth = 0;
  for (size_t i = open; i < code.size(); ++i) {
    if (code[i] == o) ++depth;
    if (code[i] == c && --depth == 0) return i;
  }
  return std::string::npos;
}

size_t matching_back(const std::string& code, size_t close, char o, char c) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (code[i] == c) ++depth;
    if (code[i] == o && --depth == 0) return i;
  }
  return std::string::npos;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the `{` at `brace` opens a function body: the code before it, skipping qualifiers, a
// trailing return type and a constructor's initializer list, ends with the `)` of a parameter
// list that follows a name.
bool opens_function(const std::string& code, size_t brace, size_t* name_at) {
  size_t i = brace;
  while (i > 0) {
    --i;
    if (std::isspace(static_cast<unsigned char>(code[i]))) continue;
    if (is_word_char(code[i])) {
      size_t end = i + 1;
      while (i > 0 && is_word_char(code[i - 1])) --i;
      const std::string word = code.substr(i, end - i);
      static const char* const kQualifiers[] = {"const", "noexcept", "override", "final", "volatile", "mutable"};
      if (std::find(std::begin(kQualifiers), std::end(kQualifiers), word) != std::end(kQualifiers)) continue;
      // `-> Type {`: a trailing return type; go back to the `->`.
      size_t arrow = code.rfind("->", i);
      if (arrow != std::string::npos && code.find_first_of("{};", arrow) > i) {
        i = arrow;
        continue;
      }
      return false;  // struct X {, namespace n {, enum E {, else {, do {, try {
    }
    if (code[i] == '>' || code[i] == ']') return false;
    if (code[i] != ')') return false;
    size_t open = matching_back(code, i, '(', ')');
    if (open == std::string::npos) return false;
    // A constructor's initializer list `: a_(x), b_{y}`, or a member initialized by a call.
    size_t k = open;
    while (k > 0 && std::isspace(static_cast<unsigned char>(code[k - 1]))) --k;
    size_t word_end = k;
    while (k > 0 && (is_word_char(code[k - 1]) || code[k - 1] == ':' || code[k - 1] == '~' || code[k - 1] == '<' ||
                     code[k - 1] == '>' || code[k - 1] == '='))
      --k;
    if (k == word_end) return false;  // `(...) {` after no name: a cast, `if (...) {`
    const std::string callee = code.substr(k, word_end - k);
    static const char* const kStatements[] = {"if", "for", "while", "switch", "catch", "return", "sizeof"};
    if (std::find(std::begin(kStatements), std::end(kStatements), callee) != std::end(kStatements)) return false;
    *name_at = k;
    return true;
  }
  return false;
}

struct Finding {
  std::string where;
  std::string what;
};

void check_file(const fs::path& path, const Limits& limits, std::vector<Finding>& findings) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  if (lines > limits.file_lines)
    findings.push_back({path.string() + ":1", std::to_string(lines) + " lines (at most " + std::to_string(limits.file_lines) + ")"});
  const std::string code = code_only(text);
  size_t i = 0;
  while ((i = code.find('{', i)) != std::string::npos) {
    size_t name_at = 0;
    const size_t close = matching(code, i, '{', '}');
    if (close == std::string::npos) break;
    if (!opens_function(code, i, &name_at)) {
      ++i;  // a namespace, class or other block: look inside it
      continue;
    }
    const int first = line_of(code, name_at), last = line_of(code, close);
    if (last - first + 1 > limits.function_lines) {
      size_t name_end = name_at;
      while (name_end < code.size() && code[name_end] != '(') ++name_end;
      findings.push_back({path.string() + ":" + std::to_string(first),
                          "function '" + code.substr(name_at, name_end - name_at) + "' has " +
                              std::to_string(last - first + 1) + " lines (at most " +
                              std::to_string(limits.function_lines) + ")"});
    }
    i = close + 1;  // nothing inside a function body is another function
  }
}

bool is_source(const fs::path& p) {
  static const char* const kExtensions[] = {".cpp", ".h", ".cu", ".cuh", ".def"};
  return std::find(std::begin(kExtensions), std::end(kExtensions), p.extension().string()) != std::end(kExtensions);
}

}  // namespace

int main(int argc, char** argv) {
  Limits limits;
  std::vector<fs::path> paths;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if ((arg == "--max-function-lines" || arg == "--max-file-lines") && a + 1 < argc) {
      (arg == "--max-function-lines" ? limits.function_lines : limits.file_lines) = std::atoi(argv[++a]);
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "usage: scangen-sizecheck [--max-function-lines N] [--max-file-lines N] PATH...\n";
      return 2;
    } else {
      paths.emplace_back(arg);
    }
  }
  if (paths.empty()) {
    std::cerr << "usage: scangen-sizecheck [--max-function-lines N] [--max-file-lines N] PATH...\n";
    return 2;
  }
  std::vector<fs::path> files;
  for (const fs::path& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && is_source(e.path())) files.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::cerr << "scangen-sizecheck: no such file or directory: " << p.string() << "\n";
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Finding> findings;
  for (const fs::path& f : files) check_file(f, limits, findings);
  for (const Finding& f : findings) std::cout << f.where << ": " << f.what << "\n";
  std::cout << files.size() << " files, " << findings.size() << " over the limits\n";
  return findings.empty() ? 0 : 1;
}
