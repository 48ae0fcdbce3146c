// Which launches of an Async kernel (MatMul, BatchMatMulV2, _PdkFusedMatMul:
// KernelDef::Async in pdk/kernel.h) may go to a launcher thread.
//
// PDK registers each such op twice: synchronous (no kernel label, what a node
// gets by default) and asynchronous under the kernel label "async"
// (pdk::kAsyncKernelLabel), which a node selects with TensorFlow's `_kernel`
// node attribute (tensorflow/core/framework/op_kernel.cc, FindKernelRegistration).
// An asynchronous kernel lets the executor run other nodes while a large
// product runs on a launcher thread, but costs a thread hand-off on every
// launch, also when the launcher declines a small one: the executor hands
// every node the kernel makes ready to its inter-op pool
// (ExecutorState::ProcessAsync: NodeDone with no inline queue). In a
// while loop of small products (a Keras LSTM step) that hand-off was most of
// the step (docs/benchmarks.md, "Kernel overlap").
//
// So this pass sets `_kernel: "async"` on a node of such an op on PDK unless
// it is in a while loop's body and its inputs are known to be small: every
// data input's size is known and the sum is under the launcher's threshold
// (PDK_ASYNC_MIN_BYTES). Only loop bodies: there each iteration's products
// depend on the last, so the hand-off is paid per iteration for nothing
// (bench/bench_loop.py: 25.5-27.9 against 16.8-18.7 us per iteration of two
// 32x64 products); outside loops the same hand-off lets TensorFlow's
// inter-op pool run independent small kernels side by side, which the custom
// GradientTape loop of bench_pdk.py measured 5 % faster with than with
// synchronous small products (docs/benchmarks.md, "Kernel overlap"). Sizes come
// from TensorFlow's static shape inference of the graph
// (AsyncLaunchPolicy::inferred, pdk::GraphProperties) and, where it has an
// unknown dimension, from the rules in InputShapes below: TensorFlow's
// inference knows no element shape of a TensorList whose handle went through
// a while loop (a loop gradient's accumulators), so a gradient loop's
// products would all look unknown. A node with an unknown input size keeps
// the asynchronous kernel, whose launcher then decides per launch from the
// actual sizes. The decision is recorded in `_pdk_launch` ("async" or
// "sync") and never revisited: the pass runs before the other rewrites, while
// every producer is an op TensorFlow's shape inference saw (a fused node's
// outputs have no inferred shape), and again after them for the nodes they
// created (_PdkFusedMatMul, whose inputs are the original
// producers'); and TensorFlow calls the optimizer again on its own output. A
// node with a `_kernel` attribute of its own is left as it is. With no
// asynchronous registrations (PDK_ASYNC=0) the pass does nothing.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"
#include "pdk/kernel.h"  // kAsyncKernelLabel

namespace pdk_graph {
namespace {

using Props = pdk::TensorProperties;

bool FullyKnown(const Props& p) { return p.bytes() >= 0; }

// Static shapes of the graph's tensors: TensorFlow's inference where it knows
// every dimension, else these rules (op semantics from
// tensorflow/core/ops/{array,math,list,control_flow}_ops.cc):
// - shape-preserving ops (Identity, the loop-frame ops Enter, Exit, Switch,
//   NextIteration, unary elementwise ops, Cast, ZerosLike, the *Grad
//   elementwise gradients, BiasAdd, AddN): input 0's shape (Cast: DstT);
// - Merge: the first input whose shape is known (a loop's entry value);
// - binary elementwise ops and SelectV2: NumPy broadcasting of the inputs;
// - ConcatV2 with a constant axis: the inputs' shapes summed along it;
// - MatMul: [m, n] from its inputs and transpose attributes;
// - TensorListPopBack output 1, TensorListGetItem output 0: the element
//   pushed or set into the list, found by following the list handle back
//   through the loop-frame ops and the list ops that forward it
//   (TensorListPushBack / SetItem / PopBack output 0), or a
//   TensorListFromTensor's tensor without its first dimension.
class InputShapes {
 public:
  InputShapes(const GraphView& view, const AsyncLaunchPolicy& policy)
      : view_(view), policy_(policy) {}

  // The size in bytes of regular input `i` of `n`; -1 if unknown.
  int64_t Bytes(const NodeDef& n, int i) {
    Props p;
    return Input(n, i, &p) ? p.bytes() : -1;
  }

 private:
  static std::string Key(const TensorRef& r) { return r.node + ":" + std::to_string(r.port); }

  bool Shape(const TensorRef& ref, Props* out) {
    const std::string key = Key(ref);
    auto memo = memo_.find(key);
    if (memo != memo_.end()) {
      *out = memo->second.second;
      return memo->second.first;
    }
    if (!visiting_.insert(key).second || visiting_.size() > 256) return false;  // a cycle
    Props p;
    const bool ok = Compute(ref, &p) && FullyKnown(p);
    visiting_.erase(key);
    memo_[key] = {ok, p};
    *out = p;
    return ok;
  }

  bool Input(const NodeDef& n, int i, Props* out) {
    int port = 0;
    const NodeDef* p = view_.regular_fanin(n, i, &port);
    return p != nullptr && Shape(TensorRef{p->name, port}, out);
  }
  int NumInputs(const NodeDef& n) const { return view_.num_regular_inputs(n); }

  bool Compute(const TensorRef& ref, Props* out) {
    const NodeDef* node = view_.node(ref.node);
    if (node == nullptr) return false;
    const NodeDef& n = *node;
    if (policy_.inferred && policy_.inferred(ref, n.op, out) && FullyKnown(*out)) return true;
    static const std::unordered_set<std::string> kSameShape = {
        "Identity", "Enter", "Exit", "Switch", "NextIteration", "StopGradient", "Snapshot",
        "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Reciprocal", "Sign",
        "Sigmoid", "Tanh", "Relu", "Relu6", "Elu", "Erf", "Erfc", "Floor", "Ceil", "Round",
        "ZerosLike", "OnesLike", "SigmoidGrad", "TanhGrad", "ReluGrad", "Relu6Grad", "EluGrad",
        "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "BiasAdd", "AddN", "Cast"};
    static const std::unordered_set<std::string> kBroadcast = {
        "AddV2", "Add", "Sub", "Mul", "RealDiv", "DivNoNan", "Maximum", "Minimum",
        "SquaredDifference", "Pow", "SelectV2"};
    if (kSameShape.count(n.op)) {
      if (!Input(n, 0, out)) return false;
      if (n.op == "Cast") {
        int dst = 0;
        auto dt = n.attr.find("DstT");
        if (dt == n.attr.end() || !dt->second.GetType(&dst)) return false;
        out->dtype = static_cast<TF_DataType>(dst);
      }
      return true;
    }
    if (n.op == "Merge") {
      for (int i = 0, k = NumInputs(n); i < k; ++i)
        if (Input(n, i, out)) return true;
      return false;
    }
    if (kBroadcast.count(n.op)) {
      Props acc;
      for (int i = 0, k = NumInputs(n); i < k; ++i) {
        Props p;
        if (!Input(n, i, &p)) return false;
        if (i == 0 || (n.op == "SelectV2" && i == 1)) acc.dtype = p.dtype;
        if (i == 0) {
          acc.dims = p.dims;
          acc.unknown_rank = false;
          continue;
        }
        std::vector<int64_t> a = acc.dims, b = p.dims;
        if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
        if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
        for (size_t d = 0; d < a.size(); ++d) {
          if (a[d] != b[d] && a[d] != 1 && b[d] != 1) return false;
          a[d] = a[d] == 1 ? b[d] : a[d];
        }
        acc.dims = a;
      }
      *out = acc;
      return true;
    }
    if (n.op == "ConcatV2") {
      const int k = NumInputs(n) - 1;
      const NodeDef* axis_node = k > 0 ? view_.regular_fanin(n, k) : nullptr;
      std::vector<int64_t> axis;
      if (axis_node == nullptr || axis_node->op != "Const" || !axis_node->attr.count("value") ||
          !axis_node->attr.at("value").GetIntTensor(&axis) || axis.size() != 1)
        return false;
      Props acc;
      for (int i = 0; i < k; ++i) {
        Props p;
        if (!Input(n, i, &p)) return false;
        const int64_t rank = static_cast<int64_t>(p.dims.size());
        const int64_t ax = axis[0] < 0 ? axis[0] + rank : axis[0];
        if (ax < 0 || ax >= rank) return false;
        if (i == 0) {
          acc = p;
        } else {
          if (p.dims.size() != acc.dims.size()) return false;
          acc.dims[ax] += p.dims[ax];
        }
      }
      *out = acc;
      return k > 0;
    }
    if (n.op == "MatMul") {
      Props a, b;
      if (!Input(n, 0, &a) || !Input(n, 1, &b) || a.dims.size() != 2 || b.dims.size() != 2)
        return false;
      const bool ta = n.BoolAttr("transpose_a", false), tb = n.BoolAttr("transpose_b", false);
      *out = a;
      out->dims = {a.dims[ta ? 1 : 0], b.dims[tb ? 0 : 1]};
      return true;
    }
    if ((n.op == "TensorListPopBack" && ref.port == 1) ||
        (n.op == "TensorListGetItem" && ref.port == 0)) {
      std::unordered_set<std::string> seen;
      int port = 0;
      const NodeDef* handle = view_.regular_fanin(n, 0, &port);
      return ListElement(handle, port, &seen, out);
    }
    return false;
  }

  // The element shape of the list whose handle is output `port` of `h`.
  bool ListElement(const NodeDef* h, int port, std::unordered_set<std::string>* seen,
                   Props* out) {
    if (h == nullptr || !seen->insert(h->name).second || seen->size() > 256) return false;
    const std::string& op = h->op;
    if (op == "TensorListPushBack" && Input(*h, 1, out)) return true;
    if (op == "TensorListSetItem" && Input(*h, 2, out)) return true;
    if (op == "TensorListFromTensor") {
      if (!Input(*h, 0, out) || out->dims.empty()) return false;
      out->dims.erase(out->dims.begin());
      return true;
    }
    const bool forwards = op == "Enter" || op == "Exit" || op == "Identity" ||
                          op == "Switch" || op == "NextIteration" ||
                          op == "TensorListPushBack" || op == "TensorListSetItem" ||
                          (op == "TensorListPopBack" && port == 0);
    for (int i = 0, k = op == "Merge" ? NumInputs(*h) : forwards ? 1 : 0; i < k; ++i) {
      int in_port = 0;
      const NodeDef* p = view_.regular_fanin(*h, i, &in_port);
      if (ListElement(p, in_port, seen, out)) return true;
    }
    return false;
  }

  const GraphView& view_;
  const AsyncLaunchPolicy& policy_;
  std::unordered_map<std::string, std::pair<bool, Props>> memo_;
  std::unordered_set<std::string> visiting_;
};

// Whether `n` has an asynchronous registration: its op is one of `policy`'s
// and its type attributes match one registration's type constraints.
bool HasAsyncTwin(const NodeDef& n, const AsyncLaunchPolicy& policy) {
  auto it = policy.ops.find(n.op);
  if (it == policy.ops.end()) return false;
  for (const auto& constraints : it->second) {
    bool match = true;
    for (const auto& [attr, dtype] : constraints) {
      int t = -1;
      auto a = n.attr.find(attr);
      match = match && a != n.attr.end() && a->second.GetType(&t) && t == dtype;
    }
    if (match) return true;
  }
  return false;
}

// Nodes of a lowered while loop's body: reached from an Enter through data
// or control edges without passing an Exit (nested loops included).
std::unordered_set<std::string> LoopBodyNodes(const GraphView& view) {
  std::vector<const NodeDef*> todo;
  for (const NodeDef& n : view.graph().node)
    if (n.op == "Enter" || n.op == "RefEnter") todo.push_back(&n);
  std::unordered_set<std::string> body;
  for (const NodeDef* n : todo) body.insert(n->name);
  while (!todo.empty()) {
    const NodeDef* n = todo.back();
    todo.pop_back();
    if (n->op == "Exit" || n->op == "RefExit") continue;
    std::vector<const NodeDef*> next = view.regular_consumers(*n);
    const auto& control = view.control_fanouts(*n);
    next.insert(next.end(), control.begin(), control.end());
    for (const NodeDef* c : next)
      if (body.insert(c->name).second) todo.push_back(c);
  }
  return body;
}

}  // namespace

void LabelAsyncLaunches(GraphDef* graph, const RewriteContext& ctx,
                        const AsyncLaunchPolicy& policy) {
  if (policy.ops.empty()) return;
  const GraphView view(*graph);  // labels change attributes only: the view stays valid
  InputShapes shapes(view, policy);
  const std::unordered_set<std::string> in_loop = LoopBodyNodes(view);
  for (NodeDef& n : graph->node) {
    if (!ctx.on_device(n) || n.attr.count("_kernel") || n.attr.count("_pdk_launch") ||
        !HasAsyncTwin(n, policy))
      continue;
    int64_t total = 0;
    std::string unknown;  // inputs of unknown size, for PDK_GRAPH_REPORT
    for (int i = 0, k = view.num_regular_inputs(n); i < k; ++i) {
      const int64_t bytes = shapes.Bytes(n, i);
      if (bytes < 0) {
        const NodeDef* p = view.regular_fanin(n, i);
        unknown += (unknown.empty() ? "" : ", ") + (p ? p->name + " (" + p->op + ")" : "?");
      } else {
        total += bytes;
      }
    }
    if (unknown.empty() && total < policy.min_bytes && in_loop.count(n.name)) {
      n.attr["_pdk_launch"] = AttrValue::String("sync");
      ctx.Fired("synchronous launch (inputs under PDK_ASYNC_MIN_BYTES)",
                n.name + " (" + std::to_string(total) + " bytes)", {n.name});
      continue;
    }
    n.attr["_pdk_launch"] = AttrValue::String("async");
    n.attr["_kernel"] = AttrValue::String(pdk::kAsyncKernelLabel);
    ctx.Fired("asynchronous launch",
              n.name + (unknown.empty()
                            ? " (" + std::to_string(total) + " bytes" +
                                  (in_loop.count(n.name) ? ")" : ", outside a loop body)")
                            : " (size unknown: " + unknown + ")"),
              {n.name});
  }
}

}  // namespace pdk_graph
