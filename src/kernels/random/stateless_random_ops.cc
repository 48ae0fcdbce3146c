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
#include <algorithm>
#include <cstdint>
#include <vector>

#include "compute/eigen.h"
#include "kernels/random/philox.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using pdk_random::Philox;

constexpr int32_t kAlgPhilox = 1;
constexpr int32_t kAlgAutoSelect = 3;

// Output shape from the host `shape` input.
pdk::StatusOr<pdk::Shape> ReadShape(const pdk::Context& ctx, const pdk::Tensor& t) {
  if (t.rank() != 1)
    return pdk::InvalidArgument(ctx.op(), ": shape must be a vector, got a tensor of shape ",
                                t.shape());
  PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dims, pdk::ReadIntVector(ctx.op(), "shape", t));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      return pdk::InvalidArgument(ctx.op(), ": shape[", i, "] must be >= 0, got ", dims[i]);
  return pdk::Shape(std::move(dims));
}

// Generator from a host `seed` input: int32 or int64, shape [2].
pdk::StatusOr<Philox> GeneratorFromSeed(const pdk::Context& ctx, const pdk::Tensor& seed) {
  if (seed.rank() != 1 || seed.dim(0) != 2)
    return pdk::InvalidArgument(ctx.op(), ": seed must have shape [2], got shape ",
                                seed.shape());
  PDK_ASSIGN_OR_RETURN(std::vector<int64_t> s, pdk::ReadIntVector(ctx.op(), "seed", seed));
  return pdk_random::FromSeed(static_cast<uint64_t>(s[0]), static_cast<uint64_t>(s[1]));
}

// Generator from host `key`, `counter` and `alg` inputs (V2 ops).
pdk::StatusOr<Philox> GeneratorFromKeyCounter(const pdk::Context& ctx, const pdk::Tensor& key,
                                              const pdk::Tensor& counter,
                                              const pdk::Tensor& alg) {
  if (alg.rank() != 0 || alg.dtype() != TF_INT32)
    return pdk::InvalidArgument(ctx.op(), ": alg must be an int32 scalar, got ",
                                pdk::DataTypeName(alg.dtype()), " of shape ", alg.shape());
  int32_t id = alg.data<int32_t>()[0];
  if (id == kAlgAutoSelect) id = kAlgPhilox;
  if (id != kAlgPhilox)
    return pdk::InvalidArgument(ctx.op(), ": Unsupported algorithm id: ", id,
                                " (PDK implements Philox = 1 and auto-select = 3)");
  if (key.rank() != 1 || key.dim(0) != 1)
    return pdk::InvalidArgument(ctx.op(), ": key must have shape [1], got shape ", key.shape());
  if (counter.rank() != 1 || counter.dim(0) < 2)
    return pdk::InvalidArgument(ctx.op(),
                                ": counter must be a vector of length at least 2 for Philox, "
                                "got shape ",
                                counter.shape());
  return Philox::FromMem(key.data<uint64_t>(), counter.data<uint64_t>());
}

// Fills `out` with `dist` from `gen`, split by groups over the device pool.
template <class T, class Dist>
void Fill(const pdk::Context& ctx, const Dist& dist, const Philox& gen, const pdk::Tensor& out) {
  const int64_t size = out.num_elements();
  if (size == 0) return;
  T* data = out.data<T>();
  const int64_t groups = (size + Dist::kGroup - 1) / Dist::kGroup;
  // Per group: one Philox block (~10 cycles per uint32) plus the distribution.
  const double cycles = 4.0 * (10 + Dist::kCost) * (Dist::kVariable ? 2 : 1);
  const Eigen::TensorOpCost cost(0, Dist::kGroup * sizeof(T), cycles);
  pdk_compute::Device(ctx).parallelFor(
      static_cast<Eigen::Index>(groups), cost, [&](Eigen::Index first, Eigen::Index last) {
        pdk_random::FillGroups(dist, gen, data, size, first, last);
      });
}

// How a kernel gets its generator: from key/counter/alg (inputs 1-3, V2) or
// from a seed (input 1, V1).
enum class Source { kKeyCounter, kSeed };

pdk::StatusOr<Philox> Generator(const pdk::Context& ctx, Source src) {
  if (src == Source::kSeed) {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor seed, ctx.input(1));
    return GeneratorFromSeed(ctx, seed);
  }
  PDK_ASSIGN_OR_RETURN(pdk::Tensor key, ctx.input(1));
  PDK_ASSIGN_OR_RETURN(pdk::Tensor counter, ctx.input(2));
  PDK_ASSIGN_OR_RETURN(pdk::Tensor alg, ctx.input(3));
  return GeneratorFromKeyCounter(ctx, key, counter, alg);
}

// Uniform / Normal / TruncatedNormal / UniformFullInt: output = Dist over shape.
template <class T, class Dist, Source kSrc>
class StatelessRandomOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor shape_t, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Shape shape, ReadShape(ctx, shape_t));
    PDK_ASSIGN_OR_RETURN(Philox gen, Generator(ctx, kSrc));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, shape));
    Fill<T>(ctx, Dist(), gen, out);
    return pdk::Status::OK();
  }
};

// UniformInt: integers in [minval, maxval); minval/maxval follow the generator
// inputs (inputs 4, 5 for V2; 2, 3 for V1).
template <class Int, Source kSrc>
class StatelessRandomUniformIntOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor shape_t, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Shape shape, ReadShape(ctx, shape_t));
    PDK_ASSIGN_OR_RETURN(Philox gen, Generator(ctx, kSrc));
    const int first = kSrc == Source::kSeed ? 2 : 4;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor minval, ctx.input(first));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor maxval, ctx.input(first + 1));
    if (minval.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": minval must be 0-D, got shape ", minval.shape());
    if (maxval.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": maxval must be 0-D, got shape ", maxval.shape());
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, shape));
    if (shape.num_elements() == 0) return pdk::Status::OK();  // any bounds are fine
    const Int lo = minval.data<Int>()[0], hi = maxval.data<Int>()[0];
    if (!(lo < hi))
      return pdk::InvalidArgument(ctx.op(), ": Need minval < maxval, got ", lo, " >= ", hi);
    Fill<Int>(ctx, pdk_random::UniformInt<Int>(lo, hi), gen, out);
    return pdk::Status::OK();
  }
};

// StatelessRandomGetKeyCounter[Alg]: key/counter (and alg) from a seed.
template <bool kWithAlg>
class GetKeyCounterOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor seed, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, seed));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor key, ctx.allocate_output(0, pdk::Shape{1}));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor counter, ctx.allocate_output(1, pdk::Shape{2}));
    gen.KeyToMem(key.data<uint64_t>());
    gen.CounterToMem(counter.data<uint64_t>());
    if constexpr (kWithAlg) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor alg, ctx.allocate_output(2, pdk::Shape{}));
      alg.data<int32_t>()[0] = kAlgPhilox;
    }
    return pdk::Status::OK();
  }
};

class GetAlgOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor alg, ctx.allocate_output(0, pdk::Shape{}));
    alg.data<int32_t>()[0] = kAlgPhilox;
    return pdk::Status::OK();
  }
};

template <class K>
pdk::KernelDef<K> V2(const char* op) {
  return std::move(pdk::KernelDef<K>(op)
                       .HostMemory("shape")
                       .HostMemory("key")
                       .HostMemory("counter")
                       .HostMemory("alg"));
}
template <class K>
pdk::KernelDef<K> V1(const char* op) {
  return std::move(pdk::KernelDef<K>(op).HostMemory("shape").HostMemory("seed"));
}

}  // namespace

PDK_REGISTER_KERNELS(StatelessRandom, r) {
  using pdk_random::Normal;
  using pdk_random::TruncatedNormal;
  using pdk_random::Uniform;
  using pdk_random::UniformFullInt;
  constexpr Source kKC = Source::kKeyCounter, kSeed = Source::kSeed;

  r.Add(pdk::KernelDef<GetKeyCounterOp<false>>("StatelessRandomGetKeyCounter")
            .HostMemory("seed")
            .HostMemory("key")
            .HostMemory("counter"));
  r.Add(pdk::KernelDef<GetKeyCounterOp<true>>("StatelessRandomGetKeyCounterAlg")
            .HostMemory("seed")
            .HostMemory("key")
            .HostMemory("counter")
            .HostMemory("alg"));
  r.Add(pdk::KernelDef<GetAlgOp>("StatelessRandomGetAlg").HostMemory("alg"));

  pdk::ForEachType(
      pdk::TypeList<Eigen::half, Eigen::bfloat16, float, double>{}, [&](auto t) {
        using T = typename decltype(t)::type;
        r.Add(V2<StatelessRandomOp<T, Uniform<T>, kKC>>("StatelessRandomUniformV2")
                  .Type("dtype", t));
        r.Add(V2<StatelessRandomOp<T, Normal<T>, kKC>>("StatelessRandomNormalV2")
                  .Type("dtype", t));
        r.Add(V2<StatelessRandomOp<T, TruncatedNormal<T>, kKC>>("StatelessTruncatedNormalV2")
                  .Type("dtype", t));
        r.Add(V1<StatelessRandomOp<T, Uniform<T>, kSeed>>("StatelessRandomUniform")
                  .Type("dtype", t));
        r.Add(V1<StatelessRandomOp<T, Normal<T>, kSeed>>("StatelessRandomNormal")
                  .Type("dtype", t));
        r.Add(V1<StatelessRandomOp<T, TruncatedNormal<T>, kSeed>>("StatelessTruncatedNormal")
                  .Type("dtype", t));
      });
  pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(V2<StatelessRandomUniformIntOp<T, kKC>>("StatelessRandomUniformIntV2")
              .HostMemory("minval")
              .HostMemory("maxval")
              .Type("dtype", t));
    r.Add(V1<StatelessRandomUniformIntOp<T, kSeed>>("StatelessRandomUniformInt")
              .HostMemory("minval")
              .HostMemory("maxval")
              .Type("dtype", t));
  });
  pdk::ForEachType(pdk::TypeList<int32_t, int64_t, uint32_t, uint64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(V2<StatelessRandomOp<T, UniformFullInt<T>, kKC>>("StatelessRandomUniformFullIntV2")
              .Type("dtype", t));
    r.Add(V1<StatelessRandomOp<T, UniformFullInt<T>, kSeed>>("StatelessRandomUniformFullInt")
              .Type("dtype", t));
  });
}

}  // namespace pdk_kernels
