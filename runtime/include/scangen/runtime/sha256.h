// SHA-256 (FIPS 180-4), used for the JIT's cache keys and to verify cached shared objects.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace scangen {

// Incremental hashing: update() any number of times, then finish() once.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // Pads, returns the digest and leaves the object finished; update()/finish() afterwards throw
  // std::logic_error.
  Digest finish();
  std::string finish_hex() { return to_hex(finish()); }

  // Lower-case hexadecimal, 64 characters.
  static std::string to_hex(const Digest& digest);

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

std::string sha256_hex(std::string_view bytes);
// Hash of a file's contents, read in chunks. Throws RuntimeError naming the file if it cannot be
// read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace scangen
