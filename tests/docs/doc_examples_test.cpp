// The pieces of doc_examples on their own: reading a page's fenced blocks, the commands of console
// and sh blocks, and comparing an output with the one a page shows.
#define BOOST_TEST_MODULE doc_examples
#include <boost/test/unit_test.hpp>
#include <set>
#include <string>
#include <vector>

#include "links.h"
#include "markdown_blocks.h"
#include "transcript.h"

using docs::Block;

BOOST_AUTO_TEST_CASE(blocks_with_info_strings_and_indentation) {
  std::vector<Block> blocks = docs::parse_blocks(
      "text\n"
      "```scan power.scan error\n"
      "fn f() {}\n"
      "```\n"
      "- a list item:\n"
      "  ```console\n"
      "  $ scangen check power.scan\n"
      "    indented output\n"
      "  ```\n"
      "```` ```scan ```` is inline code, not a fence\n"
      "````text\n"
      "```\n"
      "````\n");
  BOOST_TEST_REQUIRE(blocks.size() == 3u);
  BOOST_TEST(blocks[0].line == 2);
  BOOST_TEST(blocks[0].lang == "scan");
  BOOST_TEST(blocks[0].attributes == (std::vector<std::string>{"power.scan", "error"}));
  BOOST_TEST(docs::body_text(blocks[0]) == "fn f() {}\n");
  BOOST_TEST(blocks[1].lang == "console");
  BOOST_TEST(blocks[1].lines ==
             (std::vector<std::string>{"$ scangen check power.scan", "  indented output"}));
  BOOST_TEST(blocks[2].lang == "text");
  BOOST_TEST(blocks[2].lines == std::vector<std::string>{"```"});
}

BOOST_AUTO_TEST_CASE(bare_fence_and_unclosed_fence) {
  std::vector<Block> blocks = docs::parse_blocks("```\nx\n```\n");
  BOOST_TEST_REQUIRE(blocks.size() == 1u);
  BOOST_TEST(blocks[0].lang.empty());
  BOOST_CHECK_THROW(docs::parse_blocks("ok\n```scan\nfn f() {}\n"), docs::MarkdownError);
}

BOOST_AUTO_TEST_CASE(console_commands_and_their_output) {
  Block block{
      10, "console", {}, {"$ scangen run a.scan x=1", "[1]", "$ ls", "$ echo a; echo b", "a", "b"}};
  std::vector<docs::Command> commands = docs::console_commands(block);
  BOOST_TEST_REQUIRE(commands.size() == 3u);
  BOOST_TEST(commands[0].line == 11);
  BOOST_TEST(commands[0].text == "scangen run a.scan x=1");
  BOOST_TEST(commands[0].expected == std::vector<std::string>{"[1]"});
  BOOST_TEST(commands[1].expected.empty());
  BOOST_TEST(commands[2].line == 14);
  BOOST_TEST(commands[2].expected == (std::vector<std::string>{"a", "b"}));
  Block no_command{1, "console", {}, {"output first"}};
  BOOST_CHECK_THROW(docs::console_commands(no_command), docs::MarkdownError);
}

BOOST_AUTO_TEST_CASE(sh_lines_with_results) {
  Block block{1,
              "sh",
              {},
              {
                  "scangen run p.scan A=[0,1] k=2      # [[0,1]], compiled C++ (default)",
                  "scangen run p.scan --backend cuda A=[1] k=1   # on GPU 0",
                  "scangen compile p.scan -o gen       # [not a run]",
                  "scangen run s.scan 'x=[\"]\"]'  # [\"]\",[1]]",
              }};
  std::vector<docs::Command> commands = docs::sh_commands(block);
  BOOST_TEST_REQUIRE(commands.size() == 2u);
  BOOST_TEST(commands[0].line == 2);
  BOOST_TEST(commands[0].text == "scangen run p.scan A=[0,1] k=2");
  BOOST_TEST(commands[0].expected == std::vector<std::string>{"[[0,1]]"});
  BOOST_TEST(commands[1].expected == std::vector<std::string>{"[\"]\",[1]]"});
}

BOOST_AUTO_TEST_CASE(lines_with_placeholders) {
  const std::string key(64, 'a');
  BOOST_TEST(docs::line_matches("[1]", "[1]"));
  BOOST_TEST(!docs::line_matches("[1]", "[1] "));
  BOOST_TEST(docs::line_matches("source: .../scangen/<key>.cpp",
                                "source: /home/me/.cache/scangen/" + key + ".cpp"));
  BOOST_TEST(docs::line_matches("...", ""));
  BOOST_TEST(docs::line_matches("-o tmp-<key>-....so", "-o tmp-" + key + "-1-ff.so"));
  BOOST_TEST(!docs::line_matches("<key>.so", std::string(63, 'a') + ".so"));
  BOOST_TEST(!docs::line_matches("<key>.so", std::string(64, 'A') + ".so"));
  BOOST_TEST(!docs::line_matches("<key>", key + "0"));
}

BOOST_AUTO_TEST_CASE(outputs_with_cut_lines) {
  using Lines = std::vector<std::string>;
  BOOST_TEST(docs::output_matches(Lines{"a", "...", "z"}, Lines{"a", "z"}));
  BOOST_TEST(docs::output_matches(Lines{"a", "...", "z"}, Lines{"a", "b", "c", "z"}));
  BOOST_TEST(docs::output_matches(Lines{"...", "c"}, Lines{"a", "b", "c"}));
  BOOST_TEST(!docs::output_matches(Lines{"a", "...", "z"}, Lines{"a", "b"}));
  BOOST_TEST(!docs::output_matches(Lines{"a"}, Lines{"a", "b"}));
  BOOST_TEST(!docs::output_matches(Lines{}, Lines{"unexpected"}));
  BOOST_TEST(docs::output_matches(Lines{}, Lines{}));
}

BOOST_AUTO_TEST_CASE(links_outside_code) {
  std::vector<docs::Link> links = docs::relative_links(
      "See [cli](cli.md#the-jit-cache), [here](#testing) and [the site](https://example.com).\n"
      "`[not a link](nowhere.md)`\n"
      "```text\n"
      "[nor this](nowhere.md)\n"
      "```\n"
      "[a file](../tests/README.md)\n");
  BOOST_TEST_REQUIRE(links.size() == 3u);
  BOOST_TEST(links[0].line == 1);
  BOOST_TEST(links[0].path == "cli.md");
  BOOST_TEST(links[0].anchor == "the-jit-cache");
  BOOST_TEST(links[1].path.empty());
  BOOST_TEST(links[1].anchor == "testing");
  BOOST_TEST(links[2].line == 6);
  BOOST_TEST(links[2].path == "../tests/README.md");
  BOOST_TEST(links[2].anchor.empty());
}

BOOST_AUTO_TEST_CASE(anchors_of_headings) {
  std::set<std::string> anchors = docs::heading_anchors(
      "# The scan language\n"
      "### Threads: --threads N\n"
      "## The docs' examples\n"
      "## Fast floating-point mode (issue 15) \n"
      "```sh\n"
      "# a comment, not a heading\n"
      "```\n"
      "#not a heading\n");
  BOOST_TEST(anchors ==
             (std::set<std::string>{"the-scan-language", "threads---threads-n", "the-docs-examples",
                                    "fast-floating-point-mode-issue-15"}));
}
