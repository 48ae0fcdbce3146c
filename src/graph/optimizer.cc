#include "graph/optimizer.h"

#include "graph/graph_def.h"
#include "pdk/device.h"

#include <dlfcn.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "graph/rewrites/rewrites.h"
#include "graph/strict_placement.h"
#include "pdk/env.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_status.h"

namespace pdk_graph {
namespace {

std::mutex g_counts_mu;
RewriteCounts* g_counts = new RewriteCounts;  // never destroyed (read at exit by Python)
// Set once by InitGraph, before TensorFlow can call OptimizeFunc.
auto* g_kernel_available = new std::function<bool(const std::string&)>;

// ---- The GrapplerItem accessors, resolved at run time.
//
// TF_GetNodesToPreserveList & co. are defined in libtensorflow_cc.so.2, not in
// libtensorflow_framework.so.2, which is all the plugin links. Linking the
// 750 MB libtensorflow_cc.so.2 would make every process that opens the plugin
// (C++ tests, the kernel-only build) load it; TensorFlow's Python module has it
// loaded already whenever Grappler calls us, so PDK looks the symbols up
// there (beside libtensorflow_framework.so.2, as TF_Version in plugin.cc).
using ListSizeFn = void (*)(const TF_GrapplerItem*, int*, size_t*, TF_Status*);
using ListFn = void (*)(const TF_GrapplerItem*, char**, size_t*, int, void*, size_t, TF_Status*);
struct ItemApi {
  ListSizeFn preserve_size = nullptr;
  ListFn preserve = nullptr;
  ListSizeFn fetch_size = nullptr;
  ListFn fetch = nullptr;
  bool ok() const { return preserve_size && preserve && fetch_size && fetch; }
};

const ItemApi& GetItemApi() {
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
    // The handle stays open: the library is TensorFlow's own, loaded for good.
    return a;
  }();
  return api;
}

pdk::Status ReadList(ListSizeFn size_fn, ListFn list_fn, const TF_GrapplerItem* item,
                     std::unordered_set<std::string>* out) {
  pdk::TFStatusPtr s = pdk::NewTFStatus();
  int n = 0;
  size_t storage_size = 0;
  size_fn(item, &n, &storage_size, s.get());
  if (TF_GetCode(s.get()) != TF_OK) return pdk::Status::FromTF(s.get());
  if (n <= 0) return pdk::Status::OK();
  std::vector<char*> values(n);
  std::vector<size_t> lengths(n);
  std::vector<char> storage(storage_size + 1);
  list_fn(item, values.data(), lengths.data(), n, storage.data(), storage_size, s.get());
  if (TF_GetCode(s.get()) != TF_OK) return pdk::Status::FromTF(s.get());
  for (int i = 0; i < n; ++i) out->emplace(values[i], lengths[i]);
  return pdk::Status::OK();
}

bool ReportEnabled() { return pdk::env::Flag("PDK_GRAPH_REPORT", false); }

// The optional rewrites, by the names PDK_GRAPH_DISABLE takes.
constexpr const char* kOptionalRewrites[] = {"identity_removal", "transpose_pairs",
                                             "matmul_fusion",    "pad_conv",
                                             "conv_fusion",      "adam_fusion",
                                             "elementwise_fusion"};

// PDK_GRAPH_REWRITES=0 -> {"all"}; PDK_GRAPH_DISABLE=a,b -> {"a", "b"}; a
// name that is no optional rewrite is ignored with a warning listing them.
std::unordered_set<std::string> DisabledRewrites() {
  std::unordered_set<std::string> out;
  if (!pdk::env::Flag("PDK_GRAPH_REWRITES", true)) out.insert("all");
  const std::string list = pdk::env::Get("PDK_GRAPH_DISABLE");
  std::string item;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == ',') {
      bool known = item.empty();
      for (const char* name : kOptionalRewrites) known = known || item == name;
      if (known) {
        if (!item.empty()) out.insert(item);
      } else {
        std::string names;
        for (const char* name : kOptionalRewrites)
          names += (names.empty() ? "" : ", ") + std::string(name);
        pdk::env::Warn("PDK_GRAPH_DISABLE", list,
                       "names no rewrite '" + item + "' (known: " + names + ")", "the others");
      }
      item.clear();
    } else if (list[i] != ' ') {
      item += list[i];
    }
  }
  return out;
}

void FreeBuffer(void* data, size_t) { std::free(data); }

// PDK_GRAPH_DUMP=<dir>: each optimizer call writes the GraphDef it received and
// the one it returns, as <dir>/pdk_graph_<n>_{before,after}.pb (binary
// GraphDef; read with tf.compat.v1.GraphDef.FromString). A debugging aid:
// failures to write are ignored.
void MaybeDump(const char* tag, int n, const void* data, size_t size) {
  const char* dir = std::getenv("PDK_GRAPH_DUMP");
  if (dir == nullptr || *dir == '\0') return;
  const std::string path =
      std::string(dir) + "/pdk_graph_" + std::to_string(n) + "_" + tag + ".pb";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
}

}  // namespace

pdk::Status Optimize(GraphDef* graph, const OptimizeOptions& options,
                     RewriteCounts* fired) {
  RewriteCounts local;
  RewriteContext ctx{options.preserve, options.report, fired ? fired : &local,
                     options.kernel_available};
  auto on = [&](const char* name) {
    return !options.disabled.count("all") && !options.disabled.count(name);
  };
  RunXlaCallsWithPdkKernels(graph, ctx);
  SplitFusedBatchNormEx(graph, ctx);
  RewriteResourceScatter(graph, ctx);
  PrepareParallelConcat(graph, ctx);
  if (on("identity_removal")) RemoveIdentities(graph, ctx);
  if (on("transpose_pairs")) CancelTransposes(graph, ctx);
  if (on("matmul_fusion")) FuseMatMulBiasAddActivation(graph, ctx);
  if (on("pad_conv")) FoldPadIntoConv(graph, ctx);
  if (on("conv_fusion")) FuseConv(graph, ctx);
  if (on("adam_fusion")) FuseKerasAdam(graph, ctx);
  if (on("elementwise_fusion")) FuseElementwise(graph, ctx);
  RewriteTensorListGradients(graph, ctx);
  if (StrictEnabled()) EnforceStrictPlacement(graph, options.report);  // PDK_STRICT=1
  return pdk::Status::OK();
}

pdk::Status OptimizeSerialized(const void* data, size_t size, const OptimizeOptions& options,
                               std::string* out, RewriteCounts* fired) {
  GraphDef graph;
  PDK_RETURN_IF_ERROR(ParseGraphDef(data, size, &graph));
  PDK_RETURN_IF_ERROR(Optimize(&graph, options, fired));
  *out = SerializeGraphDef(graph);
  return pdk::Status::OK();
}

void OptimizeFunc(void*, const TF_Buffer* graph_buf, const TF_GrapplerItem* item,
                  TF_Buffer* optimized_graph_buf, TF_Status* status) {
  pdk::Status st = pdk::GuardedCall("PDK graph optimizer", [&]() -> pdk::Status {
    if (graph_buf == nullptr || optimized_graph_buf == nullptr)
      return pdk::InvalidArgument("PDK graph: null buffer");
    OptimizeOptions options;
    options.report = ReportEnabled();
    options.disabled = DisabledRewrites();
    options.kernel_available = *g_kernel_available;
    if (item != nullptr) {
      const ItemApi& api = GetItemApi();
      if (!api.ok())
        return pdk::FailedPrecondition(
            "PDK graph: TF_GetNodesToPreserveList is not available in this process; "
            "not rewriting a graph whose fetch nodes are unknown");
      PDK_RETURN_IF_ERROR(ReadList(api.preserve_size, api.preserve, item, &options.preserve));
      PDK_RETURN_IF_ERROR(ReadList(api.fetch_size, api.fetch, item, &options.preserve));
    }
    std::string out;
    RewriteCounts fired;
    static std::atomic<int> calls{0};
    const int call = calls++;
    MaybeDump("before", call, graph_buf->data, graph_buf->length);
    PDK_RETURN_IF_ERROR(
        OptimizeSerialized(graph_buf->data, graph_buf->length, options, &out, &fired));
    MaybeDump("after", call, out.data(), out.size());
    void* copy = std::malloc(out.size() ? out.size() : 1);
    if (copy == nullptr) return pdk::ResourceExhausted("PDK graph: out of memory");
    std::memcpy(copy, out.data(), out.size());
    if (optimized_graph_buf->data_deallocator && optimized_graph_buf->data)
      optimized_graph_buf->data_deallocator(const_cast<void*>(optimized_graph_buf->data),
                                            optimized_graph_buf->length);
    optimized_graph_buf->data = copy;
    optimized_graph_buf->length = out.size();
    optimized_graph_buf->data_deallocator = &FreeBuffer;
    if (!fired.empty()) {
      std::lock_guard<std::mutex> l(g_counts_mu);
      for (const auto& [pattern, n] : fired) (*g_counts)[pattern] += n;
    }
    return pdk::Status::OK();
  });
  st.ToTF(status);
}

void InitGraph(TP_OptimizerRegistrationParams* params, const char* device_type,
               std::function<bool(const std::string& op)> kernel_available, TF_Status* status) {
  *g_kernel_available = std::move(kernel_available);
  // TensorFlow's structs must be as long as PDK's headers say
  // (pdk::CheckStructSize); it set the params' pointers and the configs'
  // defaults, which stay.
  pdk::Status st = pdk::CheckStructSize(params, TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE,
                                        "TP_OptimizerRegistrationParams");
  if (st.ok())
    st = pdk::CheckStructSize(params->optimizer_configs, TP_OPTIMIZER_CONFIGS_STRUCT_SIZE,
                              "TP_OptimizerConfigs");
  if (st.ok()) st = pdk::PrepareStruct(params->optimizer, TP_OPTIMIZER_STRUCT_SIZE, "TP_Optimizer");
  if (!st.ok()) return st.ToTF(status);
  params->device_type = device_type;
  // Every TensorFlow pass stays at its default: see docs/architecture.md,
  // "Graph optimizer" (TensorFlow's remapper fuses nodes placed on PDK only
  // into _FusedBatchNormEx, which SplitFusedBatchNormEx undoes, and an Off
  // here would switch a pass off for every device in the process).
  params->optimizer_configs->struct_size = TP_OPTIMIZER_CONFIGS_STRUCT_SIZE;
  params->optimizer->create_func = nullptr;
  params->optimizer->optimize_func = &OptimizeFunc;
  params->optimizer->destroy_func = nullptr;
  TF_SetStatus(status, TF_OK, "");
}

RewriteCounts GlobalRewriteCounts() {
  std::lock_guard<std::mutex> l(g_counts_mu);
  return *g_counts;
}

void ResetGlobalRewriteCounts() {
  std::lock_guard<std::mutex> l(g_counts_mu);
  g_counts->clear();
}

}  // namespace pdk_graph
