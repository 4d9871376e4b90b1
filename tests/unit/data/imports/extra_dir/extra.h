#pragma once
namespace extra {
constexpr int amount = 3;
}  // namespace extra
