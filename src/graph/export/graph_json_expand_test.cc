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

// Version 3: columns, tables, id steps, value indices and flags, written
// out by hand, read back as rows.
TEST(ExpandGraphJson, ReadsVersionThreeColumnsAsRows) {
  json g = json::parse(R"j({
    "framework": {
      "nodes": {"node_id_steps": [3, 1, 5], "name": ["/enc/MatMul", "Relu", "c"], "op_type": [0, 1, 1],
                "inputs": [[0, 1], [2, -1], ["outside"]], "outputs": [[2], [3], []], "executed": [0, 1, 1],
                "scope": [0, -1, -1], "compiled_node_id": [5, 5, -1], "mapped_task_ids": [null, [], null]},
      "extra": {"0": {"pos": {"x": 1, "y": 2}}, "2": {"note": "n", "executable": false, "not_executable_reason": "r"}},
      "values": {"name": ["x", "w", "y", "z"], "dtype": [0, -1, 0, 7], "shape": [[1, 4], null, [1, "n"], 3],
                 "bytes": [16, -1, -1, 4], "flags": [2, 1, 0, 4]},
      "tables": {"op_types": ["MatMul", "Relu"], "dtypes": ["float32"]},
      "layout": {"scopes": {"path": ["", "/enc"], "label": ["", "enc"], "parent": [-1, 0], "folded": [0, 1],
                            "box": [null, [1, 2, 3, 4]], "crossings": [0, 1], "nodes": [1, 0], "ranks": [1, 0],
                            "slots": [[0, 3, 0, 0, 1, 1, 0, 1], []], "edges": [[0, 1, 1, 2], []], "dummies": [[[5]], []]},
                 "routes": {"from": [3, -2], "to": [-2, 4], "points": [[1, 2, 3, 4], [5, 6]], "weight": [1, 2]}}
    },
    "compiled": {
      "nodes": {"node_id_steps": [5, 1], "name": ["/enc/MatMul", "copy"], "op_type": [0, 1], "inputs": [[0], []],
                "outputs": [[1], []], "executed": [1, 1], "scope": [-1, -1], "kind": [0, 1], "domain": [0, 1],
                "attrs": [0, -1], "fused_from": [[3, 4], null], "mapped_task_ids": [[3], null],
                "time_us": {"median_us": [2.5, null], "q1_us": [1.5, null], "q3_us": [4.0, null], "samples": [3, null]}},
      "values": {"name": ["x", "z"], "mem_offset": [0, -1]},
      "tables": {"op_types": ["FusedMatMul", "Transdata"], "kinds": ["fused", "transdata"], "domains": ["opscope", ""],
                 "attrs": [{"activation": "Relu"}]}
    },
    "schema": "opscope.graph/3"
  })j");
  ExpandGraphJson(g);
  const json& fw = g["framework"];
  EXPECT_FALSE(fw.contains("extra"));
  EXPECT_FALSE(fw.contains("tables"));
  const json& a = fw["nodes"][0];
  EXPECT_EQ(a["node_id"], 3);
  EXPECT_EQ(a["op_type"], "MatMul");
  EXPECT_EQ(a["executed"], false);
  EXPECT_EQ(a["scope"], 0);
  EXPECT_EQ(a["inputs"], json::parse(R"([{"name": "x", "dtype": "float32", "shape": [1, 4]},
                                          {"name": "w", "dtype": null, "shape": null}])"));
  EXPECT_EQ(a["pos"], json::parse(R"({"x": 1, "y": 2, "rank": 0, "order": 0})"));
  EXPECT_EQ(a["reason"], "fused into FusedMatMul '/enc/MatMul' (node 5)");
  EXPECT_EQ(a["mapped_task_ids"], json::array({3}));
  const json& b = fw["nodes"][1];
  EXPECT_EQ(b["node_id"], 4);
  EXPECT_EQ(b["inputs"][1], json::parse(R"({"name": ""})"));  // an omitted input
  EXPECT_EQ(b["mapped_task_ids"], json::array());
  EXPECT_FALSE(b.contains("scope"));
  const json& c = fw["nodes"][2];
  EXPECT_EQ(c["node_id"], 9);
  EXPECT_EQ(c["inputs"], json::parse(R"([{"name": "outside"}])"));
  EXPECT_EQ(c["executable"], false);
  EXPECT_EQ(c["not_executable_reason"], "r");
  EXPECT_EQ(c["note"], "n");
  EXPECT_FALSE(c.contains("compiled_node_id"));
  const json& v = fw["values"];
  EXPECT_EQ(v[0], json::parse(R"({"name": "x", "dtype": "float32", "shape": [1, 4], "bytes": 16, "graph_input": true,
                                   "constant": false, "producer": null, "consumers": [3]})"));
  EXPECT_EQ(v[1]["constant"], true);
  EXPECT_FALSE(v[1].contains("bytes"));
  EXPECT_EQ(v[2]["shape"], json::parse(R"([1, "n"])"));
  EXPECT_EQ(v[2]["producer"], 3);
  EXPECT_EQ(v[3]["dtype"], nullptr);  // an index past the table
  EXPECT_EQ(v[3]["shape"], nullptr);  // not a list
  EXPECT_EQ(v[3]["graph_output"], true);
  EXPECT_EQ(fw["layout"]["scopes"], json::parse(R"j([
    {"id": 0, "path": "", "label": "", "parent": -1, "folded": false, "box": null, "crossings": 0, "nodes": 1,
     "ranks": 1, "slots": [[0, 3, 0, 0], [1, 1, 0, 1]], "edges": [[0, 1, true, 2, [5]]]},
    {"id": 1, "path": "/enc", "label": "enc", "parent": 0, "folded": true, "box": [1, 2, 3, 4], "crossings": 1,
     "nodes": 0, "ranks": 0, "slots": [], "edges": []}])j"));
  EXPECT_EQ(fw["layout"]["routes"], json::parse(R"j([
    {"from": {"node": 3}, "to": {"scope": 1}, "points": [1, 2, 3, 4], "weight": 1},
    {"from": {"scope": 1}, "to": {"node": 4}, "points": [5, 6], "weight": 2}])j"));
  const json& f = g["compiled"]["nodes"][0];
  EXPECT_EQ(f["node_id"], 5);
  EXPECT_EQ(f["kind"], "fused");
  EXPECT_EQ(f["domain"], "opscope");
  EXPECT_EQ(f["attrs"], json::parse(R"({"activation": "Relu"})"));
  EXPECT_EQ(f["fused_from"], json::array({3, 4}));
  EXPECT_EQ(f["time_us"], json::parse(R"({"median_us": 2.5, "q1_us": 1.5, "q3_us": 4.0, "iqr_us": 2.5, "samples": 3})"));
  EXPECT_EQ(f["inputs"], json::parse(R"([{"name": "x", "dtype": null, "shape": null}])"));
  const json& t = g["compiled"]["nodes"][1];
  EXPECT_EQ(t["kind"], "transdata");
  EXPECT_EQ(t["domain"], "");
  EXPECT_EQ(t["attrs"], json::object());
  EXPECT_FALSE(t.contains("time_us"));
  EXPECT_EQ(g["compiled"]["values"][0]["mem_offset"], 0);
  EXPECT_FALSE(g["compiled"]["values"][1].contains("mem_offset"));
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
           // version 3's columns: short, of the wrong type, pointing past their tables
           R"({"framework": {"nodes": {"node_id_steps": [1, "x", null], "name": 5, "op_type": [9, -1, "a"],
               "inputs": [[99, -5, {}], 3], "outputs": "o", "executed": [2], "scope": ["s"], "attrs": [0],
               "compiled_node_id": [{}], "time_us": {"median_us": [1, "m"], "q1_us": 3}, "fused_from": [4],
               "kind": [0], "domain": [[]]}, "extra": {"0": 5, "1": {"reason": 7}, "x": {}},
               "values": {"name": [null, 4], "dtype": {}, "shape": 3, "flags": ["f"], "bytes": [[]]},
               "tables": {"op_types": {}, "attrs": [5], "kinds": [1], "dtypes": 2},
               "layout": {"scopes": {"path": [1, null], "slots": [[0, "a", 1], 4], "edges": 5, "dummies": [[3]],
               "folded": ["y"]}, "routes": {"from": "x", "to": [[]], "points": [5], "weight": ["w"]}}},
               "compiled": {"nodes": {"node_id_steps": 3}, "values": [], "layout": 4}})",
       }) {
    json g = json::parse(text);
    EXPECT_NO_THROW(ExpandGraphJson(g)) << text;
  }
}

}  // namespace
}  // namespace opscope::graph
