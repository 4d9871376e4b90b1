#include "ir/prune.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "ir/mutator.h"

namespace scangen::ir {
namespace {

// The body params (by index) that the given body results reach.
std::set<int> params_reached(const std::vector<Value>& results) {
  Graph g;
  g.results = results;
  std::set<int> reached;
  for (const Node* n : topological_order(g))
    if (const auto* p = n->as<ParamNode>()) reached.insert(p->index());
  return reached;
}

class DeadOutputPruner : public Mutator {
 public:
  explicit DeadOutputPruner(const Graph& g) {
    for (const Node* n : topological_order(g))
      for (const Value& in : n->inputs()) used_.insert({in.node.get(), in.index});
    for (const Value& r : g.results) used_.insert({r.node.get(), r.index});
  }

 protected:
  std::vector<Value> visit_Scan(const ScanNode& n, std::vector<Value> inputs) override {
    const ScanInfo& info = n.info();
    const Graph& body = n.body();
    int num_states = int(info.states.size());
    std::vector<bool> keep(size_t(info.num_outputs()), false);
    for (int i = 0; i < info.num_outputs(); ++i) keep[size_t(i)] = used_.count({&n, i}) > 0;
    // States needed by what is kept (and by the until condition), to a fixpoint.
    while (true) {
      std::vector<Value> live;
      for (int i = 0; i < info.num_outputs(); ++i)
        if (keep[size_t(i)]) live.push_back(body.results[size_t(i)]);
      if (info.has_until) live.push_back(body.results.back());
      std::set<int> reached = params_reached(live);
      bool grew = false;
      for (int s = 0; s < num_states; ++s) {
        if (keep[size_t(s)]) continue;
        for (size_t k = 0; k < info.states[size_t(s)].lags.size(); ++k)
          if (reached.count(info.body_state_param(s, int(k)))) {
            keep[size_t(s)] = true;
            grew = true;
            break;
          }
      }
      if (!grew) break;
    }

    // The body, pruned recursively (its nested scans), with only the kept results.
    std::vector<Value> kept_results;
    for (int i = 0; i < info.num_outputs(); ++i)
      if (keep[size_t(i)]) kept_results.push_back(body.results[size_t(i)]);
    if (info.has_until) kept_results.push_back(body.results.back());
    Graph kept_body;
    kept_body.params = body.params;
    kept_body.results = kept_results;
    Graph pruned_body = prune_dead_scan_outputs(kept_body);

    // Parameters only removed outputs read are not computed either (sequences stay: their
    // lengths decide the number of steps).
    std::set<int> still_read = params_reached(pruned_body.results);
    std::vector<bool> keep_param(size_t(info.num_params));
    for (int p = 0; p < info.num_params; ++p) keep_param[size_t(p)] = still_read.count(info.body_param(p)) > 0;

    bool all_kept = std::all_of(keep.begin(), keep.end(), [](bool b) { return b; }) &&
                    std::all_of(keep_param.begin(), keep_param.end(), [](bool b) { return b; });
    if (all_kept && pruned_body.results == body.results) return keep_or_rebuild(n, std::move(inputs));

    // New layout: drop the inits and lag params of removed states.
    ScanInfo new_info = info;
    new_info.states.clear();
    new_info.outputs.clear();
    std::vector<Value> new_inputs;
    if (info.has_steps) new_inputs.push_back(inputs[size_t(info.steps_input())]);
    for (size_t s = 0; s < info.sequences.size(); ++s) new_inputs.push_back(inputs[size_t(info.sequence_input(int(s)))]);
    for (int s = 0; s < num_states; ++s)
      if (keep[size_t(s)]) {
        new_info.states.push_back(info.states[size_t(s)]);
        new_inputs.push_back(inputs[size_t(info.init_input(s))]);
      }
    for (size_t o = 0; o < info.outputs.size(); ++o)
      if (keep[size_t(num_states) + o]) new_info.outputs.push_back(info.outputs[o]);
    // A removed output or state keeps no window (save-mem gave one to an output read only at
    // [-1]; a later rewrite can leave nothing reading it).
    for (int i = 0; i < info.num_outputs(); ++i)
      if (!keep[size_t(i)]) new_info.windows.erase(info.output_name(i));
    new_info.num_params = 0;
    for (int p = 0; p < info.num_params; ++p)
      if (keep_param[size_t(p)]) {
        new_inputs.push_back(inputs[size_t(info.param_input(p))]);
        ++new_info.num_params;
      }

    // Renumber the body params: the old ones of kept things map to new ones.
    std::vector<Value> replacement(body.params.size());
    Graph new_body;
    auto add_param = [&](int old_index) {
      const auto* p = body.params[size_t(old_index)].node->as<ParamNode>();
      Value np = builder.param(p->output_types()[0], int(new_body.params.size()), p->name(), p->loc());
      new_body.params.push_back(np);
      replacement[size_t(old_index)] = np;
    };
    add_param(info.body_index_param());
    for (size_t s = 0; s < info.sequences.size(); ++s)
      for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) add_param(info.body_sequence_param(int(s), int(k)));
    for (int s = 0; s < num_states; ++s)
      if (keep[size_t(s)])
        for (size_t k = 0; k < info.states[size_t(s)].lags.size(); ++k) add_param(info.body_state_param(s, int(k)));
    for (int p = 0; p < info.num_params; ++p)
      if (keep_param[size_t(p)]) add_param(info.body_param(p));
    new_body.results = substitute_params(replacement, pruned_body.results);

    NodeRef scan = builder.rebuild_scan(n, std::move(new_inputs), std::move(new_info),
                                        std::make_shared<const Graph>(std::move(new_body)));
    std::vector<Value> outs(size_t(info.num_outputs()));
    int next = 0;
    for (int i = 0; i < info.num_outputs(); ++i)
      if (keep[size_t(i)]) outs[size_t(i)] = scan->output(next++);
    // Removed outputs have no users; give them a placeholder that is never read.
    for (auto& o : outs)
      if (!o) o = scan->num_outputs() > 0 ? scan->output(0) : Value();
    return outs;
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<const Node*, int>& p) const {
      return std::hash<const void*>()(p.first) * 31 + size_t(p.second);
    }
  };
  std::unordered_set<std::pair<const Node*, int>, PairHash> used_;
};

}  // namespace

Graph prune_dead_scan_outputs(const Graph& g) {
  // To a fixpoint: a state removed from a later scan may leave an output of an earlier one (its
  // init) unused.
  Graph current = g;
  for (;;) {
    DeadOutputPruner p(current);
    Graph next = p.mutate(current);
    if (next.results == current.results) return next;
    current = std::move(next);
  }
}

}  // namespace scangen::ir
