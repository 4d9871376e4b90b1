// The fenced code blocks of a Markdown file (CommonMark's ``` fences), for doc_examples.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace docs {

struct MarkdownError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Block {
  int line = 0;                         // the line of the opening fence, from 1
  std::string lang;                     // the info string's first word ("" for a bare fence)
  std::vector<std::string> attributes;  // the info string's other words
  std::vector<std::string> lines;       // the body, less the fence's indentation
};

// Every fenced block, in order. A fence may be indented (a block inside a list item); its
// indentation is removed from the body's lines. Throws MarkdownError for a fence left open.
std::vector<Block> parse_blocks(const std::string& text);

// The body as one string, each line ended by '\n'.
std::string body_text(const Block& block);

}  // namespace docs
