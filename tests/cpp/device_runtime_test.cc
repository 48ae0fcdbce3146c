// The PDK device runtime through the StreamExecutor C API tables, as TensorFlow
// calls them: SE_PlatformRegistrationParams -> SP_PlatformFns -> SP_Device ->
// SP_StreamExecutor / SP_TimerFns. Runs with PDK_MEMORY_LIMIT_MB=64 and
// PDK_DEVICE_COUNT=2, set below before the runtime first reads its config.
// Also the device pool's parallel loops (ParallelFor, RunShards).
#include <gtest/gtest.h>

#include <string>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "compute/parallel_for.h"
#include "device/memory_pool.h"
#include "device/pdk_device.h"
#include "pdk/device.h"

namespace {

const bool kEnvironmentSet = [] {
  setenv("PDK_MEMORY_LIMIT_MB", "64", 1);
  setenv("PDK_DEVICE_COUNT", "2", 1);
  return true;
}();

struct Runtime {
  pdk_plugin::PdkPlatform platform{true};
  SE_PlatformRegistrationParams params{SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE};
  SP_Platform sp_platform{SP_PLATFORM_STRUCT_SIZE};
  SP_PlatformFns fns{SP_PLATFORM_FNS_STRUCT_SIZE};
  SP_Device device{SP_DEVICE_STRUCT_SIZE};
  SP_StreamExecutor se{SP_STREAMEXECUTOR_STRUCT_SIZE};
  SP_TimerFns timer_fns{SP_TIMER_FNS_STRUCT_SIZE};
  SP_DeviceFns device_fns{SP_DEVICE_FNS_STRUCT_SIZE};
  pdk::TFStatusPtr status = pdk::NewTFStatus();

  Runtime() {
    params.platform = &sp_platform;
    params.platform_fns = &fns;
    pdk::InitPlatform(&platform, &params, status.get());
    Check();
    SE_CreateDeviceParams dp{SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE};
    dp.ordinal = 0;
    dp.device = &device;
    fns.create_device(&sp_platform, &dp, status.get());
    Check();
    SE_CreateStreamExecutorParams sp{SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE};
    sp.stream_executor = &se;
    fns.create_stream_executor(&sp_platform, &sp, status.get());
    Check();
    fns.create_timer_fns(&sp_platform, &timer_fns, status.get());
    Check();
    SE_CreateDeviceFnsParams dfp{SE_CREATE_DEVICE_FNS_PARAMS_STRUCT_SIZE};
    dfp.device_fns = &device_fns;
    fns.create_device_fns(&sp_platform, &dfp, status.get());
    Check();
  }
  ~Runtime() { fns.destroy_device(&sp_platform, &device); }
  void Check() { ASSERT_EQ(TF_GetCode(status.get()), TF_OK) << TF_Message(status.get()); }
  bool Ok() const { return TF_GetCode(status.get()) == TF_OK; }
};

// A TensorFlow older than PDK's C API headers hands shorter structs: the kit
// answers FailedPrecondition and writes nothing (pdk::PrepareStruct).
TEST(Platform, StructShorterThanPdkHeadersIsRejectedUnwritten) {
  Runtime rt;
  SP_StreamExecutor se{};
  se.struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE - sizeof(void*);
  SE_CreateStreamExecutorParams sp{SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE};
  sp.stream_executor = &se;
  rt.fns.create_stream_executor(&rt.sp_platform, &sp, rt.status.get());
  EXPECT_EQ(TF_GetCode(rt.status.get()), TF_FAILED_PRECONDITION);
  EXPECT_NE(std::string(TF_Message(rt.status.get())).find("SP_StreamExecutor"), std::string::npos);
  EXPECT_EQ(se.allocate, nullptr);
  EXPECT_EQ(se.struct_size, SP_STREAMEXECUTOR_STRUCT_SIZE - sizeof(void*));
  // A longer one (a newer TensorFlow) is filled up to PDK's size.
  SP_TimerFns t{};
  t.struct_size = SP_TIMER_FNS_STRUCT_SIZE + 16;
  rt.fns.create_timer_fns(&rt.sp_platform, &t, rt.status.get());
  EXPECT_EQ(TF_GetCode(rt.status.get()), TF_OK);
  EXPECT_NE(t.nanoseconds, nullptr);
  EXPECT_EQ(t.struct_size, SP_TIMER_FNS_STRUCT_SIZE);
}

TEST(Platform, RegistrationFieldsAndDeviceCount) {
  Runtime rt;
  EXPECT_STREQ(rt.sp_platform.name, "PDK");
  EXPECT_STREQ(rt.sp_platform.type, "PDK");
  // TensorFlow's simple allocator over PDK's pool: no 10 s retry on OOM.
  EXPECT_FALSE(rt.sp_platform.use_bfc_allocator);
  EXPECT_FALSE(rt.sp_platform.force_memory_growth);
  int count = -1;
  rt.fns.get_device_count(&rt.sp_platform, &count, rt.status.get());
  EXPECT_TRUE(rt.Ok());
  EXPECT_EQ(count, 2);  // PDK_DEVICE_COUNT=2
  EXPECT_NE(rt.device.hardware_name, nullptr);
  EXPECT_NE(rt.device.device_vendor, nullptr);
  EXPECT_EQ(rt.device_fns.get_numa_node(&rt.device), 0);
  EXPECT_GT(rt.device_fns.get_gflops(&rt.device), 0.0);
  EXPECT_GT(rt.device_fns.get_memory_bandwidth(&rt.device), 0);
}

TEST(Platform, CreateDeviceRejectsBadOrdinal) {
  Runtime rt;
  SP_Device d{SP_DEVICE_STRUCT_SIZE};
  SE_CreateDeviceParams dp{SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE};
  dp.ordinal = 7;
  dp.device = &d;
  rt.fns.create_device(&rt.sp_platform, &dp, rt.status.get());
  EXPECT_EQ(TF_GetCode(rt.status.get()), TF_INVALID_ARGUMENT);
}

TEST(Memory, AlignedAllocationAccountingAndLimit) {
  Runtime rt;
  SP_DeviceMemoryBase a{SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  rt.se.allocate(&rt.device, 1000, 0, &a);
  ASSERT_NE(a.opaque, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.opaque) % 256, 0u);
  SP_AllocatorStats st{SP_ALLOCATORSTATS_STRUCT_SIZE};
  ASSERT_TRUE(rt.se.get_allocator_stats(&rt.device, &st));
  EXPECT_EQ(st.bytes_in_use, 1024);  // 1000 bytes: the 1 KiB class
  EXPECT_EQ(st.num_allocs, 1);
  EXPECT_TRUE(st.has_bytes_limit);
  EXPECT_EQ(st.bytes_limit, int64_t(64) << 20);
  int64_t free = 0, total = 0;
  ASSERT_TRUE(rt.se.device_memory_usage(&rt.device, &free, &total));
  EXPECT_EQ(total, int64_t(64) << 20);
  EXPECT_EQ(free, total - 1024);

  // Over the limit: a null allocation at once, not a crash; the device keeps working.
  SP_DeviceMemoryBase big{SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  rt.se.allocate(&rt.device, uint64_t(65) << 20, 0, &big);
  EXPECT_EQ(big.opaque, nullptr);
  EXPECT_EQ(big.size, 0u);
  // TensorFlow's simple allocator frees with size 0: the device knows the size.
  a.size = 0;
  rt.se.deallocate(&rt.device, &a);
  EXPECT_EQ(a.opaque, nullptr);
  ASSERT_TRUE(rt.se.get_allocator_stats(&rt.device, &st));
  EXPECT_EQ(st.bytes_in_use, 0);
  EXPECT_EQ(st.peak_bytes_in_use, 1024);
  EXPECT_EQ(st.largest_alloc_size, 1024);
  rt.se.allocate(&rt.device, uint64_t(32) << 20, 0, &big);
  EXPECT_NE(big.opaque, nullptr);
  rt.se.deallocate(&rt.device, &big);

  void* h = rt.se.host_memory_allocate(&rt.device, 100);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h) % 64, 0u);
  rt.se.host_memory_deallocate(&rt.device, h);
}

TEST(MemoryPool, SizeClasses) {
  using pdk_plugin::MemoryPool;
  EXPECT_EQ(MemoryPool::ClassSize(0), 256u);
  EXPECT_EQ(MemoryPool::ClassSize(1), 256u);
  EXPECT_EQ(MemoryPool::ClassSize(257), 512u);
  EXPECT_EQ(MemoryPool::ClassSize(4096), 4096u);
  EXPECT_EQ(MemoryPool::ClassSize(4097), 4096u + 256);
  EXPECT_EQ(MemoryPool::ClassSize(uint64_t(4) << 20), uint64_t(4) << 20);  // powers of 2 exact
  EXPECT_EQ(MemoryPool::ClassSize((uint64_t(4) << 20) + 1), (uint64_t(4) << 20) + (256 << 10));
  for (uint64_t n = 1; n < (uint64_t(1) << 34); n = n * 3 + 7) {
    const uint64_t c = MemoryPool::ClassSize(n);
    EXPECT_GE(c, n);
    EXPECT_LE(c - n, std::max<uint64_t>(255, n / 16)) << n;  // at most 1/16 more
    EXPECT_EQ(c % 256, 0u);
  }
}

// Freed blocks' map entries are reused for later blocks (spare_nodes_): each
// block in use must still report its own class size, and frees must return it.
TEST(MemoryPool, TracksEveryBlockAcrossReusedEntries) {
  using pdk_plugin::MemoryPool;
  MemoryPool pool(int64_t(64) << 20);
  std::vector<std::pair<void*, uint64_t>> live;
  int64_t expected_in_use = 0;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 50; ++i) {
      const uint64_t bytes = 100 + 997 * uint64_t(i + 13 * round);
      void* p = pool.Allocate(bytes);
      ASSERT_NE(p, nullptr);
      live.emplace_back(p, MemoryPool::ClassSize(bytes));
      expected_in_use += static_cast<int64_t>(MemoryPool::ClassSize(bytes));
    }
    // Free every other block: their entries become spares for the next round.
    std::vector<std::pair<void*, uint64_t>> kept;
    for (size_t k = 0; k < live.size(); ++k) {
      if (k % 2 == 0) {
        EXPECT_EQ(pool.Deallocate(live[k].first), live[k].second);
        expected_in_use -= static_cast<int64_t>(live[k].second);
      } else {
        kept.push_back(live[k]);
      }
    }
    live.swap(kept);
    for (const auto& [p, size] : live) EXPECT_EQ(pool.BlockSize(p), size);
    EXPECT_EQ(pool.Stats().bytes_in_use, expected_in_use);
  }
  for (const auto& [p, size] : live) EXPECT_EQ(pool.Deallocate(p), size);
  EXPECT_EQ(pool.Stats().bytes_in_use, 0);
  EXPECT_EQ(pool.Deallocate(live.front().first), 0u);  // already freed
}

TEST(MemoryPool, ReusesFreedBlocksAndKeepsTheLimit) {
  pdk_plugin::MemoryPool pool(int64_t(8) << 20);  // 8 MiB
  void* a = pool.Allocate(3 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(pool.BlockSize(a), uint64_t(3) << 20);
  EXPECT_EQ(pool.Deallocate(a), uint64_t(3) << 20);
  EXPECT_EQ(pool.BlockSize(a), 0u);  // freed: no longer known as in use
  EXPECT_EQ(pool.Stats().pool_bytes, int64_t(3) << 20);  // kept for reuse
  void* b = pool.Allocate((3 << 20) - 100);  // same class: the same block back
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool.Stats().bytes_in_use, int64_t(3) << 20);

  // 3 MiB in use, 4 MiB cached: 6 more MiB do not fit the 8 MiB limit ...
  void* c = pool.Allocate(4 << 20);
  ASSERT_NE(c, nullptr);
  pool.Deallocate(c);
  EXPECT_EQ(pool.Allocate(6 << 20), nullptr);
  EXPECT_EQ(pool.Stats().num_failed_allocs, 1);
  // ... 5 MiB do: the cached 4 MiB block goes back to the system first.
  void* d = pool.Allocate(5 << 20);
  ASSERT_NE(d, nullptr);
  pdk_plugin::PoolStats s = pool.Stats();
  EXPECT_EQ(s.bytes_in_use, int64_t(8) << 20);
  EXPECT_EQ(s.pool_bytes, int64_t(8) << 20);  // never above the limit
  EXPECT_EQ(s.peak_bytes_in_use, int64_t(8) << 20);
  EXPECT_EQ(s.largest_alloc_size, int64_t(5) << 20);
  EXPECT_EQ(s.num_allocs, 4);

  pool.Deallocate(d);
  pool.ClearStats();  // as reset_memory_stats: peaks from the current figures
  s = pool.Stats();
  EXPECT_EQ(s.peak_bytes_in_use, int64_t(3) << 20);
  EXPECT_EQ(s.num_allocs, 0);
  EXPECT_EQ(s.largest_alloc_size, 0);
  EXPECT_EQ(pool.ReleaseCache(), int64_t(5) << 20);
  EXPECT_EQ(pool.Stats().pool_bytes, int64_t(3) << 20);
  EXPECT_EQ(pool.Deallocate(&s), 0u);  // not from the pool: ignored
  pool.Deallocate(b);
}

TEST(MemoryPool, RoundingNeverRefusesWhatFits) {
  pdk_plugin::MemoryPool pool((int64_t(5) << 20) + (64 << 10));  // 5 MiB + 64 KiB
  const uint64_t asked = (uint64_t(5) << 20) + 1;  // its class: 5.25 MiB
  void* p = pool.Allocate(asked);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pool.BlockSize(p), (asked + 255) / 256 * 256);  // the size asked, to 256
  EXPECT_EQ(pool.Allocate(1 << 20), nullptr);  // and the limit still holds
  pool.Deallocate(p);
  EXPECT_EQ(pool.Allocate(asked), p);  // cached under its own size
  pool.Deallocate(p);
}

TEST(MemoryPool, ConcurrentAllocationsBalance) {
  pdk_plugin::MemoryPool pool(int64_t(64) << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      std::vector<void*> held;
      for (int i = 0; i < 2000; ++i) {
        held.push_back(pool.Allocate(64 + (i * 37 + t * 101) % 20000));
        if (held.size() > 8) {
          pool.Deallocate(held.front());
          held.erase(held.begin());
        }
      }
      for (void* p : held) pool.Deallocate(p);
    });
  for (auto& th : threads) th.join();
  const pdk_plugin::PoolStats s = pool.Stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, 8000);
  EXPECT_EQ(s.num_failed_allocs, 0);
  EXPECT_LE(s.pool_bytes, int64_t(64) << 20);
}

TEST(Streams, CopiesInEveryDirectionAndMemsets) {
  Runtime rt;
  SP_Stream s = nullptr;
  rt.se.create_stream(&rt.device, &s, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  SP_DeviceMemoryBase d1{SP_DEVICE_MEMORY_BASE_STRUCT_SIZE}, d2{SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  rt.se.allocate(&rt.device, 64, 0, &d1);
  rt.se.allocate(&rt.device, 64, 0, &d2);
  std::vector<uint8_t> host(64), back(64);
  for (int i = 0; i < 64; ++i) host[i] = static_cast<uint8_t>(i);

  rt.se.memcpy_htod(&rt.device, s, &d1, host.data(), 64, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  rt.se.memcpy_dtod(&rt.device, s, &d2, &d1, 64, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  rt.se.memcpy_dtoh(&rt.device, s, back.data(), &d2, 64, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  EXPECT_EQ(back, host);

  rt.se.mem_zero(&rt.device, s, &d1, 64, rt.status.get());
  rt.se.sync_memcpy_dtoh(&rt.device, back.data(), &d1, 64, rt.status.get());
  EXPECT_EQ(back, std::vector<uint8_t>(64, 0));
  rt.se.memset(&rt.device, s, &d1, 0xab, 64, rt.status.get());
  rt.se.sync_memcpy_dtod(&rt.device, &d2, &d1, 64, rt.status.get());
  rt.se.sync_memcpy_dtoh(&rt.device, back.data(), &d2, 64, rt.status.get());
  EXPECT_EQ(back, std::vector<uint8_t>(64, 0xab));
  rt.se.memset32(&rt.device, s, &d1, 0x01020304u, 64, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  uint32_t words[16];
  rt.se.sync_memcpy_dtoh(&rt.device, words, &d1, 64, rt.status.get());
  for (uint32_t w : words) EXPECT_EQ(w, 0x01020304u);
  rt.se.memset32(&rt.device, s, &d1, 0, 6, rt.status.get());  // not a multiple of 4
  EXPECT_EQ(TF_GetCode(rt.status.get()), TF_INVALID_ARGUMENT);
  rt.se.sync_memcpy_htod(&rt.device, &d1, host.data(), 64, rt.status.get());
  EXPECT_TRUE(rt.Ok());

  rt.se.block_host_until_done(&rt.device, s, rt.status.get());
  EXPECT_TRUE(rt.Ok());
  rt.se.synchronize_all_activity(&rt.device, rt.status.get());
  EXPECT_TRUE(rt.Ok());
  rt.se.deallocate(&rt.device, &d1);
  rt.se.deallocate(&rt.device, &d2);
  rt.se.destroy_stream(&rt.device, s);
}

struct CallbackState {
  int calls = 0;
  TF_Code code = TF_OK;
};

TEST(Streams, HostCallbackRunsAndItsErrorBecomesTheStreamStatus) {
  Runtime rt;
  SP_Stream s = nullptr, other = nullptr;
  rt.se.create_stream(&rt.device, &s, rt.status.get());
  rt.se.create_stream(&rt.device, &other, rt.status.get());
  CallbackState ok_state;
  EXPECT_TRUE(rt.se.host_callback(&rt.device, s, [](void* arg, TF_Status* st) {
    static_cast<CallbackState*>(arg)->calls++;
    TF_SetStatus(st, TF_OK, "");
  }, &ok_state));
  EXPECT_EQ(ok_state.calls, 1);
  rt.se.get_stream_status(&rt.device, s, rt.status.get());
  EXPECT_TRUE(rt.Ok());

  EXPECT_TRUE(rt.se.host_callback(&rt.device, other, [](void*, TF_Status* st) {
    TF_SetStatus(st, TF_DATA_LOSS, "callback failed");
  }, nullptr));
  rt.se.get_stream_status(&rt.device, other, rt.status.get());
  EXPECT_EQ(TF_GetCode(rt.status.get()), TF_DATA_LOSS);
  // A dependency on a failed stream reports its error.
  rt.se.create_stream_dependency(&rt.device, s, other, rt.status.get());
  EXPECT_EQ(TF_GetCode(rt.status.get()), TF_DATA_LOSS);
  rt.se.destroy_stream(&rt.device, s);
  rt.se.destroy_stream(&rt.device, other);
}

TEST(Events, CompleteOnceRecorded) {
  Runtime rt;
  SP_Stream s = nullptr;
  SP_Event e = nullptr;
  rt.se.create_stream(&rt.device, &s, rt.status.get());
  rt.se.create_event(&rt.device, &e, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  rt.se.record_event(&rt.device, s, e, rt.status.get());
  EXPECT_TRUE(rt.Ok());
  EXPECT_EQ(rt.se.get_event_status(&rt.device, e), SE_EVENT_COMPLETE);
  rt.se.wait_for_event(&rt.device, s, e, rt.status.get());
  EXPECT_TRUE(rt.Ok());
  rt.se.block_host_for_event(&rt.device, e, rt.status.get());
  EXPECT_TRUE(rt.Ok());
  rt.se.destroy_event(&rt.device, e);
  rt.se.destroy_stream(&rt.device, s);
}

TEST(Timers, MeasureElapsedNanoseconds) {
  Runtime rt;
  SP_Stream s = nullptr;
  SP_Timer t = nullptr;
  rt.se.create_stream(&rt.device, &s, rt.status.get());
  rt.se.create_timer(&rt.device, &t, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  rt.se.start_timer(&rt.device, s, t, rt.status.get());
  volatile double x = 0;
  for (int i = 0; i < 200000; ++i) x += i * 0.5;
  rt.se.stop_timer(&rt.device, s, t, rt.status.get());
  ASSERT_TRUE(rt.Ok());
  EXPECT_GT(rt.timer_fns.nanoseconds(t), 0u);
  rt.se.destroy_timer(&rt.device, t);
  rt.se.destroy_stream(&rt.device, s);
}

TEST(Runtime, EveryRequiredStreamExecutorFunctionIsFilled) {
  Runtime rt;
  // TensorFlow requires all of these (stream_executor.cc ValidateSPStreamExecutor).
  const void* fns[] = {
      (void*)rt.se.allocate, (void*)rt.se.deallocate, (void*)rt.se.host_memory_allocate,
      (void*)rt.se.host_memory_deallocate, (void*)rt.se.get_allocator_stats,
      (void*)rt.se.device_memory_usage, (void*)rt.se.create_stream, (void*)rt.se.destroy_stream,
      (void*)rt.se.create_stream_dependency, (void*)rt.se.get_stream_status,
      (void*)rt.se.create_event, (void*)rt.se.destroy_event, (void*)rt.se.get_event_status,
      (void*)rt.se.record_event, (void*)rt.se.wait_for_event, (void*)rt.se.create_timer,
      (void*)rt.se.destroy_timer, (void*)rt.se.start_timer, (void*)rt.se.stop_timer,
      (void*)rt.se.memcpy_dtoh, (void*)rt.se.memcpy_htod, (void*)rt.se.memcpy_dtod,
      (void*)rt.se.sync_memcpy_dtoh, (void*)rt.se.sync_memcpy_htod, (void*)rt.se.sync_memcpy_dtod,
      (void*)rt.se.block_host_for_event, (void*)rt.se.block_host_until_done,
      (void*)rt.se.synchronize_all_activity, (void*)rt.se.mem_zero, (void*)rt.se.memset,
      (void*)rt.se.memset32, (void*)rt.se.host_callback};
  for (const void* f : fns) EXPECT_NE(f, nullptr);
  EXPECT_EQ(rt.se.struct_size, SP_STREAMEXECUTOR_STRUCT_SIZE);
  EXPECT_EQ(rt.timer_fns.struct_size, SP_TIMER_FNS_STRUCT_SIZE);
}

}  // namespace

// pdk_compute::ParallelFor and RunShards (src/compute/parallel_for.h): every
// index of the range is handed out exactly once, in contiguous pieces,
// whatever the cost (one piece on the caller or a split) and the pool size.
TEST(ParallelFor, CoversTheRangeOnceInContiguousPieces) {
  for (int threads : {1, 2, 4}) {
    Eigen::ThreadPool pool(threads);
    const Eigen::ThreadPoolDevice dev(&pool, threads);
    for (Eigen::Index n : {0, 1, 7, 1000, 100003}) {
      for (double cycles : {1.0, 1e6}) {  // Eigen's cost model: inline / split
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int> pieces{0};
        pdk_compute::ParallelFor(dev, n, Eigen::TensorOpCost(4, 4, cycles),
                                 [&](Eigen::Index first, Eigen::Index last) {
                                   ASSERT_LT(first, last);
                                   ASSERT_LE(last, n);
                                   for (Eigen::Index i = first; i < last; ++i) ++hits[i];
                                   ++pieces;
                                 });
        for (Eigen::Index i = 0; i < n; ++i)
          ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n << ", " << threads
                                       << " threads, " << cycles << " cycles";
        if (n > 1 && n <= 1000 && cycles == 1.0)
          EXPECT_EQ(pieces.load(), 1) << "a cheap range is not split";
        if (n >= 1000 && cycles > 1.0 && threads > 1)
          EXPECT_GT(pieces.load(), 1) << "an expensive range is split";
      }
    }
  }
}

// The cost model's thread count caps the threads that take part: on a pool
// of 4, a range Eigen would split over 2 threads runs on at most 2.
TEST(ParallelFor, UsesAtMostTheCostModelsThreads) {
  Eigen::ThreadPool pool(4);
  const Eigen::ThreadPoolDevice dev(&pool, 4);
  const Eigen::Index n = 1 << 16;
  double cycles = 0.01;  // the cheapest cost the model splits over exactly 2 threads
  auto model = [&](double c) {
    return Eigen::TensorCostModel<Eigen::ThreadPoolDevice>::numThreads(
        double(n), Eigen::TensorOpCost(4, 4, c), 4);
  };
  for (int i = 0; i < 400 && model(cycles) != 2; ++i) cycles *= 1.1;
  ASSERT_EQ(model(cycles), 2);
  const Eigen::TensorOpCost cost(4, 4, cycles);
  for (int round = 0; round < 50; ++round) {
    std::mutex mu;
    std::set<std::thread::id> ids;
    pdk_compute::ParallelFor(dev, n, cost, [&](Eigen::Index, Eigen::Index) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // let helpers join
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
    ASSERT_LE(ids.size(), 2u) << "round " << round;
  }
}

TEST(RunShards, RunsEveryShardOnce) {
  Eigen::ThreadPool pool(2);
  const Eigen::ThreadPoolDevice dev(&pool, 2);
  for (int64_t shards : {0, 1, 2, 3, 64}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(shards));
    pdk_compute::RunShards(dev, shards, [&](int64_t s) { ++runs[s]; });
    for (int64_t s = 0; s < shards; ++s) EXPECT_EQ(runs[s].load(), 1) << "shard " << s;
  }
}
