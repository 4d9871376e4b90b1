// C++ header imports: parses the header with Clang's libTooling, in-process, and reports the
// functions of namespace scangen_export that scangen can call (cxx_header.h has the convention).
//
// Safe to call from several threads at once: each call has its own FileManager, driver and
// CompilerInstance, and nothing here touches LLVM's global command-line options or the process's
// working directory (the file system is a physical one with a working directory of its own, not
// the shared real one, whose setCurrentWorkingDirectory would chdir the whole process).

#include "imports/cxx_header.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/Version.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/HeaderSearch.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#ifndef SCANGEN_CLANG_RESOURCE_DIR
#error "SCANGEN_CLANG_RESOURCE_DIR must name clang's resource directory (clang -print-resource-dir)"
#endif

namespace scangen::embedded {
std::string_view file(std::string_view path);
}

namespace scangen::imports {
namespace {

namespace fs = std::filesystem;
using namespace clang;

constexpr const char* kNamespace = "scangen_export";
constexpr const char* kScalarTypes = "bool, int32_t, int64_t, float or double";

fs::path absolute_normal(const fs::path& path) { return fs::absolute(path).lexically_normal(); }

// ---------------------------------------------------------------------------------------------
// Running Clang.

CxxLocation location_of(const SourceManager& sources, SourceLocation where) {
  if (where.isInvalid()) return {};
  // Macro uses map to where they are used; #line directives are ignored, so that positions point
  // into the files as they are on disk.
  const PresumedLoc presumed = sources.getPresumedLoc(sources.getFileLoc(where), false);
  if (presumed.isInvalid()) return {};
  return {presumed.getFilename(), static_cast<int>(presumed.getLine()),
          static_cast<int>(presumed.getColumn())};
}

// Keeps Clang's errors (fatal ones included), drops warnings and notes: nothing is printed.
class ErrorCollector : public DiagnosticConsumer {
 public:
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    CxxLocation where;
    if (info.hasSourceManager()) where = location_of(info.getSourceManager(), info.getLocation());
    errors.push_back({std::move(where), std::string(message)});
  }

  std::vector<HeaderProblem> errors;
};

// What a parse read: every file the preprocessor enters (those outside system include directories
// apart), and where each #include that found nothing looked.
struct ParseInputs {
  std::vector<fs::path> local;  // outside system directories
  std::vector<fs::path> all;
  std::vector<fs::path> absent;
};

class FileRecorder : public PPCallbacks {
 public:
  FileRecorder(const Preprocessor& preprocessor, ParseInputs& inputs)
      : preprocessor_(preprocessor), sources_(preprocessor.getSourceManager()), inputs_(inputs) {}

  void FileChanged(SourceLocation where, FileChangeReason reason, SrcMgr::CharacteristicKind kind,
                   FileID) override {
    if (reason != EnterFile) return;
    // <built-in> and <command line> are buffers without a file entry.
    const FileEntry* entry = sources_.getFileEntryForID(sources_.getFileID(where));
    if (entry == nullptr) return;
    // Not normalized: ".." may follow a symbolic link (/lib/gcc/x86_64-linux-gnu/12/../../../..
    // is /usr on a merged /usr).
    inputs_.all.push_back(fs::absolute(entry->getName().str()));
    if (!SrcMgr::isSystem(kind)) inputs_.local.push_back(absolute_normal(entry->getName().str()));
  }

  // A file that appears where an #include looked would change the result. (A file that appears
  // earlier in the search than the one found would too; like ccache, that is not followed.)
  void InclusionDirective(SourceLocation where, const Token&, StringRef name, bool angled,
                          CharSourceRange, const FileEntry* found, StringRef, StringRef,
                          const Module*, SrcMgr::CharacteristicKind) override {
    if (found != nullptr || name.empty()) return;
    const fs::path spelled(name.str());
    if (spelled.is_absolute()) {
      inputs_.absent.push_back(spelled);
      return;
    }
    const FileEntry* includer = sources_.getFileEntryForID(sources_.getFileID(where));
    if (!angled && includer != nullptr)
      inputs_.absent.push_back(fs::absolute(fs::path(includer->getName().str()).parent_path() / spelled));
    const HeaderSearch& search = preprocessor_.getHeaderSearchInfo();
    for (auto dir = search.search_dir_begin(); dir != search.search_dir_end(); ++dir)
      if (dir->isNormalDir()) inputs_.absent.push_back(fs::absolute(fs::path(dir->getName().str()) / spelled));
  }

 private:
  const Preprocessor& preprocessor_;
  const SourceManager& sources_;
  ParseInputs& inputs_;
};

using TranslationUnitVisitor = std::function<void(ASTContext&)>;

class VisitingConsumer : public ASTConsumer {
 public:
  explicit VisitingConsumer(TranslationUnitVisitor visit) : visit_(std::move(visit)) {}
  void HandleTranslationUnit(ASTContext& context) override { visit_(context); }

 private:
  TranslationUnitVisitor visit_;
};

class ParseAction : public ASTFrontendAction {
 public:
  ParseAction(TranslationUnitVisitor visit, std::string prelude, ParseInputs& inputs)
      : visit_(std::move(visit)), prelude_(std::move(prelude)), inputs_(inputs) {}

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& compiler,
                                                 llvm::StringRef) override {
    Preprocessor& preprocessor = compiler.getPreprocessor();
    preprocessor.addPPCallbacks(std::make_unique<FileRecorder>(preprocessor, inputs_));
    // Read before the header, as NVRTC's builtins are; not a file, so not an input.
    if (!prelude_.empty()) preprocessor.setPredefines(preprocessor.getPredefines() + "\n" + prelude_);
    return std::make_unique<VisitingConsumer>(visit_);
  }

 private:
  TranslationUnitVisitor visit_;
  std::string prelude_;
  ParseInputs& inputs_;
};

struct ParseRun {
  std::vector<HeaderProblem> errors;
  ParseInputs inputs;
};

// One parse of the header with the clang command line `arguments`, reading `prelude` first;
// `visit` sees the AST.
ParseRun run_parse(std::vector<std::string> arguments, std::string prelude, TranslationUnitVisitor visit) {
  ParseRun run;
  ErrorCollector diagnostics;
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> file_system(
      llvm::vfs::createPhysicalFileSystem().release());
  llvm::IntrusiveRefCntPtr<FileManager> files(new FileManager(FileSystemOptions(), file_system));
  tooling::ToolInvocation invocation(
      std::move(arguments), std::make_unique<ParseAction>(std::move(visit), std::move(prelude), run.inputs),
      files.get());
  invocation.setDiagnosticConsumer(&diagnostics);
  const bool succeeded = invocation.run();
  run.errors = std::move(diagnostics.errors);
  if (!succeeded && run.errors.empty())  // a failure always reports an error; just in case
    run.errors.push_back({{}, "Clang could not parse the header"});
  return run;
}

std::vector<std::string> include_arguments(const fs::path& header, const HeaderOptions& options) {
  std::vector<std::string> arguments = {"-I" + header.parent_path().string()};
  for (const fs::path& directory : options.include_dirs)
    arguments.push_back("-I" + absolute_normal(directory).string());
  arguments.push_back(header.string());
  return arguments;
}

// -fno-caret-diagnostics also keeps Clang from printing "N errors generated." on stderr.
std::vector<std::string> cxx_arguments(const fs::path& header, const HeaderOptions& options) {
  std::vector<std::string> arguments = {"clang-tool",
                                        "-x",
                                        "c++",
                                        "-std=c++17",
                                        "-fsyntax-only",
                                        "-fno-caret-diagnostics",
                                        "-resource-dir=" SCANGEN_CLANG_RESOURCE_DIR};
  for (std::string& argument : include_arguments(header, options))
    arguments.push_back(std::move(argument));
  return arguments;
}

// CUDA host code as NVRTC shows a header to scangen's kernels: __CUDACC__ and __CUDACC_RTC__
// (not __CUDA_ARCH__: the parse, like the CUDA emulation, reads the host side, which the CUDA
// check is about), no standard header (-nostdinc), and cuda_prelude() before the header. Not the
// toolkit's headers (Clang 14 cannot parse CUDA 13's): the attribute macros that cuda_runtime.h
// would define are predefined, and __CUDACC__ keeps headers' own `#ifndef __CUDACC__ #define
// __host__` fallbacks off. __noinline__ is left alone: libstdc++ uses __attribute__((__noinline__)).
std::vector<std::string> cuda_arguments(const fs::path& header, const HeaderOptions& options) {
  std::vector<std::string> arguments = {
      "clang-tool",
      "-x",
      "cuda",
      "--cuda-host-only",
      "-nocudainc",
      "-nocudalib",
      "-nostdinc",
      "--cuda-gpu-arch=sm_70",
      "-std=c++17",
      "-fsyntax-only",
      "-fno-caret-diagnostics",
      "-resource-dir=" SCANGEN_CLANG_RESOURCE_DIR,
      "-D__CUDACC__",
      "-D__CUDACC_RTC__",
      "-D__host__=__attribute__((host))",
      "-D__device__=__attribute__((device))",
      "-D__global__=__attribute__((global))",
      "-D__forceinline__=__inline__ __attribute__((always_inline))",
      "-D__shared__=__attribute__((shared))",
      "-D__constant__=__attribute__((constant))",
      "-D__managed__=__attribute__((managed))",
      "-D__launch_bounds__(...)=__attribute__((launch_bounds(__VA_ARGS__)))"};
  for (std::string& argument : include_arguments(header, options))
    arguments.push_back(std::move(argument));
  return arguments;
}

// What a kernel's source gives NVRTC before the imported headers, as far as Clang can read it:
// NVRTC's math functions, then scangen's ABI and scalar headers (the fixed-width integer types
// among them). Not the device header, which needs CUDA's device builtins.
std::string cuda_prelude() {
  std::string text;
  for (const char* file : {"cuda/scangen_nvrtc_math.h", "cuda/scangen_cuda_abi.h", "common/scangen_scalar.h"})
    text += std::string(embedded::file(file)) + "\n";
  return text;
}

// ---------------------------------------------------------------------------------------------
// The declarations of namespace scangen_export.

// Calls `visit` on each declaration directly in a global `namespace scangen_export` (every block
// of it, also inside extern "C"/"C++" blocks), in the order of the translation unit.
void for_each_export(const DeclContext& context, bool inside,
                     const std::function<void(const Decl&)>& visit) {
  for (const Decl* decl : context.decls()) {
    if (const auto* linkage = dyn_cast<LinkageSpecDecl>(decl)) {
      for_each_export(*linkage, inside, visit);
    } else if (inside) {
      visit(*decl);
    } else if (const auto* space = dyn_cast<NamespaceDecl>(decl)) {
      if (space->getName() == kNamespace) for_each_export(*space, true, visit);
    }
  }
}

std::optional<DType> dtype_of(const ASTContext& context, QualType type) {
  const auto* builtin = dyn_cast<BuiltinType>(type.getCanonicalType().getTypePtr());
  if (builtin == nullptr) return std::nullopt;
  if (builtin->getKind() == BuiltinType::Bool) return DType::Bool;
  if (builtin->getKind() == BuiltinType::Float) return DType::F32;
  if (builtin->getKind() == BuiltinType::Double) return DType::F64;
  // By size: int32_t, int64_t, long and long long are all one of these on every target.
  if (builtin->isSignedIntegerType() && !builtin->isAnyCharacterType()) {
    const uint64_t bits = context.getTypeSize(builtin);
    if (bits == 32) return DType::I32;
    if (bits == 64) return DType::I64;
  }
  return std::nullopt;
}

const char* cxx_name(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return "bool";
    case DType::I32:
      return "int32_t";
    case DType::I64:
      return "int64_t";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
  }
  return "?";
}

// "float &", or "real_ref, aka float &" when written through a typedef.
std::string type_text(const ASTContext& context, QualType type) {
  const PrintingPolicy policy = context.getPrintingPolicy();
  const std::string written = type.getAsString(policy);
  const std::string canonical = type.getCanonicalType().getAsString(policy);
  return canonical == written ? written : written + ", aka " + canonical;
}

std::string signature_text(const std::vector<DType>& params, DType result) {
  std::string text = "(";
  for (size_t i = 0; i < params.size(); ++i)
    text += (i == 0 ? "" : ", ") + std::string(cxx_name(params[i]));
  return text + ") -> " + cxx_name(result);
}

// A function that passed the checks of its own declaration (overloads and partial derivatives
// come later).
struct Candidate {
  ImportedFunction function;
  size_t order = 0;  // of its declaration, to sort problems
  bool usable = true;
};

// Why the function `name` cannot be used, found at its declaration number `order`.
struct Problem {
  size_t order = 0;
  std::string name;
  HeaderProblem problem;
};

struct Exports {
  std::vector<Candidate> candidates;
  std::vector<Problem> problems;
};

class ExportCollector {
 public:
  explicit ExportCollector(ASTContext& context)
      : context_(context), sources_(context.getSourceManager()) {}

  Exports collect() {
    for_each_export(*context_.getTranslationUnitDecl(), false,
                    [this](const Decl& decl) { visit(decl); });
    // A call of an overloaded name could mean either overload: none is offered.
    for (Candidate& candidate : exports_.candidates)
      if (overloaded_.count(candidate.function.name) != 0) candidate.usable = false;
    return std::move(exports_);
  }

 private:
  // Only functions are offered; classes (with their members), nested namespaces, variables,
  // types and operators are the header's own business and are not problems.
  void visit(const Decl& decl) {
    if (decl.isInvalidDecl()) return;  // Clang reported it
    if (const auto* tmpl = dyn_cast<FunctionTemplateDecl>(&decl)) {
      const std::string name = tmpl->getNameAsString();
      const size_t order = order_++;
      if (tmpl->getDeclName().isIdentifier() && claim(name, tmpl->getLocation(), order))
        problem(order, name, tmpl->getLocation(),
                "'" + name + "' is a function template; scangen calls only plain functions");
      return;
    }
    const auto* function = dyn_cast<FunctionDecl>(&decl);
    if (function == nullptr || !function->getDeclName().isIdentifier() ||
        function->getPrimaryTemplate() != nullptr || isa<CXXDeductionGuideDecl>(function))
      return;
    if (!seen_.insert(function->getCanonicalDecl()).second) return;  // a redeclaration
    const FunctionDecl* definition = nullptr;
    const bool defined = function->isDefined(definition);
    check_function(defined ? *definition : *function, defined);
  }

  // Claims `name` for the declaration at `where`; false (and a problem) when it is taken.
  bool claim(const std::string& name, SourceLocation where, size_t order) {
    const auto [first, inserted] = first_by_name_.emplace(name, where);
    if (inserted) return true;
    const CxxLocation then = location_of(sources_, first->second);
    const CxxLocation now = location_of(sources_, where);
    std::string at = std::to_string(then.line) + ":" + std::to_string(then.column);
    if (then.file != now.file) at = then.file + ":" + at;
    overloaded_.insert(name);
    problem(order, name, where,
            "'" + name + "' overloads the function declared at " + at +
                "; scangen calls functions by name, so give each overload its own name");
    return false;
  }

  void check_function(const FunctionDecl& function, bool defined) {
    const std::string name = function.getNameAsString();
    const size_t order = order_++;
    if (!claim(name, function.getLocation(), order)) return;
    bool usable = true;
    auto fail = [&](SourceLocation where, const std::string& message) {
      problem(order, name, where, message);
      usable = false;
    };
    if (function.isVariadic())
      fail(function.getLocation(),
           "'" + name + "' is variadic; scangen passes a fixed number of scalars");

    Candidate candidate;
    candidate.order = order;
    ImportedFunction& imported = candidate.function;
    imported.name = name;
    imported.loc = location_of(sources_, function.getLocation());
    for (unsigned i = 0; i < function.getNumParams(); ++i) {
      const ParmVarDecl& param = *function.getParamDecl(i);
      const std::string param_name = param.getNameAsString();
      const std::string subject =
          param_name.empty() ? "unnamed parameter " + std::to_string(i) + " of '" + name + "'"
                             : "parameter '" + param_name + "' of '" + name + "'";
      const SourceLocation where =
          param.getLocation().isValid() ? param.getLocation() : param.getBeginLoc();
      if (const std::optional<DType> dtype = dtype_of(context_, param.getType())) {
        imported.params.push_back(*dtype);
      } else {
        fail(where, type_problem(param.getType(), subject, /*result=*/false));
      }
      imported.param_names.push_back(param_name);
    }
    if (const std::optional<DType> dtype = dtype_of(context_, function.getReturnType())) {
      imported.result = *dtype;
    } else {
      fail(function.getLocation(), type_problem(function.getReturnType(), "'" + name + "'", true));
    }
    if (!defined)
      fail(function.getLocation(),
           "'" + name +
               "' is declared but not defined; scangen compiles the header into each "
               "generated module: define '" +
               name + "' in the header (inline)");
    if (!usable) return;
    imported.partials.assign(imported.params.size(), -1);
    exports_.candidates.push_back(std::move(candidate));
  }

  std::string type_problem(QualType type, const std::string& subject, bool result) const {
    const std::string by_value =
        result ? "; scangen takes results by value" : "; scangen passes scalars by value";
    const std::string verb = result ? " returns " : " is ";
    if (type->isReferenceType())
      return subject + verb + "a reference (" + type_text(context_, type) + ")" + by_value;
    if (type->isPointerType() || type->isMemberPointerType())
      return subject + verb + "a pointer (" + type_text(context_, type) + ")" + by_value;
    return subject + (result ? " returns" : " has") + " an unsupported type (" +
           type_text(context_, type) + "); scangen " + (result ? "takes a result of " : "passes ") +
           kScalarTypes;
  }

  void problem(size_t order, const std::string& name, SourceLocation where, std::string message) {
    exports_.problems.push_back({order, name, {location_of(sources_, where), std::move(message)}});
  }

  ASTContext& context_;
  const SourceManager& sources_;
  Exports exports_;
  size_t order_ = 0;
  std::set<const FunctionDecl*> seen_;
  std::map<std::string, SourceLocation> first_by_name_;
  std::set<std::string> overloaded_;
};

// "f_d12" -> ("f", 12); nullopt for names that are not of that form.
std::optional<std::pair<std::string, size_t>> partial_of(const std::string& name) {
  const size_t at = name.rfind("_d");
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::string digits = name.substr(at + 2);
  if (digits.empty() || digits.size() > 6 || (digits.size() > 1 && digits[0] == '0') ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::make_pair(name.substr(0, at), static_cast<size_t>(std::stoul(digits)));
}

// Links each f_d<i> to f (f.partials[i], as an index into `candidates` for now), or rejects it.
// Shorter names first, so that f_d0 is settled before it is the base of f_d0_d1.
void link_partials(Exports& exports) {
  std::vector<Candidate>& candidates = exports.candidates;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < candidates.size(); ++i) by_name[candidates[i].function.name] = i;
  std::vector<size_t> by_length(candidates.size());
  for (size_t i = 0; i < by_length.size(); ++i) by_length[i] = i;
  std::stable_sort(by_length.begin(), by_length.end(), [&](size_t a, size_t b) {
    return candidates[a].function.name.size() < candidates[b].function.name.size();
  });
  for (const size_t index : by_length) {
    Candidate& derivative = candidates[index];
    const auto partial = partial_of(derivative.function.name);
    if (!partial) continue;
    const auto base_at = by_name.find(partial->first);
    if (base_at == by_name.end() || !candidates[base_at->second].usable) continue;
    ImportedFunction& base = candidates[base_at->second].function;
    const ImportedFunction& d = derivative.function;
    const std::string i = std::to_string(partial->second);
    std::string message;
    if (partial->second >= base.params.size()) {
      message = "'" + d.name + "' is named as the partial derivative of '" + base.name +
                "' with respect to parameter " + i + ", but '" + base.name + "' has " +
                std::to_string(base.params.size()) + " parameters";
    } else if (d.params != base.params || d.result != base.result) {
      message = "'" + d.name + "' must have the parameter and result types of '" + base.name +
                "', " + signature_text(base.params, base.result) +
                ", to be its partial derivative with respect to parameter " + i + "; it has " +
                signature_text(d.params, d.result);
    } else {
      base.partials[partial->second] = static_cast<int>(index);
      continue;
    }
    derivative.usable = false;
    exports.problems.push_back({derivative.order, d.name, {d.loc, message}});
  }
}

// The usable functions, with partials as indices into the result.
std::vector<ImportedFunction> usable_functions(const std::vector<Candidate>& candidates) {
  std::vector<int> final_index(candidates.size(), -1);
  std::vector<ImportedFunction> functions;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].usable) continue;
    final_index[i] = static_cast<int>(functions.size());
    functions.push_back(candidates[i].function);
  }
  for (ImportedFunction& function : functions)
    for (int& partial : function.partials)
      if (partial >= 0) partial = final_index[static_cast<size_t>(partial)];
  return functions;
}

// Names of the functions of the namespace declared __host__ __device__ explicitly (constexpr
// functions are implicitly both in CUDA, which does not make them callable from device code by
// intent of the header).
std::set<std::string> host_device_names(ASTContext& context) {
  std::set<std::string> names;
  for_each_export(*context.getTranslationUnitDecl(), false, [&](const Decl& decl) {
    const auto* function = dyn_cast<FunctionDecl>(&decl);
    if (function == nullptr || !function->getDeclName().isIdentifier()) return;
    const FunctionDecl* latest = function->getMostRecentDecl();  // attributes are inherited
    const auto explicit_attr = [](const auto* attr) { return !attr->isImplicit(); };
    if (llvm::any_of(latest->specific_attrs<CUDAHostAttr>(), explicit_attr) &&
        llvm::any_of(latest->specific_attrs<CUDADeviceAttr>(), explicit_attr))
      names.insert(function->getNameAsString());
  });
  return names;
}

std::string rendered(const HeaderProblem& problem) {
  if (problem.loc.file.empty()) return problem.message;
  return problem.loc.file + ":" + std::to_string(problem.loc.line) + ":" +
         std::to_string(problem.loc.column) + ": " + problem.message;
}

void add_unique(std::vector<fs::path>& to, const std::vector<fs::path>& files) {
  for (const fs::path& file : files)
    if (std::find(to.begin(), to.end(), file) == to.end()) to.push_back(file);
}

void add_inputs(HeaderAnalysis& analysis, const ParseInputs& inputs) {
  add_unique(analysis.dependencies, inputs.local);
  add_unique(analysis.inputs, inputs.all);
  add_unique(analysis.absent, inputs.absent);
}

// The problems grouped by function, in the order of each one's first problem (by declaration).
std::vector<UnusableFunction> unusable_functions(std::vector<Problem> problems) {
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.order < b.order; });
  std::vector<UnusableFunction> unusable;
  std::map<std::string, size_t> index;
  for (Problem& problem : problems) {
    const auto [at, inserted] = index.emplace(problem.name, unusable.size());
    if (inserted) unusable.push_back({problem.name, {}});
    unusable[at->second].reasons.push_back(std::move(problem.problem));
  }
  return unusable;
}

std::optional<std::string> unreadable(const fs::path& header) {
  std::error_code error;
  const fs::file_status status = fs::status(header, error);
  if (!fs::exists(status)) return "the header '" + header.string() + "' does not exist";
  if (!fs::is_regular_file(status)) return "the header '" + header.string() + "' is not a file";
  if (!std::ifstream(header)) return "the header '" + header.string() + "' cannot be read";
  return std::nullopt;
}

void analyze(HeaderAnalysis& analysis, const HeaderOptions& options) {
  analysis.dependencies.push_back(analysis.header);
  if (const auto problem = unreadable(analysis.header)) {
    analysis.errors.push_back({{}, *problem});
    return;
  }
  Exports exports;
  ParseRun cxx = run_parse(cxx_arguments(analysis.header, options), "", [&](ASTContext& context) {
    exports = ExportCollector(context).collect();
  });
  add_inputs(analysis, cxx.inputs);
  link_partials(exports);
  analysis.errors = std::move(cxx.errors);
  analysis.unusable = unusable_functions(std::move(exports.problems));
  analysis.functions = usable_functions(exports.candidates);
  if (analysis.functions.empty()) return;  // nothing for the CUDA backend to call

  std::set<std::string> host_device;
  ParseRun cuda = run_parse(cuda_arguments(analysis.header, options), cuda_prelude(),
                            [&](ASTContext& context) { host_device = host_device_names(context); });
  add_inputs(analysis, cuda.inputs);
  if (!cuda.errors.empty()) {
    analysis.cuda_parse_problem = rendered(cuda.errors.front());
    return;
  }
  for (ImportedFunction& function : analysis.functions)
    function.host_device = host_device.count(function.name) != 0;
}

}  // namespace

HeaderAnalysis analyze_header(const std::filesystem::path& header, const HeaderOptions& options) {
  HeaderAnalysis analysis;
  try {
    analysis.header = absolute_normal(header);
    analyze(analysis, options);
  } catch (const std::exception& error) {  // bad_alloc, filesystem_error: a problem, not a crash
    analysis.functions.clear();
    analysis.unusable.clear();
    analysis.errors.push_back(
        {{}, "the header '" + header.string() + "' could not be analyzed: " + error.what()});
  }
  return analysis;
}

std::string analysis_identity(const std::filesystem::path& header, const HeaderOptions& options) {
  const fs::path absolute = absolute_normal(header);
  std::string identity = clang::getClangFullVersion() + "\n";
  for (const auto& arguments : {cxx_arguments(absolute, options), cuda_arguments(absolute, options)}) {
    for (const std::string& argument : arguments) identity += argument + '\0';
    identity += "\n";
  }
  return identity + cuda_prelude();
}

}  // namespace scangen::imports
