// The on-disk cache of imported headers' analyses: Clang takes about half a second to parse a
// header that includes <cmath>, on every `scangen run` and `check`, where a warm cache answers in a
// few milliseconds.
//
// An entry is <cache_dir>/imports/<key>.json, key = SHA-256 of the header's text, Clang's version,
// both parses' command lines (the include directories among them), the text the CUDA parse reads
// first (imports::analysis_identity) and the scangen library that wrote it. It holds the analysis
// and the SHA-256 of every file either parse read (system headers too), and where each #include
// that found nothing looked: it is used only while every one of those files has the same content
// and none of those places has a file. (A file that appears earlier in an include search than the
// one found is not noticed, as with ccache.) The directory and its entries are held to the JIT
// caches' rule (runtime/src/cache_dir.h): entries of the user's own, that no one else can write.
#pragma once

#include <filesystem>

#include "imports/cxx_header.h"

namespace scangen::imports {

// analyze_header through the cache under `cache_dir` (the JIT cache's directory). A cache that
// cannot be used (refused, unwritable, a damaged entry) is passed by: the header is parsed.
HeaderAnalysis analyze_header_cached(const std::filesystem::path& header, const HeaderOptions& options,
                                     const std::filesystem::path& cache_dir);

}  // namespace scangen::imports
