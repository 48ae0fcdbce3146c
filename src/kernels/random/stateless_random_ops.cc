// Stateless random number ops (tensorflow/core/ops/stateless_random_ops{,_v2}.cc),
// bit-identical to TensorFlow's CPU kernels (tensorflow/core/kernels/
// stateless_random_ops{,_v2}.cc). Generator and distributions: philox.h.
//
// Seed -> key/counter (all host memory):
//   StatelessRandomGetKeyCounter(seed: int32|int64 [2]) -> key: uint64 [1], counter: uint64 [2]
//   StatelessRandomGetKeyCounterAlg(seed)               -> key, counter, alg: int32 [] (= 1)
//   StatelessRandomGetAlg()                             -> alg: int32 [] (= 1, Philox)
//
// V2 ops (shape: int32|int64 [rank], key: uint64 [1], counter: uint64 [>= 2],
// alg: int32 []; shape, key, counter, alg in host memory):
//   StatelessRandomUniformV2        dtype half, bfloat16, float, double   [0, 1)
//   StatelessRandomNormalV2         dtype half, bfloat16, float, double   N(0, 1)
//   StatelessTruncatedNormalV2      dtype half, bfloat16, float, double   N(0, 1) | |x| < 2
//   StatelessRandomUniformIntV2     dtype int32, int64; + minval, maxval: dtype [] (host)
//   StatelessRandomUniformFullIntV2 dtype int32, int64, uint32, uint64
// alg 1 (Philox) and 3 (auto-select, which TF's CPU kernel resolves to Philox)
// run; any other id is InvalidArgument "Unsupported algorithm id" (ThreeFry is
// not implemented on CPU by TensorFlow either).
//
// V1 ops (shape as above; seed: int32|int64 [2], host memory), whose key and
// counter come from the seed exactly as StatelessRandomGetKeyCounter's do:
//   StatelessRandomUniform, StatelessRandomNormal, StatelessTruncatedNormal
//                                   dtype half, bfloat16, float, double
//   StatelessRandomUniformInt       dtype int32, int64; + minval, maxval (host)
//   StatelessRandomUniformFullInt   dtype int32, int64, uint32, uint64
//
// Errors (InvalidArgument, naming op and operand): shape not a vector or with a
// negative dimension; seed not of shape [2] or not int32/int64; key not of shape
// [1]; counter not a vector of length >= 2 (TF accepts length 1 for Philox and
// then reads past it; PDK refuses); alg not an int32 scalar or unsupported;
// minval/maxval not scalars, or minval >= maxval for a non-empty output.
//
// Work: the output is cut into the distribution's groups (philox.h) and the
// groups are split over the device's thread pool; each shard skips the
// counter ahead to its first group, as TF's FillPhiloxRandom does, so the
// result does not depend on the split.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/random/philox.h"
#include "kernels/random/random_fill.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_random::Fill;
using pdk_random::Philox;
using pdk_random::ReadShape;

constexpr int32_t kAlgPhilox = 1;
constexpr int32_t kAlgAutoSelect = 3;

// Generator from a host `seed` input: int32 or int64, shape [2].
Status GeneratorFromSeed(const std::string& op, const Tensor& seed, Philox* gen) {
  if (seed.dims() != 1 || seed.dim_size(0) != 2)
    return errors::InvalidArgument(op, ": seed must have shape [2], got shape ", seed.shape());
  std::vector<int64> s;
  TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, "seed", seed, &s));
  *gen = pdk_random::FromSeed(static_cast<uint64_t>(s[0]), static_cast<uint64_t>(s[1]));
  return OkStatus();
}

// Generator from host `key`, `counter` and `alg` inputs (V2 ops).
Status GeneratorFromKeyCounter(const std::string& op, const Tensor& key, const Tensor& counter,
                               const Tensor& alg, Philox* gen) {
  if (alg.dims() != 0 || alg.dtype() != DT_INT32)
    return errors::InvalidArgument(op, ": alg must be an int32 scalar, got ",
                                   ::pdk::DataTypeName(static_cast<TF_DataType>(alg.dtype())),
                                   " of shape ", alg.shape());
  int32_t id = alg.flat<int32>()(0);
  if (id == kAlgAutoSelect) id = kAlgPhilox;
  if (id != kAlgPhilox)
    return errors::InvalidArgument(op, ": Unsupported algorithm id: ", id,
                                   " (PDK implements Philox = 1 and auto-select = 3)");
  if (key.dims() != 1 || key.dim_size(0) != 1)
    return errors::InvalidArgument(op, ": key must have shape [1], got shape ", key.shape());
  if (counter.dims() != 1 || counter.dim_size(0) < 2)
    return errors::InvalidArgument(op,
                                   ": counter must be a vector of length at least 2 for "
                                   "Philox, got shape ",
                                   counter.shape());
  *gen = Philox::FromMem(key.flat<uint64>().data(), counter.flat<uint64>().data());
  return OkStatus();
}

// How a kernel gets its generator: from key/counter/alg (inputs 1-3, V2) or
// from a seed (input 1, V1).
enum class Source { kKeyCounter, kSeed };

Status Generator(OpKernelContext* ctx, Source src, Philox* gen) {
  const std::string& op = ctx->op_kernel().type_string();
  if (src == Source::kSeed) return GeneratorFromSeed(op, ctx->input(1), gen);
  return GeneratorFromKeyCounter(op, ctx->input(1), ctx->input(2), ctx->input(3), gen);
}

// Uniform / Normal / TruncatedNormal / UniformFullInt: output = Dist over shape.
template <class T, class Dist, Source kSrc>
class StatelessRandomOp : public OpKernel {
 public:
  explicit StatelessRandomOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ReadShape(type_string(), ctx->input(0), &shape));
    Philox gen;
    OP_REQUIRES_OK(ctx, Generator(ctx, kSrc, &gen));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    Fill<T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), Dist(), gen, out);
  }
};

// UniformInt: integers in [minval, maxval); minval/maxval follow the generator
// inputs (inputs 4, 5 for V2; 2, 3 for V1).
template <class Int, Source kSrc>
class StatelessRandomUniformIntOp : public OpKernel {
 public:
  explicit StatelessRandomUniformIntOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ReadShape(op, ctx->input(0), &shape));
    Philox gen;
    OP_REQUIRES_OK(ctx, Generator(ctx, kSrc, &gen));
    const int first = kSrc == Source::kSeed ? 2 : 4;
    const Tensor& minval = ctx->input(first);
    const Tensor& maxval = ctx->input(first + 1);
    OP_REQUIRES(ctx, minval.dims() == 0,
                errors::InvalidArgument(op, ": minval must be 0-D, got shape ", minval.shape()));
    OP_REQUIRES(ctx, maxval.dims() == 0,
                errors::InvalidArgument(op, ": maxval must be 0-D, got shape ", maxval.shape()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;  // any bounds are fine
    const Int lo = minval.flat<Int>()(0), hi = maxval.flat<Int>()(0);
    OP_REQUIRES(ctx, lo < hi,
                errors::InvalidArgument(op, ": Need minval < maxval, got ", lo, " >= ", hi));
    Fill<Int>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), pdk_random::UniformInt<Int>(lo, hi),
              gen, out);
  }
};

// StatelessRandomGetKeyCounter[Alg]: key/counter (and alg) from a seed.
template <bool kWithAlg>
class GetKeyCounterOp : public OpKernel {
 public:
  explicit GetKeyCounterOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    Philox gen;
    OP_REQUIRES_OK(ctx, GeneratorFromSeed(type_string(), ctx->input(0), &gen));
    Tensor* key = nullptr;
    Tensor* counter = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({1}), &key));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({2}), &counter));
    gen.KeyToMem(key->flat<uint64>().data());
    gen.CounterToMem(counter->flat<uint64>().data());
    if constexpr (kWithAlg) {
      Tensor* alg = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape(), &alg));
      alg->flat<int32>()(0) = kAlgPhilox;
    }
  }
};

class GetAlgOp : public OpKernel {
 public:
  explicit GetAlgOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    Tensor* alg = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &alg));
    alg->flat<int32>()(0) = kAlgPhilox;
  }
};

using pdk_random::Normal;
using pdk_random::TruncatedNormal;
using pdk_random::Uniform;
using pdk_random::UniformFullInt;

REGISTER_KERNEL_BUILDER(Name("StatelessRandomGetKeyCounter")
                            .Device(DEVICE_PDK)
                            .HostMemory("seed")
                            .HostMemory("key")
                            .HostMemory("counter"),
                        GetKeyCounterOp<false>);
REGISTER_KERNEL_BUILDER(Name("StatelessRandomGetKeyCounterAlg")
                            .Device(DEVICE_PDK)
                            .HostMemory("seed")
                            .HostMemory("key")
                            .HostMemory("counter")
                            .HostMemory("alg"),
                        GetKeyCounterOp<true>);
REGISTER_KERNEL_BUILDER(Name("StatelessRandomGetAlg").Device(DEVICE_PDK).HostMemory("alg"),
                        GetAlgOp);

// V2 ops: shape, key, counter, alg in host memory; V1 ops: shape, seed.
#define PDK_V2_(op)          \
  Name(op)                   \
      .Device(DEVICE_PDK)    \
      .HostMemory("shape")   \
      .HostMemory("key")     \
      .HostMemory("counter") \
      .HostMemory("alg")
#define PDK_V1_(op) Name(op).Device(DEVICE_PDK).HostMemory("shape").HostMemory("seed")

// Floating-point distributions: dtype float16, bfloat16, float32, float64.
#define PDK_REGISTER_STATELESS_FLOAT_(T)                                                  \
  REGISTER_KERNEL_BUILDER(PDK_V2_("StatelessRandomUniformV2").TypeConstraint<T>("dtype"), \
                          StatelessRandomOp<T, Uniform<T>, Source::kKeyCounter>);         \
  REGISTER_KERNEL_BUILDER(PDK_V2_("StatelessRandomNormalV2").TypeConstraint<T>("dtype"),  \
                          StatelessRandomOp<T, Normal<T>, Source::kKeyCounter>);          \
  REGISTER_KERNEL_BUILDER(                                                                \
      PDK_V2_("StatelessTruncatedNormalV2").TypeConstraint<T>("dtype"),                   \
      StatelessRandomOp<T, TruncatedNormal<T>, Source::kKeyCounter>);                     \
  REGISTER_KERNEL_BUILDER(PDK_V1_("StatelessRandomUniform").TypeConstraint<T>("dtype"),   \
                          StatelessRandomOp<T, Uniform<T>, Source::kSeed>);               \
  REGISTER_KERNEL_BUILDER(PDK_V1_("StatelessRandomNormal").TypeConstraint<T>("dtype"),    \
                          StatelessRandomOp<T, Normal<T>, Source::kSeed>);                \
  REGISTER_KERNEL_BUILDER(PDK_V1_("StatelessTruncatedNormal").TypeConstraint<T>("dtype"), \
                          StatelessRandomOp<T, TruncatedNormal<T>, Source::kSeed>)
PDK_REGISTER_STATELESS_FLOAT_(Eigen::half);
PDK_REGISTER_STATELESS_FLOAT_(Eigen::bfloat16);
PDK_REGISTER_STATELESS_FLOAT_(float);
PDK_REGISTER_STATELESS_FLOAT_(double);
#undef PDK_REGISTER_STATELESS_FLOAT_

// UniformInt: dtype int32, int64; minval and maxval in host memory too.
#define PDK_REGISTER_STATELESS_INT_(T)                                          \
  REGISTER_KERNEL_BUILDER(PDK_V2_("StatelessRandomUniformIntV2")                \
                              .HostMemory("minval")                             \
                              .HostMemory("maxval")                             \
                              .TypeConstraint<T>("dtype"),                      \
                          StatelessRandomUniformIntOp<T, Source::kKeyCounter>); \
  REGISTER_KERNEL_BUILDER(PDK_V1_("StatelessRandomUniformInt")                  \
                              .HostMemory("minval")                             \
                              .HostMemory("maxval")                             \
                              .TypeConstraint<T>("dtype"),                      \
                          StatelessRandomUniformIntOp<T, Source::kSeed>)
PDK_REGISTER_STATELESS_INT_(int32);
PDK_REGISTER_STATELESS_INT_(int64);
#undef PDK_REGISTER_STATELESS_INT_

// UniformFullInt: dtype int32, int64, uint32, uint64.
#define PDK_REGISTER_STATELESS_FULL_INT_(T)                                  \
  REGISTER_KERNEL_BUILDER(                                                   \
      PDK_V2_("StatelessRandomUniformFullIntV2").TypeConstraint<T>("dtype"), \
      StatelessRandomOp<T, UniformFullInt<T>, Source::kKeyCounter>);         \
  REGISTER_KERNEL_BUILDER(                                                   \
      PDK_V1_("StatelessRandomUniformFullInt").TypeConstraint<T>("dtype"),   \
      StatelessRandomOp<T, UniformFullInt<T>, Source::kSeed>)
PDK_REGISTER_STATELESS_FULL_INT_(int32);
PDK_REGISTER_STATELESS_FULL_INT_(int64);
PDK_REGISTER_STATELESS_FULL_INT_(uint32);
PDK_REGISTER_STATELESS_FULL_INT_(uint64);
#undef PDK_REGISTER_STATELESS_FULL_INT_
#undef PDK_V1_
#undef PDK_V2_

}  // namespace
}  // namespace tensorflow
