#include "codegen/lowering/common.h"

#include "support/check.h"

namespace scangen::codegen::lowering {

std::string dtype_text(DType d) { return std::string(dtype_name(d)); }

namespace {

struct PartsSink {
  std::vector<MessagePart> parts;
  void text(const std::string& t) {
    if (!parts.empty() && !parts.back().value) parts.back().text += t;
    else parts.push_back({t, nullptr});
  }
  void value(const ExprRef& v) {
    if (std::optional<int64_t> c = lir::const_int(v)) return text(std::to_string(*c));
    parts.push_back({"", v});
  }
};

}  // namespace

std::vector<MessagePart> message(RuntimeErrorId id, const std::vector<ErrorArg>& args) {
  PartsSink sink;
  ir::format_runtime_error(id, args, sink);
  return sink.parts;
}

// Operations computed element by element from their operands (fused into loops over their elements).
bool computes_elementwise(NodeKind k) {
  switch (k) {
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Cast:
    case NodeKind::Call:
    case NodeKind::Fill:
    case NodeKind::Arange: return true;
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::DimSize:
    case NodeKind::Reduce:
    case NodeKind::MatMul:
    case NodeKind::Index:
    case NodeKind::Update:
    case NodeKind::CheckShape:
    case NodeKind::Reshape:
    case NodeKind::Transpose:
    case NodeKind::Gather:
    case NodeKind::ScatterAdd:
    case NodeKind::ArgReduce:
    case NodeKind::TopK:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::StopGradient:
    case NodeKind::Scan: return false;
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}
}  // namespace scangen::codegen::lowering
