// The part of oneDNN's C API whose form differs between oneDNN 2.x and 3.x,
// written once for PDK's oneDNN users (dnnl_gemm.cc, dnnl_conv.cc), which
// build against either: Debian's libdnnl 2.x (libdnnl.so.2, the one PDK
// ships) and oneDNN 3.x (libdnnl.so.3, e.g. the package index's
// onednn-cpu-gomp, to measure PDK with a newer oneDNN; CMakeLists.txt picks
// the one find_package(dnnl) finds). The version is the headers'
// DNNL_VERSION_MAJOR. What differs:
// - a memory descriptor: a struct held by value in 2.x (dnnl_memory_desc_init_*),
//   an opaque handle in 3.x, created (dnnl_memory_desc_create_*), cloned and
//   destroyed explicitly. DnnlMd owns one in either; DnnlMdRef is how the API
//   takes and returns a read-only one (a pointer to the struct in 2.x, the
//   handle in 3.x), so dnnl_memory_create, dnnl_memory_desc_equal,
//   dnnl_memory_desc_get_size, dnnl_reorder_primitive_desc_create and
//   dnnl_primitive_desc_query_md are called the same way in both.
// - primitive descriptors: 2.x initializes an op descriptor
//   (dnnl_matmul_desc_init, dnnl_dilated_convolution_*_desc_init) and passes
//   it to dnnl_primitive_desc_create; 3.x has no op descriptors, one
//   dnnl_*_primitive_desc_create per primitive. The functions below create
//   the same primitive descriptors in both (no attributes, no bias; dilations
//   in oneDNN's convention, 0 = none, in both).
// Everything else PDK calls (engines, streams, memory objects, primitives,
// dnnl_primitive_desc_query with dnnl_query_impl_info_str) is the same in both.
#ifndef PDK_SRC_COMPUTE_DNNL_API_H_
#define PDK_SRC_COMPUTE_DNNL_API_H_

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_version.h>

#if DNNL_VERSION_MAJOR >= 3
#define PDK_DNNL3 1
#elif DNNL_VERSION_MAJOR == 2
#define PDK_DNNL3 0
#else
#error "PDK needs oneDNN 2.x or 3.x"
#endif

namespace pdk_compute {

// A read-only memory descriptor as oneDNN's C API takes and returns it.
#if PDK_DNNL3
using DnnlMdRef = const_dnnl_memory_desc_t;
#else
using DnnlMdRef = const dnnl_memory_desc_t*;
#endif

// An owned memory descriptor (empty until one of the Init calls succeeds;
// get() is then valid as long as this object is and is not re-initialized).
class DnnlMd {
 public:
  DnnlMd() = default;
  ~DnnlMd() { Reset(); }
  DnnlMd(const DnnlMd&) = delete;
  DnnlMd& operator=(const DnnlMd&) = delete;

  // `dims` laid out with the element strides `strides` (a plain layout).
  dnnl_status_t InitStrides(int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
                            const dnnl_dims_t strides) {
    Reset();
#if PDK_DNNL3
    return Set(dnnl_memory_desc_create_with_strides(&md_, ndims, dims, dt, strides));
#else
    return Set(dnnl_memory_desc_init_by_strides(&md_, ndims, dims, dt, strides));
#endif
  }
  // The layout `tag` (dnnl_format_tag_any: the primitive chooses).
  dnnl_status_t InitTag(int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
                        dnnl_format_tag_t tag) {
    Reset();
#if PDK_DNNL3
    return Set(dnnl_memory_desc_create_with_tag(&md_, ndims, dims, dt, tag));
#else
    return Set(dnnl_memory_desc_init_by_tag(&md_, ndims, dims, dt, tag));
#endif
  }
  // A copy of `other` (e.g. one a primitive descriptor owns, to keep after
  // the descriptor is destroyed).
  dnnl_status_t InitCopy(DnnlMdRef other) {
    Reset();
#if PDK_DNNL3
    return Set(dnnl_memory_desc_clone(&md_, other));
#else
    md_ = *other;
    return Set(dnnl_success);
#endif
  }

  bool empty() const { return !valid_; }
  // nullptr when empty.
  DnnlMdRef get() const {
#if PDK_DNNL3
    return valid_ ? md_ : nullptr;
#else
    return valid_ ? &md_ : nullptr;
#endif
  }

 private:
  dnnl_status_t Set(dnnl_status_t st) {
    valid_ = st == dnnl_success;
    return st;
  }
  void Reset() {
#if PDK_DNNL3
    if (md_ != nullptr) dnnl_memory_desc_destroy(md_);
    md_ = nullptr;
#else
    md_ = dnnl_memory_desc_t{};
#endif
    valid_ = false;
  }

#if PDK_DNNL3
  dnnl_memory_desc_t md_ = nullptr;
#else
  dnnl_memory_desc_t md_{};
#endif
  bool valid_ = false;
};

// A matmul primitive descriptor: dst = src x weights (no bias, no attributes).
inline dnnl_status_t DnnlMatmulPd(dnnl_primitive_desc_t* pd, dnnl_engine_t eng, DnnlMdRef src,
                                  DnnlMdRef weights, DnnlMdRef dst) {
#if PDK_DNNL3
  return dnnl_matmul_primitive_desc_create(pd, eng, src, weights, nullptr, dst, nullptr);
#else
  dnnl_matmul_desc_t desc;
  const dnnl_status_t st = dnnl_matmul_desc_init(&desc, src, weights, nullptr, dst);
  return st != dnnl_success ? st : dnnl_primitive_desc_create(pd, &desc, nullptr, eng, nullptr);
#endif
}

// The strides, dilations and paddings of a convolution, per spatial dimension;
// `dilates` as oneDNN counts them (0 = none) in both versions.
struct DnnlConvGeometry {
  const dnnl_dim_t* strides;
  const dnnl_dim_t* dilates;
  const dnnl_dim_t* pad_l;
  const dnnl_dim_t* pad_r;
};

// A direct convolution primitive descriptor (no bias, no attributes) for
// `prop`: dnnl_forward_training, dnnl_backward_data or dnnl_backward_weights.
// `src`, `weights`, `dst` are the forward pass's three tensors whichever the
// pass (for a backward pass, the gradients among them: diff_src, diff_weights,
// diff_dst); `fwd_hint` is the forward primitive descriptor a backward pass
// needs (nullptr for the forward pass).
inline dnnl_status_t DnnlConvPd(dnnl_primitive_desc_t* pd, dnnl_engine_t eng,
                                dnnl_prop_kind_t prop, DnnlMdRef src, DnnlMdRef weights,
                                DnnlMdRef dst, const DnnlConvGeometry& g,
                                const_dnnl_primitive_desc_t fwd_hint) {
  const dnnl_alg_kind_t alg = dnnl_convolution_direct;
#if PDK_DNNL3
  switch (prop) {
    case dnnl_backward_data:
      return dnnl_convolution_backward_data_primitive_desc_create(
          pd, eng, alg, src, weights, dst, g.strides, g.dilates, g.pad_l, g.pad_r, fwd_hint,
          nullptr);
    case dnnl_backward_weights:
      return dnnl_convolution_backward_weights_primitive_desc_create(
          pd, eng, alg, src, weights, nullptr, dst, g.strides, g.dilates, g.pad_l, g.pad_r,
          fwd_hint, nullptr);
    default:
      return dnnl_convolution_forward_primitive_desc_create(pd, eng, prop, alg, src, weights,
                                                            nullptr, dst, g.strides, g.dilates,
                                                            g.pad_l, g.pad_r, nullptr);
  }
#else
  dnnl_convolution_desc_t desc;
  dnnl_status_t st;
  switch (prop) {
    case dnnl_backward_data:
      st = dnnl_dilated_convolution_backward_data_desc_init(
          &desc, alg, src, weights, dst, g.strides, g.dilates, g.pad_l, g.pad_r);
      break;
    case dnnl_backward_weights:
      st = dnnl_dilated_convolution_backward_weights_desc_init(
          &desc, alg, src, weights, nullptr, dst, g.strides, g.dilates, g.pad_l, g.pad_r);
      break;
    default:
      st = dnnl_dilated_convolution_forward_desc_init(&desc, prop, alg, src, weights, nullptr,
                                                      dst, g.strides, g.dilates, g.pad_l,
                                                      g.pad_r);
  }
  return st != dnnl_success ? st : dnnl_primitive_desc_create(pd, &desc, nullptr, eng, fwd_hint);
#endif
}

// A softmax primitive descriptor over axis `axis` of `data` (forward
// inference, dst = src's layout, alg dnnl_softmax_accurate: exp(x - max) / sum).
inline dnnl_status_t DnnlSoftmaxPd(dnnl_primitive_desc_t* pd, dnnl_engine_t eng, DnnlMdRef data,
                                   int axis) {
  const dnnl_alg_kind_t alg = dnnl_softmax_accurate;
#if PDK_DNNL3
  return dnnl_softmax_forward_primitive_desc_create(pd, eng, dnnl_forward_inference, alg, data,
                                                    data, axis, nullptr);
#else
  dnnl_softmax_v2_desc_t desc;
  const dnnl_status_t st =
      dnnl_softmax_v2_forward_desc_init(&desc, dnnl_forward_inference, alg, data, data, axis);
  return st != dnnl_success ? st : dnnl_primitive_desc_create(pd, &desc, nullptr, eng, nullptr);
#endif
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_DNNL_API_H_
