// What every OPENCL kernel source shares. OpenCL C 1.2.
//
// A tensor argument is a buffer and an element offset (launch.h):
//   __kernel void k(TENSOR(const float, x), TENSOR(float, y), const long n)
//   { ... PTR(y)[i] = PTR(x)[i]; }
#define TENSOR(T, name) __global T* name##_base, const ulong name##_off
#define PTR(name) (name##_base + name##_off)

#ifdef PDK_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef PDK_FP16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

// The global index of a 1-D launch, and the bounds check every kernel starts with.
#define INDEX_OR_RETURN(i, n) \
  const long i = get_global_id(0); \
  if (i >= (n)) return;
