// extra.h is found only through HeaderOptions::include_dirs (extra_dir/).
#pragma once
#include "extra.h"

namespace scangen_export {
inline int plus_extra(int x) { return x + extra::amount; }
}  // namespace scangen_export
