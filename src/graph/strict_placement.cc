// PDK_STRICT=1 (see strict_placement.h): guards CPU-placed compute ops of a
// graph that runs on PDK with a failing _PdkStrictFallback node.
#include "graph/strict_placement.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "graph/graph_view.h"
#include "kernels/tensorflow_default_kernels.h"
#include "pdk/env.h"
#include "pdk/kernel.h"
#include "pdk/tf/op.h"
#include "pdk/types.h"

namespace pdk_graph {
// A C++ stand-in for a dtype, for KernelDef::Type (no data is ever read).
template <TF_DataType DT>
struct DtypeTag {};
}  // namespace pdk_graph

namespace pdk {
template <TF_DataType DT>
struct DataTypeOf<pdk_graph::DtypeTag<DT>> {
  static constexpr TF_DataType value = DT;
};
}  // namespace pdk

namespace pdk_graph {
namespace {

constexpr char kFallbackOp[] = "_PdkStrictFallback";
constexpr char kGuardSuffix[] = "/_pdk_strict";

// "T=float32, Tidx=int32" for the type attributes a node carries.
std::string NodeTypes(const NodeDef& n) {
  std::string out;
  for (const auto& [key, value] : n.attr) {
    int dt = DT_INVALID;
    if (!value.GetType(&dt) || dt == DT_INVALID) continue;
    out += (out.empty() ? "" : ", ") + key + "=" +
           pdk::DataTypeName(static_cast<TF_DataType>(dt));
  }
  return out;
}

// "T in [float32, float64]" per type attribute PDK constrains for `op`, or
// "" if PDK registers no kernel for it.
std::string SupportedTypes(const std::string& op) {
  std::map<std::string, std::set<std::string>> by_attr;
  bool any = false;
  for (const auto& k : pdk::KernelRegistry::Global().registered()) {
    if (k.op != op) continue;
    any = true;
    for (const auto& [attr, dt] : k.type_constraints) by_attr[attr].insert(pdk::DataTypeName(dt));
  }
  if (!any) return "";
  if (by_attr.empty()) return "(no type constraints)";
  std::string out;
  for (const auto& [attr, types] : by_attr) {
    out += (out.empty() ? "" : ", ") + attr + " in [";
    bool first = true;
    for (const auto& t : types) {
      out += (first ? "" : ", ") + t;
      first = false;
    }
    out += "]";
  }
  return out;
}

std::string Message(const NodeDef& n) {
  std::string types = NodeTypes(n);
  std::string msg = "PDK_STRICT=1: node '" + n.name + "' (op " + n.op +
                    (types.empty() ? "" : ", " + types) + ") was placed on CPU, not PDK: ";
  std::string supported = SupportedTypes(n.op);
  if (supported.empty()) {
    msg += "PDK registers no kernel for op " + n.op + ".";
  } else {
    msg += "PDK registers " + n.op + " for " + supported + " only.";
  }
  msg += " Unset PDK_STRICT to let TensorFlow run it on the CPU.";
  return msg;
}

// The kernel of _PdkStrictFallback, registered for the CPU: fails with `message`.
class StrictFallbackOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    std::string message;
    PDK_RETURN_IF_ERROR(a.Get("message", &message));
    message_ = std::move(message);
    return pdk::Status::OK();
  }
  pdk::Status Compute(pdk::Context&) const { return pdk::InvalidArgument(message_); }

 private:
  std::string message_;
};

// The kernel registered under PDK_STRICT=1 for each dtype PDK lacks of an op
// it implements (RegisterStrictTypeGuards): fails naming op, dtype and PDK's dtypes.
class StrictMissingTypeOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("T", &dtype_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    return pdk::InvalidArgument("PDK_STRICT=1: PDK has no ", ctx.op(), " kernel for T=",
                                pdk::DataTypeName(dtype_), "; PDK registers ", ctx.op(), " for ",
                                SupportedTypes(ctx.op()),
                                " only. Unset PDK_STRICT to let TensorFlow run it on the CPU.");
  }

 private:
  TF_DataType dtype_ = TF_FLOAT;
};

}  // namespace

bool IsComputeOp(std::string_view op) {
  static const std::unordered_set<std::string_view> kNonCompute = {
      "_Arg", "_Retval", "_DeviceArg", "_DeviceRetval", "_Send", "_Recv", "_HostSend",
      "_HostRecv", "Const", "HostConst", "NoOp", "Placeholder", "VarHandleOp",
      "VarIsInitializedOp", "DestroyResourceOp",
      // metadata: shape only, no data read
      "Shape", "ShapeN", "Size", "Rank",
      // PDK_STRICT's own guard
      kFallbackOp,
  };
  if (kNonCompute.count(op)) return false;
  // Input pipeline (tf.data): datasets, iterators, optionals run on the host by design.
  if (op.find("Dataset") != std::string_view::npos) return false;
  for (std::string_view prefix :
       {"Iterator", "AnonymousIterator", "MakeIterator", "DeleteIterator", "Optional"})
    if (op.substr(0, prefix.size()) == prefix) return false;
  return true;
}

bool StrictEnabled() { return pdk::env::Flag("PDK_STRICT", false); }

bool GuardWithFailure(NodeDef* guarded, const std::string& cpu_device,
                      const std::string& message, std::vector<NodeDef>* guards) {
  const std::string guard = guarded->name + kGuardSuffix;
  for (const std::string& in : guarded->input)
    if (in == "^" + guard) return false;  // guarded by an earlier pass
  NodeDef g;
  g.name = guard;
  g.op = kFallbackOp;
  g.device = cpu_device;
  g.attr["message"] = AttrValue::String(message);
  // The guard runs after the guarded node's first input, so it belongs to
  // the same while-loop frame: a node of a loop body with a control input
  // from outside the loop is an invalid graph ("has inputs from different
  // frames").
  if (!guarded->input.empty()) {
    const TensorRef first = ParseInput(guarded->input.front());
    g.input.push_back("^" + first.node);
  }
  guarded->input.push_back("^" + guard);
  guards->push_back(std::move(g));
  return true;
}

std::string CpuDeviceOf(const std::string& device) {
  const std::string type = DeviceTypeOf(device);
  const size_t at = type.empty() ? std::string::npos : device.rfind(type + ":");
  if (at == std::string::npos) return "/device:CPU:0";
  return device.substr(0, at) + "CPU:0";
}

int EnforceStrictPlacement(GraphDef* graph, const std::string& device_type, bool report) {
  bool on_pdk = false;
  for (const NodeDef& n : graph->node)
    on_pdk = on_pdk || (DeviceTypeOf(n.device) == device_type && IsComputeOp(n.op));
  if (!on_pdk) return 0;
  // A forwarding op passing on host values (placed beside its CPU inputs,
  // e.g. a cond's Switch and Identity of a tf.data batch) computes nothing on
  // anyone's behalf.
  std::unordered_map<std::string, const std::string*> device_of;
  for (const NodeDef& n : graph->node) device_of.emplace(n.name, &n.device);
  auto forwards_host_values = [&](const NodeDef& n) {
    static const std::unordered_set<std::string_view> kForwarding = {
        "Identity", "IdentityN", "Switch", "Merge", "Enter", "Exit", "NextIteration"};
    if (!kForwarding.count(n.op)) return false;
    int slot = 0;
    for (const std::string& in : n.input) {
      if (!in.empty() && in[0] == '^') continue;
      if (n.op == "Switch" && slot++ == 1) continue;  // the predicate
      auto it = device_of.find(ParseInput(in).node);
      if (it == device_of.end() || DeviceTypeOf(*it->second) != "CPU") return false;
    }
    return true;
  };
  // A read or an assignment of a variable that lives on the CPU runs where
  // the variable is. TensorFlow has no DEVICE_DEFAULT VarHandleOp for int32
  // (int32 is host memory by design), so every int32 variable lives on the
  // CPU, e.g. the int32 placeholder slots Keras's Adafactor creates.
  auto uses_host_variable = [&](const NodeDef& n) {
    static const std::unordered_set<std::string_view> kVariableOps = {
        "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"};
    if (!kVariableOps.count(n.op) || n.input.empty() || n.input[0][0] == '^') return false;
    auto it = device_of.find(ParseInput(n.input[0]).node);
    return it != device_of.end() && DeviceTypeOf(*it->second) == "CPU";
  };
  std::vector<NodeDef> guards;
  for (NodeDef& n : graph->node) {
    if (DeviceTypeOf(n.device) != "CPU" || !IsComputeOp(n.op) || forwards_host_values(n) ||
        uses_host_variable(n))
      continue;
    if (GuardWithFailure(&n, n.device, Message(n), &guards) && report)
      std::fprintf(stderr, "PDK graph: %s\n", Message(n).c_str());
  }
  const int count = static_cast<int>(guards.size());
  for (NodeDef& g : guards) graph->node.push_back(std::move(g));
  return count;
}

int RegisterStrictTypeGuards(const char* device_type) {
  std::map<std::string, std::set<TF_DataType>> ops;  // op -> PDK's T types
  std::set<std::string> other;                       // ops with other type constraints
  for (const auto& k : pdk::KernelRegistry::Global().registered()) {
    if (k.type_constraints.size() == 1 && k.type_constraints[0].first == "T") {
      ops[k.op].insert(k.type_constraints[0].second);
    } else {
      other.insert(k.op);
    }
  }
  int count = 0;
  for (const auto& [op, have] : ops) {
    if (other.count(op)) continue;
    pdk::ForEachType(
        pdk::TypeList<DtypeTag<TF_FLOAT>, DtypeTag<TF_DOUBLE>, DtypeTag<TF_HALF>,
                      DtypeTag<TF_BFLOAT16>, DtypeTag<TF_INT8>, DtypeTag<TF_INT16>,
                      DtypeTag<TF_INT32>, DtypeTag<TF_INT64>, DtypeTag<TF_UINT8>,
                      DtypeTag<TF_UINT16>, DtypeTag<TF_UINT32>, DtypeTag<TF_UINT64>,
                      DtypeTag<TF_COMPLEX64>, DtypeTag<TF_COMPLEX128>, DtypeTag<TF_BOOL>>{},
        [&](auto t) {
          using T = typename decltype(t)::type;
          if (have.count(pdk::kDataType<T>)) return;
          // TensorFlow's own DEVICE_DEFAULT kernel runs it on PDK: no guard.
          if (pdk_kernels::LeftToTensorFlowDefault(op, pdk::kDataType<T>)) return;
          pdk::Status st = pdk::KernelDef<StrictMissingTypeOp>(op).Type("T", t).Register(device_type);
          if (st.ok()) {
            ++count;
          } else {
            std::fprintf(stderr, "PDK: PDK_STRICT guard for %s: %s\n", op.c_str(),
                         st.message().c_str());
          }
        });
  }
  return count;
}

}  // namespace pdk_graph

// The op and its CPU kernel register with PDK's kernels (TF_InitKernel), but
// outside PDK's registry: it is no PDK kernel (registered_kernels() omits it).
// Stateful: never constant-folded, pruned as dead or merged with another.
REGISTER_OP(pdk_graph::kFallbackOp).Attr("message: string").SetIsStateful();

PDK_REGISTER_KERNELS(PdkStrictFallback, r) {
  pdk::Status st =
      pdk::KernelDef<pdk_graph::StrictFallbackOp>(pdk_graph::kFallbackOp).Register("CPU");
  if (!st.ok())
    std::fprintf(stderr, "PDK: %s registration failed (PDK_STRICT cannot report): %s\n",
                 pdk_graph::kFallbackOp, st.message().c_str());
}
