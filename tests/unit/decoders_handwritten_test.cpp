// The hand-written decoders of the decoding benchmark (bench/decoders_handwritten.cpp) give exactly
// what the samples' manifests expect (computed with NumPy by tools/decode_samples.py) on every run
// that succeeds: the benchmark's baselines compute the samples' results.
#define BOOST_TEST_MODULE decoders_handwritten
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "decoders_handwritten.h"

namespace {

using nlohmann::json;

struct Array {
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<int64_t> shape;
};

void flatten(const json& value, Array& out, size_t depth) {
  if (value.is_array()) {
    if (out.shape.size() <= depth) out.shape.push_back(int64_t(value.size()));
    for (const json& item : value) flatten(item, out, depth + 1);
    return;
  }
  out.floats.push_back(value.get<float>());
  out.ints.push_back(value.is_number_integer() ? value.get<int64_t>() : 0);
}

// The run's NAME=VALUE arguments (JSON values only: these manifests use no .npy files).
std::map<std::string, Array> arguments(const json& run) {
  std::map<std::string, Array> args;
  for (const json& a : run.at("args")) {
    const std::string text = a.get<std::string>();
    const size_t eq = text.find('=');
    flatten(json::parse(text.substr(eq + 1)), args[text.substr(0, eq)], 0);
  }
  return args;
}

// As `scangen run` prints (tokens, score): f32 with %.9g.
std::string format(const scangen_bench::Decoded& d) {
  std::string out = "[[";
  for (size_t i = 0; i < d.tokens.size(); ++i) out += (i ? "," : "") + std::to_string(d.tokens[i]);
  char score[32];
  std::snprintf(score, sizeof score, "%.9g", double(d.score));
  return out + "]," + score + "]";
}

// The manifest's successful runs, each with its arguments and expected stdout.
std::vector<std::pair<std::map<std::string, Array>, std::string>> successful_runs(const std::string& manifest) {
  std::ifstream in(std::string(SCANGEN_DECODE_MANIFESTS) + "/" + manifest);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << manifest);
  std::vector<std::pair<std::map<std::string, Array>, std::string>> runs;
  const json manifest_json = json::parse(in);
  for (const json& run : manifest_json.at("runs"))
    if (!run.contains("exit")) runs.emplace_back(arguments(run), run.at("stdout").get<std::string>());
  BOOST_REQUIRE(runs.size() >= 5);
  return runs;
}

BOOST_AUTO_TEST_CASE(viterbi_gives_the_manifest_results) {
  for (auto& [args, expected] : successful_runs("viterbi.runs.json")) {
    const Array &log_B = args.at("log_B"), &obs = args.at("obs");
    const auto got = scangen_bench::viterbi(args.at("log_pi").floats.data(), args.at("log_A").floats.data(),
                                            log_B.floats.data(), obs.ints.data(), log_B.shape[0], log_B.shape[1],
                                            int64_t(obs.ints.size()));
    BOOST_TEST(format(got) == expected);
  }
}

BOOST_AUTO_TEST_CASE(beam_search_gives_the_manifest_results) {
  for (auto& [args, expected] : successful_runs("beam_search.runs.json")) {
    const Array& E = args.at("E");
    // A reference, not the binding: clang 14 lambdas cannot capture structured bindings.
    const auto& named = args;
    auto scalar = [&named](const char* name) { return named.at(name).ints.at(0); };
    const auto got = scangen_bench::beam_search(E.floats.data(), args.at("W").floats.data(),
                                                args.at("Wout").floats.data(), args.at("h0").floats.data(),
                                                E.shape[0], E.shape[1], scalar("bos"), scalar("eos"), scalar("beam"),
                                                scalar("max_len"));
    BOOST_TEST(format(got) == expected);
  }
}

// The sorted buffer keeps ties in index order: with every candidate equal, the first `beam` win.
BOOST_AUTO_TEST_CASE(beam_search_ties_go_to_the_lower_index) {
  const std::vector<float> E(3 * 2, 0.0f), W(2 * 2, 0.0f), Wout(2 * 3, 0.0f), h0(2, 0.0f);
  const auto got = scangen_bench::beam_search(E.data(), W.data(), Wout.data(), h0.data(), 3, 2, 1, 2, 2, 4);
  BOOST_TEST(got.tokens == (std::vector<int64_t>{0, 0, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(got.steps == 4);
}

}  // namespace
