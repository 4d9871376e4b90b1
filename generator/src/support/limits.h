// Limits shared by the frontend and the backends.
#pragma once

#include "scangen_abi.h"

namespace scangen {

// The largest rank of any value; fixed by the ABI's shape arrays.
inline constexpr int kMaxRank = SCANGEN_MAX_RANK;

}  // namespace scangen
