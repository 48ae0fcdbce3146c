#include "device/async_launcher.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "compute/thread_pool.h"
#include "pdk/env.h"
#include "pdk/kernel.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_tensor.h"

namespace pdk_plugin {
namespace {

// TensorFlow releases (major, minor) whose CAsyncOpKernel was run with PDK's
// asynchronous kernels (tests/python/test_async_kernels.py in a venv of each:
// 2.16.2, 2.19.1, 2.21.0). tf-nightly 2.23.0.dev20261026 is left out: the
// done-callback self-test below ends in "double free or corruption" there.
constexpr std::pair<int, int> kAsyncTestedTensorFlow[] = {{2, 16}, {2, 19}, {2, 21}};

// Launches whose inputs hold fewer bytes than this run inline: the hand-off
// (a launcher thread's wake-up, then TensorFlow scheduling the successors from
// it) costs more than the overlap gains (docs/benchmarks.md, "Asynchronous
// kernels"). PDK_ASYNC_MIN_BYTES overrides it.
constexpr int64_t kDefaultMinBytes = 1 << 20;

std::string& StatusText() {
  static std::string* s = new std::string("off: PDK registered no kernels");
  return *s;
}

// Launcher threads, separate from the device pools: a launched kernel splits
// its work over its device's pool and takes shards itself (RunShards), so it
// never waits on a thread that waits on it. At most `threads` launches are
// in flight; Accept declines when all threads are busy, so a launch never
// queues behind another (the executor thread runs it inline instead).
class Launcher {
 public:
  Launcher(int threads, int64_t min_bytes)
      : threads_(threads), free_(threads), min_bytes_(min_bytes) {}

  bool Accept(TF_OpKernelContext* c) {
    if (InputBytes(c) < min_bytes_) return false;
    int f = free_.load(std::memory_order_relaxed);
    while (f > 0)
      if (free_.compare_exchange_weak(f, f - 1, std::memory_order_acq_rel)) {
        std::call_once(started_, [this] {
          for (int i = 0; i < threads_; ++i) std::thread([this] { Loop(); }).detach();
        });
        return true;
      }
    return false;
  }

  void Launch(pdk::AsyncWork work) {
    launches_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> l(mu_);
      queue_.push_back(std::move(work));
    }
    cv_.notify_one();
  }

  uint64_t launches() const { return launches_.load(std::memory_order_relaxed); }
  int threads() const { return threads_; }
  int64_t min_bytes() const { return min_bytes_; }

 private:
  static int64_t InputBytes(TF_OpKernelContext* c) {
    static thread_local TF_Status* s = TF_NewStatus();
    int64_t total = 0;
    for (int i = 0, n = TF_NumInputs(c); i < n; ++i) {
      TF_Tensor* t = nullptr;
      TF_GetInput(c, i, &t, s);
      if (t == nullptr) continue;
      total += static_cast<int64_t>(TF_TensorByteSize(t));
      TF_DeleteTensor(t);
    }
    return total;
  }

  void Loop() {
    for (;;) {
      pdk::AsyncWork work;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [this] { return !queue_.empty(); });
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
      work = nullptr;  // TensorFlow's callback copy dies here, before the thread is free
      free_.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  const int threads_;
  std::atomic<int> free_;
  std::atomic<uint64_t> launches_{0};
  const int64_t min_bytes_;
  std::once_flag started_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<pdk::AsyncWork> queue_;
};

Launcher* g_launcher = nullptr;

// Why asynchronous kernels must stay off ("" if they may run).
std::string AsyncProblem(std::pair<int, int> tf) {
#if !defined(__GLIBCXX__)
  return "the plugin was not built with libstdc++, whose std::function TensorFlow's done "
         "callback is";
#else
  if (!pdk::env::Flag("PDK_ASYNC", true)) return "PDK_ASYNC=0";
  bool tested = false;
  for (const auto& v : kAsyncTestedTensorFlow) tested = tested || v == tf;
  if (!tested) {
    std::string list;
    for (const auto& v : kAsyncTestedTensorFlow)
      list += (list.empty() ? "" : ", ") + std::to_string(v.first) + "." + std::to_string(v.second);
    return (tf.first ? "TensorFlow " + std::to_string(tf.first) + "." + std::to_string(tf.second)
                     : std::string("an unknown TensorFlow version")) +
           " is not among the releases tested with asynchronous kernels (" + list + ")";
  }
  if (sizeof(std::function<void()>) != 32 || alignof(std::function<void()>) != 8)
    return "std::function<void()> is " + std::to_string(sizeof(std::function<void()>)) +
           " bytes, not libstdc++'s 32";
  // The done callback's round trip: TensorFlow's TF_RunAsyncOpKernelDoneCallback
  // calls a std::function of ours, and the kit's copy of it calls it again.
  int calls = 0;
  std::function<void()> f = [&calls] { ++calls; };
  auto* done = reinterpret_cast<TF_AsyncOpKernelDoneCallback*>(&f);
  TF_RunAsyncOpKernelDoneCallback(done);
  std::function<void()> copy = pdk::CopyDoneCallback(done);
  copy();
  if (calls != 2)
    return "the done-callback self-test called its target " + std::to_string(calls) +
           " times, not 2";
  return "";
#endif
}

}  // namespace

void InitAsync(std::pair<int, int> tensorflow_version) {
  static std::once_flag once;
  std::call_once(once, [&] {
    const std::string problem = AsyncProblem(tensorflow_version);
    if (!problem.empty()) {
      StatusText() = "off: " + problem;
      return;
    }
    const int64_t min_bytes =
        pdk::env::Int("PDK_ASYNC_MIN_BYTES", kDefaultMinBytes, 0, int64_t(1) << 40,
                      {" bytes"});
    g_launcher = new Launcher(pdk_compute::NumThreads() > 2 ? pdk_compute::NumThreads() : 2,
                              min_bytes);  // never destroyed: launches may outlive exit
    static const pdk::AsyncLauncher hooks{
        [](TF_OpKernelContext* c) { return g_launcher->Accept(c); },
        [](pdk::AsyncWork w) { g_launcher->Launch(std::move(w)); }};
    pdk::AsyncLauncherSlot().store(&hooks, std::memory_order_release);
    StatusText() = "on: launches of asynchronous kernels with >= " + std::to_string(min_bytes) +
                   " bytes of input (PDK_ASYNC_MIN_BYTES) run on " +
                   std::to_string(g_launcher->threads()) + " launcher threads";
  });
}

const std::string& AsyncStatus() { return StatusText(); }

uint64_t AsyncLaunches() { return g_launcher ? g_launcher->launches() : 0; }

int64_t AsyncMinBytes() { return g_launcher ? g_launcher->min_bytes() : 0; }

}  // namespace pdk_plugin
