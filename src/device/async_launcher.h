// PDK's launcher of asynchronous kernels (the kit's pdk::AsyncLauncher,
// include/pdk/kernel.h, "asynchronous kernels"): MatMul, BatchMatMulV2 and
// _PdkFusedMatMul run on launcher threads when their inputs are large
// enough, so independent kernels overlap as they do on TensorFlow's CPU
// device (docs/architecture.md, "Asynchronous kernels").
//
// Guards, checked once by InitAsync before the kernels register; if any
// fails, no launcher is installed and every kernel registers synchronously:
// - the plugin is built with libstdc++ (the done-callback copy, kernel.h);
// - PDK_ASYNC is not 0;
// - the running TensorFlow is a release on kAsyncTestedTensorFlow;
// - std::function<void()> has libstdc++'s layout (32 bytes, 8-aligned), and
//   a std::function of the plugin's, run through TensorFlow's
//   TF_RunAsyncOpKernelDoneCallback and copied with the kit's
//   CopyDoneCallback, calls its target once each.
#ifndef PDK_SRC_DEVICE_ASYNC_LAUNCHER_H_
#define PDK_SRC_DEVICE_ASYNC_LAUNCHER_H_

#include <cstdint>
#include <string>
#include <utility>

namespace pdk_plugin {

// Checks the guards for TensorFlow (major, minor) ({0, 0}: unknown) and, if
// they pass, installs the launcher in pdk::AsyncLauncherSlot. Call once, in
// TF_InitKernel, before the kernels register.
void InitAsync(std::pair<int, int> tensorflow_version);

// "on: ..." with the launcher's settings, or "off: <the guard that failed>"
// (tensorflow_pdk diagnostics); "off: PDK registered no kernels" before InitAsync.
const std::string& AsyncStatus();

// Launches run on a launcher thread since load (the others ran inline).
uint64_t AsyncLaunches();

// The launcher's threshold (PDK_ASYNC_MIN_BYTES): launches with fewer bytes
// of input run inline; 0 while asynchronous kernels are off.
int64_t AsyncMinBytes();

}  // namespace pdk_plugin

#endif  // PDK_SRC_DEVICE_ASYNC_LAUNCHER_H_
