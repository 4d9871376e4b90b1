// NumPy's .npy and .npz formats, read and written without NumPy or zlib.
//
// Supported: format versions 1.0, 2.0 and 3.0 on read (1.0 is written, 2.0 when the header needs
// it), the dtypes <f4 <f8 <i4 <i8 and |b1 (also spelled <b1, and '='-prefixed forms, since the
// runtime only runs on little-endian machines), C order, any rank including scalars and
// zero-length dimensions. .npz archives must be uncompressed ("stored", as numpy.savez writes
// them); ZIP64 records are read and written when sizes need them.
//
// Every problem is a RuntimeError whose message names the file and the reason, e.g.
//   cannot read 'x.npy': big-endian data ('>f4') is not supported
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scangen/runtime/tensor.h"

namespace scangen {

using NamedTensors = std::vector<std::pair<std::string, HostTensor>>;

HostTensor read_npy(const std::filesystem::path& path);
// Atomic: writes `path.tmp.<pid>` and renames it into place.
void write_npy(const std::filesystem::path& path, const HostTensor& tensor);

// Entries in archive order; each name is the entry's file name without ".npy" (as numpy.load
// gives them).
NamedTensors read_npz(const std::filesystem::path& path);
// Entry i is stored as "<name>.npy" (like numpy.savez(path, name=array)). Names must be non-empty
// and distinct. Atomic like write_npy.
void write_npz(const std::filesystem::path& path, const NamedTensors& entries);

// In-memory forms of the above. `origin` describes where the bytes came from for messages
// (e.g. "'x.npy'").
std::string encode_npy(const HostTensor& tensor);
HostTensor decode_npy(std::string_view bytes, std::string_view origin);
NamedTensors decode_npz(std::string_view bytes, std::string_view origin);

// CRC-32 (ISO-HDLC, as in ZIP and zlib) of `bytes`, continuing from a previous result `crc`.
uint32_t crc32(std::string_view bytes, uint32_t crc = 0);

namespace detail {
// write_npz with ZIP64 records used for every size or offset >= zip64_threshold (normally
// 0xFFFFFFFF); tests pass a small threshold to exercise ZIP64 without writing 4 GiB.
void write_npz(const std::filesystem::path& path, const NamedTensors& entries,
               uint64_t zip64_threshold);
}  // namespace detail

}  // namespace scangen
