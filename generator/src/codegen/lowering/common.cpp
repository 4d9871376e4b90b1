#include "codegen/lowering/common.h"

#include "support/check.h"

namespace scangen::codegen::lowering {

std::string dtype_text(DType d) { return std::string(dtype_name(d)); }

// Message parts that print a shape: "[", d0, ", ", d1, "]".
std::vector<MessagePart> shape_parts(const std::vector<ExprRef>& dims) {
  std::vector<MessagePart> parts{{"[", nullptr}};
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) parts.push_back({", ", nullptr});
    parts.push_back({"", dims[i]});
  }
  parts.push_back({"]", nullptr});
  return parts;
}

std::vector<MessagePart> typed_shape_parts(DType d, const std::vector<ExprRef>& dims) {
  std::vector<MessagePart> parts{{dtype_text(d), nullptr}};
  if (!dims.empty()) {
    auto s = shape_parts(dims);
    parts.insert(parts.end(), s.begin(), s.end());
  }
  return parts;
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
    case NodeKind::StopGradient:
    case NodeKind::Scan: return false;
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}
}  // namespace scangen::codegen::lowering
