// pdk/tensor.h — shapes and an owning tensor handle.
//
// `pdk::Shape` is a vector of int64 dimensions (row-major, NHWC where images are
// concerned), kept inside the object up to DimVector::kInline dimensions (no
// heap allocation for a launch's shapes). `pdk::Tensor` owns one TF_Tensor*: the handle is released in the
// destructor, exactly once, so an early return cannot leak a buffer
// (TensorFlow's C API requires TF_DeleteTensor on every tensor it hands out).
// Shape checks live here, with messages of the form
//   "MatMul: a.shape[1] (3) != b.shape[0] (4)".
#ifndef PDK_TENSOR_H_
#define PDK_TENSOR_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "pdk/status.h"
#include "pdk/types.h"
#include "tensorflow/c/tf_tensor.h"

// Checked typed access (Tensor::data<T>(), Tensor::bits<T>()): on in debug
// builds; -DPDK_CHECK_DTYPES=1 turns it on in any build (CMake option
// PDK_CHECK_DTYPES). Every translation unit of a plugin must agree.
#ifndef PDK_CHECK_DTYPES
#ifdef NDEBUG
#define PDK_CHECK_DTYPES 0
#else
#define PDK_CHECK_DTYPES 1
#endif
#endif

namespace pdk {

// The dimensions of a Shape: a vector of int64 that keeps up to kInline
// dimensions inside the object and only longer ones on the heap, so building
// a tensor's shape (several per kernel launch: each input's, the output's, a
// broadcast's) allocates nothing for almost every tensor. It offers the
// std::vector operations shapes use (size, data, iteration, [], push_back,
// insert, erase, resize, ==) and converts to std::vector<int64_t>.
class DimVector {
 public:
  static constexpr size_t kInline = 6;
  using value_type = int64_t;
  using size_type = size_t;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { resize(n, value); }
  DimVector(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  explicit DimVector(const std::vector<int64_t>& v) { assign(v.data(), v.data() + v.size()); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  DimVector(It first, It last) {
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  DimVector(const DimVector& o) { assign(o.begin(), o.end()); }
  DimVector(DimVector&& o) noexcept { Take(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.begin(), o.end());
    }
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      Free();
      Take(o);
    }
    return *this;
  }
  ~DimVector() { Free(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t& back() { return data_[size_ - 1]; }
  int64_t back() const { return data_[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= cap_) return;
    int64_t* grown = new int64_t[n];
    std::copy(data_, data_ + size_, grown);
    if (data_ != inline_) delete[] data_;
    data_ = grown;
    cap_ = n;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == cap_) reserve(2 * cap_);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  iterator insert(const_iterator pos, int64_t v) {
    const size_t at = static_cast<size_t>(pos - data_);
    push_back(v);
    std::rotate(data_ + at, data_ + size_ - 1, data_ + size_);
    return data_ + at;
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - data_), old = size_;
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
    std::rotate(data_ + at, data_ + old, data_ + size_);
    return data_ + at;
  }
  iterator erase(const_iterator first, const_iterator last) {
    int64_t* f = data_ + (first - data_);
    int64_t* l = data_ + (last - data_);
    std::copy(l, end(), f);
    size_ -= static_cast<size_t>(l - f);
    return f;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }
  friend bool operator==(const DimVector& a, const DimVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const DimVector& a, const DimVector& b) { return !(a == b); }

 private:
  template <class It>
  void assign(It first, It last) {
    reserve(static_cast<size_t>(last - first));
    std::copy(first, last, data_);
    size_ = static_cast<size_t>(last - first);
  }
  void Free() {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    cap_ = kInline;
    size_ = 0;
  }
  void Take(DimVector& o) {
    if (o.data_ == o.inline_) {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
      data_ = inline_;
      cap_ = kInline;
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = kInline;
  int64_t inline_[kInline];
};

class Shape {
 public:
  Shape() = default;  // a scalar
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
  explicit Shape(DimVector dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i < 0 ? i + rank() : i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  // The dimensions (a DimVector: converts to std::vector<int64_t>).
  const DimVector& dims() const { return dims_; }
  void push_back(int64_t d) { dims_.push_back(d); }
  int64_t num_elements() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

  // "[2,3]" ("[]" for a scalar), as TensorFlow prints shapes.
  std::string ToString() const {
    std::string s = "[";
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (i) s += ",";
      s += std::to_string(dims_[i]);
    }
    return s + "]";
  }

 private:
  DimVector dims_;
};

inline std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.ToString(); }

// Owns one TF_Tensor*. Move-only.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TF_Tensor* t) : t_(t) {}
  ~Tensor() { reset(); }
  Tensor(Tensor&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      reset();
      t_ = std::exchange(o.t_, nullptr);
    }
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  void reset() {
    if (t_) TF_DeleteTensor(t_);
    t_ = nullptr;
  }
  bool valid() const { return t_ != nullptr; }
  TF_Tensor* get() const { return t_; }

  TF_DataType dtype() const { return TF_TensorType(t_); }
  int rank() const { return TF_NumDims(t_); }
  int64_t dim(int i) const { return TF_Dim(t_, i < 0 ? i + rank() : i); }
  Shape shape() const {
    const int r = rank();
    DimVector d(static_cast<size_t>(r));
    for (int i = 0; i < r; ++i) d[i] = TF_Dim(t_, i);
    return Shape(std::move(d));
  }
  int64_t num_elements() const { return TF_TensorElementCount(t_); }
  size_t bytes() const { return TF_TensorByteSize(t_); }
  void* raw_data() const { return TF_TensorData(t_); }

  // Typed element pointer: the buffer as elements of T, where T is the C++
  // type of dtype() (pdk::DataTypeOf<T>: float for TF_FLOAT, Eigen::half for
  // TF_HALF, ...). Checked builds (PDK_CHECK_DTYPES, on unless NDEBUG) verify
  // that and throw std::logic_error with TensorFlow's wording ("int32
  // expected, got float"; TensorFlow's Tensor::flat<T>() CHECK-fails), which
  // the kit's C boundary reports as an Internal error of the op; release
  // builds do not check (kernels get T from their registration).
  template <class T>
  T* data() const {
#if PDK_CHECK_DTYPES
    CheckDataType(kDataType<std::remove_const_t<T>>, "data");
#endif
    return static_cast<T*>(TF_TensorData(t_));
  }

  // The buffer as elements of T where only the element size must agree
  // (sizeof(T) == TF_DataTypeSize(dtype())): for kernels that move elements
  // without reading their values (Fill, Transpose, Gather, copies of 16-bit
  // floats as uint16_t). Checked builds verify the size the same way.
  template <class T>
  T* bits() const {
#if PDK_CHECK_DTYPES
    CheckElementSize(sizeof(T));
#endif
    return static_cast<T*>(TF_TensorData(t_));
  }

 private:
  [[noreturn]] void ThrowAccess(const std::string& what, const char* accessor) const {
    throw std::logic_error(what + " (" + accessor + "<T>() of " +
                           (t_ ? "a " + DataTypeName(dtype()) + " tensor of shape " +
                                     shape().ToString()
                               : std::string("no tensor")) +
                           ")");
  }
  void CheckDataType(TF_DataType expected, const char* accessor) const {
    if (t_ == nullptr) ThrowAccess("null tensor", accessor);
    if (dtype() != expected)
      ThrowAccess(DataTypeName(expected) + " expected, got " + DataTypeName(dtype()), accessor);
  }
  void CheckElementSize(size_t size) const {
    if (t_ == nullptr) ThrowAccess("null tensor", "bits");
    const size_t have = TF_DataTypeSize(dtype());
    if (have != size)
      ThrowAccess(std::to_string(size) + "-byte elements expected, got " + std::to_string(have) +
                      "-byte " + DataTypeName(dtype()),
                  "bits");
  }

  TF_Tensor* t_ = nullptr;
};

// ---- shape checks: one place, messages name operand, expected and actual ----

// TensorFlow's limit on a tensor's rank (TensorShape::MaxDimensions()).
inline constexpr int kMaxRank = 254;

// Whether TensorFlow's TensorShape can hold `shape`. TensorShape aborts the
// process (a CHECK, tensorflow/core/framework/tensor_shape.cc) on a negative
// dimension, a rank above kMaxRank or an element count past int64, and
// TF_AllocateOutput, TF_AllocateTemp and TF_ForwardInputOrAllocateOutput hand
// the shape straight to it; the kit's allocation calls (Context) run
// CheckAllocatable first, so no input can kill the process through a computed
// shape. InvalidArgument, TensorFlow's wording first ("Dimension -1 must be >=
// 0", "Encountered overflow when multiplying A with B", "Shape ... has N
// dimensions which is over the limit of 254"), then the op, `kind` ("output",
// "temp", "shape") with `index` (-1: none) and the shape. A kernel that reads a
// shape from an input checks it with this where TensorFlow builds its
// TensorShape, before the other operands are validated.
inline Status CheckShape(std::string_view op, const char* kind, int index, const Shape& shape) {
  auto where = [&] {
    return " (" + std::string(op) + ": " + kind + (index >= 0 ? " " + std::to_string(index) : "") +
           " of shape " + shape.ToString() + ")";
  };
  if (shape.rank() > kMaxRank)
    return InvalidArgument("Shape has ", shape.rank(), " dimensions which is over the limit of ",
                           kMaxRank, where());
  int64_t n = 1;
  for (int64_t d : shape.dims()) {
    if (d < 0) return InvalidArgument("Dimension ", d, " must be >= 0", where());
    int64_t next;
    if (__builtin_mul_overflow(n, d, &next))
      return InvalidArgument("Encountered overflow when multiplying ", n, " with ", d, where());
    n = next;
  }
  return Status::OK();
}

// CheckShape, then whether the bytes of a `dtype` tensor of `shape` fit int64:
// if not, ResourceExhausted, "OOM when allocating tensor with shape[...] and
// type ...", as TensorFlow's allocator reports it (Allocator::Allocate<T>
// refuses such a count), when the allocation is tried.
inline Status CheckAllocatable(std::string_view op, const char* kind, int index, const Shape& shape,
                               TF_DataType dtype) {
  PDK_RETURN_IF_ERROR(CheckShape(op, kind, index, shape));
  const int64_t size = static_cast<int64_t>(TF_DataTypeSize(dtype));  // 0: variable-size type
  int64_t bytes;
  if (size > 0 && __builtin_mul_overflow(shape.num_elements(), size, &bytes))
    return ResourceExhausted("OOM when allocating tensor with shape", shape.ToString(),
                             " and type ", DataTypeName(dtype), " (", op, ": ", kind,
                             index >= 0 ? " " + std::to_string(index) : std::string(), ": ",
                             shape.num_elements(), " elements of ", size,
                             " bytes each overflow int64)");
  return Status::OK();
}

// `op: name must be rank R, got shape S`.
inline Status CheckRank(const char* op, const char* name, const Shape& s, int rank) {
  if (s.rank() != rank)
    return InvalidArgument(op, ": ", name, " must be rank ", rank, ", got shape ", s);
  return Status::OK();
}
inline Status CheckRankAtLeast(const char* op, const char* name, const Shape& s, int rank) {
  if (s.rank() < rank)
    return InvalidArgument(op, ": ", name, " must be at least rank ", rank, ", got shape ", s);
  return Status::OK();
}
// `op: a.shape[i] (x) != b.shape[j] (y)`.
inline Status CheckDimsEqual(const char* op, const char* a, int ai, int64_t av, const char* b,
                             int bi, int64_t bv) {
  if (av != bv)
    return InvalidArgument(op, ": ", a, ".shape[", ai, "] (", av, ") != ", b, ".shape[", bi,
                           "] (", bv, ")");
  return Status::OK();
}
inline Status CheckSameShape(const char* op, const char* a, const Shape& as, const char* b,
                             const Shape& bs) {
  if (as != bs)
    return InvalidArgument(op, ": ", a, ".shape ", as, " != ", b, ".shape ", bs);
  return Status::OK();
}

// NumPy broadcasting (https://numpy.org/doc/stable/user/basics.broadcasting.html):
// align trailing dimensions; each pair must be equal or contain a 1.
inline StatusOr<Shape> BroadcastShapes(const char* op, const char* a, const Shape& as,
                                       const char* b, const Shape& bs) {
  const int r = std::max(as.rank(), bs.rank());
  DimVector out(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) {
    const int ia = as.rank() - r + i, ib = bs.rank() - r + i;
    const int64_t da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      // TensorFlow's wording first (BCast, "Incompatible shapes: [2,5] vs. [5,2]").
      return InvalidArgument("Incompatible shapes: ", as, " vs. ", bs, " (", op, ": ", a,
                             ".shape and ", b, ".shape are not broadcast-compatible in dimension ",
                             i, ": ", da, " vs ", db, ")");
    }
  }
  return Shape(std::move(out));
}

// Reads an integer vector (int32 or int64) from a host tensor, e.g. a shape or
// axis argument. `name` is used in the error message.
inline StatusOr<std::vector<int64_t>> ReadIntVector(const char* op, const char* name,
                                                    const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == TF_INT32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<int32_t>()[i];
  } else if (t.dtype() == TF_INT64) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<int64_t>()[i];
  } else {
    return InvalidArgument(op, ": ", name, " must be int32 or int64, got ",
                           DataTypeName(t.dtype()));
  }
  return v;
}

}  // namespace pdk

#endif  // PDK_TENSOR_H_
