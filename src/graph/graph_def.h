// PDK's graph optimizer's view of a GraphDef: the kit's codec
// (include/pdk/graph_def.h: GraphDef, NodeDef, AttrValue, ParseGraphDef,
// SerializeGraphDef, ParseInput, DeviceTypeOf), under pdk_graph's names, plus
// the dtypes the rewrites use (the kit's tensorflow::DataType) and the entry
// point that runs them.
#ifndef PDK_SRC_GRAPH_GRAPH_DEF_H_
#define PDK_SRC_GRAPH_GRAPH_DEF_H_

#include "graph/optimizer.h"
#include "pdk/graph_def.h"
#include "pdk/status.h"
#include "pdk/tf/types.h"

namespace pdk_graph {

using pdk::AttrValue;
using pdk::DeviceTypeOf;
using pdk::GraphDef;
using pdk::NodeDef;
using pdk::ParseGraphDef;
using pdk::ParseInput;
using pdk::SerializeGraphDef;
using pdk::TensorRef;

// tensorflow.DataType (types.proto): the kit's one enum (pdk/tf/types.h,
// whose values are TF_DataType's).
using ::tensorflow::DataType;
using ::tensorflow::DT_BFLOAT16;
using ::tensorflow::DT_BOOL;
using ::tensorflow::DT_DOUBLE;
using ::tensorflow::DT_FLOAT;
using ::tensorflow::DT_HALF;
using ::tensorflow::DT_INT32;
using ::tensorflow::DT_INT64;
using ::tensorflow::DT_INVALID;
using ::tensorflow::DT_RESOURCE;
using ::tensorflow::DT_VARIANT;

// Runs every rewrite once over `graph`. Idempotent: a second call changes nothing.
pdk::Status Optimize(GraphDef* graph, const OptimizeOptions& options, RewriteCounts* fired);

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_GRAPH_DEF_H_
