// C++ functions that clip.scan imports (`import "consumer_math.h"`, found through INCLUDE_DIRS).
#pragma once
#include "detail/bounds.h"

namespace scangen_export {
inline float clamp_unit(float x) { return x < -consumer::kBound ? -consumer::kBound : (x > consumer::kBound ? consumer::kBound : x); }
}
