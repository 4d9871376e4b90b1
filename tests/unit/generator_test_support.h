// Helpers shared by the generator's unit tests: compile a .scan text held in a string, collect its
// diagnostics as "LINE:COL: severity: message" lines, run a function with the interpreter, and
// read host tensors back as vectors.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "interpreter/interpreter.h"
#include "ir/ir.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/tensor.h"

namespace scangen::testing {

inline const char* severity_word(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "?";
}

// The program as the frontend builds it: no rewrites (they have their own tests, tests/passes).
inline driver::Compilation analyzed(const std::string& text) {
  driver::Compilation c = driver::Compilation::of_text("test.scan", text, driver::at_level(0));
  c.reach(driver::Stage::Rewritten);
  return c;
}

// Compiles `text`; fails the current test (and returns an empty program) when it has errors.
inline ir::Program compile(const std::string& text) {
  driver::Compilation c = analyzed(text);
  if (c.diagnostics().has_errors()) {
    BOOST_ERROR("the program does not compile:\n" << c.rendered_diagnostics() << "\nprogram:\n" << text);
    return ir::Program{};
  }
  return c.program();
}

// The diagnostics of `text` as "LINE:COL: error: message" lines, notes included (each after its
// error, as "LINE:COL: note: message"). Empty when it compiles.
inline std::vector<std::string> diagnostics(const std::string& text) {
  driver::Compilation d = analyzed(text);
  const bool compiled = !d.diagnostics().has_errors();
  std::vector<std::string> out;
  for (const Diagnostic& diag : d.diagnostics().diagnostics()) {
    out.push_back(std::to_string(diag.loc.line) + ":" + std::to_string(diag.loc.col) + ": " +
                  severity_word(diag.severity) + ": " + diag.message);
    for (const Diagnostic::Note& n : diag.notes)
      out.push_back(std::to_string(n.loc.line) + ":" + std::to_string(n.loc.col) + ": note: " + n.message);
  }
  if (compiled && !out.empty()) out.push_back("(the program compiled anyway)");
  return out;
}

// The errors only (no notes).
inline std::vector<std::string> errors(const std::string& text) {
  std::vector<std::string> all = diagnostics(text), out;
  for (const std::string& s : all)
    if (s.find(": note: ") == std::string::npos) out.push_back(s);
  return out;
}

// The first error of `text`, or "" when it compiles.
inline std::string first_error(const std::string& text) {
  std::vector<std::string> e = errors(text);
  return e.empty() ? std::string() : e.front();
}

// Compiles `text` and runs its first function (or `fn`) with the interpreter.
inline std::vector<HostTensor> run(const std::string& text, const std::vector<HostTensor>& args,
                                   const std::string& fn = "") {
  ir::Program p = compile(text);
  if (p.functions.empty()) throw std::runtime_error("no program to run");
  const ir::Function* f = fn.empty() ? &p.functions.front() : p.find(fn);
  if (!f) throw std::runtime_error("no function " + fn);
  return interp::Interpreter().run(*f, args);
}

// The run-time error of running `text` as "LINE:COL: message" ("0:0: message" without a
// location), or "no error".
inline std::string run_error(const std::string& text, const std::vector<HostTensor>& args,
                             const std::string& fn = "") {
  try {
    run(text, args, fn);
  } catch (const RuntimeError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
  }
  return "no error";
}

template <class T> std::vector<T> values(const HostTensor& t) {
  BOOST_TEST_REQUIRE((t.dtype() == dtype_of<T>()), "dtype is " << dtype_name(t.dtype()));
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

template <class T> HostTensor vec(std::vector<T> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return HostTensor::from_vector<T>(v, {n});
}

template <class T> HostTensor mat(std::vector<T> v, int64_t rows, int64_t cols) {
  return HostTensor::from_vector<T>(v, {rows, cols});
}

template <class T> HostTensor scalar(T v) { return HostTensor::scalar<T>(v); }

// The first scan node reachable from the results of `f`'s graph (not inside scan bodies).
inline const ir::ScanNode* first_scan(const ir::Graph& g) {
  for (const ir::Node* n : ir::topological_order(g))
    if (const auto* s = n->as<ir::ScanNode>()) return s;
  return nullptr;
}

}  // namespace scangen::testing
