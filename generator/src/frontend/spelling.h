// "Did you mean": the known word closest to a misspelled one, for the notes of unknown names,
// functions, keywords and scan options.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace scangen {

// Collects candidates and keeps the closest by optimal string alignment distance (inserting,
// deleting or replacing a letter, or swapping two neighbours, costs 1: `alpah` is 1 from
// `alpha`). A suggestion must keep some of what was written: at most a third of its letters (at
// least one, at most two) differ, and not all of them (`z` is no typo of `t`). Of two candidates
// as close, the first in alphabetical order wins, so that notes do not depend on the order seen.
class Spelling {
 public:
  explicit Spelling(std::string written) : written_(std::move(written)) {}
  void consider(const std::string& candidate);
  const std::optional<std::string>& best() const { return best_; }

 private:
  std::string written_;
  std::optional<std::string> best_;
  size_t best_distance_ = 0;
};

// The optimal string alignment distance between a and b.
size_t spelling_distance(const std::string& a, const std::string& b);

}  // namespace scangen
