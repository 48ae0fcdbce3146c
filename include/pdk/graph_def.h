// pdk/graph_def.h — TensorFlow's GraphDef as a plugin's graph optimizer reads
// and writes it (pdk/graph_optimizer.h), header-only: a protobuf wire-format
// codec (pdk/wire_format.h; https://protobuf.dev/programming-guides/encoding/)
// for exactly the fields graph rewrites touch, keeping everything else as the
// original bytes. A plugin built with the kit carries no protobuf runtime.
//
// Field numbers (tensorflow/core/framework/graph.proto, node_def.proto,
// attr_value.proto; also written out in PDK's src/graph/proto/tf_graph.proto,
// which PDK's tests compile with protoc and use as the reference):
//   GraphDef  { repeated NodeDef node = 1; ...library = 2, version = 3,
//               versions = 4, debug_info = 5: kept as raw bytes }
//   NodeDef   { string name = 1; string op = 2; repeated string input = 3;
//               string device = 4; map<string, AttrValue> attr = 5;
//               ...experimental_debug_info = 6, experimental_type = 7: raw }
//   AttrValue { oneof value { list = 1; bytes s = 2; int64 i = 3; float f = 4;
//               bool b = 5; DataType type = 6; shape = 7; tensor = 8;
//               placeholder = 9; func = 10 } }
//   NameAttrList { string name = 1; map<string, AttrValue> attr = 2 }  — kept as its
//               serialized bytes, decoded on demand
// dtypes are tensorflow.DataType values (types.proto), equal to TF_DataType's.
//
// Every field the kit does not model survives a parse/serialize round trip
// unchanged, in its original order after the modeled ones (as protobuf does
// with unknown fields). Parsing never reads out of bounds: malformed or
// truncated input is an InvalidArgument status, never a crash.
//
// Node inputs are strings, as in TensorFlow: "node" (output 0), "node:port",
// "^node" (a control input); regular inputs come first. ParseInput splits them.
#ifndef PDK_GRAPH_DEF_H_
#define PDK_GRAPH_DEF_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pdk/status.h"
#include "pdk/wire_format.h"
#include "tensorflow/c/tf_datatype.h"

namespace pdk {


// One AttrValue, as its serialized bytes.
class AttrValue {
 public:
  AttrValue() = default;
  static AttrValue Type(int dtype);  // a TF_DataType / tensorflow.DataType value
  static AttrValue Bool(bool b);
  static AttrValue String(std::string_view s);
  static AttrValue Float(float f);
  static AttrValue Int(int64_t i);
  // list { i: ... } (packed), as TensorFlow writes list(int) attributes.
  static AttrValue IntList(const std::vector<int64_t>& values);
  // list { type: ... } (packed), a list(type) attribute.
  static AttrValue TypeList(const std::vector<int64_t>& dtypes);
  // tensor { dtype: DT_INT32, tensor_shape {}, int_val: value }: a Const's
  // "value" for an int32 scalar.
  static AttrValue Int32Scalar(int32_t value);
  static AttrValue FromBytes(std::string bytes) {
    AttrValue v;
    v.bytes_ = std::move(bytes);
    return v;
  }

  // The value if this AttrValue holds one of that kind (the last oneof member
  // on the wire wins, as in protobuf), else false.
  bool GetType(int* dtype) const;
  bool GetBool(bool* b) const;
  bool GetString(std::string* s) const;
  bool GetFloat(float* f) const;
  bool GetInt(int64_t* i) const;
  // func (NameAttrList): its function name ("" if the list names none).
  bool GetFuncName(std::string* name) const;
  // list(int): the list's `i` entries, packed or not (an empty list is one).
  bool GetIntList(std::vector<int64_t>* values) const;
  // list(type): the list's `type` entries (TF_DataType values), the same way.
  bool GetTypeList(std::vector<int64_t>* dtypes) const;
  // The elements of an integer tensor (AttrValue.tensor, e.g. a Const's
  // "value"; TensorProto dtype DT_INT32 or DT_INT64 with a fully defined shape
  // of rank <= 8 and at most 2^20 elements), row-major, from tensor_content or
  // int_val / int64_val (one value repeated over the shape, as TensorFlow
  // writes splats), and its shape (optional). False otherwise, never a crash.
  bool GetIntTensor(std::vector<int64_t>* values, std::vector<int64_t>* shape = nullptr) const;
  // The same for a DT_FLOAT tensor (tensor_content or float_val); `rank`
  // (optional) receives its rank.
  bool GetFloatTensor(std::vector<float>* values, int* rank = nullptr) const;
  // A shape attribute (AttrValue.shape): its dimensions, -1 for an unknown
  // one; false if the value is of another kind. An unknown rank gives false,
  // or, if `unknown_rank` is given, true with *unknown_rank set and no dims.
  bool GetShape(std::vector<int64_t>* dims, bool* unknown_rank = nullptr) const;
  // A list(shape) attribute (AttrValue.list.shape): each shape as GetShape
  // gives it, with unknown_rank[i] (if given) for each; false if the value is
  // of another kind.
  bool GetShapeList(std::vector<std::vector<int64_t>>* shapes,
                    std::vector<bool>* unknown_rank = nullptr) const;

  const std::string& bytes() const { return bytes_; }
  bool operator==(const AttrValue& o) const { return bytes_ == o.bytes_; }

 private:
  std::string bytes_;
};

struct NodeDef {
  std::string name, op, device;
  std::vector<std::string> input;
  std::map<std::string, AttrValue> attr;  // serialized in key order
  std::string unknown;                    // other fields, raw

  // Attribute helpers with defaults (missing or of another kind -> dflt).
  int TypeAttr(const std::string& key) const;  // 0 (DT_INVALID) if none
  bool BoolAttr(const std::string& key, bool dflt) const;
  float FloatAttr(const std::string& key, float dflt) const;
  std::string StringAttr(const std::string& key, const std::string& dflt) const;
};

struct GraphDef {
  std::vector<NodeDef> node;
  std::string unknown;  // library, versions, debug_info, ...: raw
};

// Parses a serialized tensorflow.GraphDef. Garbage or a truncated message
// gives InvalidArgument.
pdk::Status ParseGraphDef(const void* data, size_t size, GraphDef* graph);
// Parses one serialized tensorflow.NodeDef (what a kernel's construction
// gets from TF_OpKernelConstruction_GetNodeDef), the same way.
pdk::Status ParseNodeDef(const void* data, size_t size, NodeDef* node);
// Serializes: modeled fields in field-number order (attributes by key), then
// the raw ones. Equal graphs give equal bytes.
std::string SerializeGraphDef(const GraphDef& graph);

// One input string of a NodeDef, parsed. port == kControl for "^node".
struct TensorRef {
  static constexpr int kControl = -1;
  std::string node;
  int port = 0;
  bool is_control() const { return port == kControl; }
};

// Parses "node", "node:3" or "^node". A malformed port ("a:x") is kept as part
// of the name, so it matches no node and blocks every rewrite touching it.
TensorRef ParseInput(std::string_view input);

// The device type of a device name: "/job:localhost/replica:0/task:0/device:PDK:0"
// -> "PDK"; also "/device:PDK:0", "/PDK:0", "PDK:0". "" if none (unplaced).
std::string DeviceTypeOf(std::string_view device);

// ---- Implementation.

namespace graph_internal {

using pdk::wire::kFixed32;
using pdk::wire::kFixed64;
using pdk::wire::kLengthDelimited;
using pdk::wire::kVarint;
using pdk::wire::PutBytes;
using pdk::wire::PutTag;
using pdk::wire::PutVarint;
using pdk::wire::Reader;

// Appends the raw bytes of the field that started at `start` and ended at
// the reader's position.
inline void KeepRaw(std::string* unknown, const uint8_t* start, const Reader& r) {
  unknown->append(reinterpret_cast<const char*>(start), r.pos() - start);
}

// Finds the last occurrence of `field` with wire type `wire` in a message.
// Returns false on malformed input or if absent.
template <class Fn>
inline bool LastField(std::string_view msg, int field, int wire, Fn&& read) {
  Reader r(msg);
  bool found = false;
  while (!r.done()) {
    int f, w;
    if (!r.Tag(&f, &w)) return false;
    if (f == field && w == wire) {
      if (!read(r)) return false;
      found = true;
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return found;
}

// The AttrValue oneof member that is set last on the wire (field number), or 0.
inline int OneofCase(std::string_view msg) {
  Reader r(msg);
  int last = 0;
  while (!r.done()) {
    int f, w;
    if (!r.Tag(&f, &w) || !r.Skip(w)) return 0;
    if (f >= 1 && f <= 10) last = f;
  }
  return last;
}

inline pdk::Status ParseAttrEntry(std::string_view entry, NodeDef* node) {
  Reader r(entry);
  std::string key, value;
  while (!r.done()) {
    int f, w;
    std::string_view s;
    if (!r.Tag(&f, &w)) return pdk::InvalidArgument("bad attr entry");
    if (f == 1 && w == kLengthDelimited) {
      if (!r.Bytes(&s)) return pdk::InvalidArgument("bad attr key");
      key.assign(s);
    } else if (f == 2 && w == kLengthDelimited) {
      if (!r.Bytes(&s)) return pdk::InvalidArgument("bad attr value");
      value.assign(s);
    } else if (!r.Skip(w)) {
      return pdk::InvalidArgument("bad attr entry field");
    }
  }
  node->attr[key] = AttrValue::FromBytes(std::move(value));  // later entries win, as in protobuf
  return pdk::Status::OK();
}

inline pdk::Status ParseNodeDef(std::string_view msg, NodeDef* node) {
  Reader r(msg);
  while (!r.done()) {
    const uint8_t* start = r.pos();
    int f, w;
    std::string_view s;
    if (!r.Tag(&f, &w)) return pdk::InvalidArgument("bad NodeDef field key");
    if (f >= 1 && f <= 5 && w == kLengthDelimited) {
      if (!r.Bytes(&s)) return pdk::InvalidArgument("truncated NodeDef field ", f);
      switch (f) {
        case 1: node->name.assign(s); break;
        case 2: node->op.assign(s); break;
        case 3: node->input.emplace_back(s); break;
        case 4: node->device.assign(s); break;
        case 5: PDK_RETURN_IF_ERROR(ParseAttrEntry(s, node)); break;
      }
    } else {
      if (!r.Skip(w)) return pdk::InvalidArgument("bad NodeDef field ", f);
      KeepRaw(&node->unknown, start, r);
    }
  }
  return pdk::Status::OK();
}

inline std::string SerializeNodeDef(const NodeDef& n) {
  std::string out;
  if (!n.name.empty()) PutBytes(&out, 1, n.name);
  if (!n.op.empty()) PutBytes(&out, 2, n.op);
  for (const auto& in : n.input) PutBytes(&out, 3, in);
  if (!n.device.empty()) PutBytes(&out, 4, n.device);
  for (const auto& [key, value] : n.attr) {
    std::string entry;
    PutBytes(&entry, 1, key);
    PutBytes(&entry, 2, value.bytes());
    PutBytes(&out, 5, entry);
  }
  out += n.unknown;
  return out;
}

}  // namespace graph_internal

// ---- AttrValue

inline AttrValue AttrValue::Type(int dtype) {
  AttrValue v;
  wire::PutTag(&v.bytes_, 6, wire::kVarint);
  wire::PutVarint(&v.bytes_, static_cast<uint64_t>(static_cast<int64_t>(dtype)));
  return v;
}
inline AttrValue AttrValue::Bool(bool b) {
  AttrValue v;
  wire::PutTag(&v.bytes_, 5, wire::kVarint);
  wire::PutVarint(&v.bytes_, b ? 1 : 0);
  return v;
}
inline AttrValue AttrValue::String(std::string_view s) {
  AttrValue v;
  wire::PutBytes(&v.bytes_, 2, s);
  return v;
}
inline AttrValue AttrValue::Float(float f) {
  AttrValue v;
  wire::PutTag(&v.bytes_, 4, wire::kFixed32);
  char b[4];
  std::memcpy(b, &f, 4);
  v.bytes_.append(b, 4);
  return v;
}
inline AttrValue AttrValue::Int(int64_t i) {
  AttrValue v;
  wire::PutTag(&v.bytes_, 3, wire::kVarint);
  wire::PutVarint(&v.bytes_, static_cast<uint64_t>(i));
  return v;
}

namespace internal {
// AttrValue { list = 1: ListValue { <field>: values (packed varints) } }.
inline std::string PackedListAttr(int field, const std::vector<int64_t>& values) {
  std::string packed, list, attr;
  for (int64_t i : values) wire::PutVarint(&packed, static_cast<uint64_t>(i));
  if (!values.empty()) wire::PutBytes(&list, field, packed);
  wire::PutBytes(&attr, 1, list);
  return attr;
}
}  // namespace internal

inline AttrValue AttrValue::IntList(const std::vector<int64_t>& values) {
  return FromBytes(internal::PackedListAttr(3, values));  // ListValue.i = 3
}

inline AttrValue AttrValue::TypeList(const std::vector<int64_t>& dtypes) {
  return FromBytes(internal::PackedListAttr(6, dtypes));  // ListValue.type = 6
}

inline AttrValue AttrValue::Int32Scalar(int32_t value) {
  // TensorProto { dtype = 1: DT_INT32; tensor_shape = 2: {} (a scalar);
  //               int_val = 7: [value] (packed) }
  std::string tensor, packed;
  wire::PutTag(&tensor, 1, wire::kVarint);
  wire::PutVarint(&tensor, TF_INT32);
  wire::PutBytes(&tensor, 2, "");
  wire::PutVarint(&packed, static_cast<uint64_t>(static_cast<int64_t>(value)));
  wire::PutBytes(&tensor, 7, packed);
  AttrValue v;
  wire::PutBytes(&v.bytes_, 8, tensor);  // AttrValue.tensor = 8
  return v;
}

namespace graph_internal {

// Appends the varints of a repeated scalar field: packed (length-delimited)
// or one value (varint).
inline bool ReadRepeatedVarint(Reader& r, int wire, std::vector<int64_t>* out) {
  uint64_t v;
  if (wire == kVarint) {
    if (!r.Varint(&v)) return false;
    out->push_back(static_cast<int64_t>(v));
    return true;
  }
  std::string_view packed;
  if (wire != kLengthDelimited || !r.Bytes(&packed)) return false;
  Reader p(packed);
  while (!p.done()) {
    if (!p.Varint(&v)) return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

// The repeated varint field `field` of AttrValue.list (ListValue.i = 3,
// ListValue.type = 6).
inline bool GetListVarints(const std::string& attr, int field, std::vector<int64_t>* values) {
  if (OneofCase(attr) != 1) return false;
  std::string_view list;
  if (!LastField(attr, 1, wire::kLengthDelimited, [&](wire::Reader& r) { return r.Bytes(&list); }))
    return false;
  values->clear();
  wire::Reader r(list);
  while (!r.done()) {
    int f, w;
    if (!r.Tag(&f, &w)) return false;
    if (f == field) {
      if (!ReadRepeatedVarint(r, w, values)) return false;
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return true;
}

}  // namespace graph_internal

inline bool AttrValue::GetIntList(std::vector<int64_t>* values) const {
  return graph_internal::GetListVarints(bytes_, 3, values);
}

inline bool AttrValue::GetTypeList(std::vector<int64_t>* dtypes) const {
  return graph_internal::GetListVarints(bytes_, 6, dtypes);
}

inline bool AttrValue::GetType(int* dtype) const {
  if (graph_internal::OneofCase(bytes_) != 6) return false;
  return graph_internal::LastField(bytes_, 6, wire::kVarint, [&](wire::Reader& r) {
    uint64_t v;
    if (!r.Varint(&v)) return false;
    *dtype = static_cast<int>(static_cast<int64_t>(v));
    return true;
  });
}
inline bool AttrValue::GetBool(bool* b) const {
  if (graph_internal::OneofCase(bytes_) != 5) return false;
  return graph_internal::LastField(bytes_, 5, wire::kVarint, [&](wire::Reader& r) {
    uint64_t v;
    if (!r.Varint(&v)) return false;
    *b = v != 0;
    return true;
  });
}
inline bool AttrValue::GetString(std::string* s) const {
  if (graph_internal::OneofCase(bytes_) != 2) return false;
  return graph_internal::LastField(bytes_, 2, wire::kLengthDelimited, [&](wire::Reader& r) {
    std::string_view v;
    if (!r.Bytes(&v)) return false;
    s->assign(v);
    return true;
  });
}
inline bool AttrValue::GetFuncName(std::string* name) const {
  // AttrValue.func = 10: NameAttrList { string name = 1; map attr = 2; }
  if (graph_internal::OneofCase(bytes_) != 10) return false;
  return graph_internal::LastField(bytes_, 10, wire::kLengthDelimited, [&](wire::Reader& r) {
    std::string_view func;
    if (!r.Bytes(&func)) return false;
    name->clear();
    graph_internal::LastField(func, 1, wire::kLengthDelimited, [&](wire::Reader& fr) {
      std::string_view v;
      if (!fr.Bytes(&v)) return false;
      name->assign(v);
      return true;
    });
    return true;
  });
}
inline bool AttrValue::GetFloat(float* f) const {
  if (graph_internal::OneofCase(bytes_) != 4) return false;
  return graph_internal::LastField(bytes_, 4, wire::kFixed32, [&](wire::Reader& r) {
    uint32_t v;
    if (!r.Fixed32(&v)) return false;
    std::memcpy(f, &v, 4);
    return true;
  });
}
inline bool AttrValue::GetInt(int64_t* i) const {
  if (graph_internal::OneofCase(bytes_) != 3) return false;
  return graph_internal::LastField(bytes_, 3, wire::kVarint, [&](wire::Reader& r) {
    uint64_t v;
    if (!r.Varint(&v)) return false;
    *i = static_cast<int64_t>(v);
    return true;
  });
}

namespace graph_internal {

// TensorShapeProto { repeated Dim dim = 2 { int64 size = 1; }; bool unknown_rank = 3 }:
// the dimensions (-1 for an unknown one); false if the message is malformed,
// and if the rank is unknown unless `unknown_rank` is given (then it is set,
// and the dims are cleared).
inline bool ReadShapeDims(std::string_view msg, std::vector<int64_t>* dims,
                          bool* unknown_rank = nullptr) {
  Reader r(msg);
  dims->clear();
  if (unknown_rank) *unknown_rank = false;
  while (!r.done()) {
    int f, w;
    std::string_view dim;
    if (!r.Tag(&f, &w)) return false;
    if (f == 2 && w == kLengthDelimited) {
      if (!r.Bytes(&dim)) return false;
      int64_t size = 0;
      Reader d(dim);
      while (!d.done()) {
        int df, dw;
        uint64_t v;
        if (!d.Tag(&df, &dw)) return false;
        if (df == 1 && dw == kVarint) {
          if (!d.Varint(&v)) return false;
          size = static_cast<int64_t>(v);
        } else if (!d.Skip(dw)) {
          return false;
        }
      }
      dims->push_back(size);
    } else if (f == 3 && w == kVarint) {
      uint64_t v;
      if (!r.Varint(&v)) return false;
      if (v != 0) {
        if (!unknown_rank) return false;
        *unknown_rank = true;
      }
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  if (unknown_rank && *unknown_rank) dims->clear();
  return true;
}

// The same, for a tensor's shape: the dimensions and the number of elements;
// false if unknown, negative or larger than a small constant (2^20 elements).
inline bool ReadShape(std::string_view msg, int64_t* num_elements, std::vector<int64_t>* dims) {
  constexpr int64_t kMax = int64_t(1) << 20;
  if (!ReadShapeDims(msg, dims)) return false;
  bool empty = false;
  for (int64_t size : *dims) {
    if (size < 0 || size > kMax) return false;
    empty = empty || size == 0;
  }
  *num_elements = empty ? 0 : 1;
  for (int64_t size : *dims) {
    if (empty) break;
    *num_elements *= size;
    if (*num_elements > kMax) return false;
  }
  return true;
}

// A TensorProto's fields as the accessors below need them.
struct TensorFields {
  int64_t dtype = 0, num_elements = 1;
  std::vector<int64_t> dims;
  std::string_view content;
  std::vector<int64_t> ints;  // int_val, int64_val
  std::vector<float> floats;  // float_val
};

inline bool ReadTensor(std::string_view attr_bytes, TensorFields* t) {
  if (OneofCase(attr_bytes) != 8) return false;
  std::string_view tensor;
  if (!LastField(attr_bytes, 8, kLengthDelimited, [&](Reader& r) { return r.Bytes(&tensor); }))
    return false;
  Reader r(tensor);
  while (!r.done()) {
    int f, w;
    std::string_view s;
    uint64_t v;
    if (!r.Tag(&f, &w)) return false;
    if (f == 1 && w == kVarint) {
      if (!r.Varint(&v)) return false;
      t->dtype = static_cast<int64_t>(v);
    } else if (f == 2 && w == kLengthDelimited) {
      if (!r.Bytes(&s) || !ReadShape(s, &t->num_elements, &t->dims)) return false;
    } else if (f == 4 && w == kLengthDelimited) {
      if (!r.Bytes(&t->content)) return false;
    } else if ((f == 7 || f == 10) && (w == kVarint || w == kLengthDelimited)) {
      if (!ReadRepeatedVarint(r, w, &t->ints)) return false;
    } else if (f == 5 && (w == kFixed32 || w == kLengthDelimited)) {
      uint32_t bits;
      float x;
      if (w == kFixed32) {
        if (!r.Fixed32(&bits)) return false;
        std::memcpy(&x, &bits, 4);
        t->floats.push_back(x);
      } else {
        if (!r.Bytes(&s)) return false;
        Reader p(s);
        while (!p.done()) {
          if (!p.Fixed32(&bits)) return false;
          std::memcpy(&x, &bits, 4);
          t->floats.push_back(x);
        }
      }
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return t->dims.size() <= 8;
}

// The elements from tensor_content (little-endian, as TensorFlow writes it)
// or from the repeated field `vals`: n of them, or one repeated over the shape
// (a splat; none means zeros).
template <class T, class Raw>
inline bool TensorValues(const TensorFields& t, std::vector<T> vals, std::vector<T>* out) {
  const int64_t n = t.num_elements;
  out->clear();
  if (!t.content.empty()) {
    if (t.content.size() != static_cast<size_t>(n) * sizeof(Raw)) return false;
    for (int64_t i = 0; i < n; ++i) {
      Raw x;
      std::memcpy(&x, t.content.data() + i * sizeof(Raw), sizeof(Raw));
      out->push_back(static_cast<T>(x));
    }
    return true;
  }
  if (static_cast<int64_t>(vals.size()) == n) {
    *out = std::move(vals);
    return true;
  }
  if (vals.size() <= 1 && n > 0) {
    out->assign(n, vals.empty() ? T(0) : vals[0]);
    return true;
  }
  return false;
}

}  // namespace graph_internal

inline bool AttrValue::GetIntTensor(std::vector<int64_t>* values, std::vector<int64_t>* shape) const {
  graph_internal::TensorFields t;
  if (!graph_internal::ReadTensor(bytes_, &t)) return false;
  if (shape) *shape = t.dims;
  if (t.dtype == TF_INT32) {
    for (int64_t& x : t.ints) x = static_cast<int32_t>(x);  // int32 varints are sign-extended
    return graph_internal::TensorValues<int64_t, int32_t>(t, t.ints, values);
  }
  if (t.dtype == TF_INT64) return graph_internal::TensorValues<int64_t, int64_t>(t, t.ints, values);
  return false;
}

inline bool AttrValue::GetShape(std::vector<int64_t>* dims, bool* unknown_rank) const {
  if (graph_internal::OneofCase(bytes_) != 7) return false;
  std::string_view shape;
  if (!graph_internal::LastField(bytes_, 7, wire::kLengthDelimited, [&](wire::Reader& r) { return r.Bytes(&shape); }))
    return false;
  return graph_internal::ReadShapeDims(shape, dims, unknown_rank);
}

inline bool AttrValue::GetShapeList(std::vector<std::vector<int64_t>>* shapes,
                                    std::vector<bool>* unknown_rank) const {
  if (graph_internal::OneofCase(bytes_) != 1) return false;
  std::string_view list;
  if (!graph_internal::LastField(bytes_, 1, wire::kLengthDelimited, [&](wire::Reader& r) { return r.Bytes(&list); }))
    return false;
  shapes->clear();
  if (unknown_rank) unknown_rank->clear();
  wire::Reader r(list);
  while (!r.done()) {  // ListValue { repeated TensorShapeProto shape = 7; }
    int f, w;
    std::string_view item;
    if (!r.Tag(&f, &w)) return false;
    if (f == 7 && w == wire::kLengthDelimited) {
      bool unknown = false;
      shapes->emplace_back();
      if (!r.Bytes(&item) ||
          !graph_internal::ReadShapeDims(item, &shapes->back(), unknown_rank ? &unknown : nullptr))
        return false;
      if (unknown_rank) unknown_rank->push_back(unknown);
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return true;
}

inline bool AttrValue::GetFloatTensor(std::vector<float>* values, int* rank) const {
  graph_internal::TensorFields t;
  if (!graph_internal::ReadTensor(bytes_, &t) || t.dtype != TF_FLOAT) return false;
  if (rank) *rank = static_cast<int>(t.dims.size());
  return graph_internal::TensorValues<float, float>(t, t.floats, values);
}

// ---- NodeDef attribute helpers

inline int NodeDef::TypeAttr(const std::string& key) const {
  auto it = attr.find(key);
  int t = TF_DataType(0);
  return it != attr.end() && it->second.GetType(&t) ? t : TF_DataType(0);
}
inline bool NodeDef::BoolAttr(const std::string& key, bool dflt) const {
  auto it = attr.find(key);
  bool b = dflt;
  return it != attr.end() && it->second.GetBool(&b) ? b : dflt;
}
inline float NodeDef::FloatAttr(const std::string& key, float dflt) const {
  auto it = attr.find(key);
  float f = dflt;
  return it != attr.end() && it->second.GetFloat(&f) ? f : dflt;
}
inline std::string NodeDef::StringAttr(const std::string& key, const std::string& dflt) const {
  auto it = attr.find(key);
  std::string s;
  return it != attr.end() && it->second.GetString(&s) ? s : dflt;
}

// ---- GraphDef

inline pdk::Status ParseGraphDef(const void* data, size_t size, GraphDef* graph) {
  if (size > 0 && data == nullptr) return pdk::InvalidArgument("null GraphDef buffer");
  graph->node.clear();
  graph->unknown.clear();
  wire::Reader r(static_cast<const uint8_t*>(data), size);
  while (!r.done()) {
    const uint8_t* start = r.pos();
    int f, w;
    if (!r.Tag(&f, &w))
      return pdk::InvalidArgument("malformed GraphDef (bad field key at byte ",
                                  start - static_cast<const uint8_t*>(data), " of ", size, ")");
    if (f == 1 && w == wire::kLengthDelimited) {
      std::string_view s;
      if (!r.Bytes(&s))
        return pdk::InvalidArgument("truncated GraphDef (node ", graph->node.size(),
                                    ")");
      graph->node.emplace_back();
      pdk::Status st = graph_internal::ParseNodeDef(s, &graph->node.back());
      if (!st.ok())
        return pdk::InvalidArgument("malformed GraphDef: node ", graph->node.size() - 1,
                                    ": ", st.message());
    } else {
      if (!r.Skip(w))
        return pdk::InvalidArgument("malformed or truncated GraphDef (field ", f,
                                    ", wire type ", w, ")");
      graph_internal::KeepRaw(&graph->unknown, start, r);
    }
  }
  return pdk::Status::OK();
}

inline pdk::Status ParseNodeDef(const void* data, size_t size, NodeDef* node) {
  if (size > 0 && data == nullptr) return pdk::InvalidArgument("null NodeDef buffer");
  *node = NodeDef();
  pdk::Status st = graph_internal::ParseNodeDef(
      std::string_view(static_cast<const char*>(data), size), node);
  return st.ok() ? st : pdk::InvalidArgument("malformed NodeDef: ", st.message());
}

inline std::string SerializeGraphDef(const GraphDef& graph) {
  std::string out;
  for (const NodeDef& n : graph.node) wire::PutBytes(&out, 1, graph_internal::SerializeNodeDef(n));
  out += graph.unknown;
  return out;
}

// ---- Node inputs and devices

inline TensorRef ParseInput(std::string_view input) {
  TensorRef r;
  if (!input.empty() && input[0] == '^') {
    r.node = std::string(input.substr(1));
    r.port = TensorRef::kControl;
    return r;
  }
  const size_t colon = input.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < input.size()) {
    int port = 0;
    const char* b = input.data() + colon + 1;
    const char* e = input.data() + input.size();
    auto [p, ec] = std::from_chars(b, e, port);
    if (ec == std::errc() && p == e && port >= 0) {
      r.node = std::string(input.substr(0, colon));
      r.port = port;
      return r;
    }
  }
  r.node = std::string(input);
  r.port = 0;
  return r;
}

inline std::string DeviceTypeOf(std::string_view device) {
  // The last "/"-separated component: "device:PDK:0", "PDK:0" or "cpu:0".
  const size_t slash = device.rfind('/');
  std::string_view last = slash == std::string_view::npos ? device : device.substr(slash + 1);
  if (last.substr(0, 7) == "device:") last.remove_prefix(7);
  const size_t colon = last.find(':');
  std::string type(colon == std::string_view::npos ? last : last.substr(0, colon));
  // Legacy lowercase spellings ("cpu", "gpu") are TensorFlow's CPU and GPU.
  if (type == "cpu") return "CPU";
  if (type == "gpu") return "GPU";
  // Components that are not a device (job:, replica:, task:) mean unplaced.
  if (type == "job" || type == "replica" || type == "task") return "";
  return type;
}

}  // namespace pdk

#endif  // PDK_GRAPH_DEF_H_
