// Formatting of the random programs' values and arguments (random_programs.h). The generator
// itself is in generator.h and the gen_*.cpp files.
#include "random_programs.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace scangen::equivalence {

std::string rename_function(const std::string& text, const std::string& old_name, const std::string& new_name) {
  std::string from = "fn " + old_name + "(";
  size_t at = text.find(from);
  if (at == std::string::npos) throw std::invalid_argument("rename_function: no function '" + old_name + "'");
  return text.substr(0, at) + "fn " + new_name + "(" + text.substr(at + from.size());
}

namespace {

void format_elements(std::ostringstream& os, const HostTensor& t, size_t axis, int64_t& flat) {
  if (axis == t.shape().size()) {
    char buf[64];
    switch (t.dtype()) {
      case DType::F32: std::snprintf(buf, sizeof buf, "%.9g", double(t.data<float>()[flat])); break;
      case DType::F64: std::snprintf(buf, sizeof buf, "%.17g", t.data<double>()[flat]); break;
      case DType::Bool: std::snprintf(buf, sizeof buf, "%s", t.data<bool>()[flat] ? "true" : "false"); break;
      default: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.get_as_int64(flat))); break;
    }
    os << buf;
    ++flat;
    return;
  }
  os << "[";
  for (int64_t i = 0; i < t.shape()[axis]; ++i) {
    if (i) os << ",";
    format_elements(os, t, axis + 1, flat);
  }
  os << "]";
}

}  // namespace

std::string format_tensor(const HostTensor& t) {
  std::ostringstream v;
  int64_t flat = 0;
  format_elements(v, t, 0, flat);
  return v.str();
}

std::string format_arguments(const std::vector<std::string>& names, const std::vector<HostTensor>& args) {
  std::ostringstream os;
  for (size_t i = 0; i < args.size(); ++i) {
    const HostTensor& t = args[i];
    os << (i ? " " : "") << (i < names.size() ? names[i] : "arg" + std::to_string(i)) << "=";
    // JSON cannot give the inner sizes of an empty array of rank 2 or more ("[]").
    if (t.rank() >= 2 && t.numel() == 0) {
      os << "<zeros " << dtype_name(t.dtype()) << shape_to_string(t.shape()) << ">";
      continue;
    }
    std::string s = format_tensor(t);
    os << (t.rank() > 0 ? "'" + s + "'" : s);
  }
  return os.str();
}

}  // namespace scangen::equivalence

