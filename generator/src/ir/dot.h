// A Graphviz (DOT) picture of the IR (`scangen ir --format dot`), to look at a loop before and
// after the rewrites: `scangen ir --format dot f.scan | dot -Tsvg > f.svg`.
//
// One `digraph` per program; each function is a `subgraph cluster_f<i>` holding its parameters
// (ellipses), its nodes (boxes labelled as the text printer prints them, "%5: f32[n]\nmul %4, %A",
// with the same value names, so the picture and `scangen ir` correspond), edges from operands to
// users (labelled with the operand position when a node has several) and its results (double
// ellipses). A scan node shows its options (steps, reverse, until, sequences with taps, states
// with lags, params) and one port per result (states blue, per-step outputs green); its step graph
// is a nested `subgraph cluster_scan_f<i>_<id>` labelled "scan at LINE:COL", holding the body's
// params (the index, the sequence taps "%u[t-2]", the state taps "%acc[t-1]", the params), its
// nodes and a `yield` node with one port per body result (the until flag last). Dashed edges go
// from the scan's outer inputs to the matching body params, and from each yield port back to the
// scan node, labelled with the output's name; users of a scan output leave from its port. Nested
// scans nest their clusters. Labels are escaped (quoted strings, HTML-like tables for scans and
// yields), so `dot -Tsvg` accepts any program.
//
// Node ids are "f<function>_n<value number>" (params "..._p<i>", a scan's body params
// "f<function>_s<scan number>_p<i>", its yield "f<function>_s<scan number>_yield"): the output
// is the same text for the same program, whatever the addresses of its nodes.
#pragma once

#include <string>

#include "ir/ir.h"

namespace scangen::ir {

std::string print_dot(const Program& p);
// One function on its own, as a digraph holding its cluster.
std::string print_dot(const Function& f);

}  // namespace scangen::ir
