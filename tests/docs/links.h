// The links of a Markdown page to other files and to headings, for doc_examples: a link whose
// file or heading is gone is a stale example too.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace docs {

struct Link {
  int line = 0;
  std::string path;    // "" for a heading of the same page
  std::string anchor;  // "" for none
};

// The page's relative links `[text](path#anchor)`, outside code blocks and code spans; links
// with a scheme (https:, mailto:) are left out.
std::vector<Link> relative_links(const std::string& text);

// The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as '-'.
std::set<std::string> heading_anchors(const std::string& text);

}  // namespace docs
