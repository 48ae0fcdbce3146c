// Stateful random number ops (tensorflow/core/ops/random_ops.cc), bit-identical
// to TensorFlow's CPU kernels (tensorflow/core/kernels/random_op.cc) for the
// same seeds and call sequence. Generator and distributions: philox.h.
//
//   RandomUniform(shape) -> dtype half, bfloat16, float, double     [0, 1)
//   RandomStandardNormal(shape) -> dtype half, bfloat16, float, double   N(0, 1)
//   TruncatedNormal(shape) -> dtype half, bfloat16, float, double   N(0, 1) | |x| < 2
//   RandomUniformInt(shape, minval, maxval) -> Tout int32, int64    [minval, maxval)
// shape: T int32|int64 [rank], host memory; minval, maxval: Tout [] (host).
// These are what tf.random.uniform / normal / truncated_normal emit (a GAN's
// noise, a VAE's sample in TensorFlow code); Keras 3 uses the stateless ops.
//
// State (TensorFlow's GuardedPhiloxRandom, tensorflow/core/util/
// guarded_philox_random.cc): each kernel instance (one per graph node, one
// per eager op and attribute set, as TensorFlow caches eager kernels) owns a
// Philox generator made from its `seed` and `seed2` attributes: key = seed
// (low, high 32 bits), counter = {0, 0, seed2 low, seed2 high}
// (random::PhiloxRandom(seed, seed2)). Both 0 (no seed given) draws both from
// the system's random device instead. Each call fills its output from the
// generator's current state, exactly as the stateless ops fill from a
// key/counter (philox.h: groups, sharding), and advances the state by
// 256 blocks per output element (ReserveRandomOutputs(size, 256)), under a
// mutex, so concurrent calls get disjoint streams.
//
// Errors (InvalidArgument, naming op and operand): shape not a vector or with a
// negative dimension; minval/maxval not scalars, or minval >= maxval for a
// non-empty output ("Need minval < maxval", TensorFlow's wording).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "kernels/random/philox.h"
#include "kernels/random/random_fill.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_random::Philox;

// TensorFlow's GuardedPhiloxRandom: a generator handed out in reserved runs.
class GuardedPhilox {
 public:
  Status Init(OpKernelConstruction* c) {
    int64 seed = 0, seed2 = 0;
    TF_RETURN_IF_ERROR(c->GetAttr("seed", &seed));
    TF_RETURN_IF_ERROR(c->GetAttr("seed2", &seed2));
    uint64_t s = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
    if (s == 0 && s2 == 0) {  // no seed: random ones (TensorFlow: random::New64())
      std::random_device rd;
      std::mt19937_64 mix((uint64_t(rd()) << 32) ^ rd());
      s = mix();
      s2 = mix();
    }
    gen_ = Philox({0u, 0u, uint32_t(s2), uint32_t(s2 >> 32)}, {uint32_t(s), uint32_t(s >> 32)});
    return OkStatus();
  }

  // The generator for `outputs` values; the state moves past 256 blocks per value.
  Philox Reserve(int64_t outputs) {
    std::lock_guard<std::mutex> l(mu_);
    Philox local = gen_;
    gen_.Skip(static_cast<uint64_t>(outputs) * 256);
    return local;
  }

 private:
  std::mutex mu_;
  Philox gen_;
};

// RandomUniform / RandomStandardNormal / TruncatedNormal.
template <class T, class Dist>
class RandomOp : public OpKernel {
 public:
  explicit RandomOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, gen_.Init(c)); }

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, pdk_random::ReadShape(type_string(), ctx->input(0), &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    pdk_random::Fill<T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), Dist(),
                        gen_.Reserve(shape.num_elements()), out);
  }

 private:
  GuardedPhilox gen_;
};

// RandomUniformInt: integers in [minval, maxval).
template <class Int>
class RandomUniformIntOp : public OpKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, gen_.Init(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    TensorShape shape;
    OP_REQUIRES_OK(ctx, pdk_random::ReadShape(op, ctx->input(0), &shape));
    const Tensor& minval = ctx->input(1);
    const Tensor& maxval = ctx->input(2);
    OP_REQUIRES(ctx, minval.dims() == 0,
                errors::InvalidArgument(op, ": minval must be 0-D, got shape ", minval.shape()));
    OP_REQUIRES(ctx, maxval.dims() == 0,
                errors::InvalidArgument(op, ": maxval must be 0-D, got shape ", maxval.shape()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;  // any bounds are fine, nothing reserved
    const Int lo = minval.flat<Int>()(0), hi = maxval.flat<Int>()(0);
    OP_REQUIRES(ctx, lo < hi,
                errors::InvalidArgument(op, ": Need minval < maxval, got ", lo, " >= ", hi));
    pdk_random::Fill<Int>(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                          pdk_random::UniformInt<Int>(lo, hi), gen_.Reserve(shape.num_elements()),
                          out);
  }

 private:
  GuardedPhilox gen_;
};

using pdk_random::Normal;
using pdk_random::TruncatedNormal;
using pdk_random::Uniform;

#define PDK_RANDOM_(op) Name(op).Device(DEVICE_PDK).HostMemory("shape")
#define PDK_REGISTER_RANDOM_FLOAT_(T)                                                     \
  REGISTER_KERNEL_BUILDER(PDK_RANDOM_("RandomUniform").TypeConstraint<T>("dtype"),        \
                          RandomOp<T, Uniform<T>>);                                       \
  REGISTER_KERNEL_BUILDER(PDK_RANDOM_("RandomStandardNormal").TypeConstraint<T>("dtype"), \
                          RandomOp<T, Normal<T>>);                                        \
  REGISTER_KERNEL_BUILDER(PDK_RANDOM_("TruncatedNormal").TypeConstraint<T>("dtype"),      \
                          RandomOp<T, TruncatedNormal<T>>)
PDK_REGISTER_RANDOM_FLOAT_(Eigen::half);
PDK_REGISTER_RANDOM_FLOAT_(Eigen::bfloat16);
PDK_REGISTER_RANDOM_FLOAT_(float);
PDK_REGISTER_RANDOM_FLOAT_(double);
#undef PDK_REGISTER_RANDOM_FLOAT_

#define PDK_REGISTER_RANDOM_INT_(T)                       \
  REGISTER_KERNEL_BUILDER(PDK_RANDOM_("RandomUniformInt") \
                              .HostMemory("minval")       \
                              .HostMemory("maxval")       \
                              .TypeConstraint<T>("Tout"), \
                          RandomUniformIntOp<T>)
PDK_REGISTER_RANDOM_INT_(int32);
PDK_REGISTER_RANDOM_INT_(int64);
#undef PDK_REGISTER_RANDOM_INT_
#undef PDK_RANDOM_

}  // namespace
}  // namespace tensorflow
