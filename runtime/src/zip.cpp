#include "zip.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "scangen/runtime/npy.h"

namespace scangen {
namespace detail {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSignature = 0x06054b50;
constexpr uint32_t kZip64EndOfCentralDirSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr std::size_t kLocalHeaderSize = 30;
constexpr std::size_t kCentralHeaderSize = 46;
constexpr std::size_t kEndOfCentralDirSize = 22;
constexpr std::size_t kZip64EndOfCentralDirSize = 56;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kFlagEncrypted = 1 << 0;
constexpr uint16_t kFlagUtf8Name = 1 << 11;
constexpr uint16_t kVersionDefault = 20;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
// A fixed timestamp (1980-01-01 00:00, the DOS epoch) makes archives reproducible.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (1 << 5) | 1;
constexpr uint32_t kRegularFileMode = 0100644;

// ---------------------------------------------------------------------------------------------
// Reading

// Bounds-checked little-endian reads from an archive held in memory.
class ByteView {
 public:
  ByteView(std::string_view bytes, std::string_view origin) : bytes_(bytes), origin_(origin) {}

  void require(uint64_t offset, uint64_t size, const char* what) const {
    if (offset > bytes_.size() || size > bytes_.size() - offset)
      fail_to_read(origin_, std::string("truncated or corrupt archive: the ") + what +
                                " lies outside the file");
  }
  uint64_t read(uint64_t offset, int size) const {
    uint64_t value = 0;
    for (int i = size - 1; i >= 0; --i)
      value = value << 8 | static_cast<unsigned char>(bytes_[offset + i]);
    return value;
  }
  uint16_t u16(uint64_t offset) const { return static_cast<uint16_t>(read(offset, 2)); }
  uint32_t u32(uint64_t offset) const { return static_cast<uint32_t>(read(offset, 4)); }
  uint64_t u64(uint64_t offset) const { return read(offset, 8); }
  std::string_view slice(uint64_t offset, uint64_t size) const {
    return bytes_.substr(offset, size);
  }
  std::size_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
  std::string_view origin_;
};

struct CentralDirectory {
  uint64_t entry_count = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

CentralDirectory find_central_directory(const ByteView& zip, std::string_view origin) {
  // The end record is the last thing in the file, followed only by a comment of up to 64 KiB.
  if (zip.size() < kEndOfCentralDirSize)
    fail_to_read(origin, "not a .npz file (too short to be a zip archive)");
  std::optional<uint64_t> end_record;
  uint64_t lowest =
      zip.size() > kEndOfCentralDirSize + 0xffff ? zip.size() - kEndOfCentralDirSize - 0xffff : 0;
  for (uint64_t pos = zip.size() - kEndOfCentralDirSize + 1; pos-- > lowest;) {
    if (zip.u32(pos) == kEndOfCentralDirSignature &&
        pos + kEndOfCentralDirSize + zip.u16(pos + 20) == zip.size()) {
      end_record = pos;
      break;
    }
  }
  if (!end_record) fail_to_read(origin, "not a .npz file (no zip end-of-central-directory record)");
  uint64_t end = *end_record;
  if (zip.u16(end + 4) != 0 || zip.u16(end + 6) != 0 || zip.u16(end + 8) != zip.u16(end + 10))
    fail_to_read(origin, "multi-part zip archives are not supported");
  CentralDirectory directory{zip.u16(end + 10), zip.u32(end + 16), zip.u32(end + 12)};

  // Like Python's zipfile, a ZIP64 locator right before the end record takes precedence.
  if (end >= kZip64LocatorSize && zip.u32(end - kZip64LocatorSize) == kZip64LocatorSignature) {
    uint64_t record = zip.u64(end - kZip64LocatorSize + 8);
    zip.require(record, kZip64EndOfCentralDirSize, "ZIP64 end-of-central-directory record");
    if (zip.u32(record) != kZip64EndOfCentralDirSignature)
      fail_to_read(origin, "corrupt archive: bad ZIP64 end-of-central-directory record");
    if (zip.u32(record + 16) != 0 || zip.u32(record + 20) != 0 ||
        zip.u64(record + 24) != zip.u64(record + 32))
      fail_to_read(origin, "multi-part zip archives are not supported");
    directory = {zip.u64(record + 32), zip.u64(record + 48), zip.u64(record + 40)};
  }
  zip.require(directory.offset, directory.size, "central directory");
  return directory;
}

// Sizes and offsets that do not fit in 32 bits are 0xFFFFFFFF in a central record; the real
// values follow in this order in the ZIP64 extra field, which lies in [extra, extra_end).
void read_zip64_extra(const ByteView& zip, uint64_t extra, uint64_t extra_end, ZipEntry& entry,
                      std::string_view origin) {
  std::vector<uint64_t*> in_zip64_extra;
  for (uint64_t* field :
       {&entry.uncompressed_size, &entry.compressed_size, &entry.local_header_offset})
    if (*field == 0xffffffff) in_zip64_extra.push_back(field);
  if (in_zip64_extra.empty()) return;
  while (extra + 4 <= extra_end) {
    uint16_t id = zip.u16(extra);
    uint16_t size = zip.u16(extra + 2);
    if (extra + 4 + size > extra_end) break;
    if (id == kZip64ExtraId && size >= 8 * in_zip64_extra.size()) {
      for (std::size_t i = 0; i < in_zip64_extra.size(); ++i)
        *in_zip64_extra[i] = zip.u64(extra + 4 + 8 * i);
      return;
    }
    extra += 4 + size;
  }
  fail_to_read(origin, "corrupt archive: entry '" + entry.name + "' lacks its ZIP64 sizes");
}

// Reads one central directory record at `pos`; returns the offset of the next one.
uint64_t read_central_record(const ByteView& zip, uint64_t pos, ZipEntry& entry,
                             std::string_view origin) {
  zip.require(pos, kCentralHeaderSize, "central directory");
  if (zip.u32(pos) != kCentralHeaderSignature)
    fail_to_read(origin, "corrupt archive: bad central directory record");
  entry.flags = zip.u16(pos + 8);
  entry.method = zip.u16(pos + 10);
  entry.crc = zip.u32(pos + 16);
  entry.compressed_size = zip.u32(pos + 20);
  entry.uncompressed_size = zip.u32(pos + 24);
  uint16_t name_length = zip.u16(pos + 28);
  uint16_t extra_length = zip.u16(pos + 30);
  uint16_t comment_length = zip.u16(pos + 32);
  entry.local_header_offset = zip.u32(pos + 42);
  uint64_t name_start = pos + kCentralHeaderSize;
  zip.require(name_start, uint64_t(name_length) + extra_length + comment_length,
              "central directory");
  entry.name = std::string(zip.slice(name_start, name_length));
  const uint64_t extra = name_start + name_length;
  read_zip64_extra(zip, extra, extra + extra_length, entry, origin);
  return extra + extra_length + comment_length;
}

// ---------------------------------------------------------------------------------------------
// Writing

void put_le(std::string& out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// What a local header and a central record both say about an entry.
struct EntryFields {
  const std::string& file_name;
  uint16_t flags;
  uint32_t crc;
  uint64_t size;
  bool zip64_size;
};

std::string local_header(const EntryFields& entry) {
  // A ZIP64 extra field in a local header must hold both sizes.
  std::string local;
  put_le(local, kLocalHeaderSignature, 4);
  put_le(local, entry.zip64_size ? kVersionZip64 : kVersionDefault, 2);
  put_le(local, entry.flags, 2);
  put_le(local, kMethodStored, 2);
  put_le(local, kDosTime, 2);
  put_le(local, kDosDate, 2);
  put_le(local, entry.crc, 4);
  put_le(local, entry.zip64_size ? 0xffffffff : entry.size, 4);
  put_le(local, entry.zip64_size ? 0xffffffff : entry.size, 4);
  put_le(local, entry.file_name.size(), 2);
  put_le(local, entry.zip64_size ? 20 : 0, 2);
  local += entry.file_name;
  if (entry.zip64_size) {
    put_le(local, kZip64ExtraId, 2);
    put_le(local, 16, 2);
    put_le(local, entry.size, 8);
    put_le(local, entry.size, 8);
  }
  return local;
}

std::string central_record(const EntryFields& entry, uint64_t offset, bool zip64_offset) {
  // The central record's ZIP64 extra holds only the fields that overflow.
  std::string extra;
  if (entry.zip64_size || zip64_offset) {
    put_le(extra, kZip64ExtraId, 2);
    put_le(extra, (entry.zip64_size ? 16 : 0) + (zip64_offset ? 8 : 0), 2);
    if (entry.zip64_size) {
      put_le(extra, entry.size, 8);
      put_le(extra, entry.size, 8);
    }
    if (zip64_offset) put_le(extra, offset, 8);
  }
  const uint16_t version = extra.empty() ? kVersionDefault : kVersionZip64;
  std::string record;
  put_le(record, kCentralHeaderSignature, 4);
  put_le(record, kMadeByUnix | version, 2);
  put_le(record, version, 2);
  put_le(record, entry.flags, 2);
  put_le(record, kMethodStored, 2);
  put_le(record, kDosTime, 2);
  put_le(record, kDosDate, 2);
  put_le(record, entry.crc, 4);
  put_le(record, entry.zip64_size ? 0xffffffff : entry.size, 4);
  put_le(record, entry.zip64_size ? 0xffffffff : entry.size, 4);
  put_le(record, entry.file_name.size(), 2);
  put_le(record, extra.size(), 2);
  put_le(record, 0, 2);  // comment length
  put_le(record, 0, 2);  // disk number
  put_le(record, 0, 2);  // internal attributes
  put_le(record, uint64_t(kRegularFileMode) << 16, 4);
  put_le(record, zip64_offset ? 0xffffffff : offset, 4);
  return record + entry.file_name + extra;
}

}  // namespace

ZipReader::ZipReader(std::string_view bytes, std::string_view origin)
    : bytes_(bytes), origin_(origin) {
  CentralDirectory directory = find_central_directory(ByteView(bytes_, origin_), origin_);
  entry_count_ = directory.entry_count;
  next_record_ = directory.offset;
}

ZipEntry ZipReader::next_entry() {
  ZipEntry entry;
  next_record_ = read_central_record(ByteView(bytes_, origin_), next_record_, entry, origin_);
  return entry;
}

std::string_view ZipReader::entry_data(const ZipEntry& entry,
                                       const std::string& entry_origin) const {
  const ByteView zip(bytes_, origin_);
  if (entry.flags & kFlagEncrypted)
    fail_to_read(entry_origin, "encrypted entries are not supported");
  if (entry.method == kMethodDeflate)
    fail_to_read(
        entry_origin,
        "the entry is compressed (deflate); only uncompressed .npz files are supported: save with "
        "numpy.savez, not numpy.savez_compressed");
  if (entry.method != kMethodStored)
    fail_to_read(entry_origin, "unsupported zip compression method " +
                                   std::to_string(entry.method) +
                                   "; only uncompressed (stored) entries are supported");
  if (entry.compressed_size != entry.uncompressed_size)
    fail_to_read(entry_origin,
                 "corrupt archive: a stored entry's compressed and uncompressed sizes differ");
  zip.require(entry.local_header_offset, kLocalHeaderSize, "local header of an entry");
  if (zip.u32(entry.local_header_offset) != kLocalHeaderSignature)
    fail_to_read(entry_origin, "corrupt archive: bad local header");
  uint64_t data_start = entry.local_header_offset + kLocalHeaderSize +
                        zip.u16(entry.local_header_offset + 26) +
                        zip.u16(entry.local_header_offset + 28);
  zip.require(data_start, entry.uncompressed_size, "data of an entry");
  std::string_view data = zip.slice(data_start, entry.uncompressed_size);
  if (crc32(data) != entry.crc)
    fail_to_read(entry_origin, "CRC-32 mismatch: the archive is corrupt");
  return data;
}

ZipWriter::ZipWriter(OutputFile& out, uint64_t zip64_threshold)
    : out_(out), zip64_threshold_(zip64_threshold) {}

void ZipWriter::add(const std::string& file_name, std::initializer_list<std::string_view> parts) {
  uint64_t size = 0;
  uint32_t crc = 0;
  for (std::string_view part : parts) {
    size += part.size();
    crc = crc32(part, crc);
  }
  bool utf8_name = false;
  for (char c : file_name) utf8_name |= static_cast<unsigned char>(c) >= 0x80;
  const EntryFields entry{file_name, static_cast<uint16_t>(utf8_name ? kFlagUtf8Name : 0), crc,
                          size, size >= zip64_threshold_};
  const std::string local = local_header(entry);
  out_.write(local);
  for (std::string_view part : parts) out_.write(part);
  central_directory_ += central_record(entry, offset_, offset_ >= zip64_threshold_);
  offset_ += local.size() + size;
  ++entry_count_;
}

void ZipWriter::finish() {
  out_.write(central_directory_);
  const uint64_t zip64_entry_count = std::min<uint64_t>(zip64_threshold_, 0xffff);
  const uint64_t directory_offset = offset_;
  const uint64_t directory_size = central_directory_.size();
  const bool zip64_end = entry_count_ >= zip64_entry_count ||
                         directory_offset >= zip64_threshold_ || directory_size >= zip64_threshold_;
  std::string end;
  if (zip64_end) {
    const uint64_t record_offset = directory_offset + directory_size;
    put_le(end, kZip64EndOfCentralDirSignature, 4);
    put_le(end, kZip64EndOfCentralDirSize - 12, 8);  // size of the rest of the record
    put_le(end, kMadeByUnix | kVersionZip64, 2);
    put_le(end, kVersionZip64, 2);
    put_le(end, 0, 4);  // this disk
    put_le(end, 0, 4);  // disk of the central directory
    put_le(end, entry_count_, 8);
    put_le(end, entry_count_, 8);
    put_le(end, directory_size, 8);
    put_le(end, directory_offset, 8);
    put_le(end, kZip64LocatorSignature, 4);
    put_le(end, 0, 4);
    put_le(end, record_offset, 8);
    put_le(end, 1, 4);  // number of disks
  }
  put_le(end, kEndOfCentralDirSignature, 4);
  put_le(end, 0, 2);
  put_le(end, 0, 2);
  put_le(end, zip64_end ? 0xffff : entry_count_, 2);
  put_le(end, zip64_end ? 0xffff : entry_count_, 2);
  put_le(end, zip64_end ? 0xffffffff : directory_size, 4);
  put_le(end, zip64_end ? 0xffffffff : directory_offset, 4);
  put_le(end, 0, 2);  // comment length
  out_.write(end);
}

}  // namespace detail

uint32_t crc32(std::string_view bytes, uint32_t crc) {
  static const auto table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entries[n] = c;
    }
    return entries;
  }();
  crc = ~crc;
  for (char byte : bytes) crc = table[(crc ^ static_cast<unsigned char>(byte)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

}  // namespace scangen
