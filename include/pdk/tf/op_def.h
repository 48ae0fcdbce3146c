// pdk/tf/op_def.h — an op's argument list (OpDef's input_arg / output_arg),
// which TensorFlow's kernel API answers at construction (num_inputs(),
// input_type(i), InputRange("values", ...), MatchSignature) and the kernel C
// API does not.
//
// The OpDef comes from TensorFlow's C API: TF_GraphGetOpDef (tensorflow/c/
// c_api.h), found at run time with dlsym in the process's global scope, where
// TensorFlow's Python package (and any program linking libtensorflow_cc) has
// it. The kit does not link it: a plugin stays loadable without it, and then
// these queries fail with FailedPrecondition saying so. Parsed with the kit's
// wire reader (op_def.proto: OpDef.input_arg = 2, output_arg = 3; ArgDef.name
// = 1, type = 3, type_attr = 4, number_attr = 5, type_list_attr = 6), cached
// per op.
#ifndef PDK_TF_OP_DEF_H_
#define PDK_TF_OP_DEF_H_

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "pdk/status.h"
#include "pdk/wire_format.h"
#include "tensorflow/c/c_api.h"

namespace pdk {
namespace tf_op_def {

// One input_arg or output_arg: its dtype is `type`, or attr `type_attr`'s;
// it is `number_attr` tensors of that dtype, or one per dtype of list attr
// `type_list_attr`, or one tensor.
struct ArgDef {
  std::string name, type_attr, number_attr, type_list_attr;
  int type = 0;  // TF_DataType, 0 when given by an attr
};
struct OpArgs {
  std::vector<ArgDef> inputs, outputs;
};

inline bool ParseArgDef(std::string_view bytes, ArgDef* a) {
  wire::Reader r(bytes);
  int f, w;
  while (!r.done() && r.Tag(&f, &w)) {
    std::string_view s;
    uint64_t v;
    if (w == wire::kLengthDelimited && (f == 1 || f == 4 || f == 5 || f == 6)) {
      if (!r.Bytes(&s)) return false;
      (f == 1 ? a->name : f == 4 ? a->type_attr : f == 5 ? a->number_attr : a->type_list_attr) =
          std::string(s);
    } else if (f == 3 && w == wire::kVarint) {
      if (!r.Varint(&v)) return false;
      a->type = static_cast<int>(v);
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return true;
}

inline Status ParseOpArgs(std::string_view bytes, OpArgs* out) {
  wire::Reader r(bytes);
  int f, w;
  while (!r.done() && r.Tag(&f, &w)) {
    std::string_view s;
    if ((f == 2 || f == 3) && w == wire::kLengthDelimited) {
      ArgDef a;
      if (!r.Bytes(&s) || !ParseArgDef(s, &a)) break;
      (f == 2 ? out->inputs : out->outputs).push_back(std::move(a));
    } else if (!r.Skip(w)) {
      break;
    }
  }
  if (!r.done()) return Status(TF_INTERNAL, "malformed OpDef from TF_GraphGetOpDef");
  return Status();
}

// The argument lists of op `op`, from TensorFlow's registry.
inline Status Lookup(const std::string& op, std::shared_ptr<const OpArgs>* out) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const OpArgs>> cache;
  std::lock_guard<std::mutex> l(mu);
  if (auto it = cache.find(op); it != cache.end()) {
    *out = it->second;
    return Status();
  }
  using NewGraphFn = TF_Graph* (*)();
  using DeleteGraphFn = void (*)(TF_Graph*);
  using GetOpDefFn = void (*)(TF_Graph*, const char*, TF_Buffer*, TF_Status*);
  auto new_graph = reinterpret_cast<NewGraphFn>(dlsym(RTLD_DEFAULT, "TF_NewGraph"));
  auto delete_graph = reinterpret_cast<DeleteGraphFn>(dlsym(RTLD_DEFAULT, "TF_DeleteGraph"));
  auto get_op_def = reinterpret_cast<GetOpDefFn>(dlsym(RTLD_DEFAULT, "TF_GraphGetOpDef"));
  if (!new_graph || !delete_graph || !get_op_def)
    return Status(TF_FAILED_PRECONDITION,
                  "the op's argument list (OpDef) is not available: TensorFlow's C API "
                  "TF_GraphGetOpDef is not loaded in this process (it is when TensorFlow "
                  "runs from Python)");
  TF_Graph* g = new_graph();
  TF_Buffer* buf = TF_NewBuffer();
  TFStatusPtr s = NewTFStatus();
  get_op_def(g, op.c_str(), buf, s.get());
  Status st = Status::FromTF(s.get());
  auto args = std::make_shared<OpArgs>();
  if (st.ok()) st = ParseOpArgs(std::string_view(static_cast<const char*>(buf->data),
                                                 buf->length), args.get());
  TF_DeleteBuffer(buf);
  delete_graph(g);
  if (!st.ok()) return st;
  *out = cache[op] = std::move(args);
  return Status();
}

}  // namespace tf_op_def
}  // namespace pdk

#endif  // PDK_TF_OP_DEF_H_
