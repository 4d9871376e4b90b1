// Included by consumer_math.h: a change here must regenerate clip.scan's code too (depfile).
#pragma once
namespace consumer {
constexpr float kBound = 0.5f;
}
