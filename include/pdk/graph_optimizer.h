// pdk/graph_optimizer.h — a plugin's graph optimizer behind the Grappler C API
// (tensorflow/c/experimental/grappler/grappler.h), header-only.
//
// A plugin exports TF_InitGraph and registers one C++ function for its device
// type:
//
//   extern "C" void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
//     pdk::RegisterGraphOptimizer(params, "MY_DEVICE",
//         [](pdk::GraphDef& graph, const pdk::OptimizerContext& ctx) -> pdk::Status {
//           for (pdk::NodeDef& n : graph.node)
//             if (ctx.on_device(n) && !ctx.preserved(n.name)) { /* rewrite */ }
//           return pdk::Status::OK();
//         }, status);
//   }
//
// TensorFlow's meta-optimizer then calls the function for every graph it
// optimizes (a whole function graph: every device's nodes, after placement,
// before partitioning; usually twice per graph, so a rewrite must be
// idempotent). Every plugin optimizer registered in the process sees every
// graph, so a rewrite touches only nodes placed on its own device type
// (OptimizerContext::on_device). The function gets the parsed GraphDef
// (pdk/graph_def.h) and edits it in place; the kit serializes the result.
// Any error (malformed input, an error status, a C++ exception) reaches
// TensorFlow as a status, and TensorFlow keeps the graph it had.
//
// Grappler C API                        -> the kit
//   TP_OptimizerRegistrationParams       RegisterGraphOptimizer(params, device_type, fn, status)
//     .device_type                         device_type (copied; kept for the process)
//     .optimizer_configs                   left at TensorFlow's defaults (every pass on);
//                                          a plugin may set them after the call
//     .optimizer->optimize_func            the kit's: parse, fn, serialize
//     .optimizer->create_func/destroy_func none
//   optimize_func's TF_Buffer in/out     GraphDef& (parsed, then serialized back)
//   TF_GetNodesToPreserveList,           OptimizerContext::preserve (fetch, feed and
//   TF_GetFetchNodesList                   keep nodes: never removed or renamed)
//   TF_NewGraphProperties,               GraphProperties::Infer(ctx), Output(node, port)
//   TF_InferStatically,                    (TensorFlow's static shape inference of the
//   TF_GetOutputPropertiesList             graph as TensorFlow handed it over)
//   TF_Status                            pdk::Status
#ifndef PDK_GRAPH_OPTIMIZER_H_
#define PDK_GRAPH_OPTIMIZER_H_

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pdk/device.h"  // CheckStructSize, PrepareStruct
#include "pdk/graph_def.h"
#include "pdk/status.h"
#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_status.h"

namespace pdk {

// What a graph optimizer knows besides the graph.
struct OptimizerContext {
  // The device type the optimizer was registered for ("PDK", "HELLO").
  std::string device_type;
  // Fetch, feed and keep nodes of the graph (TF_GetNodesToPreserveList,
  // TF_GetFetchNodesList): a rewrite never removes or renames them.
  std::unordered_set<std::string> preserve;
  // The GrapplerItem TensorFlow passed (its graph is the one before any
  // rewrite; GraphProperties::Infer reads it). Null when a test calls an
  // optimizer directly. Valid during the optimizer call only.
  const TF_GrapplerItem* item = nullptr;

  bool preserved(const std::string& node) const { return preserve.count(node) > 0; }
  // Placed on a device of this optimizer's type.
  bool on_device(const NodeDef& n) const { return DeviceTypeOf(n.device) == device_type; }
};

// A graph optimizer: rewrites `graph` in place; an error leaves TensorFlow's
// graph as it was.
using GraphOptimizerFn = std::function<Status(GraphDef& graph, const OptimizerContext& ctx)>;

namespace graph_internal {

// The GrapplerItem accessors, resolved at run time: TF_GetNodesToPreserveList &
// co. are defined in libtensorflow_cc.so.2, not in libtensorflow_framework.so.2,
// which is all a plugin links (linking the 750 MB libtensorflow_cc.so.2 would
// load it into every process that opens the plugin). TensorFlow's Python module
// has it loaded whenever Grappler calls an optimizer, so the kit looks the
// symbols up there (beside libtensorflow_framework.so.2).
using ListSizeFn = void (*)(const TF_GrapplerItem*, int*, size_t*, TF_Status*);
using ListFn = void (*)(const TF_GrapplerItem*, char**, size_t*, int, void*, size_t, TF_Status*);
struct ItemApi {
  ListSizeFn preserve_size = nullptr;
  ListFn preserve = nullptr;
  ListSizeFn fetch_size = nullptr;
  ListFn fetch = nullptr;
  // Static shape inference (TF_NewGraphProperties and co.).
  TF_GraphProperties* (*new_properties)(const TF_GrapplerItem*) = nullptr;
  void (*delete_properties)(TF_GraphProperties*) = nullptr;
  void (*infer_statically)(TF_GraphProperties*, TF_Bool, TF_Bool, TF_Bool, TF_Bool,
                           TF_Status*) = nullptr;
  void (*output_properties_size)(TF_GraphProperties*, const char*, int*, TF_Status*) = nullptr;
  void (*output_properties)(TF_GraphProperties*, const char*, TF_Buffer**, int,
                            TF_Status*) = nullptr;
  bool ok() const { return preserve_size && preserve && fetch_size && fetch; }
  bool properties_ok() const {
    return new_properties && delete_properties && infer_statically && output_properties_size &&
           output_properties;
  }
};

inline const ItemApi& GetItemApi() {
  static const ItemApi api = [] {
    ItemApi a;
    void* handle = nullptr;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&TF_NewStatus), &info) && info.dli_fname) {
      std::string dir(info.dli_fname);
      dir = dir.substr(0, dir.find_last_of('/') + 1);
      handle = dlopen((dir + "libtensorflow_cc.so.2").c_str(), RTLD_LAZY | RTLD_NOLOAD);
    }
    auto sym = [&](const char* name) -> void* {
      void* p = handle ? dlsym(handle, name) : nullptr;
      return p ? p : dlsym(RTLD_DEFAULT, name);
    };
    a.preserve_size = reinterpret_cast<ListSizeFn>(sym("TF_GetNodesToPreserveListSize"));
    a.preserve = reinterpret_cast<ListFn>(sym("TF_GetNodesToPreserveList"));
    a.fetch_size = reinterpret_cast<ListSizeFn>(sym("TF_GetFetchNodesListSize"));
    a.fetch = reinterpret_cast<ListFn>(sym("TF_GetFetchNodesList"));
    a.new_properties = reinterpret_cast<decltype(a.new_properties)>(sym("TF_NewGraphProperties"));
    a.delete_properties =
        reinterpret_cast<decltype(a.delete_properties)>(sym("TF_DeleteGraphProperties"));
    a.infer_statically = reinterpret_cast<decltype(a.infer_statically)>(sym("TF_InferStatically"));
    a.output_properties_size = reinterpret_cast<decltype(a.output_properties_size)>(
        sym("TF_GetOutputPropertiesListSize"));
    a.output_properties =
        reinterpret_cast<decltype(a.output_properties)>(sym("TF_GetOutputPropertiesList"));
    // The handle stays open: the library is TensorFlow's own, loaded for good.
    return a;
  }();
  return api;
}

inline Status ReadList(ListSizeFn size_fn, ListFn list_fn, const TF_GrapplerItem* item,
                       std::unordered_set<std::string>* out) {
  TFStatusPtr s = NewTFStatus();
  int n = 0;
  size_t storage_size = 0;
  size_fn(item, &n, &storage_size, s.get());
  if (TF_GetCode(s.get()) != TF_OK) return Status::FromTF(s.get());
  if (n <= 0) return Status::OK();
  std::vector<char*> values(n);
  std::vector<size_t> lengths(n);
  std::vector<char> storage(storage_size + 1);
  list_fn(item, values.data(), lengths.data(), n, storage.data(), storage_size, s.get());
  if (TF_GetCode(s.get()) != TF_OK) return Status::FromTF(s.get());
  for (int i = 0; i < n; ++i) out->emplace(values[i], lengths[i]);
  return Status::OK();
}

inline void FreeBuffer(void* data, size_t) { std::free(data); }

// The optimizer RegisterGraphOptimizer installed (one per plugin: each plugin
// has its own hidden copy of the kit).
struct Registered {
  std::string device_type;
  GraphOptimizerFn fn;
};
inline Registered& TheOptimizer() {
  static Registered* r = new Registered;  // never destroyed: TensorFlow may optimize at exit
  return *r;
}

}  // namespace graph_internal

// The fetch, feed and keep nodes of a GrapplerItem, added to `out`. A null
// item (a test calling an optimizer directly) adds nothing.
inline Status ReadNodesToPreserve(const TF_GrapplerItem* item,
                                  std::unordered_set<std::string>* out) {
  if (item == nullptr) return Status::OK();
  const graph_internal::ItemApi& api = graph_internal::GetItemApi();
  if (!api.ok())
    return FailedPrecondition(
        "TF_GetNodesToPreserveList is not available in this process; "
        "not rewriting a graph whose fetch nodes are unknown");
  PDK_RETURN_IF_ERROR(graph_internal::ReadList(api.preserve_size, api.preserve, item, out));
  return graph_internal::ReadList(api.fetch_size, api.fetch, item, out);
}

// One tensor's statically inferred properties (OpInfo.TensorProperties,
// tensorflow/core/protobuf/.../op_performance_data.proto: dtype = 1, shape = 2).
struct TensorProperties {
  TF_DataType dtype = static_cast<TF_DataType>(0);  // 0 (DT_INVALID): unknown
  std::vector<int64_t> dims;                        // -1: an unknown dimension
  bool unknown_rank = true;

  // The tensor's size in bytes; -1 if its dtype, rank or a dimension is
  // unknown, or the dtype has no fixed size (string, resource, variant).
  int64_t bytes() const {
    const size_t element = dtype == 0 ? 0 : TF_DataTypeSize(dtype);
    if (unknown_rank || element == 0) return -1;
    int64_t n = static_cast<int64_t>(element);
    for (int64_t d : dims) {
      if (d < 0) return -1;
      n *= d;
    }
    return n;
  }
};

// TensorFlow's static shape inference (grappler::GraphProperties::
// InferStatically) of the graph TensorFlow handed an optimizer, through the
// Grappler C API. Properties are by node name of that graph: a node a rewrite
// added or renamed has none (Output returns false), and one a rewrite changed
// may have other outputs now, so a rewrite reads them before changing the
// graph or checks the node's op is still the one inferred.
class GraphProperties {
 public:
  ~GraphProperties() {
    if (props_) graph_internal::GetItemApi().delete_properties(props_);
  }
  GraphProperties(const GraphProperties&) = delete;
  GraphProperties& operator=(const GraphProperties&) = delete;

  // Infers the shapes of `ctx.item`'s graph. FailedPrecondition without an
  // item or where the running TensorFlow lacks the C API; TensorFlow's error
  // if inference fails.
  static Status Infer(const OptimizerContext& ctx, std::unique_ptr<GraphProperties>* out) {
    const graph_internal::ItemApi& api = graph_internal::GetItemApi();
    if (ctx.item == nullptr) return FailedPrecondition("no GrapplerItem: nothing to infer");
    if (!api.properties_ok())
      return FailedPrecondition("TF_InferStatically is not available in this process");
    std::unique_ptr<GraphProperties> p(new GraphProperties(api.new_properties(ctx.item)));
    TFStatusPtr s = NewTFStatus();
    api.infer_statically(p->props_, /*assume_valid_feeds=*/false,
                         /*aggressive_shape_inference=*/false,
                         /*include_input_tensor_values=*/false,
                         /*include_output_tensor_values=*/false, s.get());
    if (TF_GetCode(s.get()) != TF_OK) return Status::FromTF(s.get());
    *out = std::move(p);
    return Status::OK();
  }

  // Output `port` of `node`; false if the node or port has no properties.
  bool Output(const std::string& node, int port, TensorProperties* out) const {
    auto it = cache_.find(node);
    if (it == cache_.end()) it = cache_.emplace(node, Read(node)).first;
    if (port < 0 || port >= static_cast<int>(it->second.size())) return false;
    *out = it->second[port];
    return true;
  }

 private:
  explicit GraphProperties(TF_GraphProperties* props) : props_(props) {}

  std::vector<TensorProperties> Read(const std::string& node) const {
    const graph_internal::ItemApi& api = graph_internal::GetItemApi();
    std::vector<TensorProperties> out;
    TFStatusPtr s = NewTFStatus();
    int n = 0;
    api.output_properties_size(props_, node.c_str(), &n, s.get());
    if (TF_GetCode(s.get()) != TF_OK || n <= 0) return out;
    std::vector<TF_Buffer*> bufs(n);
    for (auto& b : bufs) b = TF_NewBuffer();
    api.output_properties(props_, node.c_str(), bufs.data(), n, s.get());
    if (TF_GetCode(s.get()) == TF_OK) {
      for (TF_Buffer* b : bufs) {
        TensorProperties t;
        wire::Reader r(
            std::string_view(static_cast<const char*>(b->data), b->length));
        bool ok = true;
        while (ok && !r.done()) {
          int f, w;
          uint64_t v;
          std::string_view shape;
          if (!r.Tag(&f, &w)) ok = false;
          else if (f == 1 && w == wire::kVarint && r.Varint(&v)) t.dtype = static_cast<TF_DataType>(v);
          else if (f == 2 && w == wire::kLengthDelimited && r.Bytes(&shape))
            ok = graph_internal::ReadShapeDims(shape, &t.dims, &t.unknown_rank);
          else ok = r.Skip(w);
        }
        out.push_back(ok ? t : TensorProperties{});
      }
    }
    for (TF_Buffer* b : bufs) TF_DeleteBuffer(b);
    return out;
  }

  TF_GraphProperties* props_;
  mutable std::unordered_map<std::string, std::vector<TensorProperties>> cache_;
};

// Hands `serialized` to TensorFlow as optimize_func's output buffer (malloc'd,
// with its deallocator; a previous content is released).
inline Status SetOptimizedGraph(const std::string& serialized, TF_Buffer* out) {
  void* copy = std::malloc(serialized.size() ? serialized.size() : 1);
  if (copy == nullptr) return ResourceExhausted("out of memory for the optimized GraphDef");
  std::memcpy(copy, serialized.data(), serialized.size());
  if (out->data_deallocator && out->data)
    out->data_deallocator(const_cast<void*>(out->data), out->length);
  out->data = copy;
  out->length = serialized.size();
  out->data_deallocator = &graph_internal::FreeBuffer;
  return Status::OK();
}

// One optimize_func call: parse `graph_buf`, read the item's nodes to
// preserve, run `fn`, serialize into `optimized_graph_buf`. Errors (null
// buffers, a malformed GraphDef, fn's status, exceptions) go to `status`,
// prefixed with "<device_type> graph optimizer".
inline void RunGraphOptimizer(const GraphOptimizerFn& fn, const std::string& device_type,
                              const TF_Buffer* graph_buf, const TF_GrapplerItem* item,
                              TF_Buffer* optimized_graph_buf, TF_Status* status) {
  const std::string where = device_type + " graph optimizer";
  auto run = [&]() -> Status {
    if (graph_buf == nullptr || optimized_graph_buf == nullptr)
      return InvalidArgument("null buffer");
    if (!fn) return FailedPrecondition("no optimizer registered");
    OptimizerContext ctx;
    ctx.device_type = device_type;
    ctx.item = item;
    PDK_RETURN_IF_ERROR(ReadNodesToPreserve(item, &ctx.preserve));
    GraphDef graph;
    PDK_RETURN_IF_ERROR(ParseGraphDef(graph_buf->data, graph_buf->length, &graph));
    PDK_RETURN_IF_ERROR(fn(graph, ctx));
    return SetOptimizedGraph(SerializeGraphDef(graph), optimized_graph_buf);
  };
  const Status st = GuardedCall(where.c_str(), [&]() -> Status {
    Status s = run();
    return s.ok() ? s : Status(s.code(), where + ": " + s.message());
  });
  st.ToTF(status);
}

// "__inference_one_step_on_data_1234" -> "one_step_on_data": a function's
// Python name under TensorFlow's mangling, which nests for gradients
// ("__inference___backward__conv_xla_757_770" -> "_conv_xla"): the prefixes
// __inference_ / __forward_ / __backward_ and "_<unique id>" suffixes, removed
// until none is left.
inline std::string PythonFunctionName(const std::string& function) {
  std::string name = function;
  for (bool changed = true; changed;) {
    changed = false;
    for (const char* prefix : {"__inference_", "__forward_", "__backward_"}) {
      const std::string p(prefix);
      if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) {
        name = name.substr(p.size());
        changed = true;
      }
    }
    const size_t us = name.find_last_of('_');
    if (us != std::string::npos && us > 0 && us + 1 < name.size() &&
        name.find_first_not_of("0123456789", us + 1) == std::string::npos) {
      name = name.substr(0, us);
      changed = true;
    }
  }
  return name.empty() ? function : name;
}

// A call marked for XLA (_XlaMustCompile=true) placed on this optimizer's
// device -> the same call run by TensorFlow's function runtime with the
// plugin's kernels: _XlaMustCompile=false, _XlaCompile / _XlaScope /
// _XlaInternalScope removed. `on_each(node, function)` is called for every
// node changed, with the function it calls (its "f" attribute, or its op for
// a direct call of a library function): a plugin reports it (once per
// PythonFunctionName), counts it, or guards it.
//
// Why: XLA has no backend for a pluggable device, and a plugin cannot give it
// one through the C APIs. `tf.function(jit_compile=True)` marks the
// FunctionDef and every node calling it from another function; Keras 3 asks
// for XLA whenever a non-CPU device is listed (jit_compile="auto" resolves to
// True) and calls its jit-compiled train step from a plain tf.function, i.e.
// through such a node. TensorFlow's XlaKernelCreator
// (tensorflow/compiler/jit/xla_kernel_creator.cc) turns a node with
// _XlaMustCompile=true into an XlaLaunch kernel, which fails on the device:
// "No JIT device registered for <type>". Grappler runs on the placed graph
// before kernels are created, so after this rewrite the node gets
// TensorFlow's (Stateful)PartitionedCall kernel, and the body is optimized by
// the plugin's optimizer in turn. (A jit function called eagerly is decided
// by TensorFlow's eager runtime before Grappler runs.)
template <class OnEach>
void RunWithoutXla(GraphDef& graph, const OptimizerContext& ctx, OnEach&& on_each) {
  for (NodeDef& n : graph.node) {
    if (!ctx.on_device(n) || !n.BoolAttr("_XlaMustCompile", false)) continue;
    std::string f = n.op;  // a direct call of a library function is named by its op
    auto it = n.attr.find("f");
    if (it != n.attr.end()) it->second.GetFuncName(&f);
    n.attr["_XlaMustCompile"] = AttrValue::Bool(false);
    for (const char* a : {"_XlaCompile", "_XlaScope", "_XlaInternalScope"}) n.attr.erase(a);
    on_each(n, f.empty() ? n.op : f);
  }
}

// TF_InitGraph's work: checks TensorFlow's struct sizes against the kit's
// headers (a shorter struct: FailedPrecondition, nothing written), sets the
// device type and the optimize_func that runs `fn`, and leaves every
// TensorFlow pass at its default. Switching a pass off in optimizer_configs
// switches it off for every device in the process, not only this one.
inline void RegisterGraphOptimizer(TP_OptimizerRegistrationParams* params,
                                   const char* device_type, GraphOptimizerFn fn,
                                   TF_Status* status) {
  Status st = GuardedCall("RegisterGraphOptimizer", [&]() -> Status {
    if (params == nullptr || device_type == nullptr || *device_type == '\0')
      return InvalidArgument("RegisterGraphOptimizer: null params or empty device type");
    PDK_RETURN_IF_ERROR(CheckStructSize(params, TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE,
                                        "TP_OptimizerRegistrationParams"));
    PDK_RETURN_IF_ERROR(CheckStructSize(params->optimizer_configs,
                                        TP_OPTIMIZER_CONFIGS_STRUCT_SIZE, "TP_OptimizerConfigs"));
    PDK_RETURN_IF_ERROR(PrepareStruct(params->optimizer, TP_OPTIMIZER_STRUCT_SIZE, "TP_Optimizer"));
    graph_internal::Registered& r = graph_internal::TheOptimizer();
    r.device_type = device_type;
    r.fn = std::move(fn);
    params->device_type = r.device_type.c_str();
    params->optimizer_configs->struct_size = TP_OPTIMIZER_CONFIGS_STRUCT_SIZE;
    params->optimizer->optimize_func = [](void*, const TF_Buffer* in, const TF_GrapplerItem* item,
                                          TF_Buffer* out, TF_Status* s) {
      const graph_internal::Registered& opt = graph_internal::TheOptimizer();
      RunGraphOptimizer(opt.fn, opt.device_type, in, item, out, s);
    };
    return Status::OK();
  });
  st.ToTF(status);
}

}  // namespace pdk

#endif  // PDK_GRAPH_OPTIMIZER_H_
