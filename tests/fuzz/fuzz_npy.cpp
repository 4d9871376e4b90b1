// libFuzzer target: the .npy and .npz readers (what `scangen run x=@file.npy` and the tests read).
// Bytes are decoded both as one .npy and as an .npz archive; a value that decodes must survive
// encode -> decode unchanged.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_support.h"
#include "scangen/runtime/npy.h"

namespace {

void expect_round_trip(const scangen::HostTensor& t) {
  scangen::HostTensor again = scangen::decode_npy(scangen::encode_npy(t), "'round trip'");
  if (again.dtype() != t.dtype() || again.shape() != t.shape() || again.nbytes() != t.nbytes() ||
      (t.nbytes() > 0 && std::memcmp(again.raw_data(), t.raw_data(), t.nbytes()) != 0))
    scangen::fuzz::crash("round trip", "encode_npy then decode_npy changed the value");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes = scangen::fuzz::as_text(data, size);
  scangen::fuzz::expect_user_errors_only([&] { expect_round_trip(scangen::decode_npy(bytes, "'fuzz.npy'")); });
  scangen::fuzz::expect_user_errors_only([&] {
    for (const auto& [name, tensor] : scangen::decode_npz(bytes, "'fuzz.npz'")) expect_round_trip(tensor);
  });
  return 0;
}
