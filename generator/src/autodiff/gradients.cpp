#include "autodiff/gradients.h"

#include "autodiff/context.h"
#include "autodiff/tensor_ops.h"
#include "ir/mutator.h"
#include "support/check.h"

namespace scangen::autodiff {

std::vector<ir::Value> gradients(ir::Builder& builder, const ir::Value& cost, const std::vector<ir::Value>& wrt,
                                 Loc loc) {
  SCANGEN_CHECK(cost.type().is_scalar() && is_float(cost.type().dtype), "grad of a float scalar");
  AdjointContext ctx{builder, loc, nullptr};
  std::vector<ir::Value> grads = backprop(ctx, {{cost, scalar(ctx, cost.type().dtype, 1)}}, wrt);
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i]) grads[i] = zeros_like(ctx, wrt[i]);  // w does not change the cost
  return grads;
}

namespace {

class StopGradientStripper : public ir::Mutator {
 protected:
  std::vector<ir::Value> visit_StopGradient(const ir::StopGradientNode&, std::vector<ir::Value> inputs) override {
    return {inputs[0]};
  }
  std::vector<ir::Value> visit_Scan(const ir::ScanNode& n, std::vector<ir::Value> inputs) override {
    StopGradientStripper inner;
    auto body = std::make_shared<ir::Graph>(inner.mutate(n.body()));
    if (body->results == n.body().results) return keep_or_rebuild(n, std::move(inputs));
    ir::NodeRef node = builder.rebuild_scan(n, std::move(inputs), n.info(), body);
    std::vector<ir::Value> outs;
    for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(node->output(i));
    return outs;
  }
};

}  // namespace

void strip_stop_gradients(ir::Function& f) {
  StopGradientStripper stripper;
  f.graph = stripper.mutate(f.graph);
}

}  // namespace scangen::autodiff
