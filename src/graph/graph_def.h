// PDK's graph optimizer's view of a GraphDef: the kit's codec
// (include/pdk/graph_def.h: GraphDef, NodeDef, AttrValue, ParseGraphDef,
// SerializeGraphDef, ParseInput, DeviceTypeOf), under pdk_graph's names, plus
// the dtypes the rewrites use and the entry point that runs them.
#ifndef PDK_SRC_GRAPH_GRAPH_DEF_H_
#define PDK_SRC_GRAPH_GRAPH_DEF_H_

#include "graph/optimizer.h"
#include "pdk/graph_def.h"
#include "pdk/status.h"

namespace pdk_graph {

using pdk::AttrValue;
using pdk::DeviceTypeOf;
using pdk::GraphDef;
using pdk::NodeDef;
using pdk::ParseGraphDef;
using pdk::ParseInput;
using pdk::SerializeGraphDef;
using pdk::TensorRef;

// tensorflow.DataType values used here (types.proto).
enum DataType : int {
  DT_INVALID = 0, DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9, DT_RESOURCE = 20,
  DT_VARIANT = 21
};

// Runs every rewrite once over `graph`. Idempotent: a second call changes nothing.
pdk::Status Optimize(GraphDef* graph, const OptimizeOptions& options, RewriteCounts* fired);

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_GRAPH_DEF_H_
