#include "device/memory_pool.h"

#include <algorithm>
#include <cstdlib>

namespace pdk_plugin {

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [size, blocks] : cache_)
    for (void* p : blocks) std::free(p);
  // Blocks still in use belong to tensors TensorFlow did not free before it
  // destroyed the device (process exit): freed with it.
  for (auto& [p, size] : live_) std::free(const_cast<void*>(p));
}

uint64_t MemoryPool::ClassSize(uint64_t bytes) {
  if (bytes <= kAlignment) return kAlignment;
  if (bytes > (uint64_t(1) << 62)) return bytes;  // past any limit: refused as is
  const int top = 63 - __builtin_clzll(bytes);    // 2^top <= bytes < 2^(top+1)
  const uint64_t step = std::max<uint64_t>(kAlignment, (uint64_t(1) << top) >> 4);
  return (bytes + step - 1) / step * step;
}

void* MemoryPool::Allocate(uint64_t bytes) {
  uint64_t size = ClassSize(bytes);
  std::lock_guard<std::mutex> l(mu_);
  if (static_cast<int64_t>(size) < 0 || static_cast<int64_t>(size) > limit_ - in_use_) {
    // Near the limit the class's rounding must not refuse what fits: a block
    // of the size asked (to kAlignment) instead, cached under that size.
    size = (std::max<uint64_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    if (bytes > (uint64_t(1) << 62) || static_cast<int64_t>(size) > limit_ - in_use_) {
      ++failed_;  // over PDK_MEMORY_LIMIT_MB
      return nullptr;
    }
  }
  const auto n = static_cast<int64_t>(size);
  void* p = nullptr;
  auto it = cache_.find(size);
  if (it != cache_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    cached_ -= n;
  } else {
    if (in_use_ + cached_ + n > limit_) EvictLocked(in_use_ + cached_ + n - limit_);
    p = std::aligned_alloc(kAlignment, size);
    if (p == nullptr && cached_ > 0) {  // the system is short: give the whole cache back
      EvictLocked(cached_);
      p = std::aligned_alloc(kAlignment, size);
    }
    if (p == nullptr) {
      ++failed_;
      return nullptr;
    }
  }
  if (spare_nodes_.empty()) {
    live_.emplace(p, size);
  } else {
    LiveMap::node_type node = std::move(spare_nodes_.back());
    spare_nodes_.pop_back();
    node.key() = p;
    node.mapped() = size;
    live_.insert(std::move(node));
  }
  in_use_ += n;
  ++num_allocs_;
  peak_ = std::max(peak_, in_use_);
  largest_ = std::max(largest_, n);
  peak_pool_ = std::max(peak_pool_, in_use_ + cached_);
  return p;
}

uint64_t MemoryPool::Deallocate(void* p) {
  if (p == nullptr) return 0;
  std::lock_guard<std::mutex> l(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) return 0;
  const uint64_t size = it->second;
  spare_nodes_.push_back(live_.extract(it));
  in_use_ -= static_cast<int64_t>(size);
  cache_[size].push_back(p);
  cached_ += static_cast<int64_t>(size);
  return size;
}

uint64_t MemoryPool::BlockSize(const void* p) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = live_.find(p);
  return it == live_.end() ? 0 : it->second;
}

void MemoryPool::EvictLocked(int64_t need) {
  std::vector<uint64_t> sizes;
  for (const auto& [size, blocks] : cache_)
    if (!blocks.empty()) sizes.push_back(size);
  std::sort(sizes.rbegin(), sizes.rend());
  int64_t freed = 0;
  for (uint64_t size : sizes) {
    std::vector<void*>& blocks = cache_[size];
    while (!blocks.empty() && freed < need) {
      std::free(blocks.back());
      blocks.pop_back();
      freed += static_cast<int64_t>(size);
    }
    if (freed >= need) break;
  }
  cached_ -= freed;
}

int64_t MemoryPool::ReleaseCache() {
  std::lock_guard<std::mutex> l(mu_);
  const int64_t before = cached_;
  EvictLocked(cached_);
  return before - cached_;
}

PoolStats MemoryPool::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  PoolStats s;
  s.num_allocs = num_allocs_;
  s.bytes_in_use = in_use_;
  s.peak_bytes_in_use = peak_;
  s.largest_alloc_size = largest_;
  s.bytes_limit = limit_;
  s.pool_bytes = in_use_ + cached_;
  s.peak_pool_bytes = peak_pool_;
  s.num_failed_allocs = failed_;
  return s;
}

void MemoryPool::ClearStats() {
  std::lock_guard<std::mutex> l(mu_);
  num_allocs_ = 0;
  largest_ = 0;
  peak_ = in_use_;
  peak_pool_ = in_use_ + cached_;
}

}  // namespace pdk_plugin
