// ZIP archives (PKWARE APPNOTE 6.3), just what numpy.savez writes: stored (uncompressed) entries
// and ZIP64 records where sizes need them. Internal to the runtime; .npz files are built on it
// (npy.cpp). CRC-32 is defined here too; it is declared in the public npy.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "file_util.h"

namespace scangen::detail {

// One record of the central directory.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

// Reads an archive held in memory, entry after entry, so that a caller checks each entry before
// the next record is read. Every problem is a RuntimeError "cannot read ORIGIN: ...".
class ZipReader {
 public:
  // Finds the central directory; `origin` names the archive in messages (e.g. "'x.npz'").
  ZipReader(std::string_view bytes, std::string_view origin);

  uint64_t entry_count() const { return entry_count_; }
  // The next record of the central directory (call it entry_count() times).
  ZipEntry next_entry();
  // The bytes of a stored entry, checked against its CRC-32; `entry_origin` names it in messages.
  std::string_view entry_data(const ZipEntry& entry, const std::string& entry_origin) const;

 private:
  std::string_view bytes_;
  std::string_view origin_;
  uint64_t entry_count_ = 0;
  uint64_t next_record_ = 0;
};

// Writes stored entries to `out`, then the central directory and end records in finish().
// Timestamps are fixed, so the same entries give the same bytes.
class ZipWriter {
 public:
  // ZIP64 records are used for every size or offset >= zip64_threshold (normally 0xFFFFFFFF).
  ZipWriter(OutputFile& out, uint64_t zip64_threshold);

  // One entry whose contents are `parts` one after the other (so that large data is not copied).
  void add(const std::string& file_name, std::initializer_list<std::string_view> parts);
  void finish();

 private:
  OutputFile& out_;
  uint64_t zip64_threshold_;
  std::string central_directory_;
  uint64_t offset_ = 0;  // where the next local header goes
  uint64_t entry_count_ = 0;
};

}  // namespace scangen::detail
