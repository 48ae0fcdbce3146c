// host_costs.cc — what the operating system charges the threads of a
// TensorFlow process on this machine: a system call, a first-touch page fault,
// and a futex hand-off between two threads (one wakes the other and sleeps
// until woken back: a round trip of two wake-ups). These set the cost of every
// hand-off between threads (the device pool's workers, PDK's launcher threads,
// TensorFlow's inter-op pool) and of memory the allocator takes fresh from the
// kernel. Results: docs/benchmarks.md, "What a thread hand-off costs".
//
// Not part of the CMake build:
//   g++ -O2 -std=c++17 bench/host_costs.cc -o /tmp/host_costs -lpthread && /tmp/host_costs
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::atomic<int> turn{0};  // 1: the partner's turn, 0: main's turn

void Wait(int until) {
  for (int v; (v = turn.load()) != until;)
    syscall(SYS_futex, reinterpret_cast<int*>(&turn), FUTEX_WAIT, v, nullptr, nullptr, 0);
}

void Pass(int to) {
  turn.store(to);
  syscall(SYS_futex, reinterpret_cast<int*>(&turn), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

}  // namespace

int main() {
  constexpr int kCalls = 200000;
  double t = Seconds();
  for (int i = 0; i < kCalls; ++i) syscall(SYS_getppid);
  std::printf("system call (getppid): %.3f us\n", (Seconds() - t) / kCalls * 1e6);

  constexpr size_t kBytes = size_t(256) << 20, kPage = 4096;
  auto* p = static_cast<char*>(
      mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  t = Seconds();
  for (size_t i = 0; i < kBytes; i += kPage) p[i] = 1;
  std::printf("page fault (first touch of a 4 KiB page): %.3f us\n",
              (Seconds() - t) / (kBytes / kPage) * 1e6);
  munmap(p, kBytes);

  constexpr int kRounds = 20000;
  std::thread partner([] {
    for (int i = 0; i < kRounds; ++i) {
      Wait(1);
      Pass(0);
    }
  });
  t = Seconds();
  for (int i = 0; i < kRounds; ++i) {
    Pass(1);
    Wait(0);
  }
  std::printf("futex round trip between two threads (two wake-ups): %.3f us\n",
              (Seconds() - t) / kRounds * 1e6);
  partner.join();
  return 0;
}
