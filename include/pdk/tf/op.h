// pdk/tf/op.h — REGISTER_OP over the op C API (TF_OpDefinitionBuilder).
//
//   REGISTER_OP("_PdkFusedMatMul")
//       .Input("a: T").Input("b: T").Input("bias: T")
//       .Output("product: T")
//       .Attr("T: {float}")
//       .Attr("transpose_b: bool = false")
//       .SetShapeFn([](shape_inference::InferenceContext* c) { ...; return OkStatus(); });
//
// Specs are TensorFlow's ("name: type", "name: type = default", "N * T",
// "{float, double}"; see tensorflow/c/ops.h). Also SetIsStateful,
// SetIsCommutative, SetIsAggregate, SetAllowsUninitializedInput, Deprecated;
// Doc() is accepted and dropped (the C API keeps no docs).
//
// Registration is deferred, like the kit's kernels: REGISTER_OP appends to the
// kit's registry during static initialization and the op is defined when the
// plugin's TF_InitKernel replays it (pdk::KernelRegistry::RegisterAll), before
// the kernels that follow it in the same file. A shape function that returns
// an error fails graph construction with that error, as in TensorFlow.
//
// A spec TensorFlow cannot parse ("n: notatype") aborts the process when the
// op is defined: TensorFlow 2.21 CHECK-fails on any op registration error once
// its registry is initialized (tensorflow/core/framework/op.cc), before
// TF_RegisterOpDefinition could return the status. Load the plugin once in a
// test (tests/python/test_kit.py does) to see every spec accepted.
#ifndef PDK_TF_OP_H_
#define PDK_TF_OP_H_

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pdk/kernel.h"
#include "pdk/op_names.h"
#include "pdk/tf/shape_inference.h"
#include "pdk/tf/status.h"
#include "tensorflow/c/ops.h"

namespace tensorflow {
inline namespace pdk_kit {

using ShapeInferenceFn = std::function<Status(shape_inference::InferenceContext*)>;

// What REGISTER_OP builds. `Tag` is a type unique to one REGISTER_OP (declared
// by the macro in an anonymous namespace), so each op has its own static
// instance and its own shape-function trampoline, as the C API's shape
// function is a plain function pointer.
template <class Tag>
class OpDefBuilderWrapper {
 public:
  static OpDefBuilderWrapper& Begin(const char* name) {
    OpDefBuilderWrapper& w = Instance();
    w.name_ = name;
    ::pdk::DefinedOpNames().push_back(name);  // TFKit_OpNames
    ::pdk::KernelRegistry::Global().Add(name, &Replay);
    return w;
  }

  OpDefBuilderWrapper& Input(std::string spec) { return Add(&inputs_, std::move(spec)); }
  OpDefBuilderWrapper& Output(std::string spec) { return Add(&outputs_, std::move(spec)); }
  OpDefBuilderWrapper& Attr(std::string spec) { return Add(&attrs_, std::move(spec)); }
  OpDefBuilderWrapper& SetIsStateful() { return Flag(&stateful_); }
  OpDefBuilderWrapper& SetIsCommutative() { return Flag(&commutative_); }
  OpDefBuilderWrapper& SetIsAggregate() { return Flag(&aggregate_); }
  OpDefBuilderWrapper& SetAllowsUninitializedInput() { return Flag(&allows_uninitialized_); }
  OpDefBuilderWrapper& Deprecated(int version, std::string explanation) {
    deprecated_version_ = version;
    deprecation_ = std::move(explanation);
    return *this;
  }
  OpDefBuilderWrapper& Doc(const std::string&) { return *this; }
  OpDefBuilderWrapper& SetShapeFn(ShapeInferenceFn fn) {
    shape_fn_ = std::move(fn);
    return *this;
  }

 private:
  static OpDefBuilderWrapper& Instance() {
    static OpDefBuilderWrapper* w = new OpDefBuilderWrapper;  // lives as long as the op
    return *w;
  }
  OpDefBuilderWrapper& Add(std::vector<std::string>* v, std::string spec) {
    v->push_back(std::move(spec));
    return *this;
  }
  OpDefBuilderWrapper& Flag(bool* f) {
    *f = true;
    return *this;
  }

  static void ShapeTrampoline(TF_ShapeInferenceContext* c, TF_Status* status) {
    const Status st = ::pdk::GuardedCall("shape function", [&]() -> Status {
      shape_inference::InferenceContext ctx(c);
      Status s = Instance().shape_fn_(&ctx);
      return s.ok() ? ctx.deferred_status() : s;
    });
    st.ToTF(status);
  }

  // Defines the op (TF_InitKernel).
  static void Replay(::pdk::Registrar&) {
    const OpDefBuilderWrapper& w = Instance();
    TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(w.name_);
    for (const std::string& s : w.inputs_) TF_OpDefinitionBuilderAddInput(b, s.c_str());
    for (const std::string& s : w.outputs_) TF_OpDefinitionBuilderAddOutput(b, s.c_str());
    for (const std::string& s : w.attrs_) TF_OpDefinitionBuilderAddAttr(b, s.c_str());
    if (w.stateful_) TF_OpDefinitionBuilderSetIsStateful(b, true);
    if (w.commutative_) TF_OpDefinitionBuilderSetIsCommutative(b, true);
    if (w.aggregate_) TF_OpDefinitionBuilderSetIsAggregate(b, true);
    if (w.allows_uninitialized_) TF_OpDefinitionBuilderSetAllowsUninitializedInput(b, true);
    if (!w.deprecation_.empty())
      TF_OpDefinitionBuilderDeprecated(b, w.deprecated_version_, w.deprecation_.c_str());
    if (w.shape_fn_) TF_OpDefinitionBuilderSetShapeInferenceFunction(b, &ShapeTrampoline);
    ::pdk::TFStatusPtr s = ::pdk::NewTFStatus();
    TF_RegisterOpDefinition(b, s.get());  // takes the builder, on success or not
    if (TF_GetCode(s.get()) != TF_OK)  // (see the header comment: 2.21 aborts first)
      std::fprintf(stderr, "REGISTER_OP(\"%s\") failed: %s\n", w.name_, TF_Message(s.get()));
  }

  const char* name_ = "";
  std::vector<std::string> inputs_, outputs_, attrs_;
  bool stateful_ = false, commutative_ = false, aggregate_ = false, allows_uninitialized_ = false;
  int deprecated_version_ = 0;
  std::string deprecation_;
  ShapeInferenceFn shape_fn_;
};

}  // namespace pdk_kit
}  // namespace tensorflow

#define PDK_TF_CONCAT_INNER_(a, b) a##b
#define PDK_TF_CONCAT_(a, b) PDK_TF_CONCAT_INNER_(a, b)

// REGISTER_OP("Name").Input(...)...;  at namespace scope.
#define REGISTER_OP(name) PDK_TF_REGISTER_OP_(PDK_TF_CONCAT_(pdk_tf_op_, __COUNTER__), name)
#define PDK_TF_REGISTER_OP_(id, name)                                                         \
  namespace {                                                                                 \
  struct id {};                                                                               \
  }                                                                                           \
  [[maybe_unused]] static ::tensorflow::pdk_kit::OpDefBuilderWrapper<id>& PDK_TF_CONCAT_(   \
      id, _def) = ::tensorflow::pdk_kit::OpDefBuilderWrapper<id>::Begin(name)

#endif  // PDK_TF_OP_H_
