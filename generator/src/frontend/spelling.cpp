#include "frontend/spelling.h"

#include <algorithm>
#include <vector>

namespace scangen {

size_t spelling_distance(const std::string& a, const std::string& b) {
  // d[i][j]: the distance between the first i letters of a and the first j of b.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

void Spelling::consider(const std::string& candidate) {
  size_t distance = spelling_distance(written_, candidate);
  size_t limit = std::min<size_t>(2, std::max<size_t>(1, written_.size() / 3));
  if (distance == 0 || distance > limit || distance >= written_.size()) return;
  if (best_ && (distance > best_distance_ || (distance == best_distance_ && candidate >= *best_))) return;
  best_ = candidate;
  best_distance_ = distance;
}

}  // namespace scangen
