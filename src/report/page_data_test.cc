// The page data's slimming against expectations written out by hand (not
// computed by the functions under test): what is dropped, what is kept
// because the page could not rebuild it, and text that is not an object.
#include "report/page_data.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace opscope {
namespace {

using nlohmann::json;

TEST(PageData, GraphDropsOnlyWhatThePageRebuildsExactly) {
  const std::string graph = R"j({
    "framework": {
      "nodes": [
        {"node_id": 0, "name": "/enc/layer0/MatMul", "op_type": "MatMul", "layer": "framework",
         "namespace": "/enc/layer0",
         "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 4]}],
         "outputs": [{"name": "y", "dtype": "float32", "shape": [1, 4]}],
         "compiled_node_id": 5, "reason": "fused into Gemm 'fused_0' (node 5)",
         "fused_from": [], "attrs": {}, "domain": "", "executable": true,
         "pos": {"x": 1, "y": 2, "rank": 0, "order": 3}},
        {"node_id": 1, "name": "Relu", "op_type": "Relu", "layer": "compiled", "namespace": "other",
         "inputs": [], "outputs": [], "compiled_node_id": 5, "reason": "kept as it was",
         "executable": false, "domain": "com.x", "attrs": {"alpha": 1}},
        {"node_id": 2, "name": "enc/Relu", "op_type": "Relu", "namespace": "enc", "inputs": [], "outputs": []}
      ],
      "values": [{"name": "x", "constant": false, "producer": null, "consumers": [0]}, {"name": "w", "constant": true}]
    },
    "compiled": {"nodes": [{"node_id": 5, "name": "fused_0", "op_type": "Gemm", "layer": "compiled",
                            "mapped_task_ids": [3], "fused_from": [0]}]},
    "mapping": [{"framework": 0, "compiled": 5}]
  })j";
  const json expected = json::parse(R"j({
    "framework": {
      "nodes": [
        {"node_id": 0, "name": "/enc/layer0/MatMul", "op_type": "MatMul",
         "inputs": [{"name": "x"}], "outputs": [{"name": "y"}], "compiled_node_id": 5,
         "pos": {"x": 1, "y": 2}},
        {"node_id": 1, "name": "Relu", "op_type": "Relu", "layer": "compiled", "namespace": "other",
         "inputs": [], "outputs": [], "compiled_node_id": 5, "reason": "kept as it was",
         "executable": false, "domain": "com.x", "attrs": {"alpha": 1}},
        {"node_id": 2, "name": "enc/Relu", "op_type": "Relu", "namespace": "enc", "inputs": [], "outputs": []}
      ],
      "values": [{"name": "x"}, {"name": "w", "constant": true}]
    },
    "compiled": {"nodes": [{"node_id": 5, "name": "fused_0", "op_type": "Gemm", "mapped_task_ids": [3],
                            "fused_from": [0]}]}
  })j");
  EXPECT_EQ(json::parse(GraphForPage(graph)), expected);
}

// Version 2 and 3 files (graph/export/graph_json.h) already hold only what
// the page cannot rebuild: they go byte for byte, defaults left out and all.
TEST(PageData, GraphsOfVersionsTwoAndThreeGoAsTheyAre) {
  const std::string columns = R"j({"framework": {"nodes": {"node_id_steps": [0], "name": ["/a/Relu"], "op_type": [0]},
    "tables": {"op_types": ["Relu"]}}, "schema":"opscope.graph/3"})j";
  EXPECT_EQ(GraphForPage(columns), columns);
  const std::string graph = R"j({"framework": {"nodes": [{"node_id": 0, "name": "/a/Relu", "op_type": "Relu",
    "inputs": ["x"], "outputs": ["y"], "layer": "framework", "executed": true}], "values": []},
    "schema":"opscope.graph/2"})j";
  EXPECT_EQ(GraphForPage(graph), graph);
  // A version 1 file naming itself so in a string is still slimmed.
  const std::string v1 = R"j({"framework": {"nodes": [{"node_id": 0, "name": "a", "op_type": "\"schema\":\"opscope.graph/2\"",
    "layer": "framework"}]}, "schema": "opscope.graph/1"})j";
  EXPECT_FALSE(json::parse(GraphForPage(v1))["framework"]["nodes"][0].contains("layer"));
}

TEST(PageData, SummaryLosesTheSuspectsAndThePerTaskRoofline) {
  const std::string summary = R"j({"span_us": 3, "suspects": [{"rank": 1}],
                                  "roofline": {"peaks": {"gbs": 2}, "tasks": [{"task": 0}]}})j";
  EXPECT_EQ(json::parse(SummaryForPage(summary)), json::parse(R"j({"span_us": 3, "roofline": {"peaks": {"gbs": 2}}})j"));
}

TEST(PageData, DiffKeepsTheMovedNodesRoundedAndCountsTheRest) {
  const std::string diff = R"j({
    "op_type_time": {"Relu": 1}, "total_task_us": 1, "top_tasks": [], "verdict": "slower",
    "node_times": [
      {"node": "a", "verdict": "unchanged", "change_pct": 0.1},
      {"node": "b", "verdict": "within noise"},
      {"node": "c", "verdict": "within noise"},
      {"node": "d", "verdict": "slower", "change_pct": 12.34567, "change_us": 1.0004,
       "base": {"median_us": 8.1234567, "p90_us": 9}, "new": {"median_us": 9.1238}},
      {"node": "e", "verdict": "new"}
    ]})j";
  const json expected = json::parse(R"j({
    "verdict": "slower",
    "node_times": [
      {"node": "d", "verdict": "slower", "change_pct": 12.346, "change_us": 1.0, "base_us": 8.123, "new_us": 9.124},
      {"node": "e", "verdict": "new", "change_pct": null, "change_us": null, "base_us": null, "new_us": null}
    ],
    "node_times_unchanged": 1, "node_times_within_noise": 2})j");
  EXPECT_EQ(json::parse(DiffForPage(diff)), expected);
}

TEST(PageData, TextThatIsNotAnObjectIsReturnedAsItIs) {
  for (const std::string& text : {std::string("[1, 2]"), std::string("{\"unclosed\": "), std::string("")}) {
    EXPECT_EQ(GraphForPage(text), text);
    EXPECT_EQ(SummaryForPage(text), text);
    EXPECT_EQ(DiffForPage(text), text);
  }
}

TEST(PageData, AccuracyIsKeptOnlyBesideItsOwnRun) {
  const std::string file = R"j({"schema": "opscope.accuracy/1", "run": {"id": "r1", "model_fingerprint": "f"},
    "first_divergent": "a", "time_ms": {"golden": 1}, "repro": "inspector-cli accuracy m", "statistic": "words",
    "nodes": [{"name": "a", "replay": "ops-debug run", "replay_files": ["x.npy"], "local": {"compared": true}}]})j";
  EXPECT_EQ(json::parse(AccuracyForPage(file, "r1", "d/accuracy.json")), json::parse(R"j({"schema": "opscope.accuracy/1",
    "run": {"id": "r1", "model_fingerprint": "f"}, "first_divergent": "a",
    "nodes": [{"name": "a", "replay": "ops-debug run", "local": {"compared": true}}]})j"));
  EXPECT_EQ(json::parse(AccuracyForPage(file, "r2", "d/accuracy.json")),
            json({{"error", "d/accuracy.json: of another run (r1 here, r2 in the folder): run `inspector-cli accuracy "
                            "MODEL --output-dir DIR` again"}}));
  EXPECT_EQ(json::parse(AccuracyForPage(R"j({"schema": "opscope.accuracy/1", "nodes": []})j", "r2", "d/a.json")),
            json({{"error", "d/a.json: of another run (none recorded here, r2 in the folder): run `inspector-cli "
                            "accuracy MODEL --output-dir DIR` again"}}));
  EXPECT_EQ(json::parse(AccuracyForPage("[1]", "r1", "d/a.json")),
            json({{"error", "d/a.json: not an opscope.accuracy/1 file"}}));
  EXPECT_EQ(json::parse(AccuracyForPage(R"j({"schema": "opscope.accuracy/1", "run": {"id": "r1"}})j", "r1", "d/a.json")),
            json({{"error", "d/a.json: no \"nodes\" list"}}));
}

}  // namespace
}  // namespace opscope
