// ExpandGraphJson against expectations written out by hand (not by the
// writer it mirrors), and against a file that is not ours: members of the
// wrong type are skipped, never thrown on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "graph/export/graph_json.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

TEST(ExpandGraphJson, WritesBackWhatVersionTwoLeavesOut) {
  json g = json::parse(R"j({
    "framework": {
      "nodes": [
        {"node_id": 0, "name": "/enc/MatMul", "op_type": "MatMul", "executed": false, "compiled_node_id": 5,
         "inputs": ["x", "w"], "outputs": ["y"], "scope": 0, "pos": {"x": 1, "y": 2}},
        {"node_id": 1, "name": "Relu", "op_type": "Relu", "executed": true, "compiled_node_id": 5,
         "mapped_task_ids": [], "inputs": ["y", "y"], "outputs": ["z"]}
      ],
      "values": [{"name": "x", "dtype": "float32", "shape": [1, 4]}, {"name": "w", "constant": true},
                 {"name": "y", "dtype": "float32", "shape": [1, 4]}, {"name": "z"}],
      "layout": {"scopes": [{"slots": [[0, 0, 3, 1], [1, 7, 0, 0]]}]}
    },
    "compiled": {"nodes": [{"node_id": 5, "name": "/enc/MatMul", "op_type": "FusedMatMul", "kind": "fused",
                            "domain": "opscope", "executed": true, "fused_from": [0, 1], "mapped_task_ids": [3],
                            "inputs": ["x"], "outputs": ["z"]},
                           {"node_id": 6, "name": "copy", "op_type": "Transdata", "kind": "transdata",
                            "executed": true, "inputs": [], "outputs": []}],
                 "values": []},
    "schema": "opscope.graph/2"
  })j");
  ExpandGraphJson(g);
  const json& a = g["framework"]["nodes"][0];
  EXPECT_EQ(a["layer"], "framework");
  EXPECT_EQ(a["namespace"], "/enc");
  EXPECT_EQ(a["kind"], "op");
  EXPECT_EQ(a["domain"], "");
  EXPECT_EQ(a["attrs"], json::object());
  EXPECT_EQ(a["executable"], true);
  EXPECT_EQ(a["mapped_task_ids"], json::array({3}));
  EXPECT_EQ(a["reason"], "fused into FusedMatMul '/enc/MatMul' (node 5)");
  EXPECT_EQ(a["inputs"], json::parse(R"([{"name": "x", "dtype": "float32", "shape": [1, 4]},
                                          {"name": "w", "dtype": null, "shape": null}])"));
  EXPECT_EQ(a["pos"], json::parse(R"({"x": 1, "y": 2, "rank": 3, "order": 1})"));
  const json& b = g["framework"]["nodes"][1];
  EXPECT_EQ(b["namespace"], "");          // no leading '/': no scope
  EXPECT_EQ(b["mapped_task_ids"], json::array());  // written: its own, not its compiled node's
  EXPECT_FALSE(b.contains("reason"));     // it ran
  EXPECT_FALSE(b.contains("pos"));
  const json& values = g["framework"]["values"];
  EXPECT_EQ(values[0]["consumers"], json::array({0}));
  EXPECT_EQ(values[0]["producer"], nullptr);
  EXPECT_EQ(values[1]["constant"], true);
  EXPECT_EQ(values[2]["consumers"], json::array({1}));  // read twice by node 1, listed once
  EXPECT_EQ(values[2]["producer"], 0);
  EXPECT_EQ(values[3]["constant"], false);
  EXPECT_EQ(g["mapping"], json::parse(R"j([
    {"framework": 0, "compiled": 5, "executed": false, "reason": "fused into FusedMatMul '/enc/MatMul' (node 5)"},
    {"framework": 1, "compiled": 5, "executed": true},
    {"compiled": 6, "framework": null, "label": "inserted by the compiler: transdata"}])j"));
  EXPECT_EQ(g["compiled"]["nodes"][0]["kind"], "fused");
}

TEST(ExpandGraphJson, AVersionOneDocumentIsLeftAsItIs) {
  const json v1 = json::parse(R"j({"framework": {"nodes": [{"node_id": 0, "name": "a", "op_type": "Relu",
    "layer": "framework", "namespace": "", "executable": true, "kind": "op", "domain": "", "attrs": {},
    "fused_from": [], "mapped_task_ids": [2], "executed": true, "inputs": [{"name": "x", "dtype": "float32"}],
    "outputs": []}], "values": [{"name": "x", "constant": false, "producer": null, "consumers": [0]}]},
    "mapping": [], "schema": "opscope.graph/1"})j");
  json g = v1;
  ExpandGraphJson(g);
  EXPECT_EQ(g, v1);
}

TEST(ExpandGraphJson, MembersOfTheWrongTypeAreSkippedNotThrownOn) {
  for (const char* text : {
           R"({"framework": 5, "compiled": []})",
           R"({"framework": {"nodes": [5, null, {"node_id": "x", "name": 3, "inputs": [1, null], "executed": "no",
               "compiled_node_id": 9}], "values": [7, {"name": 2}], "layout": {"scopes": [3, {"slots": [[0, "a", 1, 2], 5]}]}},
               "compiled": {"nodes": [{"node_id": 9, "name": [], "op_type": {}, "fused_from": 3, "mapped_task_ids": "t",
               "mapped_by": 4, "kind": 1}], "values": "v"}})",
           R"({"framework": {"nodes": {}, "values": []}})",
       }) {
    json g = json::parse(text);
    EXPECT_NO_THROW(ExpandGraphJson(g)) << text;
  }
}

}  // namespace
}  // namespace opscope::graph
