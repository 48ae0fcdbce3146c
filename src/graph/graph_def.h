// TensorFlow's GraphDef as PDK's graph optimizer reads and writes it: a small
// protobuf wire-format codec (https://protobuf.dev/programming-guides/encoding/)
// for exactly the fields the rewrites touch, keeping everything else as the
// original bytes.
//
// Field numbers (tensorflow/core/framework/graph.proto, node_def.proto,
// attr_value.proto; also written out in src/graph/proto/tf_graph.proto, which
// the tests compile with protoc and use as the reference implementation):
//   GraphDef  { repeated NodeDef node = 1; ...library = 2, version = 3,
//               versions = 4, debug_info = 5: kept as raw bytes }
//   NodeDef   { string name = 1; string op = 2; repeated string input = 3;
//               string device = 4; map<string, AttrValue> attr = 5;
//               ...experimental_debug_info = 6, experimental_type = 7: raw }
//   AttrValue { oneof value { list = 1; bytes s = 2; int64 i = 3; float f = 4;
//               bool b = 5; DataType type = 6; shape = 7; tensor = 8;
//               placeholder = 9; func = 10 } }
//   NameAttrList { string name = 1; map<string, AttrValue> attr = 2 }  — kept as its serialized bytes,
//               decoded on demand
// Why not the protobuf runtime: see docs/architecture.md, "Graph optimizer".
//
// Every field PDK does not model survives a parse/serialize round trip
// unchanged, in its original order after the modeled ones (as protobuf does
// with unknown fields). Parsing never reads out of bounds: malformed or
// truncated input is an InvalidArgument status.
#ifndef PDK_SRC_GRAPH_GRAPH_DEF_H_
#define PDK_SRC_GRAPH_GRAPH_DEF_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/optimizer.h"
#include "pdk/status.h"

namespace pdk_graph {

// tensorflow.DataType values used here (types.proto).
enum DataType : int {
  DT_INVALID = 0, DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9, DT_RESOURCE = 20,
  DT_VARIANT = 21
};

// One AttrValue, as its serialized bytes.
class AttrValue {
 public:
  AttrValue() = default;
  static AttrValue Type(int dtype);
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
  // one; false if the rank is unknown or the value is of another kind.
  bool GetShape(std::vector<int64_t>* dims) const;

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
  int TypeAttr(const std::string& key) const;  // DT_INVALID if none
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
// Serializes: modeled fields in field-number order (attributes by key), then
// the raw ones. Equal graphs give equal bytes.
std::string SerializeGraphDef(const GraphDef& graph);

// Runs every rewrite once over `graph`. Idempotent: a second call changes nothing.
pdk::Status Optimize(GraphDef* graph, const OptimizeOptions& options, RewriteCounts* fired);

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_GRAPH_DEF_H_
