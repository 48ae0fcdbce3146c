// SpaceToBatchND(input, block_shape, paddings) and
// BatchToSpaceND(input, block_shape, crops): move blocks of the spatial
// dimensions into the batch dimension and back (TensorFlow runs dilated
// ("atrous") convolutions, e.g. Keras's Conv1D with dilation_rate > 1, as
// SpaceToBatchND -> convolution -> BatchToSpaceND).
//
// SpaceToBatchND. Inputs: input [B, S_1..S_M, R...] (T); block_shape [M]
// (int32/int64, host memory, every b_j >= 1); paddings [M, 2] (int32/int64,
// host memory, >= 0, S_j + pad_start_j + pad_end_j divisible by b_j). Output
// [B * prod(b), P_1/b_1, .., P_M/b_M, R...] with P_j the padded size:
//   out[(f * B) + n, o_1.., r] = padded[n, o_1 b_1 + f_1, .., r],
// f = (f_1..f_M) the block offset, flattened row-major; padding is zero.
// BatchToSpaceND is its inverse, then crops [M, 2] (>= 0, at most the
// spatial size times the block) cut from each spatial dimension:
//   out[n, i_1.., r] = in[(f * B') + n, q_1.., r], i_j + crop_start_j = q_j b_j + f_j,
// with B' = input.shape[0] / prod(b) (must divide exactly).
// Semantics: tensorflow/core/ops/array_ops.cc (SpaceToBatchND, BatchToSpaceND).
// Byte-level: each output row (the trailing R dimensions) is one memcpy (or a
// zero fill); rows split over the device's pool.
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8,
// int16; block_shape and paddings/crops int32 or int64.
// Errors (InvalidArgument): block_shape not 1-D or an entry < 1, paddings /
// crops not [M, 2] or negative, input of rank < 1 + M, a padded size not
// divisible by its block, a batch not divisible by prod(block_shape), crops
// larger than the uncropped size.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

struct BlockGeometry {
  int m = 0;                        // number of spatial (block) dimensions
  std::vector<int64> block;         // b_j
  std::vector<int64> before, after; // paddings or crops
};

// block_shape (input 1) and paddings / crops (input 2) for an input of shape `in`.
Status ReadBlockGeometry(OpKernelContext* ctx, const TensorShape& in, const char* pad_name,
                         BlockGeometry* out) {
  const std::string& op = ctx->op_kernel().type_string();
  const Tensor& block_t = ctx->input(1);
  const Tensor& pad_t = ctx->input(2);
  if (block_t.dims() != 1)
    return errors::InvalidArgument(op, ": block_shape must be 1-D, got shape ", block_t.shape());
  BlockGeometry g;
  g.m = static_cast<int>(block_t.dim_size(0));
  if (pad_t.shape() != TensorShape({g.m, 2}))
    return errors::InvalidArgument(op, ": ", pad_name, " must have shape [", g.m,
                                   ", 2] for block_shape of shape ", block_t.shape(), ", got ",
                                   pad_t.shape());
  if (in.dims() < 1 + g.m)
    return errors::InvalidArgument(op, ": input must have rank >= ", 1 + g.m,
                                   " (batch + block_shape's ", g.m,
                                   " spatial dimensions), got shape ", in);
  TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, "block_shape", block_t, &g.block));
  std::vector<int64> pads;
  TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, pad_name, pad_t, &pads));
  for (int j = 0; j < g.m; ++j) {
    if (g.block[j] < 1)
      return errors::InvalidArgument(op, ": block_shape[", j, "] must be >= 1, got ",
                                     g.block[j]);
    if (pads[2 * j] < 0 || pads[2 * j + 1] < 0)
      return errors::InvalidArgument(op, ": ", pad_name, "[", j, "] must be >= 0, got [",
                                     pads[2 * j], ", ", pads[2 * j + 1], "]");
    g.before.push_back(pads[2 * j]);
    g.after.push_back(pads[2 * j + 1]);
  }
  *out = std::move(g);
  return OkStatus();
}

// Copies rows of `row_bytes` between the batch-major tensor `big` ([B, S..., R])
// and the blocked tensor `blocked` ([prod(b) * B, Q..., R]). For every row of
// `blocked`, the matching position in `big` is q_j * b_j + f_j - shift_j; out
// of [0, S_j): padding (zeros when writing `blocked`, skipped when reading it).
// to_blocked: SpaceToBatchND (write `blocked`), else BatchToSpaceND (write `big`,
// whose every row has exactly one source).
void MoveBlocks(const Eigen::ThreadPoolDevice& dev, const BlockGeometry& g, int64 batch,
                const std::vector<int64>& big_spatial, const std::vector<int64>& q_spatial,
                const std::vector<int64>& shift, int64 row_bytes, char* big, char* blocked,
                bool to_blocked) {
  const int m = g.m;
  int64 q_rows = 1;
  for (int j = 0; j < m; ++j) q_rows *= q_spatial[j];
  int64 blocks = 1;
  for (int j = 0; j < m; ++j) blocks *= g.block[j];
  const int64 rows = blocks * batch * q_rows;
  auto do_rows = [&](Eigen::Index first, Eigen::Index last) {
    std::vector<int64> q(m), f(m);
    for (Eigen::Index row = first; row < last; ++row) {
      int64 rem = row;
      for (int j = m - 1; j >= 0; --j) q[j] = rem % q_spatial[j], rem /= q_spatial[j];
      const int64 n = rem % batch;
      rem /= batch;
      for (int j = m - 1; j >= 0; --j) f[j] = rem % g.block[j], rem /= g.block[j];
      int64 src = n;
      bool inside = true;
      for (int j = 0; j < m; ++j) {
        const int64 p = q[j] * g.block[j] + f[j] - shift[j];
        if (p < 0 || p >= big_spatial[j]) {
          inside = false;
          break;
        }
        src = src * big_spatial[j] + p;
      }
      char* b = blocked + row * row_bytes;
      if (to_blocked) {
        if (inside) std::memcpy(b, big + src * row_bytes, static_cast<size_t>(row_bytes));
        else std::memset(b, 0, static_cast<size_t>(row_bytes));
      } else if (inside) {
        std::memcpy(big + src * row_bytes, b, static_cast<size_t>(row_bytes));
      }
    }
  };
  if (rows * row_bytes <= (64 << 10)) {
    do_rows(0, rows);
  } else {
    pdk_compute::ParallelFor(dev, rows, Eigen::TensorOpCost(row_bytes, row_bytes, 6 * m), do_rows);
  }
}

class SpaceToBatchNDOp : public OpKernel {
 public:
  explicit SpaceToBatchNDOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& x = ctx->input(0);
    const TensorShape& in = x.shape();
    BlockGeometry g;
    OP_REQUIRES_OK(ctx, ReadBlockGeometry(ctx, in, "paddings", &g));
    std::vector<int64> od = in.dim_sizes(), spatial(g.m), q(g.m);
    int64 blocks = 1;
    for (int j = 0; j < g.m; ++j) {
      spatial[j] = in.dim_size(1 + j);
      const int64 padded = spatial[j] + g.before[j] + g.after[j];
      OP_REQUIRES(ctx, padded % g.block[j] == 0,
                  errors::InvalidArgument(op, ": padded size of spatial dimension ", j, " (",
                                          spatial[j], " + ", g.before[j], " + ", g.after[j],
                                          " = ", padded, ") is not divisible by block_shape[", j,
                                          "] = ", g.block[j], " (input shape ", in, ")"));
      q[j] = padded / g.block[j];
      od[1 + j] = q[j];
      blocks *= g.block[j];
    }
    od[0] = in.dim_size(0) * blocks;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(od), &out));
    if (out->NumElements() == 0) return;
    int64 row = static_cast<int64>(DataTypeSize(x.dtype()));
    for (int i = 1 + g.m; i < in.dims(); ++i) row *= in.dim_size(i);
    MoveBlocks(ctx->eigen_device<Eigen::ThreadPoolDevice>(), g, in.dim_size(0), spatial, q,
               g.before, row, static_cast<char*>(x.data()), static_cast<char*>(out->data()),
               /*to_blocked=*/true);
  }
};

class BatchToSpaceNDOp : public OpKernel {
 public:
  explicit BatchToSpaceNDOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& x = ctx->input(0);
    const TensorShape& in = x.shape();
    BlockGeometry g;
    OP_REQUIRES_OK(ctx, ReadBlockGeometry(ctx, in, "crops", &g));
    int64 blocks = 1;
    for (int j = 0; j < g.m; ++j) blocks *= g.block[j];
    OP_REQUIRES(ctx, in.dim_size(0) % blocks == 0,
                errors::InvalidArgument(op, ": input batch (", in.dim_size(0),
                                        ") is not divisible by the product of block_shape (",
                                        blocks, "), input shape ", in));
    std::vector<int64> od = in.dim_sizes(), spatial(g.m), q(g.m);
    od[0] = in.dim_size(0) / blocks;
    for (int j = 0; j < g.m; ++j) {
      q[j] = in.dim_size(1 + j);
      const int64 full = q[j] * g.block[j];
      spatial[j] = full - g.before[j] - g.after[j];
      OP_REQUIRES(ctx, spatial[j] >= 0,
                  errors::InvalidArgument(op, ": crops[", j, "] = [", g.before[j], ", ",
                                          g.after[j], "] exceed the uncropped size ", full,
                                          " of spatial dimension ", j, " (input shape ", in,
                                          ", block_shape[", j, "] = ", g.block[j], ")"));
      od[1 + j] = spatial[j];
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(od), &out));
    if (out->NumElements() == 0) return;
    int64 row = static_cast<int64>(DataTypeSize(x.dtype()));
    for (int i = 1 + g.m; i < in.dims(); ++i) row *= in.dim_size(i);
    MoveBlocks(ctx->eigen_device<Eigen::ThreadPoolDevice>(), g, od[0], spatial, q, g.before,
               row, static_cast<char*>(out->data()), static_cast<char*>(x.data()),
               /*to_blocked=*/false);
  }
};

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// T: the data-movement types (pdk_compute::DataMovementTypes); block_shape and
// paddings / crops int32 or int64, in host memory.
#define PDK_REGISTER_SPACE_TO_BATCH_(T, B, P)                    \
  REGISTER_KERNEL_BUILDER(Name("SpaceToBatchND")                 \
                              .Device(DEVICE_PDK)                \
                              .TypeConstraint<T>("T")            \
                              .TypeConstraint<B>("Tblock_shape") \
                              .TypeConstraint<P>("Tpaddings")    \
                              .HostMemory("block_shape")         \
                              .HostMemory("paddings"),           \
                          SpaceToBatchNDOp);                     \
  REGISTER_KERNEL_BUILDER(Name("BatchToSpaceND")                 \
                              .Device(DEVICE_PDK)                \
                              .TypeConstraint<T>("T")            \
                              .TypeConstraint<B>("Tblock_shape") \
                              .TypeConstraint<P>("Tcrops")       \
                              .HostMemory("block_shape")         \
                              .HostMemory("crops"),              \
                          BatchToSpaceNDOp)
#define PDK_REGISTER_SPACE_TO_BATCH_B_(T, B) \
  PDK_REGISTER_SPACE_TO_BATCH_(T, B, int32); \
  PDK_REGISTER_SPACE_TO_BATCH_(T, B, int64)
#define PDK_REGISTER_SPACE_TO_BATCH_T_(T)   \
  PDK_REGISTER_SPACE_TO_BATCH_B_(T, int32); \
  PDK_REGISTER_SPACE_TO_BATCH_B_(T, int64)
PDK_REGISTER_SPACE_TO_BATCH_T_(float);
PDK_REGISTER_SPACE_TO_BATCH_T_(double);
PDK_REGISTER_SPACE_TO_BATCH_T_(Eigen::half);
PDK_REGISTER_SPACE_TO_BATCH_T_(Eigen::bfloat16);
PDK_REGISTER_SPACE_TO_BATCH_T_(int32);
PDK_REGISTER_SPACE_TO_BATCH_T_(int64);
PDK_REGISTER_SPACE_TO_BATCH_T_(bool);
PDK_REGISTER_SPACE_TO_BATCH_T_(uint8);
PDK_REGISTER_SPACE_TO_BATCH_T_(int8);
PDK_REGISTER_SPACE_TO_BATCH_T_(int16);
#undef PDK_REGISTER_SPACE_TO_BATCH_T_
#undef PDK_REGISTER_SPACE_TO_BATCH_B_
#undef PDK_REGISTER_SPACE_TO_BATCH_

}  // namespace
}  // namespace tensorflow
