// The OpenCL C source of every OPENCL kernel (cl/*.cl, concatenated at build
// time by embed_sources.cmake).
#ifndef PDK_OPENCL_PROGRAM_SOURCE_H_
#define PDK_OPENCL_PROGRAM_SOURCE_H_
namespace pdk_opencl {
extern const char* const kProgramSource;
}  // namespace pdk_opencl
#endif  // PDK_OPENCL_PROGRAM_SOURCE_H_
