// What makes a JIT cache directory or entry untrustworthy, and what its refusal says: one list for
// the tests of both caches (runtime_cpu_jit_test, runtime_cuda_test), so that both are held to the
// same rule (runtime/src/cache_dir.h).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace scangen::testing {

// "nobody": the other user that files are given to.
constexpr uid_t kOtherUid = 65534;

// Only root can give a file to another user; elsewhere those cases are skipped.
inline bool can_give_files_away() { return ::geteuid() == 0; }

inline std::string our_uid() { return std::to_string(::geteuid()); }

struct Tampering {
  std::string what;
  bool needs_root;  // gives the file to another user
  std::function<void(const std::filesystem::path&)> apply;
  std::string reason;  // what the refusal says is wrong, after "'<path>': "
};

namespace detail {
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("cannot arrange the test: " + what);
}
inline void give_away(const std::filesystem::path& path) {
  require(::lchown(path.c_str(), kOtherUid, static_cast<gid_t>(-1)) == 0, "chown " + path.string());
}
inline std::function<void(const std::filesystem::path&)> set_mode(mode_t mode) {
  return [mode](const std::filesystem::path& path) {
    require(::chmod(path.c_str(), mode) == 0, "chmod " + path.string());
  };
}
}  // namespace detail

// Ways to make a cache directory one that others could have written.
inline std::vector<Tampering> untrusted_directories() {
  return {
      {"owned by another user", true, detail::give_away,
       "it belongs to uid 65534, not to you (uid " + our_uid() + ")"},
      {"writable by its group", false, detail::set_mode(0770), "it is writable by group (mode 0770)"},
      {"writable by others", false, detail::set_mode(0703), "it is writable by others (mode 0703)"},
      {"shared like /tmp (sticky, writable by all)", false, detail::set_mode(01777),
       "it is writable by group and others (mode 1777)"},
  };
}

// Ways to make a cache entry (an existing, sound one) one that scangen must not load.
inline std::vector<Tampering> untrusted_entries() {
  return {
      {"a symbolic link to the real entry", false,
       [](const std::filesystem::path& path) {
         std::filesystem::path real = path;
         real += ".real";
         std::filesystem::rename(path, real);
         std::filesystem::create_symlink(real, path);
       },
       "it is a symbolic link"},
      {"owned by another user", true, detail::give_away,
       "it belongs to uid 65534, not to you (uid " + our_uid() + ")"},
      {"writable by its group", false, detail::set_mode(0620), "it is writable by group (mode 0620)"},
      {"writable by others", false, detail::set_mode(0606), "it is writable by others (mode 0606)"},
      {"a FIFO (which must not hang the open)", false,
       [](const std::filesystem::path& path) {
         std::filesystem::remove(path);
         detail::require(::mkfifo(path.c_str(), 0600) == 0, "mkfifo " + path.string());
       },
       "it is not a regular file"},
  };
}

// Runs `check(tampering)` for each case, in the case's test context; a case that cannot be
// arranged here (it needs root) is skipped, saying so in the log.
template <class Check>
void for_each_case(const std::vector<Tampering>& cases, Check check) {
  for (const Tampering& tampering : cases) {
    if (tampering.needs_root && !can_give_files_away()) {
      BOOST_TEST_MESSAGE("skipped '" << tampering.what << "': only root can give a file to another user");
      continue;
    }
    BOOST_TEST_CONTEXT(tampering.what) { check(tampering); }
  }
}

// The start of the refusal of a cache directory; `cache` is "JIT cache" or "CUDA cache".
inline std::string directory_refusal(const std::string& cache, const std::filesystem::path& directory,
                                     const Tampering& tampering) {
  return "refusing the " + cache + " directory '" + directory.string() + "': " + tampering.reason +
         ", so someone else could put code in it that scangen would run as you; ";
}

// The whole refusal of a cache entry.
inline std::string entry_refusal(const std::string& cache, const std::filesystem::path& entry,
                                 const Tampering& tampering) {
  return "refusing the " + cache + " entry '" + entry.string() + "': " + tampering.reason +
         "; scangen loads only regular files of yours that no one else can write (remove it)";
}

// Sets the umask for one scope.
struct ScopedUmask {
  explicit ScopedUmask(mode_t mask) : old(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;
  mode_t old;
};

// The permission bits of a file, not following a symbolic link.
inline mode_t permissions_of(const std::filesystem::path& path) {
  struct stat status {};
  detail::require(::lstat(path.c_str(), &status) == 0, "lstat " + path.string());
  return status.st_mode & 07777;
}

}  // namespace scangen::testing
