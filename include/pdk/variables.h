// In-place access to resource variables from a kernel, for the legacy training
// ops (ResourceApplyGradientDescent, ...), through tensorflow/c/
// kernels_experimental.h. Those functions are exported by TensorFlow 2.16 to
// 2.18 and again by tf-nightly (2.23.0.dev20261026), but not by 2.19, 2.20 and
// 2.21 (tensorflow issue 126374), so the kit resolves them at run time (dlsym) and a plugin
// registers the kernels that need them only where `VariableApi::Get()` is
// non-null — one wheel, degrading per missing symbol instead of failing to load.
//
//   pdk::LockedVariables vars;
//   PDK_RETURN_IF_ERROR(vars.Lock(ctx, {0, 1}, use_locking));  // inputs 0, 1
//   T* var = vars.tensor(0).mutable_data<T>();                 // in place
//
// Locking follows TensorFlow's MaybeLockVariableInputMutexesInOrder: with
// `use_locking` the variables' mutexes are taken in a fixed order for the life
// of the LockedVariables. A variable whose buffer is shared (a reader still
// holds it) is copied first (copy-on-write; TensorFlow calls the kit's copy
// function), so an update never changes a tensor someone else reads.
#ifndef PDK_VARIABLES_H_
#define PDK_VARIABLES_H_

#include <dlfcn.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "pdk/kernel.h"
#include "pdk/status.h"
#include "pdk/tensor.h"
#include "tensorflow/c/kernels.h"

namespace pdk {

struct TF_VariableInputLockHolderOpaque;

// The kernels_experimental.h functions the kit uses, or null members.
struct VariableApi {
  using CopyFn = void (*)(TF_OpKernelContext*, TF_Tensor*, TF_Tensor*);
  void (*lock)(TF_OpKernelContext*, bool do_lock, bool sparse, const int* inputs, size_t len,
               CopyFn copy, TF_VariableInputLockHolderOpaque** holder, TF_Status*) = nullptr;
  void (*get)(TF_OpKernelContext*, int input, bool lock_held, bool is_variant, bool sparse,
              CopyFn copy, TF_Tensor** out, TF_Status*) = nullptr;
  void (*release)(TF_VariableInputLockHolderOpaque*) = nullptr;

  // The API of the running TensorFlow, or null when it lacks any function.
  static const VariableApi* Get() {
    static const VariableApi api = [] {
      VariableApi a;
      a.lock = reinterpret_cast<decltype(a.lock)>(
          dlsym(RTLD_DEFAULT, "TF_MaybeLockVariableInputMutexesInOrder"));
      a.get = reinterpret_cast<decltype(a.get)>(
          dlsym(RTLD_DEFAULT, "TF_GetInputTensorFromVariable"));
      a.release = reinterpret_cast<decltype(a.release)>(
          dlsym(RTLD_DEFAULT, "TF_ReleaseVariableInputLockHolder"));
      return a;
    }();
    return api.lock && api.get && api.release ? &api : nullptr;
  }

  // Copy-on-write: the device's memory is host memory.
  static void Copy(TF_OpKernelContext*, TF_Tensor* source, TF_Tensor* dest) {
    const size_t n = TF_TensorByteSize(source);
    if (n != 0) std::memcpy(TF_TensorData(dest), TF_TensorData(source), n);
  }
};

// The variables at some resource inputs of one launch, locked (if asked) and
// readable/writable in place until destruction.
class LockedVariables {
 public:
  LockedVariables() = default;
  LockedVariables(const LockedVariables&) = delete;
  LockedVariables& operator=(const LockedVariables&) = delete;
  ~LockedVariables() {
    tensors_.clear();
    if (holder_) api_->release(holder_);
  }

  Status Lock(Context& ctx, std::initializer_list<int> inputs, bool use_locking) {
    api_ = VariableApi::Get();
    if (api_ == nullptr)
      return Unimplemented(ctx.op(), ": this TensorFlow does not export the variable functions "
                                     "of kernels_experimental.h (2.16-2.18 and tf-nightly do)");
    const std::vector<int> ids(inputs);
    TFStatusPtr s = NewTFStatus();
    api_->lock(ctx.raw(), use_locking, /*sparse=*/false, ids.data(), ids.size(),
               &VariableApi::Copy, &holder_, s.get());
    if (TF_GetCode(s.get()) != TF_OK) return Status::FromTF(s.get());
    for (int i : ids) {
      TF_Tensor* t = nullptr;
      api_->get(ctx.raw(), i, /*lock_held=*/use_locking, /*is_variant=*/false, /*sparse=*/false,
                &VariableApi::Copy, &t, s.get());
      Tensor owned(t);
      if (TF_GetCode(s.get()) != TF_OK) return Status::FromTF(s.get());
      tensors_.push_back(std::move(owned));
    }
    return Status::OK();
  }

  // The k-th locked variable (in the order given to Lock).
  Tensor& tensor(size_t k) { return tensors_[k]; }

 private:
  const VariableApi* api_ = nullptr;
  TF_VariableInputLockHolderOpaque* holder_ = nullptr;
  std::vector<Tensor> tensors_;
};

}  // namespace pdk

#endif  // PDK_VARIABLES_H_
