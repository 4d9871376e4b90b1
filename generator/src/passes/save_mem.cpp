// save-mem: a scan output read only at constant positions keeps only the rows it needs.
//
// Matches: a scan output whose every use is an indexing at a constant first index, e.g.
// `acc[-1]` or `x[7]`, or a slice of its last rows at constant negative bounds, `x[-2:]` or
// `x[-3:-1]` (what the gradient of a scan reads of the backward scan's carried sums); the output
// itself is not returned, passed on or measured with len.
// Produces: with only negative indices -j, a window of the last max(j) rows (a ring buffer of
// that many rows, beside the rows the state's taps need); for a state's output nothing reads (the
// state is only needed inside the loop, e.g. a gradient's carried cotangent), a window of one row;
// with only non-negative indices, the
// scan runs at most max(index) + 1 steps (`x[7]` of a 10-step scan runs 8), when every output
// of the scan that is used is read that way.
// Correct with `until` (the rows kept are the last ones taken, or the scan stops earlier
// anyway), `reverse` (rows are in iteration order) and zero steps (the output has no rows, so an
// index is out of range exactly as before).
// Must not fire on: an output used as a whole, or through a computed index; the step count is not
// cut when a later step could fail or a sequence may be too short for `steps` (the error of a step
// not taken would vanish). An associative scan (parallel-scan) keeps a window of one row only: its
// helper writes every row or the last one.
#include <unordered_map>

#include "ir/mutator.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Value;

struct Decision {
  std::map<std::string, int64_t> windows;
  std::optional<int64_t> max_steps;
};

// Non-negative constant positions read (for a prefix) or last rows read (for a window), or
// nothing when some use is not a constant indexing.
struct Reads {
  bool constant_only = true;
  int64_t prefix = 0;  // max index + 1 of the non-negative ones
  int64_t suffix = 0;  // max j of the negative ones, -j
};

class SaveMem : public ir::Mutator {
 public:
  SaveMem(const ir::Graph& g, PassContext& context) : context_(context) {
    std::unordered_map<Value, Reads, ir::ValueHash> reads;
    for (const Value& r : g.results) reads[r].constant_only = false;
    for (const ir::Node* n : ir::topological_order(g)) {
      for (int i = 0; i < n->num_inputs(); ++i) {
        const Value& in = n->input(i);
        if (!in.node->as<ir::ScanNode>()) continue;
        Reads& r = reads[in];
        const auto* idx = n->as<ir::IndexNode>();
        std::optional<int64_t> last = idx && i == 0 ? last_rows_sliced(*idx) : std::nullopt;
        auto c = !last && idx && i == 0 && !idx->specs().empty() && idx->specs()[0].kind == ir::IndexSpec::Kind::Scalar
                     ? ir::constant_value(n->input(1))
                     : std::nullopt;
        if (last) {
          r.suffix = std::max(r.suffix, *last);
        } else if (!c) {
          r.constant_only = false;
        } else if (c->i < 0) {
          r.suffix = std::max(r.suffix, -c->i);
        } else {
          r.prefix = std::max(r.prefix, c->i + 1);
        }
      }
    }
    for (const ir::Node* n : ir::topological_order(g)) {
      const auto* scan = n->as<ir::ScanNode>();
      if (!scan) continue;
      Decision d;
      bool every_used_output_reads_a_prefix = true;
      int64_t prefix = 0;
      bool any_used = false;
      for (int i = 0; i < scan->num_outputs(); ++i) {
        auto it = reads.find(scan->output(i));
        if (it == reads.end()) {  // unused: a state keeps only the row it needs
          if (i < int(scan->info().states.size()) && scan->info().window(i) == 0)
            d.windows[scan->info().output_name(i)] = 1;
          continue;
        }
        any_used = true;
        const Reads& r = it->second;
        // An associative scan's helper writes every row or only the last (parallel-scan).
        bool window = r.constant_only && r.suffix > 0 && r.prefix == 0 && (!scan->info().assoc || r.suffix == 1);
        if (window && scan->info().window(i) != r.suffix) d.windows[scan->info().output_name(i)] = r.suffix;
        if (!(r.constant_only && r.prefix > 0 && r.suffix == 0)) every_used_output_reads_a_prefix = false;
        prefix = std::max(prefix, r.prefix);
      }
      // Steps not taken must not take their errors with them: a step that can fail, or a sequence
      // too short for the `steps` asked for, keeps the count.
      if (any_used && every_used_output_reads_a_prefix && !already_cut(*scan, prefix) &&
          !sequences_may_be_too_short(*scan) && !step_can_fail(*scan))
        d.max_steps = prefix;
      if (!d.windows.empty() || d.max_steps) decisions_.emplace(scan, d);
    }
  }

 protected:
  std::vector<Value> visit_Scan(const ir::ScanNode& n, std::vector<Value> inputs) override {
    auto it = decisions_.find(&n);
    if (it == decisions_.end()) return keep_or_rebuild(n, std::move(inputs));
    const Decision& d = it->second;
    ir::ScanInfo info = n.info();
    for (const auto& [name, rows] : d.windows) info.windows[name] = rows;
    context_.fired(int(d.windows.size()));
    if (d.max_steps) {
      // At most max_steps steps: min(steps, K), with the implicit count made explicit.
      Value cap = builder.int_constant(*d.max_steps, n.loc());
      if (info.has_steps) {
        inputs[size_t(info.steps_input())] = builder.binary(ir::BinaryOp::Min, inputs[size_t(info.steps_input())], cap, n.loc());
      } else {
        Value steps;
        for (size_t s = 0; s < info.sequences.size(); ++s) {
          const Value& u = inputs[size_t(info.sequence_input(int(s)))];
          Value allowed = builder.binary(
              ir::BinaryOp::Max,
              builder.binary(ir::BinaryOp::Sub, builder.dim_size(u, 0, n.loc()),
                             builder.int_constant(info.sequences[s].span(), n.loc()), n.loc()),
              builder.int_constant(0, n.loc()), n.loc());
          steps = steps ? builder.binary(ir::BinaryOp::Min, steps, allowed, n.loc()) : allowed;
        }
        inputs.insert(inputs.begin(), builder.binary(ir::BinaryOp::Min, steps, cap, n.loc()));
        info.has_steps = true;
      }
      context_.fired();
    }
    std::optional<ir::Dim> steps;
    if (d.max_steps) steps = ir::Dim::fresh_unknown();
    ir::NodeRef scan = builder.rebuild_scan(n, std::move(inputs), std::move(info), n.body_ptr(), steps);
    // The outputs have other shapes now: a new static number of rows.
    std::vector<Value> outs;
    for (int i = 0; i < scan->num_outputs(); ++i) outs.push_back(scan->output(i));
    return outs;
  }

 private:
  // j for x[-j:] or x[-j:-i] (constant bounds, 0 < i < j): rows among the last j, also when x has
  // fewer rows (the slice is clamped the same way with and without a window of j rows).
  static std::optional<int64_t> last_rows_sliced(const ir::IndexNode& n) {
    const ir::IndexSpec& s = n.specs()[0];
    if (s.kind != ir::IndexSpec::Kind::Slice || !s.has_lo) return std::nullopt;
    auto lo = ir::constant_value(n.input(1));
    if (!lo || lo->i >= 0) return std::nullopt;
    if (s.has_hi) {
      auto hi = ir::constant_value(n.input(2));
      if (!hi || hi->i >= 0 || hi->i <= lo->i) return std::nullopt;
    }
    return -lo->i;
  }

  // The scan already runs at most `prefix` steps (this pass ran before).
  static bool already_cut(const ir::ScanNode& n, int64_t prefix) {
    if (!n.info().has_steps) return false;
    const auto* min = n.input(n.info().steps_input()).node->as<ir::BinaryNode>();
    if (!min || min->op() != ir::BinaryOp::Min) return false;
    auto c = ir::constant_value(min->input(1));
    return c && c->i <= prefix;
  }

  PassContext& context_;
  std::unordered_map<const ir::ScanNode*, Decision> decisions_;
};

}  // namespace

ir::Program run_save_mem(const ir::Program& program, PassContext& context) {
  return rewrite_graphs(program, [&](const ir::Graph& g) {
    SaveMem pass(g, context);
    return pass.mutate(g);
  });
}

}  // namespace scangen::passes
