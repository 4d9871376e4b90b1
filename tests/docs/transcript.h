// The commands a documentation block shows with their output (docs/testing.md, "The docs'
// examples"), and how a shown output is compared with the real one.
#pragma once

#include <string>
#include <vector>

#include "markdown_blocks.h"

namespace docs {

struct Command {
  int line = 0;                       // its line in the Markdown file
  std::string text;                   // the shell command, without the prompt
  std::vector<std::string> expected;  // the output shown, stdout and stderr together
};

// A ```console block: each `$ ` line is a command, the lines up to the next one its output.
// Throws MarkdownError for output before the first command.
std::vector<Command> console_commands(const Block& block);

// A ```sh block: the `scangen run ...  # [RESULT]` lines, whose comment starts with the JSON
// result the run prints (a comment may go on after the result: `# [[1,4]], the default`). Other
// lines are commands for the reader, not checked.
std::vector<Command> sh_commands(const Block& block);

// Whether a line of real output is the one shown, where `...` in the shown line stands for any
// text and `<key>` for a JIT cache key (64 hexadecimal digits).
bool line_matches(const std::string& shown, const std::string& actual);

// Whether the whole output is the one shown, line by line, where a line `...` of its own stands
// for any number of lines (an excerpt).
bool output_matches(const std::vector<std::string>& shown, const std::vector<std::string>& actual);

}  // namespace docs
