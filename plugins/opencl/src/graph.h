// The OPENCL plugin's graph optimizer (graph.cc).
#ifndef PDK_OPENCL_GRAPH_H_
#define PDK_OPENCL_GRAPH_H_

#include "tensorflow/c/experimental/grappler/grappler.h"

namespace pdk_opencl {
void InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status);
}  // namespace pdk_opencl

#endif  // PDK_OPENCL_GRAPH_H_
