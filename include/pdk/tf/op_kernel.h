// pdk/tf/op_kernel.h — TensorFlow's C++ kernel API, header-only, over the
// kernel C API (tensorflow/c/kernels.h). The one include of the TF-style layer.
//
// A kernel written for TensorFlow compiles against the kit with two changes:
// this include instead of tensorflow/core/framework/{op,shape_inference,
// op_kernel}.h, and the plugin's own device name (DEVICE_HELLO below, which the
// plugin defines: the kit names no device) instead of DEVICE_CPU (docs/kit.md
// shows the diff for TensorFlow's ZeroOut example):
//
//   namespace tensorflow {
//   template <class T>
//   class ReluOp : public OpKernel {
//    public:
//     explicit ReluOp(OpKernelConstruction* c) : OpKernel(c) {}
//     void Compute(OpKernelContext* c) override {
//       const Tensor& x = c->input(0);
//       Tensor* y = nullptr;
//       OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
//       y->flat<T>().device(c->eigen_device<Eigen::ThreadPoolDevice>()) =
//           x.flat<T>().cwiseMax(T(0));
//     }
//   };
//   REGISTER_KERNEL_BUILDER(Name("Relu").Device(DEVICE_HELLO).TypeConstraint<float>("T"),
//                           ReluOp<float>);
//   }  // namespace tensorflow
//
// What is here (TensorFlow's semantics unless said otherwise):
//   OpKernel                 name(), type_string(); virtual Compute
//   OpKernelConstruction     GetAttr for bool, int32, int64, float, DataType,
//                            string, TensorShape, Tensor and lists of each;
//                            HasAttr; CtxFailure / SetStatus / status
//   OpKernelContext          input, num_inputs, num_outputs, input_dtype,
//                            expected_output_dtype, allocate_output,
//                            allocate_temp, forward_input_or_allocate_output,
//                            set_output, mutable_output, eigen_device<
//                            Eigen::ThreadPoolDevice>(), device()->
//                            tensorflow_cpu_worker_threads(), step_id,
//                            CtxFailure / SetStatus / status
//   thread::ThreadPool, Shard  ParallelFor over the device's pool
//   REGISTER_KERNEL_BUILDER(Name("X").Device(DEVICE_HELLO).TypeConstraint<T>("T")
//                           .HostMemory("y").Priority(1), Kernel)
//                           (PDK's additions: .Async(), see below, and .If(pred))
//   OP_REQUIRES, OP_REQUIRES_OK; and, from the headers this one includes,
//   Tensor, TensorShape, Status, errors::*, TF_RETURN_IF_ERROR, OkStatus,
//   REGISTER_OP, shape_inference::InferenceContext, int32/int64/...
//
// Underneath, each TF-style kernel is a kit kernel (pdk::KernelDef of an
// adapter): the kit's trampolines count launches, report kernel traces, turn
// the context's status into TF_OpKernelContext_Failure and catch exceptions
// (a wrong-type Tensor view becomes an Internal error of the op). Every C
// handle is owned; inputs are borrowed views (pdk/tf/tensor.h), so TensorFlow
// can forward their buffers. `.Async()` on Name (a PDK addition) makes the
// kernel a kit Async kernel (pdk::KernelDef::Async): its Compute, unchanged,
// may run on a launcher thread while the executor goes on.
//
// Every name lives in tensorflow::pdk_kit, an inline namespace: code in
// namespace tensorflow uses it unqualified, and no symbol of the plugin has a
// mangled name of TensorFlow's own C++ API (tests check the plugin with nm).
#ifndef PDK_TF_OP_KERNEL_H_
#define PDK_TF_OP_KERNEL_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pdk/eigen.h"
#include "pdk/kernel.h"
#include "pdk/tf/logging.h"
#include "pdk/tf/op.h"
#include "pdk/tf/op_def.h"
#include "pdk/tf/shape_inference.h"
#include "pdk/tf/status.h"
#include "pdk/tf/tensor.h"
#include "pdk/tf/tensor_shape.h"
#include "pdk/tf/types.h"
#include "tensorflow/c/kernels.h"

namespace pdk {
class Stream;  // pdk/device.h
}  // namespace pdk

namespace tensorflow {
inline namespace pdk_kit {

using StringPiece = std::string_view;

// The kit names no device: a plugin defines its device type's name itself
// (`constexpr char DEVICE_HELLO[] = "HELLO";`, or a compile definition such as
// -DDEVICE_PDK=\"PDK\", which PDK's CMakeLists.txt sets for its kernels).
// TensorFlow's: a kernel registered for DEVICE_DEFAULT is TensorFlow's own,
// which serves the plugin's device already; the kit registers nothing for it.
// DEVICE_CPU is deliberately not defined, so a registration left unported
// does not compile.
inline constexpr char DEVICE_DEFAULT[] = "DEFAULT";

// TensorFlow's AllocatorAttributes, of which the C API has on_host only.
class AllocatorAttributes {
 public:
  void set_on_host(bool v) { on_host_ = v; }
  bool on_host() const { return on_host_; }

 private:
  bool on_host_ = false;
};
enum MemoryType { DEVICE_MEMORY = 0, HOST_MEMORY = 1 };

// ------------------------------------------------------------- thread pools

namespace thread {
// The device's Eigen thread pool, as TensorFlow's thread::ThreadPool.
class ThreadPool {
 public:
  explicit ThreadPool(const Eigen::ThreadPoolDevice* device) : d_(device) {}
  int NumThreads() const { return d_->numThreads(); }
  int CurrentThreadId() const { return d_->currentThreadId(); }
  // Calls fn(first, last) over disjoint ranges covering [0, total) on the
  // pool and returns when all are done; cost_per_unit (cycles per unit of
  // work) sizes the ranges.
  void ParallelFor(int64 total, int64 cost_per_unit,
                   const std::function<void(int64, int64)>& fn) const {
    if (total <= 0) return;
    d_->parallelFor(total, Eigen::TensorOpCost(0, 0, static_cast<double>(cost_per_unit)),
                    [&fn](Eigen::Index first, Eigen::Index last) { fn(first, last); });
  }
  // Runs fn on a pool thread, asynchronously.
  void Schedule(std::function<void()> fn) const { d_->getPool()->Schedule(std::move(fn)); }
  Eigen::ThreadPoolInterface* AsEigenThreadPool() const { return d_->getPool(); }

 private:
  const Eigen::ThreadPoolDevice* d_;
};
}  // namespace thread

// TensorFlow's Shard (util/work_sharder.h): work(first, last) over at most
// max_parallelism ranges covering [0, total), on `workers`; on the calling
// thread alone when that is cheaper (under ~10000 cycles of work per range).
inline void Shard(int max_parallelism, thread::ThreadPool* workers, int64 total,
                  int64 cost_per_unit, const std::function<void(int64, int64)>& work) {
  if (total <= 0) return;
  constexpr int64 kMinCostPerShard = 10000;
  int64 shards = std::min<int64>({static_cast<int64>(max_parallelism), total,
                                  std::max<int64>(1, total * cost_per_unit / kMinCostPerShard)});
  if (workers == nullptr || shards <= 1) return work(0, total);
  const int64 block = (total + shards - 1) / shards;
  shards = (total + block - 1) / block;
  workers->ParallelFor(shards, kMinCostPerShard * 100, [&](int64 s0, int64 s1) {
    for (int64 s = s0; s < s1; ++s) work(s * block, std::min(total, (s + 1) * block));
  });
}

// What OpKernelContext::device() gives: the device's worker threads.
class DeviceBase {
 public:
  struct CpuWorkerThreads {
    int num_threads = 0;
    thread::ThreadPool* workers = nullptr;
  };
  explicit DeviceBase(const Eigen::ThreadPoolDevice* d) : pool_(d) {
    threads_.num_threads = pool_.NumThreads();
    threads_.workers = &pool_;
  }
  const CpuWorkerThreads* tensorflow_cpu_worker_threads() const { return &threads_; }
  // TensorFlow's "no NUMA affinity".
  int NumaNode() const { return -1; }

 private:
  thread::ThreadPool pool_;
  CpuWorkerThreads threads_;
};

// -------------------------------------------------------------- construction

namespace kit_internal {
// The error state of a construction or a launch: the first error wins. Set
// at construction, the kernel is not created; in Compute, the kit reports it
// as the op's failure when Compute returns.
class FailureState {
 public:
  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  void CtxFailure(const Status& s) { SetStatus(s); }
  void CtxFailure(const char*, int, const Status& s) { SetStatus(s); }
  void CtxFailureWithWarning(const char* file, int line, const Status& s) {
    CtxFailure(file, line, s);
  }
  const Status& status() const { return status_; }

 private:
  Status status_;
};
}  // namespace kit_internal

namespace kit_internal {
// A node's inputs and outputs, argument by argument expanded to tensors: the
// dtype of each, and the [start, stop) range of each named argument.
struct Signature {
  DataTypeVector inputs, outputs;
  std::vector<std::pair<std::string, std::pair<int, int>>> input_ranges, output_ranges;
};
inline std::string DataTypeSliceString(const DataTypeVector& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + DataTypeString(v[i]);
  return out;
}
}  // namespace kit_internal

class OpKernelConstruction : public kit_internal::FailureState {
 public:
  explicit OpKernelConstruction(const ::pdk::Attrs& attrs)
      : attrs_(attrs), c_(attrs.raw()), type_(::pdk::internal::OpTypeOf(attrs.raw())),
        name_(attrs.node_name()) {}

  bool HasAttr(StringPiece name) const { return attrs_.Has(std::string(name).c_str()); }

  Status GetAttr(StringPiece name, bool* v) const { return attrs_.Get(Str(name).c_str(), v); }
  Status GetAttr(StringPiece name, int32* v) const { return attrs_.Get(Str(name).c_str(), v); }
  Status GetAttr(StringPiece name, int64* v) const { return attrs_.Get(Str(name).c_str(), v); }
  Status GetAttr(StringPiece name, float* v) const { return attrs_.Get(Str(name).c_str(), v); }
  Status GetAttr(StringPiece name, std::string* v) const {
    return attrs_.Get(Str(name).c_str(), v);
  }
  Status GetAttr(StringPiece name, DataType* v) const {
    TF_DataType t = TF_FLOAT;
    TF_RETURN_IF_ERROR(attrs_.Get(Str(name).c_str(), &t));
    *v = static_cast<DataType>(t);
    return Status();
  }
  Status GetAttr(StringPiece name, std::vector<int32>* v) const {
    return attrs_.Get(Str(name).c_str(), v);
  }
  Status GetAttr(StringPiece name, std::vector<int64>* v) const {
    return attrs_.Get(Str(name).c_str(), v);
  }
  Status GetAttr(StringPiece name, std::vector<float>* v) const {
    return List(name, v, [&](const char* n, float* out, int size, TF_Status* s) {
      TF_OpKernelConstruction_GetAttrFloatList(c_, n, out, size, s);
    });
  }
  Status GetAttr(StringPiece name, std::vector<bool>* v) const {
    std::vector<TF_Bool> raw;
    TF_RETURN_IF_ERROR(List(name, &raw, [&](const char* n, TF_Bool* out, int size, TF_Status* s) {
      TF_OpKernelConstruction_GetAttrBoolList(c_, n, out, size, s);
    }));
    v->assign(raw.begin(), raw.end());
    return Status();
  }
  Status GetAttr(StringPiece name, std::vector<DataType>* v) const {
    std::vector<TF_DataType> raw;
    TF_RETURN_IF_ERROR(List(name, &raw, [&](const char* n, TF_DataType* out, int size,
                                            TF_Status* s) {
      TF_OpKernelConstruction_GetAttrTypeList(c_, n, out, size, s);
    }));
    v->clear();
    for (TF_DataType t : raw) v->push_back(static_cast<DataType>(t));
    return Status();
  }
  Status GetAttr(StringPiece name, std::vector<std::string>* v) const {
    int32_t n = 0, total = 0;
    TF_RETURN_IF_ERROR(Size(name, &n, &total));
    std::vector<char*> ptrs(n > 0 ? n : 0);
    std::vector<size_t> lens(ptrs.size());
    std::string storage(total > 0 ? total : 0, '\0');
    TF_RETURN_IF_ERROR(Call(name, [&](const char* nm, TF_Status* s) {
      TF_OpKernelConstruction_GetAttrStringList(c_, nm, ptrs.data(), lens.data(), n,
                                                storage.data(), storage.size(), s);
    }));
    v->clear();
    for (size_t i = 0; i < ptrs.size(); ++i) v->emplace_back(ptrs[i], lens[i]);
    return Status();
  }
  Status GetAttr(StringPiece name, Tensor* v) const {
    TF_Tensor* t = nullptr;
    TF_RETURN_IF_ERROR(Call(name, [&](const char* nm, TF_Status* s) {
      TF_OpKernelConstruction_GetAttrTensor(c_, nm, &t, s);
    }));
    *v = Tensor::Owning(::pdk::Tensor(t));
    return Status();
  }
  Status GetAttr(StringPiece name, std::vector<Tensor>* v) const {
    int32_t n = 0, total = 0;
    TF_RETURN_IF_ERROR(Size(name, &n, &total));
    std::vector<TF_Tensor*> raw(n > 0 ? n : 0, nullptr);
    const Status st = Call(name, [&](const char* nm, TF_Status* s) {
      TF_OpKernelConstruction_GetAttrTensorList(c_, nm, raw.data(), n, s);
    });
    v->clear();
    for (TF_Tensor* t : raw)  // owned even on error
      if (t) v->push_back(Tensor::Owning(::pdk::Tensor(t)));
    return st;
  }
  // A shape attr ("shape: shape"), read from the NodeDef (the C API has no
  // shape getter). A shape with unknown dimensions or rank is InvalidArgument,
  // as TensorFlow's GetAttr into a TensorShape.
  Status GetAttr(StringPiece name, TensorShape* v) const {
    std::vector<TensorShape> shapes;
    TF_RETURN_IF_ERROR(Shapes(name, false, &shapes));
    *v = shapes[0];
    return Status();
  }
  Status GetAttr(StringPiece name, std::vector<TensorShape>* v) const {
    return Shapes(name, true, v);
  }

  const std::string& type_string() const { return type_; }
  const std::string& name() const { return name_; }
  TF_OpKernelConstruction* raw() const { return c_; }

  // The node's tensors, from the op's OpDef (pdk/tf/op_def.h) and the node's
  // attrs. Where the OpDef cannot be had, the construction fails with that
  // status and these give 0 / DT_INVALID.
  int num_inputs() const { return static_cast<int>(Checked().inputs.size()); }
  int num_outputs() const { return static_cast<int>(Checked().outputs.size()); }
  DataType input_type(int i) const { return At(Checked().inputs, i); }
  DataType output_type(int i) const { return At(Checked().outputs, i); }
  const DataTypeVector& input_types() const { return Checked().inputs; }
  const DataTypeVector& output_types() const { return Checked().outputs; }
  // OK if the node's dtypes are these, else InvalidArgument in TensorFlow's
  // wording ("Signature mismatch, have: ... expected: ...").
  Status MatchSignature(const DataTypeVector& expected_inputs,
                        const DataTypeVector& expected_outputs) const {
    const kit_internal::Signature& sig = signature();
    if (!signature_status_.ok()) return signature_status_;  // TF_GraphGetOpDef missing
    if (sig.inputs == expected_inputs && sig.outputs == expected_outputs) return Status();
    return errors::InvalidArgument(
        "Signature mismatch, have: ", kit_internal::DataTypeSliceString(sig.inputs), "->",
        kit_internal::DataTypeSliceString(sig.outputs),
        " expected: ", kit_internal::DataTypeSliceString(expected_inputs), "->",
        kit_internal::DataTypeSliceString(expected_outputs));
  }
  // The signature and the status of reading it, without failing the
  // construction (OpKernel keeps both).
  const kit_internal::Signature& signature() const {
    if (!signature_read_) {
      signature_read_ = true;
      signature_status_ = ReadSignature(&signature_);
    }
    return signature_;
  }
  const Status& signature_status() const {
    signature();
    return signature_status_;
  }

 private:
  // The signature, for a kernel that asks: if it cannot be read, the
  // construction fails with the reason.
  const kit_internal::Signature& Checked() const {
    if (!signature_status().ok())
      const_cast<OpKernelConstruction*>(this)->SetStatus(signature_status_);
    return signature_;
  }
  static DataType At(const DataTypeVector& v, int i) {
    return i >= 0 && i < static_cast<int>(v.size()) ? v[i] : DT_INVALID;
  }
  Status Expand(const std::vector<::pdk::tf_op_def::ArgDef>& args, DataTypeVector* types,
                std::vector<std::pair<std::string, std::pair<int, int>>>* ranges) const {
    for (const ::pdk::tf_op_def::ArgDef& a : args) {
      const int start = static_cast<int>(types->size());
      if (!a.type_list_attr.empty()) {
        DataTypeVector list;
        TF_RETURN_IF_ERROR(GetAttr(a.type_list_attr, &list));
        types->insert(types->end(), list.begin(), list.end());
      } else {
        DataType dt = static_cast<DataType>(a.type);
        if (!a.type_attr.empty()) TF_RETURN_IF_ERROR(GetAttr(a.type_attr, &dt));
        int64 n = 1;
        if (!a.number_attr.empty()) TF_RETURN_IF_ERROR(GetAttr(a.number_attr, &n));
        types->insert(types->end(), static_cast<size_t>(n > 0 ? n : 0), dt);
      }
      ranges->emplace_back(a.name, std::make_pair(start, static_cast<int>(types->size())));
    }
    return Status();
  }
  Status ReadSignature(kit_internal::Signature* sig) const {
    std::shared_ptr<const ::pdk::tf_op_def::OpArgs> args;
    TF_RETURN_IF_ERROR(::pdk::tf_op_def::Lookup(type_, &args));
    TF_RETURN_IF_ERROR(Expand(args->inputs, &sig->inputs, &sig->input_ranges));
    return Expand(args->outputs, &sig->outputs, &sig->output_ranges);
  }

  static std::string Str(StringPiece s) { return std::string(s); }
  template <class F>
  Status Call(StringPiece name, F&& f) const {
    const std::string n(name);
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    f(n.c_str(), s.get());
    if (TF_GetCode(s.get()) != TF_OK)
      return errors::InvalidArgument("attribute '", n, "': ", TF_Message(s.get()));
    return Status();
  }
  Status Size(StringPiece name, int32_t* n, int32_t* total) const {
    return Call(name, [&](const char* nm, TF_Status* s) {
      TF_OpKernelConstruction_GetAttrSize(c_, nm, n, total, s);
    });
  }
  template <class E, class F>
  Status List(StringPiece name, std::vector<E>* v, F&& f) const {
    int32_t n = 0, total = 0;
    TF_RETURN_IF_ERROR(Size(name, &n, &total));
    v->assign(n > 0 ? n : 0, E());
    return Call(name, [&](const char* nm, TF_Status* s) { f(nm, v->data(), n, s); });
  }
  Status Shapes(StringPiece name, bool want_list, std::vector<TensorShape>* out) const {
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    TF_Buffer* b = TF_OpKernelConstruction_GetNodeDef(c_, s.get());
    ::pdk::NodeDef node;  // the kit's one NodeDef reader (pdk/graph_def.h)
    bool parsed = false;
    if (b != nullptr) {
      parsed = TF_GetCode(s.get()) == TF_OK && ::pdk::ParseNodeDef(b->data, b->length, &node).ok();
      TF_DeleteBuffer(b);
    }
    const auto attr = parsed ? node.attr.find(std::string(name)) : node.attr.end();
    if (!parsed || attr == node.attr.end())
      return errors::InvalidArgument("No attr named '", name, "' in NodeDef (node ", name_,
                                     ", op ", type_, ")");
    std::vector<std::vector<int64_t>> shapes;
    std::vector<bool> unknown_rank;
    bool one_unknown = false;
    const bool is_list = attr->second.GetShapeList(&shapes, &unknown_rank);
    if (!is_list) {
      shapes.emplace_back();
      if (!attr->second.GetShape(&shapes[0], &one_unknown)) shapes.clear();
      unknown_rank.assign(shapes.size(), one_unknown);
    }
    if ((!is_list && shapes.empty()) || is_list != want_list)
      return errors::InvalidArgument("Attr '", name, "' is not a ",
                                     want_list ? "list(shape)" : "shape", " (node ", name_,
                                     ")");
    for (size_t i = 0; i < shapes.size(); ++i)
      if (unknown_rank[i]) shapes[i] = {-2};  // -2: an unknown rank, reported below
    out->clear();
    for (const std::vector<int64_t>& d : shapes) {
      for (int64_t x : d)
        if (x < 0)
          return errors::InvalidArgument("Attr '", name, "' has an unknown ",
                                         x == -2 ? "rank" : "dimension",
                                         "; a TensorShape needs a fully defined shape (node ",
                                         name_, ")");
      out->emplace_back(d);
    }
    return Status();
  }

  const ::pdk::Attrs& attrs_;
  TF_OpKernelConstruction* c_;
  std::string type_, name_;
  mutable bool signature_read_ = false;
  mutable kit_internal::Signature signature_;
  mutable Status signature_status_;
};

// ------------------------------------------------------------------ kernels

class OpKernelContext;

class OpKernel {
 public:
  // Keeps the node's signature when TensorFlow's OpDef for it can be had
  // (pdk/tf/op_def.h); the queries below need it.
  explicit OpKernel(OpKernelConstruction* c)
      : name_(c->name()), type_(c->type_string()), signature_(c->signature()),
        signature_status_(c->signature_status()) {}
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(OpKernelContext* context) = 0;
  // TensorFlow's hint to run a kernel inline; the kit's kernels all run where
  // TensorFlow's executor puts them.
  virtual bool IsExpensive() { return true; }

  const std::string& name() const { return name_; }            // the node's name
  const std::string& type_string() const { return type_; }     // the op ("Relu")
  int num_inputs() const { return static_cast<int>(signature_.inputs.size()); }
  int num_outputs() const { return static_cast<int>(signature_.outputs.size()); }
  DataType input_type(int i) const { return signature_.inputs.at(i); }
  DataType output_type(int i) const { return signature_.outputs.at(i); }
  const DataTypeVector& input_types() const { return signature_.inputs; }
  const DataTypeVector& output_types() const { return signature_.outputs; }
  // [*start, *stop): the tensors of input argument `name` ("values" of
  // ConcatV2); InvalidArgument naming the op if it has no such argument.
  Status InputRange(StringPiece name, int* start, int* stop) const {
    return Range(signature_.input_ranges, "input", name, start, stop);
  }
  Status OutputRange(StringPiece name, int* start, int* stop) const {
    return Range(signature_.output_ranges, "output", name, start, stop);
  }

 private:
  Status Range(const std::vector<std::pair<std::string, std::pair<int, int>>>& ranges,
               const char* kind, StringPiece name, int* start, int* stop) const {
    TF_RETURN_IF_ERROR(signature_status_);
    for (const auto& [arg, range] : ranges)
      if (arg == name) {
        *start = range.first;
        *stop = range.second;
        return Status();
      }
    return errors::InvalidArgument("Unknown ", kind, " name: ", name, " (op ", type_, ")");
  }
  std::string name_, type_;
  kit_internal::Signature signature_;
  Status signature_status_;
};

class OpKernelContext;

// The tensors of one list input argument ("values: N * T"), as TensorFlow's
// OpInputList: list[i], size(), range-for.
class OpInputList {
 public:
  OpInputList() = default;
  OpInputList(const OpKernelContext* ctx, int start, int stop) : ctx_(ctx), start_(start), stop_(stop) {}
  int size() const { return stop_ - start_; }
  const Tensor& operator[](int i) const;  // after OpKernelContext
  class Iterator {
   public:
    Iterator(const OpInputList* l, int i) : l_(l), i_(i) {}
    const Tensor& operator*() const { return (*l_)[i_]; }
    const Tensor* operator->() const { return &(*l_)[i_]; }
    Iterator& operator++() { ++i_; return *this; }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }
   private:
    const OpInputList* l_;
    int i_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }

 private:
  const OpKernelContext* ctx_ = nullptr;
  int start_ = 0, stop_ = 0;
};

// The tensors of one list output argument, as TensorFlow's OpOutputList:
// allocate(i, shape, &t), set(i, tensor), size().
class OpOutputList {
 public:
  OpOutputList() = default;
  OpOutputList(OpKernelContext* ctx, int start, int stop) : ctx_(ctx), start_(start), stop_(stop) {}
  int size() const { return stop_ - start_; }
  Status allocate(int i, const TensorShape& shape, Tensor** out);  // after OpKernelContext
  void set(int i, const Tensor& t);
  Tensor* operator[](int i);

 private:
  OpKernelContext* ctx_ = nullptr;
  int start_ = 0, stop_ = 0;
};

// TensorFlow's DeviceContext, as a kernel sees it: the stream its device work
// goes on (TF_GetStream). stream() is the plugin's own pdk::Stream
// (pdk/device.h) that its SP_StreamExecutor created; a plugin casts it to its
// stream class. Null where TensorFlow has no stream for the kernel.
class DeviceContext {
 public:
  explicit DeviceContext(TF_OpKernelContext* c) : c_(c) {}
  ::pdk::Stream* stream() const {
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    SP_Stream st = TF_GetStream(c_, s.get());
    if (TF_GetCode(s.get()) != TF_OK) return nullptr;
    return reinterpret_cast<::pdk::Stream*>(st);
  }

 private:
  TF_OpKernelContext* c_;
};

class OpKernelContext : public kit_internal::FailureState {
 public:
  OpKernelContext(::pdk::Context& ctx, const OpKernel* kernel)
      : ctx_(ctx), kernel_(kernel), eigen_(&::pdk::DeviceEigen(ctx.device_id())), device_(eigen_),
        inputs_(ctx.num_inputs()), outputs_(ctx.num_outputs()),
        device_only_(::pdk::KernelRegistry::Global().device_memory_only()),
        device_context_(ctx.raw()) {}

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType input_dtype(int i) const { return static_cast<DataType>(ctx_.input_dtype(i)); }
  DataType expected_output_dtype(int i) const {
    return static_cast<DataType>(ctx_.output_dtype(i));
  }
  const OpKernel& op_kernel() const { return *kernel_; }
  int64 step_id() const { return TF_GetStepId(ctx_.raw()); }

  // Input `index`, a borrowed view (pdk/tf/tensor.h) fetched on first use.
  // An index out of range sets InvalidArgument and gives an uninitialized
  // tensor (TensorFlow CHECK-fails).
  const Tensor& input(int index) const {
    if (index < 0 || index >= num_inputs()) {
      const_cast<OpKernelContext*>(this)->SetStatus(errors::InvalidArgument(
          "input index ", index, " out of range [0, ", num_inputs(), ") (op ", ctx_.op(), ")"));
      return empty_;
    }
    Slot& in = inputs_[index];
    if (!in.fetched) {
      Tensor& tensor = in.Use();
      ::pdk::StatusOr<::pdk::Tensor> t = ctx_.input(index);
      if (!t.ok()) {
        const_cast<OpKernelContext*>(this)->SetStatus(t.status());
      } else if (DataTypeSize(static_cast<DataType>(t->dtype())) > 0) {
        tensor = Tensor::BorrowedInput(*t, index);  // the TF_Tensor is released here
      } else {
        // string, resource, variant: TF_GetInput gives a buffer of its own
        // (a serialized resource handle), which the handle must keep alive.
        tensor = Tensor::Owning(std::move(t).value());
      }
      if (device_only_ && tensor.IsInitialized() && input_memory_type(index) == DEVICE_MEMORY)
        tensor.set_device_memory(true);
    }
    return in.tensor;
  }

  // Named inputs (TF_InputRange): `name` must be a single-tensor argument
  // for input(), a list one (or any) for input_list().
  Status input(StringPiece name, const Tensor** tensor) const {
    int start = 0, stop = 0;
    TF_RETURN_IF_ERROR(ArgRange(name, &start, &stop));
    if (stop != start + 1)
      return errors::InvalidArgument("OpKernel used list-valued input name '", name,
                                     "' when single-valued input was expected");
    *tensor = &input(start);
    return Status();
  }
  Status input_list(StringPiece name, OpInputList* list) const {
    int start = 0, stop = 0;
    TF_RETURN_IF_ERROR(ArgRange(name, &start, &stop));
    *list = OpInputList(this, start, stop);
    return Status();
  }
  // A list output argument, by the kernel's OpDef (OpKernel::OutputRange).
  Status output_list(StringPiece name, OpOutputList* list) {
    int start = 0, stop = 0;
    TF_RETURN_IF_ERROR(kernel_->OutputRange(name, &start, &stop));
    *list = OpOutputList(this, start, stop);
    return Status();
  }
  // TensorFlow's check of elementwise kernels: every input of input 0's
  // shape, else InvalidArgument (TensorFlow's wording) and false.
  bool ValidateInputsAreSameShape(const OpKernel* op) {
    for (int i = 1; i < num_inputs(); ++i)
      if (!input(0).IsSameSize(input(i))) {
        SetStatus(errors::InvalidArgument(
            "Inputs to operation ", op->name(), " of type ", op->type_string(),
            " must have the same size and shape.  Input 0: ", input(0).shape().DebugString(),
            " != input ", i, ": ", input(i).shape().DebugString()));
        return false;
      }
    return true;
  }

  // Output `index` of `shape`, with the dtype the graph expects. A shape
  // TensorFlow cannot hold is InvalidArgument, one whose bytes overflow int64
  // ResourceExhausted (pdk::CheckAllocatable).
  Status allocate_output(int index, const TensorShape& shape, Tensor** out) {
    TF_RETURN_IF_ERROR(CheckOutput(index));
    ::pdk::StatusOr<::pdk::Tensor> t = ctx_.allocate_output(index, shape.pdk_shape());
    if (!t.ok()) return t.status();
    return Keep(index, std::move(t).value(), out);
  }
  // Output `index` reuses the buffer of one of `candidates` (same size, no
  // other reader) or is allocated; `forwarded_input` (if given) receives the
  // input reused, or -1.
  Status forward_input_or_allocate_output(std::initializer_list<int> candidates, int index,
                                          const TensorShape& shape, Tensor** out,
                                          int* forwarded_input = nullptr) {
    return Forward(candidates.begin(), static_cast<int>(candidates.size()), index, shape, out,
                   forwarded_input);
  }
  // The same with candidates chosen at run time (TensorFlow's takes a
  // gtl::ArraySlice<int>).
  Status forward_input_or_allocate_output(const std::vector<int>& candidates, int index,
                                          const TensorShape& shape, Tensor** out,
                                          int* forwarded_input = nullptr) {
    return Forward(candidates.data(), static_cast<int>(candidates.size()), index, shape, out,
                   forwarded_input);
  }
  // A scratch tensor on the device, freed with the last copy of *out.
  Status allocate_temp(DataType type, const TensorShape& shape, Tensor* out) {
    ::pdk::StatusOr<::pdk::Tensor> t =
        ctx_.allocate_temp(static_cast<TF_DataType>(type), shape.pdk_shape());
    if (!t.ok()) return t.status();
    *out = Tensor::Owning(std::move(t).value());
    out->set_device_memory(device_only_);
    return Status();
  }
  // A scratch tensor, in host memory if attr.on_host() (TF_AllocateTemp's
  // on_host), else on the device.
  Status allocate_temp(DataType type, const TensorShape& shape, Tensor* out,
                       const AllocatorAttributes& attr) {
    if (!attr.on_host()) return allocate_temp(type, shape, out);
    const TF_DataType dt = static_cast<TF_DataType>(type);
    TF_RETURN_IF_ERROR(::pdk::CheckAllocatable(ctx_.op(), "temp", -1, shape.pdk_shape(), dt));
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    TF_AllocatorAttributes attrs{TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE, 1};
    ::pdk::Tensor t(TF_AllocateTemp(ctx_.raw(), dt, shape.pdk_shape().dims().data(),
                                    shape.dims(), &attrs, s.get()));
    if (TF_GetCode(s.get()) != TF_OK) return ::pdk::Status::FromTF(s.get());
    *out = Tensor::Owning(std::move(t));
    return Status();
  }
  // TensorFlow's forward_input_or_allocate_temp: here always a new scratch
  // tensor (forwarding an input to a temp is an optimization the C API does
  // not offer).
  template <class Candidates>
  Status forward_input_or_allocate_temp(const Candidates&, DataType type,
                                        const TensorShape& shape,
                                        const AllocatorAttributes& attr, Tensor* out) {
    return allocate_temp(type, shape, out, attr);
  }
  template <class Candidates>
  Status forward_input_or_allocate_temp(const Candidates& c, DataType type,
                                        const TensorShape& shape, Tensor* out) {
    return allocate_temp(type, shape, out);
  }
  Status forward_input_or_allocate_temp(std::initializer_list<int>, DataType type,
                                        const TensorShape& shape, Tensor* out) {
    return allocate_temp(type, shape, out);
  }
  // Where input or output i lives: HOST_MEMORY for a HostMemory argument of
  // the registration (TF_IsHostMemoryInput / TF_IsHostMemoryOutput).
  MemoryType input_memory_type(int i) const {
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    const bool host = TF_IsHostMemoryInput(ctx_.raw(), i, s.get());
    return TF_GetCode(s.get()) == TF_OK && host ? HOST_MEMORY : DEVICE_MEMORY;
  }
  MemoryType output_memory_type(int i) const {
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    const bool host = TF_IsHostMemoryOutput(ctx_.raw(), i, s.get());
    return TF_GetCode(s.get()) == TF_OK && host ? HOST_MEMORY : DEVICE_MEMORY;
  }
  // The stream of this launch (DeviceContext above).
  DeviceContext* op_device_context() { return &device_context_; }

  // Output `index` shares `t`'s buffer under t's shape (Identity, Reshape via
  // Tensor::CopyFrom): no copy. Errors set the context's status.
  void set_output(int index, const Tensor& t) {
    const Status st = SetOutput(index, t);
    if (!st.ok()) SetStatus(st);
  }
  // The output set or allocated at `index`, or null.
  Tensor* mutable_output(int index) {
    if (index < 0 || index >= num_outputs() || !outputs_[index].fetched) return nullptr;
    return &outputs_[index].tensor;
  }

  template <class Device>
  const Device& eigen_device() const;
  DeviceBase* device() const { return &device_; }

  ::pdk::Context& pdk_context() { return ctx_; }

 private:
  Status ArgRange(StringPiece name, int* start, int* stop) const {
    const std::string n(name);
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    TF_InputRange_Args args{TF_InputRange_Args_STRUCT_SIZE, nullptr, 0, 0, s.get()};
    TF_InputRange(ctx_.raw(), n.c_str(), &args);
    if (TF_GetCode(s.get()) != TF_OK) return ::pdk::Status::FromTF(s.get());
    *start = args.start;
    *stop = args.stop;
    return Status();
  }
  // One input or output. Its Tensor is constructed on first use (Use()):
  // most launches touch few of the inline slots.
  struct Slot {
    Slot() {}
    ~Slot() {
      if (fetched) tensor.~Tensor();
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Tensor& Use() {
      if (!fetched) {
        new (&tensor) Tensor();
        fetched = true;
      }
      return tensor;
    }
    union {
      Tensor tensor;  // constructed iff fetched
    };
    bool fetched = false;
  };
  // The inputs' or outputs' slots: inline up to kInline (no allocation per
  // launch for the usual op), on the heap beyond.
  class Slots {
   public:
    static constexpr int kInline = 4;
    explicit Slots(int n) : n_(n > 0 ? n : 0) {
      if (n_ > kInline) heap_ = std::make_unique<Slot[]>(n_);
    }
    int size() const { return n_; }
    Slot& operator[](int i) { return heap_ ? heap_[i] : inline_[i]; }

   private:
    int n_;
    Slot inline_[kInline];
    std::unique_ptr<Slot[]> heap_;
  };
  Status Forward(const int* candidates, int n, int index, const TensorShape& shape, Tensor** out,
                 int* forwarded_input) {
    TF_RETURN_IF_ERROR(CheckOutput(index));
    ::pdk::StatusOr<::pdk::Tensor> t = ctx_.forward_or_allocate_output(
        candidates, n, index, shape.pdk_shape(), forwarded_input);
    if (!t.ok()) return t.status();
    return Keep(index, std::move(t).value(), out);
  }
  Status CheckOutput(int index) const {
    if (index < 0 || index >= num_outputs())
      return errors::InvalidArgument("output index ", index, " out of range [0, ",
                                     num_outputs(), ") (op ", ctx_.op(), ")");
    return Status();
  }
  Status Keep(int index, ::pdk::Tensor t, Tensor** out) {
    Tensor& o = outputs_[index].Use();
    o = Tensor::Owning(std::move(t));
    if (device_only_ && output_memory_type(index) == DEVICE_MEMORY) o.set_device_memory(true);
    *out = &o;
    return Status();
  }
  Status SetOutput(int index, const Tensor& t) {
    TF_RETURN_IF_ERROR(CheckOutput(index));
    if (!t.IsInitialized())
      return errors::Internal("set_output(", index, ") of an uninitialized tensor (op ",
                              ctx_.op(), ")");
    const ::pdk::Shape& shape = t.shape().pdk_shape();
    if (t.owner() != nullptr) {
      // Its own handle, given t's shape (TF_SetShape acts on the handle only;
      // every set_output sets it again).
      TF_RETURN_IF_ERROR(ctx_.set_output_reshaped(index, *t.owner(), shape));
    } else if (t.input_index() >= 0) {
      // A borrowed input: a fresh handle of it.
      ::pdk::StatusOr<::pdk::Tensor> h = ctx_.input(t.input_index());
      if (!h.ok()) return h.status();
      TF_RETURN_IF_ERROR(ctx_.set_output_reshaped(index, h.value(), shape));
    }
    outputs_[index].Use() = t;
    return Status();
  }
  ::pdk::Context& ctx_;
  const OpKernel* kernel_;
  const Eigen::ThreadPoolDevice* eigen_;  // the device's pool (pdk::DeviceEigen)
  mutable DeviceBase device_;
  mutable Slots inputs_;
  Slots outputs_;
  Tensor empty_;
  bool device_only_;  // the device's memory is kDeviceOnly (pdk/kernel.h)
  DeviceContext device_context_;
};

inline const Tensor& OpInputList::operator[](int i) const { return ctx_->input(start_ + i); }
inline Status OpOutputList::allocate(int i, const TensorShape& shape, Tensor** out) {
  return ctx_->allocate_output(start_ + i, shape, out);
}
inline void OpOutputList::set(int i, const Tensor& t) { ctx_->set_output(start_ + i, t); }
inline Tensor* OpOutputList::operator[](int i) { return ctx_->mutable_output(start_ + i); }

template <>
inline const Eigen::ThreadPoolDevice& OpKernelContext::eigen_device<Eigen::ThreadPoolDevice>()
    const {
  return *eigen_;
}

// ------------------------------------------------------------- registration

namespace kit_internal {

// A TF-style kernel K (constructed from OpKernelConstruction*, virtual
// Compute(OpKernelContext*)) as a kit kernel (pdk/kernel.h).
template <class K>
class TfKernel {
 public:
  ::pdk::Status Init(const ::pdk::Attrs& attrs) {
    OpKernelConstruction c(attrs);
    auto k = std::make_unique<K>(&c);
    if (c.status().ok()) kernel_ = std::move(k);
    return c.status();
  }
  ::pdk::Status Compute(::pdk::Context& ctx) const {
    OpKernelContext c(ctx, kernel_.get());
    kernel_->Compute(&c);
    return c.status();
  }

 private:
  std::unique_ptr<K> kernel_;
};

// Adds the kit's compile-time type constraint for a runtime DataType.
template <class D>
bool ApplyTypeConstraint(D& def, const std::string& attr, DataType dt) {
  bool done = false;
  ::pdk::ForEachType(::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int8, int16,
                                     int32, int64, uint8, uint16, uint32, uint64, bool,
                                     complex64, complex128
#ifdef PDK_TF_HAVE_QUANTIZED
                                     , qint8, quint8, qint16, quint16, qint32
#endif
                                     >{},
                     [&](auto t) {
                       using T = typename decltype(t)::type;
                       if (!done && dt == DataTypeToEnum<T>::value) {
                         def.template Type<T>(attr.c_str());
                         done = true;
                       }
                     });
  return done;
}

}  // namespace kit_internal

namespace register_kernel {
// REGISTER_KERNEL_BUILDER's first argument: the op, device, type constraints
// and host-memory arguments of one kernel.
class Name {
 public:
  explicit Name(const char* op) : op_(op) {}
  Name& Device(const char* device_type) {
    device_ = device_type;
    return *this;
  }
  template <class T>
  Name& TypeConstraint(const char* attr) {
    return TypeConstraint(attr, DataTypeToEnum<T>::value);
  }
  Name& TypeConstraint(const char* attr, DataType dt) {
    types_.emplace_back(attr, dt);
    return *this;
  }
  Name& HostMemory(const char* arg) {
    host_memory_.emplace_back(arg);
    return *this;
  }
  Name& Priority(int p) {
    priority_ = p;
    return *this;
  }
  // PDK's addition: the kit's KernelDef::Async (pdk/kernel.h). Compute stays
  // synchronous code; the kit may run it on a launcher thread.
  Name& Async() {
    async_ = true;
    return *this;
  }
  // PDK's addition: register only if pred() is true when TF_InitKernel
  // replays the registration (e.g. a C API entry point the running
  // TensorFlow may lack); otherwise the kernel is left out, silently.
  Name& If(bool (*pred)()) {
    condition_ = pred;
    return *this;
  }

  const std::string& op() const { return op_; }

  // Registers kernel K for this description (TF_InitKernel). A device other
  // than the plugin's, or a constraint type the kit cannot register, is
  // reported on stderr and that kernel skipped; the others still register.
  template <class K>
  void Register(::pdk::Registrar& r) const {
    // TensorFlow itself registers its DEVICE_DEFAULT kernels, which serve every
    // device without a kernel of its own: the plugin adds nothing for them (a
    // copy for its device type would clash with the kernel its DEVICE_CPU
    // registration of the same op and dtype gives).
    if (device_ == DEVICE_DEFAULT) return;
    if (condition_ != nullptr && !condition_()) return;
    if (device_ != r.device_type())
      return Skip(r, "Device(\"" + device_ + "\"), but this plugin's kernels are for device \"" +
                  r.device_type() + "\"");
    ::pdk::KernelDef<kit_internal::TfKernel<K>> def(op_);
    for (const auto& [attr, dt] : types_)
      if (!kit_internal::ApplyTypeConstraint(def, attr, dt))
        return Skip(r, "TypeConstraint(\"" + attr + "\", " + DataTypeString(dt) +
                    "): no kernel of this dtype can be registered through the C API");
    for (const std::string& arg : host_memory_) def.HostMemory(arg.c_str());
    if (priority_) def.Priority(priority_);
    def.Async(async_);
    r.Add(def);
  }

 private:
  // "<device type>: REGISTER_KERNEL_BUILDER(Name("Op")...) skipped: why" on stderr.
  void Skip(const ::pdk::Registrar& r, const std::string& why) const {
    std::fprintf(stderr, "%s: REGISTER_KERNEL_BUILDER(Name(\"%s\")...) skipped: %s\n",
                 r.device_type(), op_.c_str(), why.c_str());
  }
  std::string op_;
  std::string device_ = "(none: Name(...).Device() missing)";
  std::vector<std::pair<std::string, DataType>> types_;
  std::vector<std::string> host_memory_;
  int priority_ = 0;
  bool async_ = false;
  bool (*condition_)() = nullptr;
};
}  // namespace register_kernel

namespace kit_internal {
// One REGISTER_KERNEL_BUILDER: `Tag` is unique to it (see REGISTER_OP).
template <class Tag, class K>
struct KernelRegistration {
  static bool Add(const register_kernel::Name& name) {
    Slot() = new register_kernel::Name(name);  // lives as long as the plugin
    return ::pdk::KernelRegistry::Global().Add(Slot()->op().c_str(), &Replay);
  }
  static void Replay(::pdk::Registrar& r) { Slot()->template Register<K>(r); }
  static register_kernel::Name*& Slot() {
    static register_kernel::Name* n = nullptr;
    return n;
  }
};
}  // namespace kit_internal

}  // namespace pdk_kit
}  // namespace tensorflow

// REGISTER_KERNEL_BUILDER(Name("Op").Device(DEVICE_HELLO)..., KernelClass);  at
// namespace scope. The kernel class may be a template instance with commas.
// As TensorFlow's, the expansion ends with its own `;`: the one after the
// macro is optional (registration macros in TensorFlow's kernels omit it).
#define REGISTER_KERNEL_BUILDER(kernel_builder, ...) \
  PDK_TF_REGISTER_KERNEL_(PDK_TF_CONCAT_(pdk_tf_kernel_, __COUNTER__), kernel_builder, __VA_ARGS__)
#define PDK_TF_REGISTER_KERNEL_(id, kernel_builder, ...)                                    \
  namespace {                                                                               \
  struct id {};                                                                             \
  }                                                                                         \
  [[maybe_unused]] static const bool PDK_TF_CONCAT_(id, _registered) =                      \
      ::tensorflow::pdk_kit::kit_internal::KernelRegistration<id, __VA_ARGS__>::Add(            \
          ::tensorflow::pdk_kit::register_kernel::kernel_builder);

// Fails the kernel (construction or Compute) with STATUS and returns, unless EXP.
#define OP_REQUIRES(CTX, EXP, STATUS)                  \
  do {                                                 \
    if (!(EXP)) {                                      \
      (CTX)->CtxFailure(__FILE__, __LINE__, (STATUS)); \
      return;                                          \
    }                                                  \
  } while (0)

// Fails the kernel with the Status of the expression and returns, unless OK.
#define OP_REQUIRES_OK(CTX, ...)                                              \
  do {                                                                        \
    const ::tensorflow::pdk_kit::Status pdk_tf_op_status_ = (__VA_ARGS__);    \
    if (!pdk_tf_op_status_.ok()) {                                            \
      (CTX)->CtxFailureWithWarning(__FILE__, __LINE__, pdk_tf_op_status_);    \
      return;                                                                 \
    }                                                                         \
  } while (0)

#endif  // PDK_TF_OP_KERNEL_H_
