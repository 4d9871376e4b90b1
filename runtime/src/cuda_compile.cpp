// Compiling CUDA C++ with NVRTC, and the on-disk cache of compiled binaries.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <optional>

#include "cache_dir.h"
#include "cuda_api.h"
#include "file_util.h"
#include "jit_util.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/sha256.h"

namespace scangen {
namespace fs = std::filesystem;
using namespace cuda_api;

namespace {

// How much of NVRTC's log goes into an error message.
constexpr std::size_t kLogLines = 200;

// The first line of every cache entry; a new layout gets a new number (old entries are then
// treated as damaged and rebuilt).
constexpr std::string_view kEntryMagic = "scangen-cuda-cache 1\n";

std::string arch_list(const std::vector<int>& archs) {
  std::string text;
  for (int arch : archs) text += (text.empty() ? "" : ", ") + cuda_arch_name(CudaBinaryKind::Cubin, arch);
  return text;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// PTX newer than the driver cannot be read by the driver's PTX compiler
// (CUDA_ERROR_UNSUPPORTED_PTX_VERSION): every CUDA release has a new PTX ISA version, and minor
// version compatibility covers CUBIN, not PTX.
void check_ptx_is_not_newer_than_the_driver(const Nvrtc& nvrtc, const CudaCompileOptions& options,
                                            const CudaBinary& target) {
  if (target.kind != CudaBinaryKind::Ptx || options.driver_version <= 0 || nvrtc.version() <= options.driver_version)
    return;
  throw RuntimeError("PTX (" + target.target() + ") from NVRTC " + nvrtc.version_text() + " (" + nvrtc.path.string() +
                     ") needs a driver for CUDA " + nvrtc.version_text() +
                     " or newer, and the CUDA driver supports CUDA " + cuda_version_text(options.driver_version) +
                     "; compile to CUBIN for the device, set SCANGEN_NVRTC to an NVRTC no newer than " +
                     cuda_version_text(options.driver_version) + ", or update the NVIDIA driver");
}

CudaBinary resolve_target(const Nvrtc& nvrtc, const CudaCompileOptions& options) {
  if (options.arch < 10 || options.arch > 999)
    throw RuntimeError("invalid CUDA architecture " + std::to_string(options.arch) +
                       " (expected 10 * major + minor of a compute capability, e.g. 80)");
  CudaBinary target;
  target.kind = options.kind;
  target.arch = options.arch;
  const std::vector<int>& supported = nvrtc.supported_archs;
  if (supported.empty() ||
      std::find(supported.begin(), supported.end(), options.arch) != supported.end()) {
    check_ptx_is_not_newer_than_the_driver(nvrtc, options, target);
    return target;
  }
  // The newest architecture NVRTC knows below the one asked for: its PTX runs on the device.
  int below = 0;
  for (int arch : supported)
    if (arch < options.arch) below = std::max(below, arch);
  const std::string cannot = "NVRTC " + nvrtc.version_text() + " (" + nvrtc.path.string() +
                             ") cannot compile for " + cuda_arch_name(options.kind, options.arch) +
                             "; it supports " + arch_list(supported);
  if (below == 0)
    throw RuntimeError(cannot + " (choose one of those, or set SCANGEN_NVRTC to an NVRTC for the device)");
  if (!options.allow_ptx_fallback)
    throw RuntimeError(cannot + " (allow the PTX fallback, or set SCANGEN_NVRTC to a newer NVRTC)");
  target.kind = CudaBinaryKind::Ptx;
  target.arch = below;
  check_ptx_is_not_newer_than_the_driver(nvrtc, options, target);
  return target;
}

std::vector<std::string> nvrtc_options(const CudaCompileOptions& options, const CudaBinary& target) {
  std::vector<std::string> all{"-arch=" + target.target()};
  all.insert(all.end(), options.options.begin(), options.options.end());
  return all;
}

// Compiles for `target` (already resolved). `source_note` names where the source was kept, for
// the message when NVRTC rejects it.
CudaBinary compile_for(const Nvrtc& nvrtc, const std::string& source, const CudaCompileOptions& options,
                       const CudaBinary& target, const std::function<std::string()>& source_note) {
  auto failed = [&](const char* call, nvrtcResult result) {
    return call + std::string(" failed: ") + nvrtc.error_name(result);
  };
  nvrtcProgram program = nullptr;
  if (nvrtcResult result = nvrtc.CreateProgram(&program, source.c_str(), options.program_name.c_str(),
                                               0, nullptr, nullptr);
      result != NVRTC_SUCCESS) {
    if (result == NVRTC_ERROR_OUT_OF_MEMORY) throw RuntimeError(failed("nvrtcCreateProgram", result));
    throw InternalError(failed("nvrtcCreateProgram", result));
  }
  struct Destroy {
    const Nvrtc& nvrtc;
    nvrtcProgram& program;
    ~Destroy() { nvrtc.DestroyProgram(&program); }
  } destroy{nvrtc, program};

  const std::vector<std::string> option_strings = nvrtc_options(options, target);
  std::vector<const char*> option_pointers;
  for (const std::string& option : option_strings) option_pointers.push_back(option.c_str());

  const auto start = std::chrono::steady_clock::now();
  const nvrtcResult compiled = nvrtc.CompileProgram(program, static_cast<int>(option_pointers.size()),
                                                    option_pointers.data());
  CudaBinary binary = target;
  binary.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::size_t log_size = 0;
  if (nvrtc.GetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (nvrtc.GetProgramLog(program, log.data()) == NVRTC_SUCCESS) {
      log.erase(log.find_last_not_of(std::string_view("\0\n", 2)) + 1);
      binary.log = std::move(log);
    }
  }

  if (compiled != NVRTC_SUCCESS) {
    std::string details = "\nprogram: " + options.program_name;
    if (std::string note = source_note ? source_note() : ""; !note.empty()) details += "\nsource: " + note;
    details += "\nNVRTC: " + nvrtc.version_text() + " (" + nvrtc.path.string() + ")" +
               "\noptions: " + detail::joined(option_strings) + "\n" +
               detail::first_lines(binary.log, kLogLines);
    switch (compiled) {
      case NVRTC_ERROR_COMPILATION:
      case NVRTC_ERROR_INVALID_OPTION:
        throw InternalError("NVRTC rejected the CUDA code scangen emitted (a scangen bug; please report it): " +
                            nvrtc.error_name(compiled) + details);
      case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE:
        throw RuntimeError("NVRTC cannot load its builtins library (libnvrtc-builtins.so." +
                           nvrtc.version_text() + ", which belongs in NVRTC's directory): " +
                           nvrtc.error_name(compiled) + details);
      case NVRTC_ERROR_OUT_OF_MEMORY:
        throw RuntimeError(failed("nvrtcCompileProgram", compiled) + details);
      default:
        throw InternalError(failed("nvrtcCompileProgram", compiled) + details);
    }
  }

  const bool cubin = target.kind == CudaBinaryKind::Cubin;
  std::size_t size = 0;
  if (nvrtcResult result = (cubin ? nvrtc.GetCUBINSize : nvrtc.GetPTXSize)(program, &size);
      result != NVRTC_SUCCESS)
    throw InternalError(failed(cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize", result));
  if (size == 0)
    throw InternalError("NVRTC " + nvrtc.version_text() + " produced no " + to_string(target.kind) +
                        " for " + target.target());
  binary.image.assign(size, '\0');
  if (nvrtcResult result = (cubin ? nvrtc.GetCUBIN : nvrtc.GetPTX)(program, binary.image.data());
      result != NVRTC_SUCCESS)
    throw InternalError(failed(cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", result));
  if (!cubin)  // the PTX's size counts its terminating NUL
    while (!binary.image.empty() && binary.image.back() == '\0') binary.image.pop_back();
  return binary;
}

// ---------------------------------------------------------------------------------------------
// Cache entries

std::string entry_contents(const CudaBinary& binary, const Nvrtc& nvrtc) {
  std::string body = "kind " + std::string(to_string(binary.kind)) + "\narch " +
                     std::to_string(binary.arch) + "\nnvrtc " + nvrtc.version_text() + "\nlog-bytes " +
                     std::to_string(binary.log.size()) + "\nimage-bytes " +
                     std::to_string(binary.image.size()) + "\n\n" + binary.log + binary.image;
  return std::string(kEntryMagic) + "sha256 " + sha256_hex(body) + "\n" + body;
}

// The binary an entry holds, or nullopt if anything about it is wrong.
std::optional<CudaBinary> parse_entry(const std::string& contents, const CudaBinary& target) {
  if (contents.compare(0, kEntryMagic.size(), kEntryMagic) != 0) return std::nullopt;
  std::size_t position = kEntryMagic.size();
  auto next_line = [&]() -> std::optional<std::string> {
    std::size_t end = contents.find('\n', position);
    if (end == std::string::npos) return std::nullopt;
    std::string line = contents.substr(position, end - position);
    position = end + 1;
    return line;
  };
  std::optional<std::string> checksum = next_line();
  if (!checksum || checksum->size() != 7 + 64 || checksum->compare(0, 7, "sha256 ") != 0)
    return std::nullopt;
  if (sha256_hex(std::string_view(contents).substr(position)) != checksum->substr(7)) return std::nullopt;

  auto field = [&](const char* name) -> std::optional<std::string> {
    std::optional<std::string> line = next_line();
    const std::string prefix = std::string(name) + " ";
    if (!line || line->compare(0, prefix.size(), prefix) != 0) return std::nullopt;
    return line->substr(prefix.size());
  };
  auto number = [&](const char* name) -> std::optional<std::size_t> {
    std::optional<std::string> text = field(name);
    if (!text || !all_digits(*text) || text->size() > 12) return std::nullopt;
    return static_cast<std::size_t>(std::stoull(*text));
  };
  std::optional<std::string> kind = field("kind");
  std::optional<std::size_t> arch = number("arch");
  std::optional<std::string> version = field("nvrtc");
  std::optional<std::size_t> log_bytes = number("log-bytes");
  std::optional<std::size_t> image_bytes = number("image-bytes");
  std::optional<std::string> blank = next_line();
  if (!kind || !arch || !version || !log_bytes || !image_bytes || !blank || !blank->empty())
    return std::nullopt;
  if (*kind != to_string(target.kind) || *arch != static_cast<std::size_t>(target.arch))
    return std::nullopt;
  if (contents.size() - position != *log_bytes + *image_bytes || *image_bytes == 0) return std::nullopt;
  CudaBinary binary = target;
  binary.log = contents.substr(position, *log_bytes);
  binary.image = contents.substr(position + *log_bytes);
  return binary;
}

std::string key_for(const Nvrtc& nvrtc, const std::string& source, const CudaCompileOptions& options,
                     const CudaBinary& target) {
  Sha256 hasher;
  auto add = [&](std::string_view text) {
    hasher.update(text);
    hasher.update(std::string_view("\0", 1));
  };
  add(kEntryMagic);
  add(source);
  add(target.target());
  for (const std::string& option : options.options) add(option);
  add(options.program_name);
  add("nvrtc " + nvrtc.version_text() + " " + nvrtc.path.string());
  return hasher.finish_hex();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API

NvrtcInfo nvrtc_info(int driver_version) {
  std::shared_ptr<const Nvrtc> nvrtc = load_nvrtc(driver_version);
  return NvrtcInfo{nvrtc->path, nvrtc->major, nvrtc->minor, nvrtc->supported_archs};
}

bool nvrtc_available(std::string* why) {
  try {
    load_nvrtc();
    return true;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

const char* to_string(CudaBinaryKind kind) { return kind == CudaBinaryKind::Cubin ? "cubin" : "ptx"; }

int parse_cuda_arch(std::string_view text) {
  auto invalid = [&]() {
    return RuntimeError("invalid CUDA architecture '" + std::string(text) +
                        "' (expected sm_XY, compute_XY, XY or X.Y, e.g. sm_80)");
  };
  std::string_view digits = text;
  for (std::string_view prefix : {std::string_view("sm_"), std::string_view("compute_")})
    if (digits.substr(0, prefix.size()) == prefix) {
      digits.remove_prefix(prefix.size());
      break;
    }
  int arch = 0;
  if (std::size_t dot = digits.find('.'); dot != std::string_view::npos && digits.size() == text.size()) {
    std::string_view major = digits.substr(0, dot);
    std::string_view minor = digits.substr(dot + 1);
    if (!all_digits(major) || major.size() > 2 || !all_digits(minor) || minor.size() != 1) throw invalid();
    arch = 10 * std::stoi(std::string(major)) + (minor[0] - '0');
  } else {
    if (!all_digits(digits) || digits.size() < 2 || digits.size() > 3) throw invalid();
    arch = std::stoi(std::string(digits));
  }
  if (arch < 10) throw invalid();
  return arch;
}

std::string cuda_arch_name(CudaBinaryKind kind, int arch) {
  return (kind == CudaBinaryKind::Cubin ? "sm_" : "compute_") + std::to_string(arch);
}

std::vector<std::string> CudaCompileOptions::default_options() { return {"-std=c++17", "--fmad=false"}; }

CudaBinary resolve_cuda_target(const CudaCompileOptions& options) {
  return resolve_target(*load_nvrtc(options.driver_version), options);
}

CudaBinary nvrtc_compile(const std::string& source, const CudaCompileOptions& options) {
  std::shared_ptr<const Nvrtc> nvrtc = load_nvrtc(options.driver_version);
  return compile_for(*nvrtc, source, options, resolve_target(*nvrtc, options), nullptr);
}

fs::path default_cuda_cache_dir() { return default_cache_dir() / "cuda"; }

CudaCompiler::CudaCompiler(fs::path cache_dir) : cache_dir_(fs::absolute(std::move(cache_dir))) {}

fs::path CudaCompiler::entry_path(const std::string& key) const { return cache_dir_ / (key + ".bin"); }

std::string CudaCompiler::cache_key(const std::string& source, const CudaCompileOptions& options) const {
  std::shared_ptr<const Nvrtc> nvrtc = load_nvrtc(options.driver_version);
  return key_for(*nvrtc, source, options, resolve_target(*nvrtc, options));
}

CudaBinary CudaCompiler::compile(const std::string& source, const CudaCompileOptions& options) const {
  std::shared_ptr<const Nvrtc> nvrtc = load_nvrtc(options.driver_version);
  const CudaBinary target = resolve_target(*nvrtc, options);
  const std::string key = key_for(*nvrtc, source, options, target);

  const detail::CacheDir dir(cache_dir_, "CUDA cache");
  const std::string entry = key + ".bin";
  const std::string kept_source = key + ".cu";
  // The source is kept only for people to read: failing to write it is no error.
  auto keep_source = [&]() -> std::string {
    if (dir.has(kept_source)) return dir.path_of(kept_source).string();
    try {
      dir.write_atomically(kept_source, key, source);
      return dir.path_of(kept_source).string();
    } catch (const RuntimeError& e) {
      return std::string("(could not be kept: ") + e.what() + ")";
    }
  };

  // A refusal (an entry someone else could have written) propagates: it is never treated as damage.
  if (const detail::FileDescriptor file = dir.open_entry(entry); file.valid()) {
    std::optional<CudaBinary> cached;
    try {
      cached = parse_entry(detail::read_all(file, dir.path_of(entry)), target);
    } catch (const RuntimeError&) {
      // Unreadable: treated like a damaged entry.
    }
    if (cached) {
      cached->cache_hit = true;
      cached->cache_entry = dir.path_of(entry);
      keep_source();
      return *cached;
    }
    dir.remove(entry);
  }

  CudaBinary binary = compile_for(*nvrtc, source, options, target, keep_source);
  dir.write_atomically(entry, key, entry_contents(binary, *nvrtc));
  keep_source();
  binary.cache_entry = dir.path_of(entry);
  return binary;
}

}  // namespace scangen
