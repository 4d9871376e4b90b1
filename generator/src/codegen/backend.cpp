#include "codegen/backend.h"

#include "codegen/lir_passes.h"
#include "codegen/lower.h"
#include "support/check.h"
#include "support/large_stack.h"

namespace scangen::codegen {

const Backend& cpu_backend();
const Backend& cuda_backend();

namespace {

std::vector<const Backend*> registry() { return {&cpu_backend(), &cuda_backend()}; }

}  // namespace

const Backend* find_backend(const std::string& name) {
  for (const Backend* b : registry())
    if (name == b->name()) return b;
  return nullptr;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Backend* b : registry()) names.push_back(b->name());
  return names;
}

std::vector<EmittedFile> generate(const ir::Program& program, const std::string& backend, const EmitOptions& options) {
  const Backend* b = find_backend(backend);
  SCANGEN_CHECK(b != nullptr, "unknown backend " + backend);
  SCANGEN_CHECK(options.fp_mode == FpMode::Strict || backend == "cpu", "fast floating-point mode for the " + backend + " backend");
  LirPipelineOptions lowering;
  lowering.fp_mode = options.fp_mode;
  return with_large_stack([&] { return b->emit(program, lower_program(program, lowering), options); });
}

}  // namespace scangen::codegen
