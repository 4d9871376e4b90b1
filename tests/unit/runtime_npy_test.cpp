#define BOOST_TEST_MODULE runtime_npy
#include <stdlib.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "temp_dir.h"
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scangen/runtime/errors.h"
#include "scangen/runtime/npy.h"

using namespace scangen;
namespace fs = std::filesystem;

namespace scangen {
// For Boost.Test's messages.
std::ostream& operator<<(std::ostream& out, DType dtype) { return out << dtype_name(dtype); }
}  // namespace scangen

namespace {

// A fresh directory per test, removed afterwards.
struct TempDir : scangen::testing::TempDir {
  TempDir() : scangen::testing::TempDir("scangen-npy-test") {}
};

fs::path data_file(const std::string& name) {
  return fs::path(SCANGEN_SOURCE_DIR) / "tests/unit/data" / name;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A .npy file with the given version, header text (used as is, no padding) and data bytes.
std::string npy_bytes(int major, const std::string& header, const std::string& data) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

// A tensor of the given dtype and shape whose elements are all different (bools alternate).
HostTensor sample_tensor(DType dtype, const Shape& shape) {
  HostTensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    dispatch_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>)
        t.data<bool>()[i] = i % 3 == 1;
      else
        t.data<T>()[i] = static_cast<T>(i * 3 - 7) / static_cast<T>(2);
    });
  }
  return t;
}

// Checks that reading `bytes` as a .npy file fails with a message containing `expected`.
void expect_npy_rejected(const std::string& bytes, const std::string& expected) {
  TempDir dir;
  fs::path path = dir / "bad.npy";
  write_bytes(path, bytes);
  try {
    read_npy(path);
    BOOST_ERROR("read_npy accepted a bad file; expected an error containing: " << expected);
  } catch (const RuntimeError& e) {
    std::string message = e.what();
    BOOST_TEST_INFO("message: " << message);
    BOOST_TEST(message.find(expected) != std::string::npos);
    BOOST_TEST(message.find(path.string()) != std::string::npos);
  }
  // The in-memory decoder must agree.
  BOOST_CHECK_THROW(decode_npy(bytes, "'memory'"), RuntimeError);
}

// A zip archive with one entry, built by hand.
std::string zip_with_entry(const std::string& name, const std::string& data, uint16_t method,
                           uint32_t crc) {
  auto le = [](std::string& out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  std::string zip;
  le(zip, 0x04034b50, 4);
  le(zip, 20, 2);
  le(zip, 0, 2);
  le(zip, method, 2);
  le(zip, 0, 4);  // time, date
  le(zip, crc, 4);
  le(zip, data.size(), 4);
  le(zip, data.size(), 4);
  le(zip, name.size(), 2);
  le(zip, 0, 2);
  zip += name + data;
  uint64_t directory_offset = zip.size();
  le(zip, 0x02014b50, 4);
  le(zip, 20, 2);
  le(zip, 20, 2);
  le(zip, 0, 2);
  le(zip, method, 2);
  le(zip, 0, 4);
  le(zip, crc, 4);
  le(zip, data.size(), 4);
  le(zip, data.size(), 4);
  le(zip, name.size(), 2);
  le(zip, 0, 2);
  le(zip, 0, 2);
  le(zip, 0, 2);
  le(zip, 0, 2);
  le(zip, 0, 4);
  le(zip, 0, 4);  // local header offset
  zip += name;
  uint64_t directory_size = zip.size() - directory_offset;
  le(zip, 0x06054b50, 4);
  le(zip, 0, 4);
  le(zip, 1, 2);
  le(zip, 1, 2);
  le(zip, directory_size, 4);
  le(zip, directory_offset, 4);
  le(zip, 0, 2);
  return zip;
}

void expect_npz_rejected(const std::string& bytes, const std::string& expected) {
  TempDir dir;
  fs::path path = dir / "bad.npz";
  write_bytes(path, bytes);
  try {
    read_npz(path);
    BOOST_ERROR("read_npz accepted a bad file; expected an error containing: " << expected);
  } catch (const RuntimeError& e) {
    BOOST_TEST_INFO("message: " << e.what());
    BOOST_TEST(std::string(e.what()).find(expected) != std::string::npos);
  }
}

const std::string kValidHeader = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(npy)

BOOST_AUTO_TEST_CASE(round_trips_every_dtype_and_rank) {
  TempDir dir;
  const Shape shapes[] = {{}, {0}, {5}, {2, 0}, {0, 3}, {2, 3}, {2, 3, 4}, {1, 0, 2}, {3, 1, 2}};
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", shape " << shape_to_string(shape)) {
        HostTensor original = sample_tensor(dtype, shape);
        fs::path path = dir / "t.npy";
        write_npy(path, original);
        HostTensor loaded = read_npy(path);
        BOOST_TEST(identical(original, loaded));
        BOOST_TEST(identical(original, decode_npy(encode_npy(original), "'memory'")));
        // The data starts at a multiple of 64 bytes, as numpy writes it.
        BOOST_TEST((fs::file_size(path) - original.nbytes()) % 64 == 0u);
        BOOST_TEST(!fs::exists(path.string() + ".tmp." + std::to_string(::getpid())));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(matches_numpy_byte_for_byte) {
  // Written by numpy 1.24 (np.save); encode_npy must produce the same bytes.
  struct Case {
    const char* file;
    HostTensor tensor;
  };
  HostTensor f32 = HostTensor::from_vector<float>({-1, -0.5f, 0, 0.5f, 1, 1.5f}, {2, 3});
  HostTensor b1 = HostTensor::from_vector<bool>({true, false, false, true}, {4});
  const Case cases[] = {
      {"runtime_numpy_f32_2x3.npy", f32},
      {"runtime_numpy_f64_scalar.npy", HostTensor::scalar<double>(0.1)},
      {"runtime_numpy_i4_empty.npy", HostTensor(DType::I32, {0})},
      {"runtime_numpy_i8_2x0x3.npy", HostTensor(DType::I64, {2, 0, 3})},
      {"runtime_numpy_b1_4.npy", b1},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.file) {
      BOOST_TEST(identical(read_npy(data_file(c.file)), c.tensor));
      BOOST_TEST(encode_npy(c.tensor) == read_bytes(data_file(c.file)));
    }
  }
}

BOOST_AUTO_TEST_CASE(header_parsing_is_flexible) {
  const std::string data = float_bytes({1.5f, -2.0f});
  const std::string headers[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
      "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
      "  {  'fortran_order' :False ,'shape':( 2 , ),'descr':'<f4' ,}   \n",
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}\n",
      "{'descr': '=f4', 'fortran_order': False, 'shape': (2L,), }\n",
      "{'descr':'<f4','fortran_order':False,'shape':(2,)}\t\r\n",
  };
  HostTensor expected = HostTensor::from_vector<float>({1.5f, -2.0f}, {2});
  for (const std::string& header : headers) {
    for (int major : {1, 2, 3}) {
      BOOST_TEST_CONTEXT("version " << major << ", header " << header) {
        BOOST_TEST(identical(decode_npy(npy_bytes(major, header, data), "'memory'"), expected));
      }
    }
  }
  // Scalars, multi-dimensional shapes, spellings of bool.
  BOOST_TEST(decode_npy(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                                  float_bytes({3})),
                        "m")
                 .rank() == 0);
  HostTensor matrix =
      decode_npy(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)}",
                           float_bytes({1, 2})),
                 "m");
  BOOST_TEST(matrix.shape() == Shape({1, 2}));
  for (const char* descr : {"|b1", "<b1", "=b1"}) {
    std::string header =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (2,)}";
    HostTensor flags = decode_npy(npy_bytes(1, header, std::string("\x01\x00", 2)), "m");
    BOOST_TEST(flags.dtype() == DType::Bool);
    BOOST_TEST(flags.data<bool>()[0] == true);
    BOOST_TEST(flags.data<bool>()[1] == false);
  }
}

BOOST_AUTO_TEST_CASE(rejects_bad_files) {
  const std::string data2 = float_bytes({1, 2});
  auto with_header = [&](const std::string& header, const std::string& data) {
    return npy_bytes(1, header, data);
  };
  expect_npy_rejected("", "not a .npy file");
  expect_npy_rejected("PK\x03\x04 not numpy at all", "not a .npy file");
  expect_npy_rejected(std::string("\x93NUM", 4), "truncated");
  expect_npy_rejected(std::string("\x93NUMPY\x01\x00\x10", 9), "truncated");
  expect_npy_rejected(npy_bytes(4, kValidHeader, data2), "unsupported .npy format version 4.0");
  expect_npy_rejected(npy_bytes(1, kValidHeader, data2).replace(7, 1, "\x01"), "version 1.1");
  expect_npy_rejected(npy_bytes(1, kValidHeader, "").substr(0, 30),
                      "truncated file: the header is");
  expect_npy_rejected(with_header(kValidHeader, data2.substr(0, 5)), "truncated file");
  expect_npy_rejected(with_header(kValidHeader, data2 + "x"), "size mismatch");
  expect_npy_rejected(with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", data2),
                      "big-endian");
  expect_npy_rejected(with_header("{'descr': '>i8', 'fortran_order': False, 'shape': (1,)}", data2),
                      "big-endian");
  expect_npy_rejected(with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}", data2),
                      "Fortran-order");
  expect_npy_rejected(with_header("{'descr': '<f2', 'fortran_order': False, 'shape': (4,)}", data2),
                      "unsupported dtype '<f2'");
  expect_npy_rejected(with_header("{'descr': '|i1', 'fortran_order': False, 'shape': (8,)}", data2),
                      "unsupported dtype '|i1'");
  expect_npy_rejected(with_header("{'descr': '<u4', 'fortran_order': False, 'shape': (2,)}", data2),
                      "unsupported dtype");
  expect_npy_rejected(with_header("{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}", data2),
                      "unsupported dtype");
  expect_npy_rejected(with_header("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", data2),
                      "object arrays");
  expect_npy_rejected(
      with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", data2),
      "structured dtypes");
  expect_npy_rejected(with_header("{'descr': '<f4', 'shape': (2,)}", data2),
                      "no 'fortran_order' key");
  expect_npy_rejected(with_header("{'descr': '<f4', 'fortran_order': False}", data2),
                      "no 'shape' key");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': True}", data2),
      "unexpected key 'x'");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data2),
      "twice");
  expect_npy_rejected(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", data2),
                      "not a tuple");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", data2), "negative");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}", data2),
      "malformed header");
  expect_npy_rejected(with_header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", data2),
                      "malformed header");
  expect_npy_rejected(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data2),
                      "malformed header");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", data2),
      "unexpected text after");
  expect_npy_rejected(with_header("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", data2),
                      "malformed header");
  expect_npy_rejected(with_header("", data2), "malformed header");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                  data2),
      "too large");
  expect_npy_rejected(
      with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
                  data2),
      "too many elements");
  expect_npy_rejected(with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}",
                                  std::string("\x01\x00\x02", 3)),
                      "bool element 2 has byte value 2");
  expect_npy_rejected(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,)}", data2),
      "needs 4000000 data bytes, but only 8");
}

BOOST_AUTO_TEST_CASE(reports_io_errors) {
  TempDir dir;
  try {
    read_npy(dir / "missing.npy");
    BOOST_ERROR("no error for a missing file");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()).find("missing.npy': No such file or directory") !=
               std::string::npos);
  }
  BOOST_CHECK_THROW(write_npy(dir / "no-such-dir" / "x.npy", HostTensor::scalar<int32_t>(1)),
                    RuntimeError);
  BOOST_CHECK_THROW(write_npy(dir / "x.npy", HostTensor()), RuntimeError);
  BOOST_CHECK_THROW(read_npy(dir.path), RuntimeError);  // a directory
}

BOOST_AUTO_TEST_CASE(crc32_matches_the_standard_check_value) {
  BOOST_TEST(crc32("123456789") == 0xCBF43926u);
  BOOST_TEST(crc32("") == 0u);
  BOOST_TEST(crc32("56789", crc32("1234")) == 0xCBF43926u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(npz)

BOOST_AUTO_TEST_CASE(round_trips_entries_in_order) {
  TempDir dir;
  NamedTensors entries = {
      {"zeta", sample_tensor(DType::F32, {2, 3})}, {"alpha", HostTensor::scalar<int64_t>(-5)},
      {"empty", HostTensor(DType::F64, {0, 4})},   {"flags", sample_tensor(DType::Bool, {3})},
      {"i", sample_tensor(DType::I32, {2, 2, 2})},
  };
  fs::path path = dir / "out.npz";
  write_npz(path, entries);
  NamedTensors loaded = read_npz(path);
  BOOST_TEST_REQUIRE(loaded.size() == entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    BOOST_TEST(loaded[i].first == entries[i].first);
    BOOST_TEST(identical(loaded[i].second, entries[i].second));
  }
  // Entries are named NAME.npy and stored uncompressed, so the .npy bytes appear verbatim.
  std::string bytes = read_bytes(path);
  BOOST_TEST(bytes.find("zeta.npy") != std::string::npos);
  BOOST_TEST(bytes.find(encode_npy(entries[0].second)) != std::string::npos);

  write_npz(path, {});
  BOOST_TEST(read_npz(path).empty());
}

BOOST_AUTO_TEST_CASE(zip64_records_round_trip) {
  // A threshold of 0 forces ZIP64 extra fields for every size and offset and the ZIP64 end records.
  TempDir dir;
  NamedTensors entries = {{"a", sample_tensor(DType::F64, {3})},
                          {"b", sample_tensor(DType::I64, {2, 2})}};
  fs::path path = dir / "zip64.npz";
  detail::write_npz(path, entries, 0);
  std::string bytes = read_bytes(path);
  BOOST_TEST(bytes.find(std::string("PK\x06\x06", 4)) != std::string::npos);
  BOOST_TEST(bytes.find(std::string("PK\x06\x07", 4)) != std::string::npos);
  NamedTensors loaded = read_npz(path);
  BOOST_TEST_REQUIRE(loaded.size() == 2u);
  BOOST_TEST(identical(loaded[1].second, entries[1].second));
}

BOOST_AUTO_TEST_CASE(reads_numpy_savez) {
  // np.savez(x=float32 [1.5, -2], n=int64 7, flags=[[True], [False]]); numpy writes ZIP64 local
  // headers.
  NamedTensors loaded = read_npz(data_file("runtime_numpy_savez.npz"));
  BOOST_TEST_REQUIRE(loaded.size() == 3u);
  BOOST_TEST(loaded[0].first == "x");
  BOOST_TEST(identical(loaded[0].second, HostTensor::from_vector<float>({1.5f, -2.0f}, {2})));
  BOOST_TEST(loaded[1].first == "n");
  BOOST_TEST(identical(loaded[1].second, HostTensor::scalar<int64_t>(7)));
  BOOST_TEST(loaded[2].first == "flags");
  BOOST_TEST(identical(loaded[2].second, HostTensor::from_vector<bool>({true, false}, {2, 1})));
}

BOOST_AUTO_TEST_CASE(rejects_compressed_and_corrupt_archives) {
  const std::string npy = encode_npy(HostTensor::from_vector<float>({1, 2}, {2}));
  // A hand-built archive reads fine with the right CRC ...
  {
    TempDir dir;
    write_bytes(dir / "ok.npz", zip_with_entry("v.npy", npy, 0, crc32(npy)));
    NamedTensors loaded = read_npz(dir / "ok.npz");
    BOOST_TEST_REQUIRE(loaded.size() == 1u);
    BOOST_TEST(loaded[0].first == "v");
  }
  // ... and is rejected when deflated (the method field alone decides), corrupt or odd.
  expect_npz_rejected(zip_with_entry("v.npy", npy, 8, crc32(npy)), "compressed (deflate)");
  expect_npz_rejected(zip_with_entry("v.npy", npy, 8, crc32(npy)), "savez_compressed");
  expect_npz_rejected(zip_with_entry("v.npy", npy, 12, crc32(npy)), "compression method 12");
  expect_npz_rejected(zip_with_entry("v.npy", npy, 0, crc32(npy) ^ 1), "CRC-32 mismatch");
  expect_npz_rejected(zip_with_entry("v.txt", npy, 0, crc32(npy)), "not a .npy file");
  expect_npz_rejected(zip_with_entry("v.npy", "junk", 0, crc32("junk")),
                      "entry 'v.npy': not a .npy file");
  expect_npz_rejected(npy, "not a .npz file");
  expect_npz_rejected("short", "not a .npz file");
  std::string zip = zip_with_entry("v.npy", npy, 0, crc32(npy));
  expect_npz_rejected(zip.substr(40), "archive");
  // The real thing: numpy.savez_compressed output.
  try {
    read_npz(data_file("runtime_numpy_savez_compressed.npz"));
    BOOST_ERROR("a deflated archive was accepted");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()).find("entry 'x.npy': the entry is compressed (deflate)") !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(rejects_bad_entry_names) {
  TempDir dir;
  HostTensor t = HostTensor::scalar<float>(1);
  BOOST_CHECK_THROW(write_npz(dir / "a.npz", {{"", t}}), RuntimeError);
  BOOST_CHECK_THROW(write_npz(dir / "a.npz", {{"x", t}, {"x", t}}), RuntimeError);
  BOOST_CHECK_THROW(write_npz(dir / "a.npz", {{"x", HostTensor()}}), RuntimeError);
  BOOST_TEST(!fs::exists(dir / "a.npz"));
}

BOOST_AUTO_TEST_SUITE_END()
