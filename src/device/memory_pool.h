// The PDK device's memory: host memory in size classes, a cache of freed
// blocks per class, a hard limit, and TensorFlow's allocator statistics.
//
// PDK declines TensorFlow's BFC allocator (docs/architecture.md, "Memory"), so
// TensorFlow's simple pluggable allocator calls the device for every tensor
// and frees with size 0: this pool is what BFC was on top of the device —
// reuse without a system call per tensor, and the per-pointer sizes.
//
// - A request is rounded up to its class: 256 bytes up to 4 KiB, then 16
//   classes per power of two (a block is at most 1/16 larger than asked).
// - A freed block goes to its class's cache; the next request of that class
//   takes it back (a training step allocates the same sizes every step).
// - The limit holds for the blocks in use: an allocation that would take
//   them past it fails at once (TensorFlow reports ResourceExhaustedError).
//   Near the limit a request whose class would not fit gets a block of its
//   own size (to 256 bytes) instead: the rounding never refuses what fits.
//   Cached blocks are given back to the system, largest first, when the blocks
//   in use plus the cache would otherwise pass the limit, and all of them
//   when the system itself has no memory; the pool never holds more than
//   the limit.
#ifndef PDK_SRC_DEVICE_MEMORY_POOL_H_
#define PDK_SRC_DEVICE_MEMORY_POOL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace pdk_plugin {

// Bytes and counts, as TensorFlow's AllocatorStats names them.
struct PoolStats {
  int64_t num_allocs = 0;          // allocations since creation or ClearStats
  int64_t bytes_in_use = 0;        // blocks held by tensors (class sizes)
  int64_t peak_bytes_in_use = 0;   // since creation or ClearStats
  int64_t largest_alloc_size = 0;  // largest block since creation or ClearStats
  int64_t bytes_limit = 0;
  int64_t pool_bytes = 0;          // in use + cached: host memory the pool holds
  int64_t peak_pool_bytes = 0;     // since creation or ClearStats
  int64_t num_failed_allocs = 0;   // allocations refused (over the limit, or no system memory)
};

class MemoryPool {
 public:
  // Block alignment: covers Eigen's and oneDNN's 64 and TensorFlow's 64.
  static constexpr size_t kAlignment = 256;

  explicit MemoryPool(int64_t limit) : limit_(limit) {}
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A kAlignment-aligned block of at least `bytes` (0 counts as 1), or null
  // when the blocks in use plus this one would pass the limit or the system
  // has no memory left even after the cache was given back.
  void* Allocate(uint64_t bytes);
  // Returns `p`'s block to its class's cache; its class size, 0 (and nothing
  // done) for a pointer this pool did not hand out.
  uint64_t Deallocate(void* p);
  // The class size of a block in use, 0 for any other pointer.
  uint64_t BlockSize(const void* p) const;
  // Gives every cached block back to the system; returns the bytes freed.
  int64_t ReleaseCache();

  PoolStats Stats() const;
  // As TensorFlow's BFC allocator: num_allocs and largest_alloc_size to 0, the
  // peaks to the current figures.
  void ClearStats();

  static uint64_t ClassSize(uint64_t bytes);

 private:
  // Frees cached blocks, largest class first, until at least `need` bytes were
  // freed or the cache is empty. Requires mu_.
  void EvictLocked(int64_t need);

  const int64_t limit_;
  mutable std::mutex mu_;
  using LiveMap = std::unordered_map<const void*, uint64_t>;
  LiveMap live_;                                              // block -> class size
  // The map nodes of freed blocks, reused by the next allocations: a block's
  // entry in live_ then costs no heap allocation (one malloc and free per
  // tensor less; docs/benchmarks.md, "Per-op cost"). At most as many as the
  // peak number of blocks in use.
  std::vector<LiveMap::node_type> spare_nodes_;
  std::unordered_map<uint64_t, std::vector<void*>> cache_;    // class size -> free blocks
  int64_t in_use_ = 0, cached_ = 0;
  int64_t num_allocs_ = 0, peak_ = 0, largest_ = 0, peak_pool_ = 0, failed_ = 0;
};

}  // namespace pdk_plugin

#endif  // PDK_SRC_DEVICE_MEMORY_POOL_H_
