// Parallel loops on a device's pool in which the calling thread takes part
// and never sleeps waiting for a worker that has not started.
//
// Eigen's ThreadPoolDevice::parallelFor (unsupported/Eigen/CXX11/src/Tensor/
// TensorDeviceThreadPool.h) hands the whole range to the pool when it cuts
// more blocks than the pool has threads, which it does for most ranges, and
// the caller then sleeps on a barrier until the last block ends: two thread
// wake-ups per kernel, each 25-40 us on the 2-vCPU development VMs when the
// woken thread's vCPU was idle, more than a ~1 MiB elementwise kernel or
// reduction computes in (docs/benchmarks.md, "Splitting small kernels").
// ParallelFor keeps Eigen's decision whether to split at all (its cost
// model, TensorCostModel::numThreads) and runs the pieces on RunShards.
#ifndef PDK_SRC_COMPUTE_PARALLEL_FOR_H_
#define PDK_SRC_COMPUTE_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>

#include "compute/eigen.h"

namespace pdk_compute {

// Runs fn(s) once for every s in [0, shards) and returns when all are done.
// The calling (TensorFlow executor) thread and up to min(numThreads(),
// max_threads) - 1 workers of the device pool claim shard indices in order from a shared counter
// (dynamic scheduling): a thread slowed down by another process on its core
// takes fewer shards instead of holding the others up, and the caller never
// waits for a worker that has not started (a late worker finds no shard left
// and touches nothing of the caller's). fn(s) must depend on s only (scratch
// indexed by s), never on the thread that runs it, so results are the same
// whichever thread runs which shard.
template <class Fn>
void RunShards(const Eigen::ThreadPoolDevice& dev, int64_t shards, Fn&& fn,
               int64_t max_threads = std::numeric_limits<int64_t>::max()) {
  if (shards <= 0) return;
  const int64_t helpers =
      std::min({static_cast<int64_t>(dev.numThreads()), shards, max_threads}) - 1;
  if (helpers <= 0) {
    for (int64_t s = 0; s < shards; ++s) fn(s);
    return;
  }
  struct State {
    std::atomic<int64_t> next{0}, done{0};
    std::mutex mu;
    std::condition_variable cv;
    bool finished = false;
  };
  auto state = std::make_shared<State>();
  using Body = std::remove_reference_t<Fn>;
  Body* body = &fn;
  // Claims and runs shards until none is left; true if it ran the last one.
  auto work = [shards](State& st, Body* f) {
    for (int64_t s; (s = st.next.fetch_add(1, std::memory_order_relaxed)) < shards;) {
      (*f)(s);
      if (st.done.fetch_add(1, std::memory_order_acq_rel) + 1 == shards) return true;
    }
    return false;
  };
  for (int64_t h = 0; h < helpers; ++h) {
    dev.enqueueNoNotification([state, body, work] {
      if (work(*state, body)) {
        std::lock_guard<std::mutex> lock(state->mu);
        state->finished = true;
        state->cv.notify_one();
      }
    });
  }
  if (work(*state, body)) return;
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->finished; });
}

// fn(first, last) over consecutive pieces of [0, n) that cover it once, as
// Eigen's dev.parallelFor(n, cost, fn) does: in the calling thread alone when
// Eigen's cost model gives one thread for n units of `cost` each, else as
// kPiecesPerThread pieces per thread claimed dynamically (RunShards) by at
// most the cost model's number of threads. fn must
// not depend on how [0, n) is cut or on the thread that runs a piece.
inline constexpr int64_t kPiecesPerThread = 4;

template <class Fn>
void ParallelFor(const Eigen::ThreadPoolDevice& dev, Eigen::Index n, const Eigen::TensorOpCost& cost,
                 Fn&& fn) {
  if (n <= 0) return;
  const int threads =
      n == 1 ? 1
             : Eigen::TensorCostModel<Eigen::ThreadPoolDevice>::numThreads(
                   static_cast<double>(n), cost, dev.numThreads());
  if (threads <= 1) {
    fn(Eigen::Index{0}, n);
    return;
  }
  const int64_t pieces = std::min<int64_t>(n, kPiecesPerThread * threads);
  RunShards(
      dev, pieces,
      [&](int64_t s) {
        fn(static_cast<Eigen::Index>(n * s / pieces),
           static_cast<Eigen::Index>(n * (s + 1) / pieces));
      },
      threads);
}

// out = expr, the value `out.device(dev) = expr` gives every element (Eigen's
// evaluator of the assignment, run over ranges of the output), split as
// ParallelFor splits: Eigen's cost model on the expression's cost per
// coefficient decides whether to split, and pieces of whole packets run on
// RunShards with the calling thread taking part, where Eigen's own executor
// hands every block to the pool and the caller sleeps (the two wake-ups
// above). For expressions whose evaluator computes each coefficient on its
// own (elementwise ops, casts, selects, constants, broadcasts); sub-
// expressions that need a buffer of their own are evaluated first, on the
// calling thread. Not for reductions: their result bits depend on how
// Eigen's executor splits them (see reduction_ops.cc).
template <class Out, class Expr>
void Assign(const Eigen::ThreadPoolDevice& dev, Out out, const Expr& expr) {
  using AssignOp = Eigen::TensorAssignOp<Out, const Expr>;
  using Evaluator = Eigen::TensorEvaluator<const AssignOp, Eigen::DefaultDevice>;
  using Index = typename Evaluator::Index;
  constexpr bool kVectorized = Evaluator::PacketAccess;
  constexpr Index kPacket =
      kVectorized ? Eigen::internal::unpacket_traits<typename Evaluator::PacketReturnType>::size
                  : 1;
  const AssignOp assign(out, expr);
  const Eigen::DefaultDevice one;
  Evaluator evaluator(assign, one);
  if (evaluator.evalSubExprsIfNeeded(nullptr)) {
    const Index size = Eigen::internal::array_prod(evaluator.dimensions());
    const Index packets = (size + kPacket - 1) / kPacket;
    ParallelFor(dev, packets, evaluator.costPerCoeff(kVectorized) * double(kPacket),
                [&](Eigen::Index p0, Eigen::Index p1) {
                  Eigen::internal::EvalRange<Evaluator, Index, kVectorized>::run(
                      &evaluator, static_cast<Index>(p0 * kPacket),
                      std::min<Index>(size, static_cast<Index>(p1 * kPacket)));
                });
  }
  evaluator.cleanup();
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_PARALLEL_FOR_H_
