// Philox-4x32-10 and the distributions of TensorFlow's stateless random ops,
// reproduced bit for bit.
//
// Generator: Philox-4x32 with 10 rounds, from J. K. Salmon, M. A. Moraes,
// R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011 (https://www.thesalmons.org/john/random123/papers/random123sc11.pdf).
// State: a 128-bit counter (four uint32, word 0 least significant) and a
// 64-bit key (two uint32). One call returns four uint32 (one "block") and
// advances the counter by one; Skip(n) advances it by n blocks. Round function
// and constants are the paper's (multipliers 0xD2511F53, 0xCD9E8D57; Weyl key
// increments 0x9E3779B9, 0xBB67AE85), with TensorFlow's word order
// (xla/tsl/lib/random/philox_random.h).
//
// Memory layout of the key/counter tensors (tensorflow/core/kernels/
// random_ops_util.h): key = uint64[1] = key[0] | key[1] << 32;
// counter = uint64[2] = {ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32}.
//
// Seed scrambling (StatelessRandomGetKeyCounter and the V1 ops taking `seed`,
// tensorflow/core/kernels/stateless_random_ops.cc, GenerateKey): the two seed
// values, widened to uint64 (int32 sign-extends), form the counter
// {lo(s0), hi(s0), lo(s1), hi(s1)}; one Philox call under the fixed key
// {0x3ec8f720, 0x02461e29} yields m; the key becomes {m0, m1} and the counter
// {0, 0, m2, m3}.
//
// Distributions (xla/tsl/lib/random/random_distributions{,_utils}.h):
//   uniform float   : 23 low bits of one uint32 as the mantissa of [1, 2), minus 1
//   uniform double  : 20 low bits of x0 and all of x1 (52 bits) over [1, 2), minus 1
//   uniform half    : 10 low bits of one uint32 over [1, 2) in half, minus 1
//   uniform bfloat16: 7 low bits of one uint32 over [1, 2) in bfloat16, minus 1
//   uniform int     : lo + (bits % (hi - lo)) with 32 (int32) or 64 (int64) bits,
//                     the 64-bit value being x0 | x1 << 32; the add is done as
//                     lo + r/2 + (r - r/2) to avoid signed overflow
//   full-range int  : the raw 32 / 64 bits
//   normal          : Box-Muller. float: u1 = max(uniform(x0), 1e-7f),
//                     v = float(2*pi (double) * uniform(x1)), r = sqrtf(-2 logf u1),
//                     (sin v * r, cos v * r) via sincosf. double: the same from two
//                     uniform doubles (x0,x1), (x2,x3) with log/sqrt/sincos.
//                     half/bfloat16 round the float results.
//   truncated normal: the same Box-Muller pairs, drawn one uint32 at a time from
//                     a single-sample adapter, keeping values with |x| < 2 in
//                     draw order (first then second of each pair) until a group
//                     is full.
//
// Groups and sharding (tensorflow/core/kernels/random_op_cpu.h): the output is
// cut into groups of kGroup elements (4 for 32-bit results, 2 for 64-bit ones;
// 4 resp. 2 for truncated normal float resp. double). A fixed-consumption
// distribution uses exactly one block per group, so group g starts at counter
// + g. Truncated normal reserves 256 uint32 per output, i.e. group g starts at
// counter + g * kGroup * 256 / 4 with a fresh single-sample cache. A final
// partial group takes the first elements of a full group. Either way, any
// split of the groups over threads gives the same output. A fixed-consumption
// distribution takes its blocks from Philox::Blocks, kBatch at a time (AVX2
// lanes in the x86-64-v3 core, one at a time otherwise): the same blocks.
//
// The floating-point steps avoid multiply-add pairs, so FMA contraction cannot
// change a result; log/sincos come from the C library, as in TensorFlow's CPU
// kernels.
#ifndef PDK_SRC_KERNELS_RANDOM_PHILOX_H_
#define PDK_SRC_KERNELS_RANDOM_PHILOX_H_

#include <math.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "compute/eigen.h"

namespace pdk_random {

using Block = std::array<uint32_t, 4>;
using Key = std::array<uint32_t, 2>;

class Philox {
 public:
  Philox() = default;
  Philox(const Block& counter, const Key& key) : ctr_(counter), key_(key) {}

  // From the key (uint64[1]) and counter (uint64[2]) tensors' memory.
  static Philox FromMem(const uint64_t* key, const uint64_t* counter) {
    return Philox({Lo(counter[0]), Hi(counter[0]), Lo(counter[1]), Hi(counter[1])},
                  {Lo(key[0]), Hi(key[0])});
  }
  void KeyToMem(uint64_t* key) const { key[0] = Join(key_[0], key_[1]); }
  void CounterToMem(uint64_t* counter) const {
    counter[0] = Join(ctr_[0], ctr_[1]);
    counter[1] = Join(ctr_[2], ctr_[3]);
  }

  // The ten rounds on the current counter; then the counter advances by one.
  Block operator()() {
    Block c = ctr_;
    Key k = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k[0] += kW32A;
        k[1] += kW32B;
      }
      const uint64_t p0 = uint64_t(kM4x32A) * c[0];
      const uint64_t p1 = uint64_t(kM4x32B) * c[2];
      c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1],
           uint32_t(p0)};
    }
    Skip(1);
    return c;
  }

  // The next n blocks, block i from the counter + i, into out[0, n); the
  // counter advances by n. The same values as n calls of operator(). Built
  // for AVX2 (the x86-64-v3 core), kBatch blocks at a time run as four sets
  // of 8 lanes interleaved, so that the multiplies' latency overlaps: one
  // core, 2^20 float32 uniforms through FillGroups, 0.66 against 2.04 ns per
  // value scalar (docs/benchmarks.md, "Stateless random numbers").
  static constexpr int64_t kBatch = 32;
  // Cycles per block with the distribution's conversion, for the pool's cost
  // model (the measurement above: ~8 with AVX2, ~24 scalar).
#if defined(__AVX2__)
  static constexpr int kCyclesPerBlock = 8;
#else
  static constexpr int kCyclesPerBlock = 24;
#endif
  void Blocks(Block* out, int64_t n) {
#if defined(__AVX2__)
    for (; n >= kBatch; n -= kBatch, out += kBatch) {
      Batch(out);
      Skip(kBatch);
    }
#endif
    for (int64_t i = 0; i < n; ++i) out[i] = (*this)();
  }

  // Advances the 128-bit counter by n blocks (carry through all four words).
  void Skip(uint64_t n) {
    uint64_t lo = Join(ctr_[0], ctr_[1]);
    const uint64_t sum = lo + n;
    ctr_[0] = Lo(sum);
    ctr_[1] = Hi(sum);
    if (sum < lo) {  // carry into the high 64 bits
      uint64_t hi = Join(ctr_[2], ctr_[3]) + 1;
      ctr_[2] = Lo(hi);
      ctr_[3] = Hi(hi);
    }
  }

 private:
  static uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
  static uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
  static uint64_t Join(uint32_t lo, uint32_t hi) { return uint64_t(lo) | (uint64_t(hi) << 32); }

#if defined(__AVX2__)
  // a * m (unsigned, per 32-bit lane): the low and the high 32 bits.
  static void MulHiLo(__m256i a, __m256i m, __m256i* lo, __m256i* hi) {
    const __m256i even = _mm256_mul_epu32(a, m);  // 64-bit products of lanes 0, 2, ...
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);  // lanes 1, 3, ...
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  }

  // kBatch blocks from the current counter (not advanced): lane i of set s
  // holds block 8 s + i, word w of all 8 lanes in v[s][w]; the rounds are
  // operator()'s; the words go back to block order by a 4 x 8 transpose.
  void Batch(Block* out) const {
    constexpr int kSets = kBatch / 8;
    alignas(32) uint32_t c[kSets][4][8];
    const uint64_t lo = Join(ctr_[0], ctr_[1]), hi = Join(ctr_[2], ctr_[3]);
    for (int s = 0; s < kSets; ++s) {
      for (int i = 0; i < 8; ++i) {
        const uint64_t l = lo + uint64_t(8 * s + i);
        const uint64_t h = hi + (l < lo ? 1 : 0);  // the carry of operator()'s Skip
        c[s][0][i] = Lo(l);
        c[s][1][i] = Hi(l);
        c[s][2][i] = Lo(h);
        c[s][3][i] = Hi(h);
      }
    }
    __m256i v[kSets][4];
    for (int s = 0; s < kSets; ++s)
      for (int w = 0; w < 4; ++w) v[s][w] = _mm256_load_si256(reinterpret_cast<__m256i*>(c[s][w]));
    const __m256i ma = _mm256_set1_epi32(static_cast<int>(kM4x32A));
    const __m256i mb = _mm256_set1_epi32(static_cast<int>(kM4x32B));
    uint32_t k0 = key_[0], k1 = key_[1];
    for (int round = 0; round < 10; ++round) {
      const __m256i vk0 = _mm256_set1_epi32(static_cast<int>(k0));
      const __m256i vk1 = _mm256_set1_epi32(static_cast<int>(k1));
      for (int s = 0; s < kSets; ++s) {
        __m256i lo0, hi0, lo1, hi1;
        MulHiLo(v[s][0], ma, &lo0, &hi0);
        MulHiLo(v[s][2], mb, &lo1, &hi1);
        v[s][0] = _mm256_xor_si256(_mm256_xor_si256(hi1, v[s][1]), vk0);
        v[s][2] = _mm256_xor_si256(_mm256_xor_si256(hi0, v[s][3]), vk1);
        v[s][1] = lo1;
        v[s][3] = lo0;
      }
      k0 += kW32A;
      k1 += kW32B;
    }
    for (int s = 0; s < kSets; ++s) {
      const __m256i t0 = _mm256_unpacklo_epi32(v[s][0], v[s][1]);  // blocks 0, 1 | 4, 5: words 0-1
      const __m256i t1 = _mm256_unpackhi_epi32(v[s][0], v[s][1]);  // blocks 2, 3 | 6, 7: words 0-1
      const __m256i t2 = _mm256_unpacklo_epi32(v[s][2], v[s][3]);  // blocks 0, 1 | 4, 5: words 2-3
      const __m256i t3 = _mm256_unpackhi_epi32(v[s][2], v[s][3]);  // blocks 2, 3 | 6, 7: words 2-3
      const __m256i b0 = _mm256_unpacklo_epi64(t0, t2);            // block 0 | block 4
      const __m256i b1 = _mm256_unpackhi_epi64(t0, t2);            // block 1 | block 5
      const __m256i b2 = _mm256_unpacklo_epi64(t1, t3);            // block 2 | block 6
      const __m256i b3 = _mm256_unpackhi_epi64(t1, t3);            // block 3 | block 7
      __m256i* o = reinterpret_cast<__m256i*>(out + 8 * s);
      _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(b0, b1, 0x20));
      _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(b2, b3, 0x20));
      _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(b0, b1, 0x31));
      _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(b2, b3, 0x31));
    }
  }
#endif

  static constexpr uint32_t kW32A = 0x9E3779B9, kW32B = 0xBB67AE85;
  static constexpr uint32_t kM4x32A = 0xD2511F53, kM4x32B = 0xCD9E8D57;
  Block ctr_{};
  Key key_{};
};

// The key and counter TensorFlow derives from a two-element seed.
inline Philox FromSeed(uint64_t seed0, uint64_t seed1) {
  Philox scramble({uint32_t(seed0), uint32_t(seed0 >> 32), uint32_t(seed1), uint32_t(seed1 >> 32)},
                  {0x3ec8f720u, 0x02461e29u});
  const Block m = scramble();
  return Philox({0u, 0u, m[2], m[3]}, {m[0], m[1]});
}

// Hands out a generator's blocks one uint32 at a time.
class SingleSample {
 public:
  explicit SingleSample(Philox* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == 4) {
      block_ = (*gen_)();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  Philox* gen_;
  Block block_{};
  int used_ = 4;
};

// ------------------------------------------------------------ bit conversions

inline float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

inline double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t(1023) << 52) | (uint64_t(x0 & 0xfffffu) << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

inline Eigen::half Uint32ToHalf(uint32_t x) {
  const uint16_t bits = static_cast<uint16_t>((15u << 10) | (x & 0x3ffu));
  return Eigen::numext::bit_cast<Eigen::half>(bits) - Eigen::half(1.0f);
}

inline Eigen::bfloat16 Uint32ToBfloat16(uint32_t x) {
  const uint16_t bits = static_cast<uint16_t>((127u << 7) | (x & 0x7fu));
  return Eigen::numext::bit_cast<Eigen::bfloat16>(bits) - Eigen::bfloat16(1.0f);
}

// Box-Muller on two uint32 (float) or four (double).
inline void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = Uint32ToFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  // 2*pi in double times a float: the product is a double, rounded to float.
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(Uint32ToFloat(x1)));
  const float logu = std::log(u1);  // logf
  const float u2 = std::sqrt(-2.0f * logu);
  ::sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

inline void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0,
                            double* d1) {
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * M_PI * Uint64ToDouble(x2, x3);
  const double logu = std::log(u1);
  const double u2 = std::sqrt(-2.0 * logu);
  ::sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

// ------------------------------------------------------------- distributions
//
// Each has `kGroup` (outputs per group), `kVariable` (false: one block per
// group; true: drawn through SingleSample with 256 uint32 reserved per output),
// `kCost` (cycles per output, for the pool's cost model), and
// `std::array<T, kGroup> operator()(const Block&) const` (fixed consumption) or
// `operator()(SingleSample&) const` (variable).

template <class T>
struct Uniform;

template <>
struct Uniform<float> {
  static constexpr int kGroup = 4;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  std::array<float, 4> operator()(const Block& b) const {
    return {Uint32ToFloat(b[0]), Uint32ToFloat(b[1]), Uint32ToFloat(b[2]), Uint32ToFloat(b[3])};
  }
};
template <>
struct Uniform<double> {
  static constexpr int kGroup = 2;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  std::array<double, 2> operator()(const Block& b) const {
    return {Uint64ToDouble(b[0], b[1]), Uint64ToDouble(b[2], b[3])};
  }
};
template <>
struct Uniform<Eigen::half> {
  static constexpr int kGroup = 4;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  std::array<Eigen::half, 4> operator()(const Block& b) const {
    return {Uint32ToHalf(b[0]), Uint32ToHalf(b[1]), Uint32ToHalf(b[2]), Uint32ToHalf(b[3])};
  }
};
template <>
struct Uniform<Eigen::bfloat16> {
  static constexpr int kGroup = 4;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  std::array<Eigen::bfloat16, 4> operator()(const Block& b) const {
    return {Uint32ToBfloat16(b[0]), Uint32ToBfloat16(b[1]), Uint32ToBfloat16(b[2]),
            Uint32ToBfloat16(b[3])};
  }
};

// lo + r / 2 + (r - r / 2), each term converted to Int: no signed overflow.
template <class Int, class U>
inline Int SignedAdd(Int lo, U r) {
  const U half = r >> 1;
  return static_cast<Int>(static_cast<U>(lo) + half + (r - half));
}

// Integers in [lo, hi) by modulo (int32: 4 per block; int64: 2 per block).
template <class Int>
struct UniformInt {
  using U = std::make_unsigned_t<Int>;
  static constexpr bool k64 = sizeof(Int) == 8;
  static constexpr int kGroup = k64 ? 2 : 4;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  UniformInt(Int lo, Int hi) : lo(lo), range(static_cast<U>(hi) - static_cast<U>(lo)) {}
  std::array<Int, kGroup> operator()(const Block& b) const {
    std::array<Int, kGroup> out;
    for (int i = 0; i < kGroup; ++i) {
      const U bits = k64 ? static_cast<U>(uint64_t(b[2 * i]) | (uint64_t(b[2 * i + 1]) << 32))
                         : static_cast<U>(b[i]);
      out[i] = SignedAdd<Int, U>(lo, bits % range);
    }
    return out;
  }
  Int lo;
  U range;
};

// The raw bits as Int (32-bit: 4 per block; 64-bit: x0 | x1 << 32, 2 per block).
template <class Int>
struct UniformFullInt {
  static constexpr bool k64 = sizeof(Int) == 8;
  static constexpr int kGroup = k64 ? 2 : 4;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  std::array<Int, kGroup> operator()(const Block& b) const {
    std::array<Int, kGroup> out;
    for (int i = 0; i < kGroup; ++i)
      out[i] = k64 ? static_cast<Int>(uint64_t(b[2 * i]) | (uint64_t(b[2 * i + 1]) << 32))
                   : static_cast<Int>(b[i]);
    return out;
  }
};

template <class T>
struct Normal {  // float, half, bfloat16: four per block, from float Box-Muller
  static constexpr int kGroup = 4;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 70;
  std::array<T, 4> operator()(const Block& b) const {
    float f[4];
    BoxMullerFloat(b[0], b[1], &f[0], &f[1]);
    BoxMullerFloat(b[2], b[3], &f[2], &f[3]);
    return {T(f[0]), T(f[1]), T(f[2]), T(f[3])};
  }
};
template <>
struct Normal<double> {  // two per block
  static constexpr int kGroup = 2;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 70;
  std::array<double, 2> operator()(const Block& b) const {
    std::array<double, 2> out;
    BoxMullerDouble(b[0], b[1], b[2], b[3], &out[0], &out[1]);
    return out;
  }
};

template <class T>
struct TruncatedNormal {  // float, half, bfloat16: |x| < 2 tested in float
  static constexpr int kGroup = 4;
  static constexpr bool kVariable = true;
  static constexpr int kCost = 90;
  std::array<T, 4> operator()(SingleSample& s) const {
    std::array<T, 4> out;
    int n = 0;
    while (true) {
      const uint32_t x0 = s();
      const uint32_t x1 = s();
      float f[2];
      BoxMullerFloat(x0, x1, &f[0], &f[1]);
      for (float v : f) {
        if (std::fabs(v) < 2.0f) {
          out[n++] = T(v);
          if (n == kGroup) return out;
        }
      }
    }
  }
};
template <>
struct TruncatedNormal<double> {
  static constexpr int kGroup = 2;
  static constexpr bool kVariable = true;
  static constexpr int kCost = 90;
  std::array<double, 2> operator()(SingleSample& s) const {
    std::array<double, 2> out;
    int n = 0;
    while (true) {
      const uint32_t x0 = s();
      const uint32_t x1 = s();
      const uint32_t x2 = s();
      const uint32_t x3 = s();
      double d[2];
      BoxMullerDouble(x0, x1, x2, x3, &d[0], &d[1]);
      for (double v : d) {
        if (std::fabs(v) < 2.0) {
          out[n++] = v;
          if (n == kGroup) return out;
        }
      }
    }
  }
};

// Fills groups [first, last) of `out` (size elements) from the base generator.
template <class Dist, class T>
void FillGroups(const Dist& dist, Philox base, T* out, int64_t size, int64_t first,
                int64_t last) {
  constexpr int kGroup = Dist::kGroup;
  if constexpr (!Dist::kVariable) {
    base.Skip(static_cast<uint64_t>(first));
    Block blocks[Philox::kBatch];
    for (int64_t g = first; g < last; g += Philox::kBatch) {
      const int64_t nb = std::min<int64_t>(Philox::kBatch, last - g);
      base.Blocks(blocks, nb);
      T* dst = out + g * kGroup;
      if ((g + nb) * kGroup <= size) {  // whole groups: a fixed-length loop to vectorize
        for (int64_t b = 0; b < nb; ++b) {
          const auto v = dist(blocks[b]);
          for (int i = 0; i < kGroup; ++i) dst[b * kGroup + i] = v[i];
        }
        continue;
      }
      for (int64_t b = 0; b < nb; ++b) {  // the last group may be partial
        const auto v = dist(blocks[b]);
        const int64_t n = std::min<int64_t>(kGroup, size - (g + b) * kGroup);
        for (int64_t i = 0; i < n; ++i) dst[b * kGroup + i] = v[i];
      }
    }
  } else {
    constexpr uint64_t kSkipPerGroup = uint64_t(kGroup) * 256 / 4;
    for (int64_t g = first; g < last; ++g) {
      Philox gen = base;
      gen.Skip(static_cast<uint64_t>(g) * kSkipPerGroup);
      SingleSample single(&gen);
      const auto v = dist(single);
      const int64_t offset = g * kGroup;
      const int64_t n = std::min<int64_t>(kGroup, size - offset);
      for (int64_t i = 0; i < n; ++i) out[offset + i] = v[i];
    }
  }
}

}  // namespace pdk_random

#endif  // PDK_SRC_KERNELS_RANDOM_PHILOX_H_
