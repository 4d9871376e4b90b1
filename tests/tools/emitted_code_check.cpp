// scangen-codecheck: checks C++ source emitted by scangen, for the test suite.
//
// Two checks, both run in-process with Clang's libTooling:
//  1. Warnings: the file must compile without any diagnostic of level warning or higher under
//     strict flags (emitted code is compiled by users with their own flags, so it has to be clean).
//  2. Loop hygiene: the time loop of every scan (a `for` whose loop variable is named `step`,
//     `step_<anything>` or `step<digits>`) must not allocate, make virtual calls or call through
//     function pointers, except on error paths (inside `throw`, or in an `if` branch that ends in a
//     throw or a [[noreturn]] call). Calls are not followed: only code written inside the loop
//     counts.
//
// usage: scangen-codecheck [--no-warnings] [--no-loops] [--loop-prefix=step] FILE... [--
// CLANG_ARG...] Exit status: 0 clean, 1 findings, 2 usage error.

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticIDs.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#ifndef SCANGEN_CLANG_RESOURCE_DIR
#error "SCANGEN_CLANG_RESOURCE_DIR must name clang's resource directory (clang -print-resource-dir)"
#endif

namespace {

using namespace clang;
using namespace clang::ast_matchers;

constexpr const char* kUsage =
    "usage: scangen-codecheck [--no-warnings] [--no-loops] [--loop-prefix=PREFIX] FILE... "
    "[-- CLANG_ARG...]\n"
    "  Checks C++ source emitted by scangen.\n"
    "  --no-warnings       do not fail on compiler warnings (errors still fail)\n"
    "  --no-loops          skip the loop-hygiene check of scan time loops\n"
    "  --loop-prefix=P     time loops are `for` loops whose variable is named P, P_* or P<digits>\n"
    "                      (default: step)\n"
    "  -- CLANG_ARG...     extra arguments for clang, after the built-in ones (-I, -D, -Wno-...)\n"
    "Exit status: 0 clean, 1 findings, 2 usage error.\n";

struct Options {
  bool check_warnings = true;
  bool check_loops = true;
  std::string loop_prefix = "step";
  std::vector<std::string> files;
  std::vector<std::string> extra_clang_args;
};

bool is_readable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// Returns the options, or an error message in `error` (a usage error, exit status 2).
std::optional<Options> parse_options(int argc, char** argv, std::string& error, bool& help) {
  Options options;
  int i = 1;
  for (; i < argc; ++i) {
    const llvm::StringRef arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--help" || arg == "-h") {
      help = true;
      return std::nullopt;
    }
    if (arg == "--no-warnings") {
      options.check_warnings = false;
    } else if (arg == "--no-loops") {
      options.check_loops = false;
    } else if (arg.startswith("--loop-prefix=")) {
      options.loop_prefix = arg.drop_front(std::strlen("--loop-prefix=")).str();
    } else if (arg == "--loop-prefix") {
      if (i + 1 >= argc) {
        error = "--loop-prefix needs a value";
        return std::nullopt;
      }
      options.loop_prefix = argv[++i];
    } else if (arg.startswith("-") && arg != "-") {
      error = "unknown option '" + arg.str() + "' (clang arguments go after --)";
      return std::nullopt;
    } else {
      options.files.push_back(arg.str());
    }
  }
  for (; i < argc; ++i) options.extra_clang_args.emplace_back(argv[i]);

  if (options.loop_prefix.empty()) {
    error = "--loop-prefix must not be empty";
    return std::nullopt;
  }
  if (options.files.empty()) {
    error = "no input files";
    return std::nullopt;
  }
  for (const std::string& file : options.files) {
    if (!is_readable_file(file)) {
      error = "cannot read '" + file + "'";
      return std::nullopt;
    }
  }
  return options;
}

// "file:line:col" of the place in the file as written: macro uses map to the expansion, and
// #line directives are ignored so that positions point into the emitted C++ file itself.
std::string location_text(const SourceManager& sources, SourceLocation location) {
  const PresumedLoc presumed = sources.getPresumedLoc(location, /*UseLineDirectives=*/false);
  if (presumed.isInvalid()) return "<unknown>";
  return std::string(presumed.getFilename()) + ":" + std::to_string(presumed.getLine()) + ":" +
         std::to_string(presumed.getColumn());
}

unsigned line_of(const SourceManager& sources, SourceLocation location) {
  const PresumedLoc presumed = sources.getPresumedLoc(location, /*UseLineDirectives=*/false);
  return presumed.isInvalid() ? 0 : presumed.getLine();
}

// ---------------------------------------------------------------------------------------------
// Check 1: compiler diagnostics.

// Prints every diagnostic as "file:line:col: level: message [-Wflag]" and counts those of level
// warning or higher. Notes are printed (they explain the preceding finding) but not counted.
class CountingDiagnosticConsumer : public DiagnosticConsumer {
 public:
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);  // keeps the base class's counters right
    if (level == DiagnosticsEngine::Ignored) return;

    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    std::string where = "scangen-codecheck";  // driver diagnostics have no source location
    if (info.hasSourceManager() && info.getLocation().isValid())
      where = location_text(info.getSourceManager(), info.getLocation());

    const char* level_name = "note";
    switch (level) {
      case DiagnosticsEngine::Ignored:
      case DiagnosticsEngine::Note:
        level_name = "note";
        break;
      case DiagnosticsEngine::Remark:
        level_name = "remark";
        break;
      case DiagnosticsEngine::Warning:
        level_name = "warning";
        break;
      case DiagnosticsEngine::Error:
        level_name = "error";
        break;
      case DiagnosticsEngine::Fatal:
        level_name = "fatal error";
        break;
    }
    llvm::outs() << where << ": " << level_name << ": " << message;
    const llvm::StringRef flag = DiagnosticIDs::getWarningOptionForDiag(info.getID());
    if (!flag.empty() && level >= DiagnosticsEngine::Warning) llvm::outs() << " [-W" << flag << "]";
    llvm::outs() << "\n";
    if (level >= DiagnosticsEngine::Warning) ++findings_;
  }

  unsigned findings() const { return findings_; }

 private:
  unsigned findings_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Check 2: loop hygiene.

// The naming convention of scan time loops: exactly the prefix, the prefix followed by `_` and
// anything (step_1, step_outer), or the prefix followed by digits (step2). `steps` or `stepper`
// are ordinary names, so helper loops over "steps" arrays are not mistaken for time loops.
bool is_time_loop_name(llvm::StringRef name, llvm::StringRef prefix) {
  if (!name.startswith(prefix)) return false;
  const llvm::StringRef rest = name.drop_front(prefix.size());
  if (rest.empty() || rest.front() == '_') return true;
  return llvm::all_of(rest, [](char c) { return c >= '0' && c <= '9'; });
}

AST_MATCHER_P(NamedDecl, hasTimeLoopName, std::string, Prefix) {
  const IdentifierInfo* identifier = Node.getIdentifier();
  return identifier != nullptr && is_time_loop_name(identifier->getName(), Prefix);
}

// A scan time loop: `for (T step = ...; ...)`, `for (step = ...; ...)` on an existing variable,
// or `for (auto step : ...)`, outside system headers.
StatementMatcher time_loop_matcher(const std::string& prefix) {
  const auto loop_variable = varDecl(hasTimeLoopName(prefix));
  return stmt(anyOf(
                  forStmt(hasLoopInit(anyOf(
                      declStmt(has(loop_variable)),
                      binaryOperator(hasOperatorName("="), hasLHS(ignoringParenImpCasts(
                                                               declRefExpr(to(loop_variable)))))))),
                  cxxForRangeStmt(hasLoopVariable(loop_variable))),
              unless(isExpansionInSystemHeader()))
      .bind("loop");
}

// The name of a declaration, or "" for names that are not identifiers (operators, constructors).
llvm::StringRef identifier_name(const NamedDecl* decl) {
  const IdentifierInfo* identifier = decl->getIdentifier();
  return identifier != nullptr ? identifier->getName() : llvm::StringRef();
}

// Standard containers: constructing them or growing them may allocate.
const llvm::StringSet<>& std_container_names() {
  static const llvm::StringSet<> names = {"vector",
                                          "basic_string",
                                          "deque",
                                          "list",
                                          "forward_list",
                                          "map",
                                          "multimap",
                                          "set",
                                          "multiset",
                                          "unordered_map",
                                          "unordered_multimap",
                                          "unordered_set",
                                          "unordered_multiset",
                                          "stack",
                                          "queue",
                                          "priority_queue"};
  return names;
}

// "std::vector" etc. when `record` is a standard container, otherwise "".
std::string std_container_name(const CXXRecordDecl* record) {
  if (record == nullptr || !record->isInStdNamespace()) return "";
  const llvm::StringRef name = identifier_name(record);
  if (!std_container_names().contains(name)) return "";
  return name == "basic_string" ? "std::string" : "std::" + name.str();
}

// "std::vector" etc. when `type` is a standard container by value, otherwise "".
std::string std_container_of(QualType type) {
  if (type.isNull()) return "";
  return std_container_name(type.getCanonicalType()->getAsCXXRecordDecl());
}

// Member functions of standard containers that may allocate.
bool is_growing_member(const CXXMethodDecl* method) {
  static const llvm::StringSet<> names = {
      "push_back",    "emplace_back", "resize",           "reserve",    "insert",
      "emplace",      "assign",       "append",           "push_front", "emplace_front",
      "emplace_hint", "try_emplace",  "insert_or_assign", "push",       "shrink_to_fit"};
  const std::string container = std_container_name(method->getParent());
  if (container.empty()) return false;
  switch (method->getOverloadedOperator()) {
    case OO_None:
      return names.contains(identifier_name(method));
    case OO_PlusEqual:
      return container == "std::string";  // s += ...
    case OO_Subscript:
      return container == "std::map" || container == "std::unordered_map";  // inserts
    default:
      return false;
  }
}

// Free functions that allocate or free memory (global, std::, or extern "C").
bool is_allocation_function(const FunctionDecl* function) {
  switch (function->getOverloadedOperator()) {
    case OO_New:
    case OO_Delete:
    case OO_Array_New:
    case OO_Array_Delete:
      return true;  // explicit `operator new(n)` calls, member or not
    default:
      break;
  }
  if (isa<CXXMethodDecl>(function)) return false;
  const DeclContext* context = function->getDeclContext()->getRedeclContext();
  if (!context->isTranslationUnit() && !context->isStdNamespace()) return false;
  static const llvm::StringSet<> names = {"malloc",        "calloc",         "realloc",
                                          "aligned_alloc", "posix_memalign", "free",
                                          "make_unique",   "make_shared",    "allocate_shared"};
  return names.contains(identifier_name(function));
}

// True when a branch ends in a throw or a call to a [[noreturn]] function: an error path.
bool ends_in_error_path(const Stmt* statement) {
  while (statement != nullptr) {
    if (const auto* compound = dyn_cast<CompoundStmt>(statement)) {
      statement = compound->body_empty() ? nullptr : compound->body_back();
    } else if (const auto* attributed = dyn_cast<AttributedStmt>(statement)) {
      statement = attributed->getSubStmt();  // [[unlikely]] throw ...;
    } else {
      break;
    }
  }
  const auto* expression = dyn_cast_or_null<Expr>(statement);
  if (expression == nullptr) return false;
  expression = expression->IgnoreImplicit()->IgnoreParens();
  if (isa<CXXThrowExpr>(expression)) return true;
  if (const auto* call = dyn_cast<CallExpr>(expression)) {
    const FunctionDecl* callee = call->getDirectCallee();
    return callee != nullptr && callee->isNoReturn();
  }
  return false;
}

// Collects findings, once each (template instantiations share source locations with their
// patterns, and a header may be parsed for several files).
class HygieneReport {
 public:
  void add(const SourceManager& sources, SourceLocation where, const std::string& what,
           unsigned loop_line) {
    const std::string text = location_text(sources, where) + ": loop-hygiene: " + what +
                             " inside scan time loop (loop at line " + std::to_string(loop_line) +
                             ")";
    if (seen_.insert(text).second) llvm::outs() << text << "\n";
  }
  // Returns true the first time a loop (by location) is seen.
  bool add_loop(const SourceManager& sources, SourceLocation where) {
    return loops_.insert(location_text(sources, where)).second;
  }
  unsigned findings() const { return static_cast<unsigned>(seen_.size()); }
  unsigned loops() const { return static_cast<unsigned>(loops_.size()); }

 private:
  std::set<std::string> seen_;
  std::set<std::string> loops_;
};

// Walks the statements one time loop runs per iteration (condition, increment, body) and reports
// what must not be there. Nested time loops are skipped: they are checked on their own, so a
// finding names its innermost time loop.
class TimeLoopChecker {
 public:
  TimeLoopChecker(ASTContext& context, const StatementMatcher& time_loop, HygieneReport& report,
                  const Stmt& loop)
      : context_(context),
        sources_(context.getSourceManager()),
        time_loop_(time_loop),
        report_(report),
        loop_line_(line_of(sources_, loop.getBeginLoc())) {}

  void check_loop(const Stmt& loop) {
    if (const auto* for_loop = dyn_cast<ForStmt>(&loop)) {
      walk(for_loop->getConditionVariableDeclStmt());
      walk(for_loop->getCond());
      walk(for_loop->getInc());
      walk(for_loop->getBody());
    } else if (const auto* range_loop = dyn_cast<CXXForRangeStmt>(&loop)) {
      walk(range_loop->getCond());
      walk(range_loop->getInc());
      walk(range_loop->getLoopVarStmt());
      walk(range_loop->getBody());
    }
  }

 private:
  void walk(const Stmt* statement) {
    if (statement == nullptr) return;
    // Error paths may allocate (to build messages): skip everything inside a throw.
    if (isa<CXXThrowExpr>(statement)) return;
    if (const auto* if_statement = dyn_cast<IfStmt>(statement)) {
      walk(if_statement->getInit());
      walk(if_statement->getConditionVariableDeclStmt());
      walk(if_statement->getCond());
      if (!ends_in_error_path(if_statement->getThen())) walk(if_statement->getThen());
      walk(if_statement->getElse());
      return;
    }
    if ((isa<ForStmt>(statement) || isa<CXXForRangeStmt>(statement)) &&
        !match(time_loop_, *statement, context_).empty())
      return;  // a nested time loop, checked on its own
    inspect(*statement);
    for (const Stmt* child : statement->children()) walk(child);
  }

  void inspect(const Stmt& statement) {
    if (const auto* new_expression = dyn_cast<CXXNewExpr>(&statement)) {
      report(new_expression->getBeginLoc(), "new expression");
    } else if (const auto* delete_expression = dyn_cast<CXXDeleteExpr>(&statement)) {
      report(delete_expression->getBeginLoc(), "delete expression");
    } else if (const auto* construction = dyn_cast<CXXConstructExpr>(&statement)) {
      const std::string container = std_container_of(construction->getType());
      if (!container.empty()) report(construction->getBeginLoc(), "construction of " + container);
    } else if (const auto* call = dyn_cast<CallExpr>(&statement)) {
      inspect_call(*call);
    }
  }

  void inspect_call(const CallExpr& call) {
    const Expr* callee = call.getCallee();
    if (callee == nullptr) return;
    // Calls in uninstantiated templates are resolved only in instantiations, checked there.
    if (call.isTypeDependent() || callee->isTypeDependent() || call.isValueDependent()) return;
    callee = callee->IgnoreParenImpCasts();
    if (isa<CXXPseudoDestructorExpr>(callee)) return;  // p->~T() for a scalar T: no call at all
    const SourceLocation where = call.getExprLoc();

    const FunctionDecl* function = call.getDirectCallee();
    if (function == nullptr) {
      report(where, isa<CXXMemberCallExpr>(call) ? "call through pointer to member function"
                                                 : "call through function pointer");
      return;
    }
    if (is_allocation_function(function))
      report(where, "call to '" + function->getNameAsString() + "'");

    if (const auto* method = dyn_cast<CXXMethodDecl>(function)) {
      if (is_growing_member(method)) {
        report(where, "call to " + std_container_name(method->getParent()) +
                          "::" + method->getNameAsString() + " (may allocate)");
      }
      if (is_virtual_dispatch(call, *method))
        report(where, "virtual call to '" + method->getQualifiedNameAsString() + "'");
      const CXXRecordDecl* record = method->getParent();
      if (method->getOverloadedOperator() == OO_Call && record->isInStdNamespace() &&
          identifier_name(record) == "function")
        report(where, "call through std::function");
    }

    // A container returned by value is constructed here (guaranteed copy elision puts the
    // callee's result object in this loop), e.g. std::to_string(step) or a + b on strings.
    const QualType returned = call.getCallReturnType(context_);
    if (!returned.isNull() && !returned->isReferenceType()) {
      const std::string container = std_container_of(returned);
      if (!container.empty()) {
        const auto* method = dyn_cast<CXXMethodDecl>(function);
        const std::string callee_name = method != nullptr && method->getParent()->isLambda()
                                            ? "a lambda"
                                            : "'" + function->getNameAsString() + "'";
        report(where,
               "construction of " + container + " (returned by value from " + callee_name + ")");
      }
    }
  }

  // A call that dispatches through the vtable: a virtual method that is not final (nor in a final
  // class), called without qualification (Base::f() calls exactly Base::f).
  static bool is_virtual_dispatch(const CallExpr& call, const CXXMethodDecl& method) {
    if (!method.isVirtual() || method.hasAttr<FinalAttr>() ||
        method.getParent()->hasAttr<FinalAttr>())
      return false;
    if (const auto* member_call = dyn_cast<CXXMemberCallExpr>(&call)) {
      if (const auto* member = dyn_cast<MemberExpr>(member_call->getCallee()->IgnoreParens()))
        return !member->hasQualifier();
    }
    return true;
  }

  void report(SourceLocation where, const std::string& what) {
    report_.add(sources_, sources_.getExpansionLoc(where), what, loop_line_);
  }

  ASTContext& context_;
  const SourceManager& sources_;
  const StatementMatcher& time_loop_;
  HygieneReport& report_;
  unsigned loop_line_;
};

class TimeLoopCallback : public MatchFinder::MatchCallback {
 public:
  TimeLoopCallback(StatementMatcher time_loop, HygieneReport& report)
      : time_loop_(std::move(time_loop)), report_(report) {}

  void run(const MatchFinder::MatchResult& result) override {
    const auto* loop = result.Nodes.getNodeAs<Stmt>("loop");
    if (loop == nullptr) return;
    // Every instantiation of a template holds a copy of the loop; count the loop once, but check
    // each copy (types are known only in instantiations); the report drops repeated findings.
    report_.add_loop(*result.SourceManager,
                     result.SourceManager->getExpansionLoc(loop->getBeginLoc()));
    TimeLoopChecker(*result.Context, time_loop_, report_, *loop).check_loop(*loop);
  }

  const StatementMatcher& matcher() const { return time_loop_; }

 private:
  StatementMatcher time_loop_;
  HygieneReport& report_;
};

// The clang command line: strict warnings for C++17, without code generation. The resource
// directory is baked in at build time: libTooling would otherwise derive it from this tool's own
// path and miss clang's builtin headers (<stddef.h>, ...), which <cmath> and <cstdint> need.
std::vector<std::string> clang_arguments(const Options& options) {
  // -fno-caret-diagnostics: we print diagnostics ourselves; it also drops clang's own
  // "N warnings generated." line on stderr.
  std::vector<std::string> arguments = {"-xc++", "-std=c++17", "-fsyntax-only",
                                        "-fno-caret-diagnostics",
                                        "-resource-dir=" SCANGEN_CLANG_RESOURCE_DIR};
  if (options.check_warnings) {
    for (const char* flag :
         {"-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Wno-sign-conversion"})
      arguments.emplace_back(flag);
  } else {
    arguments.emplace_back("-w");  // errors are still reported
  }
  arguments.insert(arguments.end(), options.extra_clang_args.begin(),
                   options.extra_clang_args.end());
  return arguments;
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  bool help = false;
  const std::optional<Options> options = parse_options(argc, argv, error, help);
  if (help) {
    llvm::outs() << kUsage;
    return 0;
  }
  if (!options) {
    llvm::errs() << "scangen-codecheck: " << error << "\n" << kUsage;
    return 2;
  }

  const tooling::FixedCompilationDatabase database(".", clang_arguments(*options));
  tooling::ClangTool tool(database, options->files);
  CountingDiagnosticConsumer diagnostics;
  tool.setDiagnosticConsumer(&diagnostics);
  tool.setPrintErrorMessage(false);  // our summary says what failed

  HygieneReport hygiene;
  int tool_status = 0;
  if (options->check_loops) {
    TimeLoopCallback callback(time_loop_matcher(options->loop_prefix), hygiene);
    MatchFinder finder;
    finder.addMatcher(callback.matcher(), &callback);
    tool_status = tool.run(tooling::newFrontendActionFactory(&finder).get());
  } else {
    tool_status = tool.run(tooling::newFrontendActionFactory<SyntaxOnlyAction>().get());
  }

  unsigned diagnostic_findings = diagnostics.findings();
  if (tool_status != 0 && diagnostic_findings == 0) {
    // Should not happen (a failed run reports an error), but never let a failure pass as clean.
    llvm::outs() << "scangen-codecheck: error: clang could not process the input\n";
    diagnostic_findings = 1;
  }
  const unsigned findings = diagnostic_findings + hygiene.findings();
  const std::string counts = std::to_string(options->files.size()) + " files, " +
                             std::to_string(hygiene.loops()) + " scan loops checked";
  if (findings == 0) {
    llvm::outs() << "ok: " << counts << (options->check_loops ? "" : " (--no-loops)") << "\n";
    return 0;
  }
  llvm::outs() << findings << " findings: " << diagnostic_findings << " compiler diagnostics, "
               << hygiene.findings() << " loop-hygiene violations (" << counts << ")\n";
  return 1;
}
