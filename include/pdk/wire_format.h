// pdk/wire_format.h — the protocol-buffer wire format, read and written by
// hand: a plugin built with the kit carries no protobuf runtime
// (docs/architecture.md, "Graph optimizer"). Used by the kit's GraphDef codec
// (pdk/graph_def.h), the profiler's XSpace writer (src/profiler/) and
// the TF-style kit's NodeDef shape-attr reader (pdk/tf/op_kernel.h).
// Encoding: https://protobuf.dev/programming-guides/encoding/.
#ifndef PDK_WIRE_FORMAT_H_
#define PDK_WIRE_FORMAT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace pdk {
namespace wire {

enum WireType : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// A bounds-checked cursor over serialized bytes.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  explicit Reader(std::string_view s)
      : Reader(reinterpret_cast<const uint8_t*>(s.data()), s.size()) {}
  bool done() const { return p_ == end_; }
  const uint8_t* pos() const { return p_; }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      *v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;  // more than 10 bytes
  }
  // Reads a field key; field numbers are 1 .. 2^29-1.
  bool Tag(int* field, int* wire) {
    uint64_t key;
    if (!Varint(&key)) return false;
    *field = static_cast<int>(key >> 3);
    *wire = static_cast<int>(key & 7);
    return (key >> 3) >= 1 && (key >> 3) < (uint64_t(1) << 29);
  }
  bool Bytes(std::string_view* s) {
    uint64_t n;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *s = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (end_ - p_ < 4) return false;
    std::memcpy(v, p_, 4);  // little-endian host (x86-64, aarch64)
    p_ += 4;
    return true;
  }
  // Skips the value of a field of wire type `wire` (groups are rejected:
  // proto3 messages never contain them).
  bool Skip(int wire) {
    uint64_t v;
    std::string_view s;
    switch (wire) {
      case kVarint: return Varint(&v);
      case kFixed64: return Advance(8);
      case kLengthDelimited: return Bytes(&s);
      case kFixed32: return Advance(4);
      default: return false;
    }
  }

 private:
  bool Advance(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
inline void PutTag(std::string* out, int field, int wire) {
  PutVarint(out, (uint64_t(field) << 3) | uint64_t(wire));
}
inline void PutBytes(std::string* out, int field, std::string_view s) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, s.size());
  out->append(s.data(), s.size());
}
// A varint field (int64 / uint64 / bool / enum; negative int64 as 10 bytes).
inline void PutVarintField(std::string* out, int field, uint64_t v) {
  PutTag(out, field, kVarint);
  PutVarint(out, v);
}
// A double field (fixed64, little-endian host).
inline void PutDoubleField(std::string* out, int field, double v) {
  PutTag(out, field, kFixed64);
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}

}  // namespace wire
}  // namespace pdk

#endif  // PDK_WIRE_FORMAT_H_
