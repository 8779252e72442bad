// The compiler passes, one factory each (graph/passes/<name>.cc). The pass
// manager runs them in the order of PassManager::Default().
#pragma once

#include "graph/passes/pass_manager.h"

namespace opscope::graph {

Pass ShapeInferencePass();          // each op's schema InferOutputs fills unknown shapes
Pass ConstantFoldingPass();         // all-constant nodes run now and become constants
Pass IfResolutionPass();            // If with a constant cond -> the branch taken, inlined
Pass ConvBnFoldingPass();           // Conv -> BatchNormalization: new weights and bias
Pass LayerNormFusionPass();         // the primitive LayerNorm pattern -> LayerNormalization
Pass GeluFusionPass();              // erf and tanh GELU patterns -> Gelu
Pass BiasActivationFusionPass();    // Conv/Gemm/MatMul + Add + act -> FusedConv/FusedGemm/FusedMatMul
Pass ElementwiseChainFusionPass();  // single-consumer elementwise chains -> FusedElementwise
Pass LayoutPass();                  // transdata nodes around kernels preferring another layout
Pass MemoryPlanningPass();          // arena offsets with reuse; peak bytes

// Fills unknown output shapes from the ops' schemas, in graph order; returns
// how many nodes gained one. Rewrite passes call it for the nodes they make.
int InferShapes(Graph& g);

}  // namespace opscope::graph
