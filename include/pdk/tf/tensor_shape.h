// pdk/tf/tensor_shape.h — TensorFlow's TensorShape over pdk::Shape.
//
//   TensorShape s({2, 3});            dims() 2, dim_size(1) 3, num_elements() 6,
//                                     DebugString() "[2,3]"
//   s.AddDim(4); s.set_dim(0, 5); s.RemoveDim(1); s.InsertDim(0, 7);
//   TensorShapeUtils::IsScalar/IsVector/IsMatrix/IsVectorOrHigher/IsMatrixOrHigher
//   TensorShapeUtils::MakeShape(vec_of_int32_or_int64, &shape) -> Status
//
// Unlike TensorFlow's, a TensorShape never aborts the process: it stores what
// it is given, and a shape TensorFlow cannot hold (a negative dimension, more
// than 254 dimensions, an element count past int64) is reported as
// InvalidArgument when a tensor of that shape is allocated
// (OpKernelContext::allocate_output, allocate_temp), or by MakeShape /
// BuildTensorShape with TensorFlow's wording.
#ifndef PDK_TF_TENSOR_SHAPE_H_
#define PDK_TF_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pdk/tensor.h"
#include "pdk/tf/status.h"
#include "pdk/tf/types.h"

namespace tensorflow {
inline namespace pdk_kit {

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64> dims) : shape_(dims) {}
  explicit TensorShape(const std::vector<int64>& dims) : shape_(dims) {}
  // From any container of sizes (absl::Span, gtl::InlinedVector, ...).
  template <class C, class = decltype(std::declval<const C&>().data() +
                                      std::declval<const C&>().size())>
  explicit TensorShape(const C& dims)
      : shape_(std::vector<int64>(dims.data(), dims.data() + dims.size())) {}
  explicit TensorShape(const ::pdk::Shape& s) : shape_(s) {}
  explicit TensorShape(::pdk::Shape&& s) : shape_(std::move(s)) {}

  int dims() const { return shape_.rank(); }
  int64 dim_size(int i) const { return shape_[i]; }
  int64 num_elements() const { return shape_.num_elements(); }
  std::vector<int64> dim_sizes() const { return shape_.dims(); }

  void AddDim(int64 size) { shape_.push_back(size); }
  // AddDim / InsertDim that check the result as TensorFlow does: a negative
  // size, more than 254 dimensions or an element count past int64 is
  // InvalidArgument (TensorFlow's wording), and the shape is unchanged.
  Status AddDimWithStatus(int64 size) { return InsertDimWithStatus(dims(), size); }
  Status InsertDimWithStatus(int d, int64 size) {
    if (d < 0 || d > dims())
      return errors::InvalidArgument("Invalid dimension index ", d, " for a shape of rank ",
                                     dims());
    if (size < 0) return errors::InvalidArgument("Expected a non-negative size, got ", size);
    std::vector<int64> v = shape_.dims();
    v.insert(v.begin() + d, size);
    TensorShape t(std::move(v));
    TF_RETURN_IF_ERROR(::pdk::CheckShape("TensorShape", "shape", -1, t.shape_));
    *this = std::move(t);
    return Status();
  }
  Status RemoveDimWithStatus(int64 d) {
    if (d < 0 || d >= dims())
      return errors::Internal("Expected dimension index to be in [0, ", dims(), "), got ", d);
    RemoveDim(static_cast<int>(d));
    return Status();
  }
  void InsertDim(int d, int64 size) {
    std::vector<int64> v = shape_.dims();
    v.insert(v.begin() + d, size);
    shape_ = ::pdk::Shape(std::move(v));
  }
  void set_dim(int d, int64 size) { shape_[d] = size; }
  void RemoveDim(int d) { RemoveDimRange(d, d + 1); }
  void RemoveLastDims(int n) { RemoveDimRange(dims() - n, dims()); }
  // Removes dimensions [begin, end).
  void RemoveDimRange(int begin, int end) {
    std::vector<int64> v = shape_.dims();
    v.erase(v.begin() + begin, v.begin() + end);
    shape_ = ::pdk::Shape(std::move(v));
  }
  void AppendShape(const TensorShape& other) {
    for (int64 d : other.shape_.dims()) shape_.push_back(d);
  }
  void Clear() { shape_ = ::pdk::Shape(); }

  bool IsSameSize(const TensorShape& other) const { return shape_ == other.shape_; }
  bool operator==(const TensorShape& o) const { return shape_ == o.shape_; }
  bool operator!=(const TensorShape& o) const { return shape_ != o.shape_; }

  // "[2,3]" ("[]" for a scalar), as TensorFlow prints shapes.
  std::string DebugString() const { return shape_.ToString(); }

  // The dimensions as Eigen sizes of rank NDIMS >= dims(), padded with
  // leading 1s (TensorFlow pads the same way).
  template <int NDIMS, class IndexType = Eigen::DenseIndex>
  Eigen::DSizes<IndexType, NDIMS> AsEigenDSizes() const {
    Eigen::DSizes<IndexType, NDIMS> d;
    const int pad = NDIMS - dims();
    for (int i = 0; i < NDIMS; ++i) d[i] = i < pad ? 1 : static_cast<IndexType>(shape_[i - pad]);
    return d;
  }

  // The kit's shape (interop with pdk::Context and the shape checks in pdk/tensor.h).
  const ::pdk::Shape& pdk_shape() const { return shape_; }

  // `shape` from `dims` if TensorFlow can hold it, else InvalidArgument with
  // TensorFlow's wording ("Dimension -1 must be >= 0", ...).
  static Status BuildTensorShape(const std::vector<int64>& dims, TensorShape* out) {
    TensorShape s(dims);
    TF_RETURN_IF_ERROR(::pdk::CheckShape("TensorShape", "shape", -1, s.shape_));
    *out = std::move(s);
    return Status();
  }

 private:
  ::pdk::Shape shape_;
};

inline std::ostream& operator<<(std::ostream& os, const TensorShape& s) {
  return os << s.DebugString();
}

struct TensorShapeUtils {
  static bool IsScalar(const TensorShape& s) { return s.dims() == 0; }
  static bool IsVector(const TensorShape& s) { return s.dims() == 1; }
  static bool IsVectorOrHigher(const TensorShape& s) { return s.dims() >= 1; }
  static bool IsMatrix(const TensorShape& s) { return s.dims() == 2; }
  static bool IsSquareMatrix(const TensorShape& s) {
    return s.dims() == 2 && s.dim_size(0) == s.dim_size(1);
  }
  static bool IsMatrixOrHigher(const TensorShape& s) { return s.dims() >= 2; }
  // True if `shape`'s leading (trailing) dimensions are `prefix` (`suffix`).
  static bool StartsWith(const TensorShape& shape, const TensorShape& prefix) {
    if (shape.dims() < prefix.dims()) return false;
    for (int i = 0; i < prefix.dims(); ++i)
      if (shape.dim_size(i) != prefix.dim_size(i)) return false;
    return true;
  }
  static bool EndsWith(const TensorShape& shape, const TensorShape& suffix) {
    const int off = shape.dims() - suffix.dims();
    if (off < 0) return false;
    for (int i = 0; i < suffix.dims(); ++i)
      if (shape.dim_size(off + i) != suffix.dim_size(i)) return false;
    return true;
  }

  // A shape from n dimension sizes (a shape tensor's int32 or int64 values).
  template <class I>
  static Status MakeShape(const I* dims, int64 n, TensorShape* out) {
    return TensorShape::BuildTensorShape(std::vector<int64>(dims, dims + n), out);
  }
  // ... from a container of them (std::vector, absl::Span, gtl::ArraySlice),
  // or from a rank-1 int32 or int64 Tensor (a shape input).
  template <class C>
  static Status MakeShape(const C& dims, TensorShape* out) {
    if constexpr (IsTensor<C>::value)
      return FromShapeTensor(dims, out);
    else
      return MakeShape(dims.data(), static_cast<int64>(dims.size()), out);
  }

 private:
  template <class C, class = void>
  struct IsTensor : std::false_type {};
  template <class C>
  struct IsTensor<C, std::void_t<decltype(std::declval<const C&>().NumElements())>>
      : std::true_type {};
  template <class TensorT>
  static Status FromShapeTensor(const TensorT& shape, TensorShape* out);  // pdk/tf/tensor.h
};

}  // namespace pdk_kit
}  // namespace tensorflow

#endif  // PDK_TF_TENSOR_SHAPE_H_
