#include "frontend/imports.h"

#include <map>
#include <system_error>

#include "imports/cxx_header.h"
#include "imports/header_cache.h"
#include "scangen/runtime/errors.h"

namespace scangen {
namespace {

namespace fs = std::filesystem;

fs::path normalized(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  return (ec ? p : abs).lexically_normal();
}

// The header's candidates, in search order: the .scan file's directory, then each -I directory.
std::vector<fs::path> candidates(const std::string& spelling, const ImportSearch& search) {
  std::vector<fs::path> out;
  if (fs::path(spelling).is_absolute()) return {normalized(spelling)};
  out.push_back(normalized(search.scan_dir / spelling));
  for (const fs::path& dir : search.include_dirs) out.push_back(normalized(dir / spelling));
  return out;
}

// Loads C++ files into the SourceManager once each, so that locations can point into them.
class HeaderFiles {
 public:
  explicit HeaderFiles(SourceManager& sources) : sources_(sources) {}
  // The file id of `path`, or -1 when it cannot be read.
  int id(const fs::path& path) {
    fs::path key = normalized(path);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    int id = -1;
    try {
      id = sources_.load(key);
    } catch (const RuntimeError&) {
    }
    ids_.emplace(key, id);
    return id;
  }
  Loc loc(const imports::CxxLocation& l) {
    int file = id(l.file);
    if (file < 0 || l.line <= 0) return Loc{};
    return Loc{file, l.line, std::max(l.column, 1), 1};
  }

 private:
  SourceManager& sources_;
  std::map<fs::path, int> ids_;
};

ir::ImportRef analyze_one(const ast::ImportDecl& decl, const fs::path& header, HeaderFiles& files,
                          DiagnosticEngine& diags, const ImportSearch& search) {
  imports::HeaderOptions options;
  options.include_dirs = search.include_dirs;
  imports::HeaderAnalysis analysis = imports::analyze_header_cached(header, options, search.cache_dir);
  for (const imports::HeaderProblem& p : analysis.errors) {
    auto& d = diags.report(DiagId::err_header_problem, files.loc(p.loc), p.message);
    diags.note(d, DiagId::note_imported_here, decl.loc);
  }
  if (!analysis.errors.empty()) return nullptr;
  auto import = std::make_shared<ir::Import>();
  import->header = normalized(analysis.header.empty() ? header : analysis.header);
  import->spelling = decl.path;
  import->loc = decl.loc;
  import->dependencies = analysis.dependencies;
  if (import->dependencies.empty()) import->dependencies.push_back(import->header);
  import->cuda_parse_problem = analysis.cuda_parse_problem;
  for (const imports::UnusableFunction& f : analysis.unusable) {
    ir::UnusableFunction g{f.name, {}};
    for (const imports::HeaderProblem& reason : f.reasons) g.reasons.emplace_back(files.loc(reason.loc), reason.message);
    import->unusable.push_back(std::move(g));
  }
  for (const imports::ImportedFunction& f : analysis.functions) {
    ir::ImportedFunction g;
    g.name = f.name;
    g.params = f.params;
    g.result = f.result;
    g.host_device = f.host_device;
    g.loc = files.loc(f.loc);
    g.partials = f.partials;
    g.partials.resize(g.params.size(), -1);
    import->functions.push_back(std::move(g));
  }
  return import;
}

}  // namespace

std::vector<ir::ImportRef> resolve_imports(const ast::Module& module, SourceManager& sources,
                                           DiagnosticEngine& diags, const ImportSearch& search,
                                           std::vector<fs::path>& dependencies) {
  std::vector<ir::ImportRef> out;
  HeaderFiles files(sources);
  std::map<fs::path, Loc> seen;
  for (const ast::ImportDecl& decl : module.imports) {
    if (decl.path.empty()) continue;  // reported by the parser
    std::vector<fs::path> tried = candidates(decl.path, search);
    const fs::path* found = nullptr;
    for (const fs::path& c : tried) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) {
        found = &c;
        break;
      }
    }
    if (!found) {
      auto& d = diags.report(DiagId::err_import_not_found, decl.path_loc, decl.path);
      std::string list;
      for (const fs::path& c : tried) list += (list.empty() ? "'" : ", '") + c.string() + "'";
      diags.note(d, DiagId::note_import_looked_in, decl.path_loc, list);
      continue;
    }
    if (!seen.emplace(*found, decl.loc).second) {
      auto& d = diags.report(DiagId::err_import_twice, decl.path_loc, found->string());
      diags.note(d, DiagId::note_imported_here, seen.at(*found));
      continue;
    }
    if (files.id(*found) < 0) {
      diags.report(DiagId::err_import_unreadable, decl.path_loc, decl.path, found->string());
      continue;
    }
    // A header that has errors was read too (a depfile must name it).
    dependencies.push_back(*found);
    ir::ImportRef import = analyze_one(decl, *found, files, diags, search);
    if (!import) continue;
    for (const fs::path& dep : import->dependencies)
      if (normalized(dep) != *found) dependencies.push_back(dep);
    out.push_back(std::move(import));
  }
  return out;
}

}  // namespace scangen
