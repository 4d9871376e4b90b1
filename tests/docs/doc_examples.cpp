// doc_examples: runs the examples of one Markdown file as the reader would, and checks that they
// do what the page shows (docs/testing.md, "The docs' examples").
//
//   doc_examples --scangen PATH --source-dir ROOT --work-dir DIR FILE.md
//
// Every fenced block must say what it holds (```scan, ```console, ...; the table kKinds). The
// blocks run in order in DIR, emptied first, where `samples` and `tests` lead to ROOT's, and
// `scangen` is first on the PATH:
//   - ```scan [NAME] [error]: a program. Named, it is written to DIR/NAME, or, when NAME is a file
//     of ROOT (samples/contract/power.scan), must be that file's text. `scangen check` must accept
//     it, or, marked `error`, reject it (exit 1), and then the next block must be a console block
//     that runs it, which checks the message.
//   - ```console [nvcc]: `$ COMMAND` lines, each followed by its output (stdout and stderr
//     together), run by bash; the output must be the one shown (`...` stands for any text, a line
//     `...` for any lines, `<key>` for a cache key). A `scangen run` that names no backend runs on
//     the cpu backend as written, and again with --backend interp, and both must print what the
//     page shows. A block marked nvcc is skipped when $CUDACXX is not set.
//   - ```sh: commands for the reader; its `scangen run ... # [RESULT]` lines run as above.
//   - other kinds (cmake, cpp, cuda, text): with a NAME, written to DIR/NAME (or compared with
//     ROOT/NAME), for the commands of later console blocks to build.
// Relative links must lead to a file, and to one of its headings when they name one.
// Exits 0 when every example passed, 1 when one failed, 2 on a bad command line.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "links.h"
#include "markdown_blocks.h"
#include "scangen/runtime/process.h"
#include "transcript.h"

namespace fs = std::filesystem;
using docs::Block;
using docs::Command;

namespace {

constexpr const char* kErrorAttribute = "error";
constexpr const char* kRunPrefix = "scangen run ";
constexpr int kUserErrorStatus = 1;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> output_lines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string indented(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += "    | " + line + "\n";
  return text.empty() ? "    (nothing)\n" : text;
}

// The same `scangen run` on the reference interpreter, when the command leaves the backend to
// the default (cpu) and uses no option of the cpu backend alone (nor asks for help).
std::optional<std::string> on_interpreter(const std::string& command) {
  if (command.rfind(kRunPrefix, 0) != 0) return std::nullopt;
  for (const char* option : {"--backend", "--fp", "--threads", "--help"})
    if (command.find(option) != std::string::npos) return std::nullopt;
  return std::string(kRunPrefix) + "--backend interp " + command.substr(std::strlen(kRunPrefix));
}

class Checker {
 public:
  Checker(fs::path doc, fs::path root, fs::path work, fs::path scangen)
      : doc_(std::move(doc)),
        root_(std::move(root)),
        work_(std::move(work)),
        scangen_(std::move(scangen)) {}

  int run();

  void scan_block(const std::vector<Block>& blocks, size_t i);
  void console_block(const std::vector<Block>& blocks, size_t i);
  void sh_block(const std::vector<Block>& blocks, size_t i);
  void file_block(const std::vector<Block>& blocks, size_t i);

 private:
  void fail(int line, const std::string& what) {
    std::cerr << fs::relative(doc_, root_).string() << ":" << line << ": " << what << "\n";
    ++failures_;
  }
  std::optional<std::string> place(const Block& block, const std::string& name);
  void check_links(const std::string& text);
  std::string block_name(const Block& block, bool allow_error);
  void run_command(const Command& command, const std::string& text);
  scangen::ProcessResult shell(const std::string& command) {
    return scangen::run_process({"bash", "-c", command}, work_fd_);
  }

  fs::path doc_, root_, work_, scangen_;
  int work_fd_ = -1;
  int failures_ = 0;
  std::set<std::string> names_;
};

// What a console block may need (```console nvcc), and the variable that provides it: without
// it, the block is skipped.
struct Requirement {
  const char* word;
  const char* variable;
};
constexpr Requirement kRequirements[] = {{"nvcc", "CUDACXX"}};

using Handler = void (Checker::*)(const std::vector<Block>&, size_t);
struct Kind {
  const char* lang;
  Handler handler;
};
// What a fenced block may hold, and what is done with it.
constexpr Kind kKinds[] = {
    {"scan", &Checker::scan_block}, {"console", &Checker::console_block},
    {"sh", &Checker::sh_block},     {"cmake", &Checker::file_block},
    {"cpp", &Checker::file_block},  {"cuda", &Checker::file_block},
    {"text", &Checker::file_block},
};

std::string kind_list() {
  std::string list;
  for (const Kind& kind : kKinds) list += std::string(list.empty() ? "" : ", ") + kind.lang;
  return list;
}

// The NAME of a block's info string ("" for none); `error` is a word of scan blocks.
std::string Checker::block_name(const Block& block, bool allow_error) {
  std::string name;
  for (const std::string& word : block.attributes) {
    if (allow_error && word == kErrorAttribute) continue;
    if (!name.empty()) {
      fail(block.line,
           "a block has at most one name after its kind, got '" + name + "' and '" + word + "'");
      continue;
    }
    name = word;
  }
  return name;
}

// Puts a named block where the commands find it: the file of the repository it shows, which must
// hold its text, or a new file of the work directory. Returns the path to give commands, or
// nothing after a failure.
std::optional<std::string> Checker::place(const Block& block, const std::string& name) {
  fs::path path(name);
  if (path.is_absolute() || name.find("..") != std::string::npos) {
    fail(block.line,
         "a block's name is a relative path inside the work directory, not '" + name + "'");
    return std::nullopt;
  }
  if (fs::is_regular_file(root_ / path)) {
    if (read_file(root_ / path) != docs::body_text(block)) {
      fail(block.line,
           "the block shows " + name + ", but it is not that file's text: copy the file here");
      return std::nullopt;
    }
    return name;
  }
  if (!names_.insert(name).second) {
    fail(block.line, "a second block named " + name + ": give each its own name");
    return std::nullopt;
  }
  fs::create_directories((work_ / path).parent_path());
  std::ofstream(work_ / path, std::ios::binary) << docs::body_text(block);
  return name;
}

void Checker::scan_block(const std::vector<Block>& blocks, size_t i) {
  const Block& block = blocks[i];
  bool is_error = false;
  for (const std::string& word : block.attributes) is_error = is_error || word == kErrorAttribute;
  std::string name = block_name(block, true);
  if (is_error && name.empty())
    return fail(block.line,
                "a scan block marked error needs a name, for the run that shows its error");
  std::optional<std::string> file =
      place(block, name.empty() ? "block-" + std::to_string(block.line) + ".scan" : name);
  if (!file) return;
  scangen::ProcessResult result =
      scangen::run_process({scangen_.string(), "check", *file}, work_fd_);
  if (!is_error && (result.exit_code != 0 || !result.output.empty()))
    return fail(block.line, "scangen check rejects the program (exit " +
                                std::to_string(result.exit_code) +
                                "); mark the block `scan NAME error` if that is the point:\n" +
                                indented(output_lines(result.output)));
  if (is_error) {
    if (result.exit_code != kUserErrorStatus)
      return fail(block.line, "the block is marked error, but scangen check exits " +
                                  std::to_string(result.exit_code) + ", not 1:\n" +
                                  indented(output_lines(result.output)));
    bool shown = false;
    if (i + 1 < blocks.size() && blocks[i + 1].lang == "console")
      for (const Command& command : docs::console_commands(blocks[i + 1]))
        shown = shown || command.text.find(name) != std::string::npos;
    if (!shown)
      fail(block.line, "the block is marked error: follow it with a console block that runs " +
                           name + " and shows the error");
  }
}

void Checker::run_command(const Command& command, const std::string& text) {
  scangen::ProcessResult result = shell(text);
  std::vector<std::string> actual = output_lines(result.output);
  if (!docs::output_matches(command.expected, actual))
    fail(command.line, "`" + text + "` prints\n" + indented(actual) + "  but the page shows\n" +
                           indented(command.expected));
}

void Checker::console_block(const std::vector<Block>& blocks, size_t i) {
  for (const std::string& word : blocks[i].attributes) {
    const Requirement* requirement = nullptr;
    for (const Requirement& candidate : kRequirements)
      if (word == candidate.word) requirement = &candidate;
    if (!requirement)
      return fail(blocks[i].line,
                  "a console block may say only what it needs (nvcc), not '" + word + "'");
    const char* value = std::getenv(requirement->variable);
    if (!value || !*value) {
      std::cout << fs::relative(doc_, root_).string() << ":" << blocks[i].line
                << ": skipped: it needs " << word << " ($" << requirement->variable
                << " is not set)\n";
      return;
    }
  }
  for (const Command& command : docs::console_commands(blocks[i])) {
    run_command(command, command.text);
    if (std::optional<std::string> interp = on_interpreter(command.text))
      run_command(command, *interp);
  }
}

void Checker::sh_block(const std::vector<Block>& blocks, size_t i) {
  for (const Command& command : docs::sh_commands(blocks[i])) {
    run_command(command, command.text);
    if (std::optional<std::string> interp = on_interpreter(command.text))
      run_command(command, *interp);
  }
}

void Checker::file_block(const std::vector<Block>& blocks, size_t i) {
  std::string name = block_name(blocks[i], false);
  if (!name.empty()) place(blocks[i], name);
}

// Every relative link leads to a file, and to a heading of it when it names one.
void Checker::check_links(const std::string& text) {
  for (const docs::Link& link : docs::relative_links(text)) {
    fs::path target = link.path.empty() ? doc_ : doc_.parent_path() / link.path;
    if (!fs::exists(target)) {
      fail(link.line, "the link to " + link.path + " leads nowhere: there is no such file");
      continue;
    }
    if (link.anchor.empty() || target.extension() != ".md") continue;
    if (docs::heading_anchors(read_file(target)).count(link.anchor) == 0)
      fail(link.line, "the link to " + link.path + "#" + link.anchor + " names no heading of " +
                          target.filename().string());
  }
}

int Checker::run() {
  const std::string text = read_file(doc_);
  check_links(text);
  std::vector<Block> blocks = docs::parse_blocks(text);
  fs::remove_all(work_);
  fs::create_directories(work_);
  for (const char* shared : {"samples", "tests"})
    fs::create_directory_symlink(root_ / shared, work_ / shared);
  work_fd_ = ::open(work_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (work_fd_ < 0)
    throw std::runtime_error("cannot open " + work_.string() + ": " + std::strerror(errno));
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Kind* kind = nullptr;
    for (const Kind& candidate : kKinds)
      if (blocks[i].lang == candidate.lang) kind = &candidate;
    if (!kind) {
      fail(blocks[i].line,
           "say what the block holds after its fence (```scan, ```console, ...): one of " +
               kind_list() + (blocks[i].lang.empty() ? "" : ", not '" + blocks[i].lang + "'"));
      continue;
    }
    (this->*kind->handler)(blocks, i);
  }
  ::close(work_fd_);
  std::cout << doc_.filename().string() << ": " << blocks.size() << " blocks, " << failures_
            << " failures\n";
  return failures_ == 0 ? 0 : 1;
}

int usage(const std::string& why) {
  std::cerr << "doc_examples: " << why
            << "\nusage: doc_examples --scangen PATH --source-dir ROOT --work-dir DIR FILE.md\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scangen, root, work, doc;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--scangen" || a == "--source-dir" || a == "--work-dir") && i + 1 < argc) {
      (a == "--scangen" ? scangen : a == "--source-dir" ? root : work) = argv[++i];
    } else if (!a.empty() && a[0] != '-' && doc.empty()) {
      doc = a;
    } else {
      return usage("unexpected argument '" + a + "'");
    }
  }
  if (scangen.empty() || root.empty() || work.empty() || doc.empty())
    return usage("missing arguments");
  try {
    fs::path program = fs::absolute(scangen);
    std::string path = program.parent_path().string();
    if (const char* old = std::getenv("PATH")) path += std::string(":") + old;
    ::setenv("PATH", path.c_str(), 1);
    return Checker(fs::absolute(doc), fs::absolute(root), fs::absolute(work), program).run();
  } catch (const std::exception& e) {
    std::cerr << doc << ": " << e.what() << "\n";
    return 1;
  }
}
