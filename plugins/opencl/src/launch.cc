// Kernel launches on the OPENCL device (launch.h).
#include "launch.h"

#include <vector>

#include "pdk/profiler.h"

namespace pdk_opencl {

pdk::StatusOr<LaunchTarget> Target(OpKernelContext* ctx) {
  pdk::Stream* s = ctx->op_device_context()->stream();
  if (s == nullptr) return pdk::Internal("no OPENCL stream for this kernel launch");
  LaunchTarget t;
  t.stream = static_cast<ClStream*>(s);
  t.device = &t.stream->device();
  return t;
}

void ProfileOrRelease(OpKernelContext* ctx, const LaunchTarget& t, cl_event ev) {
  if (ev == nullptr) return;
  if (pdk::ProfilingActive())
    TrackForProfile(ev, *t.stream, ctx->op_kernel().name(), ctx->op_kernel().type_string());
  else
    clReleaseEvent(ev);
}

pdk::Status Resolve(const ClDevice& device, const Tensor& t, cl_mem* buffer, uint64_t* offset) {
  uint64_t bytes = 0;
  PDK_RETURN_IF_ERROR(device.Resolve(t.data(), buffer, &bytes));
  const int size = tensorflow::DataTypeSize(t.dtype());
  *offset = size > 0 ? bytes / static_cast<uint64_t>(size) : bytes;
  return pdk::Status::OK();
}

std::string KernelName(const char* name, DataType dtype) {
  const char* suffix = "unsupported";
  switch (dtype) {
    case tensorflow::DT_FLOAT: suffix = "f32"; break;
    case tensorflow::DT_DOUBLE: suffix = "f64"; break;
    case tensorflow::DT_HALF: suffix = "f16"; break;
    case tensorflow::DT_INT32: suffix = "i32"; break;
    case tensorflow::DT_INT64: suffix = "i64"; break;
    case tensorflow::DT_UINT8: suffix = "u8"; break;
    case tensorflow::DT_BOOL: suffix = "b8"; break;
    default: break;
  }
  return std::string(name) + "_" + suffix;
}

namespace {

pdk::Status SetArgs(const ClDevice& device, cl_kernel k, const std::string& name,
                    std::initializer_list<Arg> args) {
  cl_uint i = 0;
  for (const Arg& a : args) {
    switch (a.kind()) {
      case Arg::kTensor: {
        cl_mem buf = nullptr;
        uint64_t off = 0;
        if (a.tensor().NumElements() > 0) PDK_RETURN_IF_ERROR(Resolve(device, a.tensor(), &buf, &off));
        const cl_ulong o = off;
        PDK_CL_RETURN_IF_ERROR(clSetKernelArg(k, i++, sizeof(cl_mem), &buf), name + " argument");
        PDK_CL_RETURN_IF_ERROR(clSetKernelArg(k, i++, sizeof(o), &o), name + " argument");
        break;
      }
      case Arg::kValue:
        PDK_CL_RETURN_IF_ERROR(clSetKernelArg(k, i++, a.size(), a.value()), name + " argument");
        break;
      case Arg::kLocal:
        PDK_CL_RETURN_IF_ERROR(clSetKernelArg(k, i++, a.size(), nullptr), name + " argument");
        break;
    }
  }
  return pdk::Status::OK();
}

pdk::Status Run(OpKernelContext* ctx, const std::string& name, cl_uint dims, const size_t* global,
                const size_t* local, std::initializer_list<Arg> args) {
  for (cl_uint d = 0; d < dims; ++d)
    if (global[d] == 0) return pdk::Status::OK();
  PDK_ASSIGN_OR_RETURN(LaunchTarget t, Target(ctx));
  PDK_ASSIGN_OR_RETURN(cl_kernel k, t.device->Kernel(name.c_str()));
  PDK_RETURN_IF_ERROR(SetArgs(*t.device, k, name, args));
  const cl_command_queue q = t.stream->queue();
  const bool profiling = pdk::ProfilingActive();
  cl_event ev = nullptr;
  PDK_CL_RETURN_IF_ERROR(clEnqueueNDRangeKernel(q, k, dims, nullptr, global, local, 0, nullptr,
                                                profiling ? &ev : nullptr),
                         "enqueueing " + name);
  ProfileOrRelease(ctx, t, ev);
  clFlush(q);
  return pdk::Status::OK();
}

}  // namespace

pdk::Status Enqueue(OpKernelContext* ctx, const std::string& name, uint64_t global,
                    std::initializer_list<Arg> args, size_t local) {
  size_t g = static_cast<size_t>(global);
  if (local > 0) g = (g + local - 1) / local * local;
  return Run(ctx, name, 1, &g, local > 0 ? &local : nullptr, args);
}

pdk::Status Enqueue2D(OpKernelContext* ctx, const std::string& name, uint64_t global0,
                      uint64_t global1, std::initializer_list<Arg> args) {
  const size_t g[2] = {static_cast<size_t>(global0), static_cast<size_t>(global1)};
  return Run(ctx, name, 2, g, nullptr, args);
}

pdk::Status CopyTensor(OpKernelContext* ctx, const Tensor& src, Tensor* dst) {
  const uint64_t bytes = src.TotalBytes();
  if (bytes == 0) return pdk::Status::OK();
  if (dst->TotalBytes() != bytes)
    return pdk::Internal("CopyTensor of ", bytes, " bytes into ", dst->TotalBytes());
  PDK_ASSIGN_OR_RETURN(LaunchTarget t, Target(ctx));
  cl_mem sb = nullptr, db = nullptr;
  uint64_t so = 0, dof = 0;
  PDK_RETURN_IF_ERROR(t.device->Resolve(src.data(), &sb, &so));
  PDK_RETURN_IF_ERROR(t.device->Resolve(dst->data(), &db, &dof));
  PDK_CL_RETURN_IF_ERROR(
      clEnqueueCopyBuffer(t.stream->queue(), sb, db, so, dof, bytes, 0, nullptr, nullptr),
      "clEnqueueCopyBuffer");
  return pdk::Status::OK();
}

pdk::Status Zero(OpKernelContext* ctx, Tensor* t) {
  const uint64_t bytes = t->TotalBytes();
  if (bytes == 0) return pdk::Status::OK();
  PDK_ASSIGN_OR_RETURN(LaunchTarget target, Target(ctx));
  cl_mem b = nullptr;
  uint64_t off = 0;
  PDK_RETURN_IF_ERROR(target.device->Resolve(t->data(), &b, &off));
  const cl_uchar zero = 0;
  PDK_CL_RETURN_IF_ERROR(clEnqueueFillBuffer(target.stream->queue(), b, &zero, 1, off, bytes, 0,
                                             nullptr, nullptr),
                         "clEnqueueFillBuffer");
  return pdk::Status::OK();
}

}  // namespace pdk_opencl
