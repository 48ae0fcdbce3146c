// pdk/tf/tensor.h — TensorFlow's Tensor: a dtype, a shape and a buffer
// TensorFlow owns, with Eigen views of it.
//
//   t.dtype(), t.shape(), t.dims(), t.dim_size(d), t.NumElements(), t.TotalBytes()
//   t.flat<T>(), t.vec<T>() (rank 1), t.matrix<T>() (rank 2), t.tensor<T, N>() (rank N),
//   t.scalar<T>() (one element), t.shaped<T, N>({d0, ..}) (same element count),
//   t.flat_inner_dims<T, N>(), t.flat_outer_dims<T, N>(): Eigen TensorMaps, const
//   element type on a const Tensor (TTypes<T>::ConstFlat ...)
//   t.CopyFrom(other, shape): share other's buffer under a shape of the same
//   element count (Reshape without a copy); false if the counts differ
//
// Errors: a view of the wrong element type (`flat<int32>()` of a float tensor)
// or rank (`matrix<T>()` of a rank-3 tensor) throws std::logic_error with
// TensorFlow's wording ("int32 expected, got float"; TensorFlow CHECK-fails
// instead); the kernel trampoline turns it into an Internal error of the op,
// never a wrong read.
//
// Device memory: on a device whose memory the host cannot read (a plugin that
// registers with pdk::DeviceMemoryAccess::kDeviceOnly, pdk/kernel.h), the
// context marks every tensor outside a HostMemory argument as device memory.
// Host views of such a tensor (flat<T>() and every view above, tensor_data())
// throw std::logic_error — an Internal error of the launch, never a read of an
// opaque address; data() still gives the address, and AsDeviceMemory(t) the
// address and size a device API takes (TensorFlow's se::DeviceMemoryBase).
//
// Ownership: a Tensor is a cheap, copyable handle. Tensors returned by
// OpKernelContext::input() are borrowed views: the kit reads the TF_Tensor's
// dtype, shape and data pointer and releases the handle at once, so
// TensorFlow can still forward the input's buffer to an output
// (forward_input_or_allocate_output); the buffer stays valid for the whole
// Compute call, whether it was forwarded (the output holds it) or not (the
// input does). Outputs, temporaries and attr tensors own their TF_Tensor
// (through pdk::Tensor), released when the last copy of the handle dies.
#ifndef PDK_TF_TENSOR_H_
#define PDK_TF_TENSOR_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "pdk/tensor.h"
#include "pdk/tf/tensor_shape.h"
#include "pdk/tf/types.h"

namespace tensorflow {
inline namespace pdk_kit {

class OpKernelContext;

// TensorFlow's CPU allocator, for Tensor(cpu_allocator(), dtype, shape): host
// memory (the kit's Tensor(DataType, TensorShape)).
class Allocator {};
inline Allocator* cpu_allocator(int numa_node = -1) {
  static Allocator a;
  return &a;
}

class Tensor {
 public:
  // An uninitialized float scalar, as TensorFlow's default Tensor.
  Tensor() = default;
  // A tensor of `type` and `shape` in host memory, zero-filled, owned by this
  // handle (TensorFlow's Tensor(DataType, TensorShape) on its CPU allocator):
  // host-side scratch in a kernel. Device tensors come from the context
  // (allocate_output, allocate_temp). A dtype without a fixed element size
  // (string, resource, variant) throws std::logic_error.
  Tensor(DataType type, const TensorShape& shape) { AllocateHost(type, shape); }
  // The same from TensorFlow's CPU allocator (cpu_allocator()).
  Tensor(Allocator*, DataType type, const TensorShape& shape) { AllocateHost(type, shape); }

 private:
  void AllocateHost(DataType type, const TensorShape& shape) {
    const int size = DataTypeSize(type);
    if (size <= 0)
      throw std::logic_error("Tensor(" + DataTypeString(type) +
                             ", shape): the kit holds no host tensor of this dtype");
    const size_t bytes = static_cast<size_t>(shape.num_elements()) * static_cast<size_t>(size);
    host_ = std::shared_ptr<void>(::operator new(bytes > 0 ? bytes : 1), [](void* q) {
      ::operator delete(q);
    });
    std::memset(host_.get(), 0, bytes);
    Set(type, shape, host_.get());
  }

 public:

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64 dim_size(int d) const { return shape_.dim_size(d); }
  int64 NumElements() const { return shape_.num_elements(); }
  size_t TotalBytes() const { return static_cast<size_t>(NumElements()) * DataTypeSize(dtype_); }
  bool IsInitialized() const { return initialized_; }
  bool IsSameSize(const Tensor& o) const { return shape_ == o.shape_; }
  bool SharesBufferWith(const Tensor& o) const { return data_ != nullptr && data_ == o.data_; }
  // The buffer (TensorFlow's tensor_data().data()).
  void* data() const { return data_; }
  // The buffer's bytes, as TensorFlow's tensor_data().
  std::string_view tensor_data() const {
    if (device_memory_) throw std::logic_error(DeviceMemoryMessage("tensor_data"));
    return std::string_view(static_cast<const char*>(data_), data_ ? TotalBytes() : 0);
  }

  // Shares `other`'s buffer under `shape` (equal element count); false, and
  // this tensor unchanged, if the counts differ.
  bool CopyFrom(const Tensor& other, const TensorShape& shape) {
    if (other.NumElements() != shape.num_elements()) return false;
    *this = other;
    shape_ = shape;
    return true;
  }

  // The first max_entries values, space-separated, "..." if there are more
  // (TensorFlow's SummarizeValue without print_v2), for error messages. Host
  // memory only: a device whose memory the host cannot read gets
  // "<device memory>".
  std::string SummarizeValue(int64 max_entries, bool print_v2 = false) const {
    std::string out;
    if (data_ == nullptr) return out;
    if (device_memory_) return "<device memory>";
    const int64 n = std::min<int64>(NumElements(), max_entries);
    ::pdk::ForEachType(
        ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int8, int16, int32, int64,
                        uint8, uint16, uint32, uint64, bool>{},
        [&](auto tag) {
          using T = typename decltype(tag)::type;
          if (dtype_ != DataTypeToEnum<T>::value) return;
          const T* v = static_cast<const T*>(data_);
          for (int64 i = 0; i < n; ++i) {
            if (i) out += " ";
            if constexpr (std::is_same_v<T, bool>) out += v[i] ? "1" : "0";
            else if constexpr (std::is_integral_v<T>) out += std::to_string(v[i]);
            else out += ::pdk::internal::StrCat(static_cast<float>(v[i]));
          }
        });
    if (NumElements() > max_entries) out += "...";
    return out;
  }

  std::string DebugString() const {
    return "Tensor<type: " + DataTypeString(dtype_) + " shape: " + shape_.DebugString() + ">";
  }

  // ---- Eigen views (TensorFlow's TTypes) ----
  template <class T>
  typename TTypes<T>::Flat flat() {
    return typename TTypes<T>::Flat(Data<T>(), NumElements());
  }
  template <class T>
  typename TTypes<T>::ConstFlat flat() const {
    return typename TTypes<T>::ConstFlat(Data<T>(), NumElements());
  }
  template <class T>
  typename TTypes<T>::Flat unaligned_flat() { return flat<T>(); }
  template <class T>
  typename TTypes<T>::ConstFlat unaligned_flat() const { return flat<T>(); }
  template <class T>
  typename TTypes<T>::Vec vec() { return tensor<T, 1>(); }
  template <class T>
  typename TTypes<T>::ConstVec vec() const { return tensor<T, 1>(); }
  template <class T>
  typename TTypes<T>::Matrix matrix() { return tensor<T, 2>(); }
  template <class T>
  typename TTypes<T>::ConstMatrix matrix() const { return tensor<T, 2>(); }

  template <class T, int N>
  typename TTypes<T, N>::Tensor tensor() {
    CheckRank(N, "tensor");
    return typename TTypes<T, N>::Tensor(Data<T>(), shape_.AsEigenDSizes<N>());
  }
  template <class T, int N>
  typename TTypes<T, N>::ConstTensor tensor() const {
    CheckRank(N, "tensor");
    return typename TTypes<T, N>::ConstTensor(Data<T>(), shape_.AsEigenDSizes<N>());
  }

  template <class T>
  typename TTypes<T>::Scalar scalar() {
    CheckOneElement();
    return typename TTypes<T>::Scalar(Data<T>());
  }
  template <class T>
  typename TTypes<T>::ConstScalar scalar() const {
    CheckOneElement();
    return typename TTypes<T>::ConstScalar(Data<T>());
  }

  // This tensor's elements under dimensions `sizes` (same element count).
  // shaped<T, N>(sizes) with the sizes in a container (std::vector,
  // absl::Span, gtl::InlinedVector).
  template <class T, int N, class C, class = decltype(std::declval<const C&>().size())>
  typename TTypes<T, N>::Tensor shaped(const C& sizes) {
    return typename TTypes<T, N>::Tensor(Data<T>(), Reshaped<N>(sizes));
  }
  template <class T, int N, class C, class = decltype(std::declval<const C&>().size())>
  typename TTypes<T, N>::ConstTensor shaped(const C& sizes) const {
    return typename TTypes<T, N>::ConstTensor(Data<T>(), Reshaped<N>(sizes));
  }
  // TensorFlow's unaligned_* views: the kit's views are all unaligned.
  // TensorFlow's unaligned_shaped: the kit's views are all unaligned.
  template <class T, int N, class C>
  typename TTypes<T, N>::Tensor unaligned_shaped(const C& sizes) {
    return shaped<T, N>(sizes);
  }
  template <class T, int N, class C>
  typename TTypes<T, N>::ConstTensor unaligned_shaped(const C& sizes) const {
    return shaped<T, N>(sizes);
  }

  template <class T, int N>
  typename TTypes<T, N>::Tensor shaped(std::initializer_list<int64> sizes) {
    return typename TTypes<T, N>::Tensor(Data<T>(), Reshaped<N>(sizes));
  }
  template <class T, int N>
  typename TTypes<T, N>::ConstTensor shaped(std::initializer_list<int64> sizes) const {
    return typename TTypes<T, N>::ConstTensor(Data<T>(), Reshaped<N>(sizes));
  }

  // Rank N: the leading dimensions collapsed into the first (inner dims kept).
  template <class T, int N = 2>
  typename TTypes<T, N>::Tensor flat_inner_dims() {
    return typename TTypes<T, N>::Tensor(Data<T>(), Collapsed<N>(true));
  }
  template <class T, int N = 2>
  typename TTypes<T, N>::ConstTensor flat_inner_dims() const {
    return typename TTypes<T, N>::ConstTensor(Data<T>(), Collapsed<N>(true));
  }
  // Rank N: the trailing dimensions collapsed into the last (outer dims kept).
  template <class T, int N = 2>
  typename TTypes<T, N>::Tensor flat_outer_dims() {
    return typename TTypes<T, N>::Tensor(Data<T>(), Collapsed<N>(false));
  }
  template <class T, int N = 2>
  typename TTypes<T, N>::ConstTensor flat_outer_dims() const {
    return typename TTypes<T, N>::ConstTensor(Data<T>(), Collapsed<N>(false));
  }

  // The dims [begin, begin + N) kept, those before collapsed into the first
  // and those after into the last (missing ones are 1), as TensorFlow's
  // flat_inner_outer_dims (bias_op.cc's view of NHWC / NCHW data).
  template <class T, int N>
  typename TTypes<T, N>::Tensor flat_inner_outer_dims(int64 begin) {
    return shaped<T, N>(InnerOuter(begin, N));
  }
  template <class T, int N>
  typename TTypes<T, N>::ConstTensor flat_inner_outer_dims(int64 begin) const {
    return shaped<T, N>(InnerOuter(begin, N));
  }

  // ---- the kit underneath ----

  // A handle that owns `t` (an output, a temp, an attr tensor).
  static Tensor Owning(::pdk::Tensor t) {
    Tensor r;
    r.Set(static_cast<DataType>(t.dtype()), TensorShape(t.shape()), t.raw_data());
    r.owner_ = std::make_shared<::pdk::Tensor>(std::move(t));
    return r;
  }
  // A view of input `index` of the running kernel, which does not keep
  // TensorFlow's handle alive (see the header comment).
  static Tensor BorrowedInput(const ::pdk::Tensor& t, int index) {
    Tensor r;
    r.Set(static_cast<DataType>(t.dtype()), TensorShape(t.shape()), t.raw_data());
    r.input_index_ = index;
    return r;
  }
  // Whether this tensor is in memory the host cannot read (see the header
  // comment); set by the context.
  bool device_memory() const { return device_memory_; }
  void set_device_memory(bool on) { device_memory_ = on; }
  // The kit tensor this handle owns, or null (a borrowed input view).
  ::pdk::Tensor* owner() const { return owner_.get(); }
  // The kernel input this is a view of, or -1.
  int input_index() const { return input_index_; }

 private:
  void Set(DataType dt, TensorShape shape, void* data) {
    dtype_ = dt;
    shape_ = std::move(shape);
    data_ = data;
    initialized_ = true;
  }

  template <class T>
  T* Data() const {
    if (!initialized_)
      throw std::logic_error("a view of an uninitialized Tensor (an input index out of range, "
                             "or a Tensor never allocated)");
    if (device_memory_)
      throw std::logic_error(DeviceMemoryMessage("flat<" +
                                                 DataTypeString(DataTypeToEnum<T>::value) + ">"));
    if (dtype_ != DataTypeToEnum<T>::value)
      throw std::logic_error(DataTypeString(DataTypeToEnum<T>::value) + " expected, got " +
                             DataTypeString(dtype_) + " (a view of type " +
                             DataTypeString(DataTypeToEnum<T>::value) + " of a " +
                             DataTypeString(dtype_) + " tensor of shape " +
                             shape_.DebugString() + ")");
    return static_cast<T*>(data_);
  }
  std::string DeviceMemoryMessage(const std::string& view) const {
    return "Tensor::" + view + " of a " + DataTypeString(dtype_) + " tensor of shape " +
           shape_.DebugString() +
           " in device memory, which the host cannot read: pass AsDeviceMemory(tensor) to the "
           "device's stream, or declare the argument HostMemory";
  }
  void CheckRank(int n, const char* what) const {
    if (dims() != n)
      throw std::logic_error("Tensor::" + std::string(what) + " of rank " + std::to_string(n) +
                             " of a tensor of shape " + shape_.DebugString() + " (rank " +
                             std::to_string(dims()) + ")");
  }
  void CheckOneElement() const {
    if (NumElements() != 1)
      throw std::logic_error("Must have a one element tensor (Tensor::scalar of shape " +
                             shape_.DebugString() + ")");
  }
  template <int N, class C>
  Eigen::DSizes<Eigen::DenseIndex, N> Reshaped(const C& sizes) const {
    if (static_cast<int>(sizes.size()) != N)
      throw std::logic_error("Tensor::shaped<T, " + std::to_string(N) + "> given " +
                             std::to_string(sizes.size()) + " sizes");
    Eigen::DSizes<Eigen::DenseIndex, N> d;
    int64 n = 1;
    int i = 0;
    for (auto s : sizes) n *= (d[i++] = static_cast<Eigen::DenseIndex>(s));
    if (n != NumElements())
      throw std::logic_error("Tensor::shaped: " + std::to_string(n) +
                             " elements requested of a tensor of shape " + shape_.DebugString());
    return d;
  }
  template <int N>
  Eigen::DSizes<Eigen::DenseIndex, N> Reshaped(std::initializer_list<int64> sizes) const {
    return Reshaped<N, std::initializer_list<int64>>(sizes);
  }
  // TensorFlow's ComputeFlatOuterDims(dims, begin + n), then
  // ComputeFlatInnerDims(that, n).
  std::vector<int64> InnerOuter(int64 begin, int n) const {
    const std::vector<int64> dims = shape_.dim_sizes();
    const size_t outer_n = static_cast<size_t>(begin + n);
    std::vector<int64> outer(outer_n, 1);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i + 1 < outer_n) outer[i] = dims[i]; else outer[outer_n - 1] *= dims[i];
    }
    std::vector<int64> inner(static_cast<size_t>(n), 1);
    const size_t drop = outer_n - static_cast<size_t>(n);  // leading dims folded into inner[0]
    for (size_t i = 0; i < outer_n; ++i) {
      if (i <= drop) inner[0] *= outer[i]; else inner[i - drop] = outer[i];
    }
    return inner;
  }
  template <int N>
  Eigen::DSizes<Eigen::DenseIndex, N> Collapsed(bool inner) const {
    Eigen::DSizes<Eigen::DenseIndex, N> d;
    for (int i = 0; i < N; ++i) d[i] = 1;
    const int r = dims();
    if (inner) {  // keep the last N-1 dims, collapse the rest into d[0]
      for (int i = 0; i < r; ++i) {
        const int k = i - (r - N);
        if (k > 0) d[k] = shape_.dim_size(i); else d[0] *= shape_.dim_size(i);
      }
    } else {  // keep the first N-1 dims, collapse the rest into d[N-1]
      for (int i = 0; i < r; ++i) {
        if (i < N - 1) d[i] = shape_.dim_size(i); else d[N - 1] *= shape_.dim_size(i);
      }
    }
    return d;
  }

  DataType dtype_ = DT_FLOAT;
  TensorShape shape_;
  void* data_ = nullptr;
  bool initialized_ = false;
  std::shared_ptr<::pdk::Tensor> owner_;  // null for a borrowed input view
  std::shared_ptr<void> host_;            // Tensor(DataType, TensorShape)'s buffer
  int input_index_ = -1;
  bool device_memory_ = false;
};

// A tensor's buffer as a device API takes it (TensorFlow's
// se::DeviceMemoryBase): the device address TensorFlow gave the kernel —
// a host pointer on a kHostAddressable device, an opaque address the plugin
// resolves on a kDeviceOnly one — and its size in bytes.
class DeviceMemoryBase {
 public:
  DeviceMemoryBase(void* opaque = nullptr, uint64 size = 0) : opaque_(opaque), size_(size) {}
  void* opaque() const { return opaque_; }
  uint64 size() const { return size_; }
  bool is_null() const { return opaque_ == nullptr; }

 private:
  void* opaque_;
  uint64 size_;
};
inline DeviceMemoryBase AsDeviceMemory(const Tensor& t) {
  return DeviceMemoryBase(t.data(), static_cast<uint64>(t.TotalBytes()));
}

template <class TensorT>
Status TensorShapeUtils::FromShapeTensor(const TensorT& shape, TensorShape* out) {
  if (shape.dims() != 1)
    return errors::InvalidArgument("shape must be a vector of {int32,int64}, got shape ",
                                   shape.shape().DebugString());
  if (shape.dtype() == DT_INT32) return MakeShape(shape.template flat<int32>().data(),
                                                  shape.NumElements(), out);
  if (shape.dtype() == DT_INT64) return MakeShape(shape.template flat<int64>().data(),
                                                  shape.NumElements(), out);
  return errors::InvalidArgument("shape must be a vector of {int32,int64}.");
}

}  // namespace pdk_kit
}  // namespace tensorflow

#endif  // PDK_TF_TENSOR_H_
