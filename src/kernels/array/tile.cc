// Tile(input, multiples): output dim i is input dim i * multiples[i], the
// input repeated along each dim. Byte-level (dtype-agnostic): each output row
// (last dim) is the matching input row repeated, written by doubling memcpys;
// rows are split over the device's thread pool.
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

class TileOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor m_t, ctx.input(1));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    if (m_t.rank() != 1 || m_t.num_elements() != rank)
      return pdk::InvalidArgument(ctx.op(), ": multiples must be a vector of length ", rank,
                                  " (the rank of input, shape ", in, "), got a tensor of shape ",
                                  m_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> m, pdk::ReadIntVector(ctx.op(), "multiples", m_t));
    std::vector<int64_t> out_dims(rank);
    bool all_one = true;
    for (int i = 0; i < rank; ++i) {
      if (m[i] < 0)
        return pdk::InvalidArgument(ctx.op(), ": multiples[", i, "] must be non-negative, got ",
                                    m[i], " (multiples ", pdk::Shape(m), ")");
      out_dims[i] = in[i] * m[i];
      all_one = all_one && m[i] == 1;
    }
    const pdk::Shape out_shape(out_dims);
    if (all_one) return ctx.set_output_reshaped(0, x, out_shape);  // no copy
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();

    // Simplify: drop dims with in == m == 1, merge neighbours both with m == 1.
    std::vector<int64_t> d, mm;
    for (int i = 0; i < rank; ++i) {
      if (in[i] == 1 && m[i] == 1) continue;
      if (m[i] == 1 && !mm.empty() && mm.back() == 1) {
        d.back() *= in[i];
      } else {
        d.push_back(in[i]);
        mm.push_back(m[i]);
      }
    }
    const int r = static_cast<int>(d.size());  // >= 1: some m != 1
    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(ctx.input_dtype(0)));
    const int64_t in_row = d[r - 1] * elem, out_row = in_row * mm[r - 1];
    std::vector<int64_t> in_rows_stride(r, 1), out_d(r);  // strides in rows, over dims < r-1
    for (int i = 0; i < r; ++i) out_d[i] = d[i] * mm[i];
    for (int i = r - 3; i >= 0; --i) in_rows_stride[i] = in_rows_stride[i + 1] * d[i + 1];
    int64_t rows = 1;
    for (int i = 0; i < r - 1; ++i) rows *= out_d[i];

    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    pdk_compute::Device(ctx).parallelFor(
        rows, Eigen::TensorOpCost(in_row, out_row, r),
        [&](Eigen::Index first, Eigen::Index last) {
          for (Eigen::Index o = first; o < last; ++o) {
            int64_t rem = o, in_r = 0;
            for (int i = r - 2; i >= 0; --i) {
              in_r += (rem % out_d[i]) % d[i] * in_rows_stride[i];
              rem /= out_d[i];
            }
            char* row = dst + o * out_row;
            std::memcpy(row, src + in_r * in_row, in_row);
            for (int64_t done = in_row; done < out_row; done *= 2)
              std::memcpy(row + done, row, std::min(done, out_row - done));
          }
        });
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(Tile, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(pdk::KernelDef<TileOp>("Tile")
                                 .Type("T", t)
                                 .Type("Tmultiples", i)
                                 .HostMemory("multiples"));
                     });
                   });
}

}  // namespace pdk_kernels
