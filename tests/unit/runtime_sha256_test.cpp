#define BOOST_TEST_MODULE runtime_sha256
#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "scangen/runtime/errors.h"
#include "scangen/runtime/sha256.h"

using namespace scangen;

// Test vectors from NIST's "SHA-256 examples" (FIPS 180-4 example values).
BOOST_AUTO_TEST_CASE(standard_vectors) {
  BOOST_TEST(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(sha256_hex("abc") ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_TEST(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  BOOST_TEST(sha256_hex(std::string(1000000, 'a')) ==
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  BOOST_TEST(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjk"
                        "lmnopqklmnopqrlmnopqrs"
                        "mnopqrstnopqrstu") ==
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

BOOST_AUTO_TEST_CASE(incremental_updates_agree_at_every_split) {
  // Lengths around the 55/56/64-byte padding boundaries, split at every point.
  std::string message;
  for (int i = 0; i < 130; ++i) message += static_cast<char>('a' + i % 26);
  for (std::size_t length : {0u, 1u, 55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u, 130u}) {
    std::string part = message.substr(0, length);
    std::string expected = sha256_hex(part);
    for (std::size_t split = 0; split <= length; ++split) {
      Sha256 hasher;
      hasher.update(part.substr(0, split));
      hasher.update(part.data() + split, length - split);
      BOOST_TEST(hasher.finish_hex() == expected);
    }
  }
  // One million 'a' fed in odd-sized pieces.
  Sha256 hasher;
  std::string chunk(997, 'a');
  std::size_t fed = 0;
  while (fed + chunk.size() <= 1000000) {
    hasher.update(chunk);
    fed += chunk.size();
  }
  hasher.update(std::string(1000000 - fed, 'a'));
  BOOST_TEST(hasher.finish_hex() ==
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

BOOST_AUTO_TEST_CASE(finish_is_final) {
  Sha256 hasher;
  hasher.update("abc");
  Sha256::Digest digest = hasher.finish();
  BOOST_TEST(Sha256::to_hex(digest) ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_CHECK_THROW(hasher.update("x"), std::logic_error);
  BOOST_CHECK_THROW(hasher.finish(), std::logic_error);
}

BOOST_AUTO_TEST_CASE(hashes_files) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "scangen-sha-test-XXXXXX").string();
  BOOST_TEST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  std::filesystem::path dir = pattern;
  std::string contents(200000, 'q');
  std::ofstream(dir / "f.bin", std::ios::binary) << contents;
  BOOST_TEST(sha256_file_hex(dir / "f.bin") == sha256_hex(contents));
  BOOST_CHECK_THROW(sha256_file_hex(dir / "missing"), RuntimeError);
  std::filesystem::remove_all(dir);
}
