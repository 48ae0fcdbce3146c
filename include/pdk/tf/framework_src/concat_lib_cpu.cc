// ConcatCPU<T> (tensorflow/core/kernels/concat_lib.h): output row r is the
// concatenation of row r of every input (each input a [rows, width_j]
// matrix, the output [rows, sum of widths]), rows split over the device's
// worker threads. Instantiated for every dtype the kit registers.
#define EIGEN_USE_THREADS

#include <algorithm>

#include "tensorflow/core/framework/register_types.h"
#include "tensorflow/core/kernels/concat_lib.h"
#include "tensorflow/core/util/work_sharder.h"

namespace tensorflow {

template <typename T>
void ConcatCPU(DeviceBase* d,
               const std::vector<std::unique_ptr<typename TTypes<T, 2>::ConstMatrix>>& inputs,
               typename TTypes<T, 2>::Matrix* output) {
  const int64_t rows = output->dimension(0), cols = output->dimension(1);
  if (rows == 0 || cols == 0) return;
  auto copy_rows = [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      T* out = output->data() + r * cols;
      for (const auto& in : inputs) {
        const int64_t width = in->dimension(1);
        out = std::copy_n(in->data() + r * width, width, out);
      }
    }
  };
  const auto* threads = d->tensorflow_cpu_worker_threads();
  Shard(threads->num_threads, threads->workers, rows, cols * static_cast<int64_t>(sizeof(T)),
        copy_rows);
}

#define PDK_TF_CONCAT_CPU_(T)                                                             \
  template void ConcatCPU<T>(DeviceBase*,                                                 \
                             const std::vector<std::unique_ptr<TTypes<T, 2>::ConstMatrix>>&, \
                             TTypes<T, 2>::Matrix*);
TF_CALL_POD_TYPES(PDK_TF_CONCAT_CPU_)
TF_CALL_QUANTIZED_TYPES(PDK_TF_CONCAT_CPU_)
TF_CALL_qint16(PDK_TF_CONCAT_CPU_)
TF_CALL_quint16(PDK_TF_CONCAT_CPU_)

}  // namespace tensorflow
