// pdk/device_address_map.h — device addresses for a device whose memory is a
// set of handles (OpenCL cl_mem, Vulkan VkBuffer, ...), not pointers.
//
// TensorFlow treats the `opaque` of a device allocation as an address: it
// slices tensors by adding byte offsets to it (Tensor::Slice, split and
// unstack outputs that alias their input, sub-buffers of its BFC allocator's
// regions). A handle plus an offset is not a handle, so such a device hands
// TensorFlow addresses from a range reserved for it and resolves every
// address a kernel receives back to (handle, byte offset).
//
//   pdk::DeviceAddressMap<cl_mem> map;
//   void* addr = map.Insert(buffer, bytes);   // allocate: what TensorFlow sees
//   auto r = map.Resolve(ptr);                // {buffer, offset} for any ptr inside
//   cl_mem b = map.Erase(addr);               // deallocate: the handle to release
//
// The addresses are a private, inaccessible mapping (mmap PROT_NONE,
// MAP_NORESERVE: address space only, no memory): unique, never reused while
// mapped, and a host read of one by mistake faults at once instead of reading
// some other host object. Thread-safe; Resolve is a shared-lock map lookup.
#ifndef PDK_DEVICE_ADDRESS_MAP_H_
#define PDK_DEVICE_ADDRESS_MAP_H_

#include <sys/mman.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace pdk {

template <class Handle>
class DeviceAddressMap {
 public:
  struct Resolved {
    Handle handle{};
    uint64_t offset = 0;  // bytes from the start of the handle's buffer
    uint64_t size = 0;    // bytes of the whole buffer
    bool ok = false;      // false: the address is not inside any buffer
  };

  DeviceAddressMap() = default;
  DeviceAddressMap(const DeviceAddressMap&) = delete;
  DeviceAddressMap& operator=(const DeviceAddressMap&) = delete;
  ~DeviceAddressMap() {
    for (auto& [base, e] : entries_) munmap(reinterpret_cast<void*>(base), Span(e.size));
  }

  // Reserves `bytes` of address space for `handle` (at least one page, page
  // aligned); nullptr if the process has no address space left.
  void* Insert(Handle handle, uint64_t bytes) {
    void* p = mmap(nullptr, Span(bytes), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return nullptr;
    std::unique_lock<std::shared_mutex> l(mu_);
    entries_[reinterpret_cast<uintptr_t>(p)] = Entry{handle, bytes};
    return p;
  }

  // The handle and offset of any address in [base, base + bytes) of a live
  // Insert; an address one past the end (an empty tensor at the end of a
  // buffer) resolves too, with offset == size.
  Resolved Resolve(const void* address) const {
    const uintptr_t a = reinterpret_cast<uintptr_t>(address);
    std::shared_lock<std::shared_mutex> l(mu_);
    auto it = entries_.upper_bound(a);
    if (it == entries_.begin()) return {};
    --it;
    if (a - it->first > it->second.size) return {};
    return Resolved{it->second.handle, a - it->first, it->second.size, true};
  }

  // Releases the address range Insert returned and gives back its handle
  // (a default Handle if `address` is not one).
  Handle Erase(void* address) {
    Entry e;
    {
      std::unique_lock<std::shared_mutex> l(mu_);
      auto it = entries_.find(reinterpret_cast<uintptr_t>(address));
      if (it == entries_.end()) return Handle{};
      e = it->second;
      entries_.erase(it);
    }
    munmap(address, Span(e.size));
    return e.handle;
  }

  // The size Insert was given for `address`, or 0.
  uint64_t SizeOf(const void* address) const {
    std::shared_lock<std::shared_mutex> l(mu_);
    auto it = entries_.find(reinterpret_cast<uintptr_t>(address));
    return it == entries_.end() ? 0 : it->second.size;
  }

 private:
  struct Entry {
    Handle handle{};
    uint64_t size = 0;
  };
  static size_t Span(uint64_t bytes) {
    constexpr uint64_t kPage = 4096;
    return static_cast<size_t>((bytes == 0 ? 1 : bytes + kPage - 1) / kPage * kPage);
  }

  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Entry> entries_;
};

}  // namespace pdk

#endif  // PDK_DEVICE_ADDRESS_MAP_H_
