#include "graph/graph_def.h"

#include <cstring>

#include "pdk/wire_format.h"

namespace pdk_graph {
namespace {

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
void KeepRaw(std::string* unknown, const uint8_t* start, const Reader& r) {
  unknown->append(reinterpret_cast<const char*>(start), r.pos() - start);
}

// Finds the last occurrence of `field` with wire type `wire` in a message.
// Returns false on malformed input or if absent.
template <class Fn>
bool LastField(std::string_view msg, int field, int wire, Fn&& read) {
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
int OneofCase(std::string_view msg) {
  Reader r(msg);
  int last = 0;
  while (!r.done()) {
    int f, w;
    if (!r.Tag(&f, &w) || !r.Skip(w)) return 0;
    if (f >= 1 && f <= 10) last = f;
  }
  return last;
}

pdk::Status ParseAttrEntry(std::string_view entry, NodeDef* node) {
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

pdk::Status ParseNodeDef(std::string_view msg, NodeDef* node) {
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

std::string SerializeNodeDef(const NodeDef& n) {
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

}  // namespace

// ---- AttrValue

AttrValue AttrValue::Type(int dtype) {
  AttrValue v;
  PutTag(&v.bytes_, 6, kVarint);
  PutVarint(&v.bytes_, static_cast<uint64_t>(static_cast<int64_t>(dtype)));
  return v;
}
AttrValue AttrValue::Bool(bool b) {
  AttrValue v;
  PutTag(&v.bytes_, 5, kVarint);
  PutVarint(&v.bytes_, b ? 1 : 0);
  return v;
}
AttrValue AttrValue::String(std::string_view s) {
  AttrValue v;
  PutBytes(&v.bytes_, 2, s);
  return v;
}
AttrValue AttrValue::Float(float f) {
  AttrValue v;
  PutTag(&v.bytes_, 4, kFixed32);
  char b[4];
  std::memcpy(b, &f, 4);
  v.bytes_.append(b, 4);
  return v;
}
AttrValue AttrValue::Int(int64_t i) {
  AttrValue v;
  PutTag(&v.bytes_, 3, kVarint);
  PutVarint(&v.bytes_, static_cast<uint64_t>(i));
  return v;
}

namespace {
// AttrValue { list = 1: ListValue { <field>: values (packed varints) } }.
std::string PackedListAttr(int field, const std::vector<int64_t>& values) {
  std::string packed, list, attr;
  for (int64_t i : values) PutVarint(&packed, static_cast<uint64_t>(i));
  if (!values.empty()) PutBytes(&list, field, packed);
  PutBytes(&attr, 1, list);
  return attr;
}
}  // namespace

AttrValue AttrValue::IntList(const std::vector<int64_t>& values) {
  return FromBytes(PackedListAttr(3, values));  // ListValue.i = 3
}

AttrValue AttrValue::TypeList(const std::vector<int64_t>& dtypes) {
  return FromBytes(PackedListAttr(6, dtypes));  // ListValue.type = 6
}

AttrValue AttrValue::Int32Scalar(int32_t value) {
  // TensorProto { dtype = 1: DT_INT32; tensor_shape = 2: {} (a scalar);
  //               int_val = 7: [value] (packed) }
  std::string tensor, packed;
  PutTag(&tensor, 1, kVarint);
  PutVarint(&tensor, DT_INT32);
  PutBytes(&tensor, 2, "");
  PutVarint(&packed, static_cast<uint64_t>(static_cast<int64_t>(value)));
  PutBytes(&tensor, 7, packed);
  AttrValue v;
  PutBytes(&v.bytes_, 8, tensor);  // AttrValue.tensor = 8
  return v;
}

namespace {

// Appends the varints of a repeated scalar field: packed (length-delimited)
// or one value (varint).
bool ReadRepeatedVarint(Reader& r, int wire, std::vector<int64_t>* out) {
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

}  // namespace

bool AttrValue::GetIntList(std::vector<int64_t>* values) const {
  if (OneofCase(bytes_) != 1) return false;
  std::string_view list;
  if (!LastField(bytes_, 1, kLengthDelimited, [&](Reader& r) { return r.Bytes(&list); }))
    return false;
  values->clear();
  Reader r(list);
  while (!r.done()) {
    int f, w;
    if (!r.Tag(&f, &w)) return false;
    if (f == 3) {
      if (!ReadRepeatedVarint(r, w, values)) return false;
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return true;
}

bool AttrValue::GetType(int* dtype) const {
  if (OneofCase(bytes_) != 6) return false;
  return LastField(bytes_, 6, kVarint, [&](Reader& r) {
    uint64_t v;
    if (!r.Varint(&v)) return false;
    *dtype = static_cast<int>(static_cast<int64_t>(v));
    return true;
  });
}
bool AttrValue::GetBool(bool* b) const {
  if (OneofCase(bytes_) != 5) return false;
  return LastField(bytes_, 5, kVarint, [&](Reader& r) {
    uint64_t v;
    if (!r.Varint(&v)) return false;
    *b = v != 0;
    return true;
  });
}
bool AttrValue::GetString(std::string* s) const {
  if (OneofCase(bytes_) != 2) return false;
  return LastField(bytes_, 2, kLengthDelimited, [&](Reader& r) {
    std::string_view v;
    if (!r.Bytes(&v)) return false;
    s->assign(v);
    return true;
  });
}
bool AttrValue::GetFuncName(std::string* name) const {
  // AttrValue.func = 10: NameAttrList { string name = 1; map attr = 2; }
  if (OneofCase(bytes_) != 10) return false;
  return LastField(bytes_, 10, kLengthDelimited, [&](Reader& r) {
    std::string_view func;
    if (!r.Bytes(&func)) return false;
    name->clear();
    LastField(func, 1, kLengthDelimited, [&](Reader& fr) {
      std::string_view v;
      if (!fr.Bytes(&v)) return false;
      name->assign(v);
      return true;
    });
    return true;
  });
}
bool AttrValue::GetFloat(float* f) const {
  if (OneofCase(bytes_) != 4) return false;
  return LastField(bytes_, 4, kFixed32, [&](Reader& r) {
    uint32_t v;
    if (!r.Fixed32(&v)) return false;
    std::memcpy(f, &v, 4);
    return true;
  });
}
bool AttrValue::GetInt(int64_t* i) const {
  if (OneofCase(bytes_) != 3) return false;
  return LastField(bytes_, 3, kVarint, [&](Reader& r) {
    uint64_t v;
    if (!r.Varint(&v)) return false;
    *i = static_cast<int64_t>(v);
    return true;
  });
}

namespace {

// TensorShapeProto { repeated Dim dim = 2 { int64 size = 1; }; bool unknown_rank = 3 }:
// the dimensions (-1 for an unknown one); false if the rank is unknown or the
// message is malformed.
bool ReadShapeDims(std::string_view msg, std::vector<int64_t>* dims) {
  Reader r(msg);
  dims->clear();
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
      if (!r.Varint(&v) || v != 0) return false;
    } else if (!r.Skip(w)) {
      return false;
    }
  }
  return true;
}

// The same, for a tensor's shape: the dimensions and the number of elements;
// false if unknown, negative or larger than a small constant (2^20 elements).
bool ReadShape(std::string_view msg, int64_t* num_elements, std::vector<int64_t>* dims) {
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

bool ReadTensor(std::string_view attr_bytes, TensorFields* t) {
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
bool TensorValues(const TensorFields& t, std::vector<T> vals, std::vector<T>* out) {
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

}  // namespace

bool AttrValue::GetIntTensor(std::vector<int64_t>* values, std::vector<int64_t>* shape) const {
  TensorFields t;
  if (!ReadTensor(bytes_, &t)) return false;
  if (shape) *shape = t.dims;
  if (t.dtype == DT_INT32) {
    for (int64_t& x : t.ints) x = static_cast<int32_t>(x);  // int32 varints are sign-extended
    return TensorValues<int64_t, int32_t>(t, t.ints, values);
  }
  if (t.dtype == DT_INT64) return TensorValues<int64_t, int64_t>(t, t.ints, values);
  return false;
}

bool AttrValue::GetShape(std::vector<int64_t>* dims) const {
  if (OneofCase(bytes_) != 7) return false;
  std::string_view shape;
  if (!LastField(bytes_, 7, kLengthDelimited, [&](Reader& r) { return r.Bytes(&shape); }))
    return false;
  return ReadShapeDims(shape, dims);
}

bool AttrValue::GetFloatTensor(std::vector<float>* values, int* rank) const {
  TensorFields t;
  if (!ReadTensor(bytes_, &t) || t.dtype != DT_FLOAT) return false;
  if (rank) *rank = static_cast<int>(t.dims.size());
  return TensorValues<float, float>(t, t.floats, values);
}

// ---- NodeDef attribute helpers

int NodeDef::TypeAttr(const std::string& key) const {
  auto it = attr.find(key);
  int t = DT_INVALID;
  return it != attr.end() && it->second.GetType(&t) ? t : DT_INVALID;
}
bool NodeDef::BoolAttr(const std::string& key, bool dflt) const {
  auto it = attr.find(key);
  bool b = dflt;
  return it != attr.end() && it->second.GetBool(&b) ? b : dflt;
}
float NodeDef::FloatAttr(const std::string& key, float dflt) const {
  auto it = attr.find(key);
  float f = dflt;
  return it != attr.end() && it->second.GetFloat(&f) ? f : dflt;
}
std::string NodeDef::StringAttr(const std::string& key, const std::string& dflt) const {
  auto it = attr.find(key);
  std::string s;
  return it != attr.end() && it->second.GetString(&s) ? s : dflt;
}

// ---- GraphDef

pdk::Status ParseGraphDef(const void* data, size_t size, GraphDef* graph) {
  if (size > 0 && data == nullptr) return pdk::InvalidArgument("PDK graph: null GraphDef buffer");
  graph->node.clear();
  graph->unknown.clear();
  Reader r(static_cast<const uint8_t*>(data), size);
  while (!r.done()) {
    const uint8_t* start = r.pos();
    int f, w;
    if (!r.Tag(&f, &w))
      return pdk::InvalidArgument("PDK graph: malformed GraphDef (bad field key at byte ",
                                  start - static_cast<const uint8_t*>(data), " of ", size, ")");
    if (f == 1 && w == kLengthDelimited) {
      std::string_view s;
      if (!r.Bytes(&s))
        return pdk::InvalidArgument("PDK graph: truncated GraphDef (node ", graph->node.size(),
                                    ")");
      graph->node.emplace_back();
      pdk::Status st = ParseNodeDef(s, &graph->node.back());
      if (!st.ok())
        return pdk::InvalidArgument("PDK graph: malformed GraphDef: node ", graph->node.size() - 1,
                                    ": ", st.message());
    } else {
      if (!r.Skip(w))
        return pdk::InvalidArgument("PDK graph: malformed or truncated GraphDef (field ", f,
                                    ", wire type ", w, ")");
      KeepRaw(&graph->unknown, start, r);
    }
  }
  return pdk::Status::OK();
}

std::string SerializeGraphDef(const GraphDef& graph) {
  std::string out;
  for (const NodeDef& n : graph.node) PutBytes(&out, 1, SerializeNodeDef(n));
  out += graph.unknown;
  return out;
}

}  // namespace pdk_graph
