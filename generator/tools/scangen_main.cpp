// Temporary driver while the pipeline is assembled.
#include <iostream>

#include "frontend/parser.h"
#include "scangen/runtime/errors.h"
#include "frontend/sema.h"
#include "ir/printer.h"
#include "ir/verifier.h"

int main(int argc, char** argv) {
  using namespace scangen;
  if (argc < 3) return 2;
  std::string cmd = argv[1];
  SourceManager sm;
  DiagnosticEngine diags(sm);
  try {
    int id = sm.load(argv[2]);
    ast::Module m = parse_file(sm, id, diags);
    std::optional<ir::Program> p;
    if (!diags.has_errors()) p = analyze(m, sm, diags);
    diags.print_all(std::cerr);
    if (!p) return 1;
    ir::verify(*p);
    if (cmd == "ir") std::cout << ir::print_program(*p);
    return 0;
  } catch (const InternalError& e) {
    std::cerr << "scangen: internal error: " << e.what() << "\n";
    return 70;
  } catch (const RuntimeError& e) {
    std::cerr << "scangen: error: " << e.what() << "\n";
    return 1;
  }
}
