// File: graph/export/graph_json_rows.h
// graph.json version 3 holds a layer's nodes, values, layout scopes and
// routes as columns (graph_json.h lists them). LayerRowsOfColumns turns
// one parsed layer back into version 2's lists of objects, which
// ExpandGraphJson then completes. A layer that is not in columns is left
// as it is; a column that is missing, short or of the wrong type leaves
// that member out (graph.json is a file people send each other).
#pragma once

#include <nlohmann/json.hpp>

namespace opscope::graph {

void LayerRowsOfColumns(nlohmann::json& layer);

}  // namespace opscope::graph
