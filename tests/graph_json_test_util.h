// graph.json read back as a test checks it: parsed, with what version 2
// leaves out of the file written back in (graph/export/graph_json.h's
// ExpandGraphJson), so a test asserts on every node's tensors, layer and
// reason whichever of them the file holds.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "graph/export/graph_json.h"

inline nlohmann::json ReadGraphJson(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json g = nlohmann::json::parse(text.str());
  opscope::graph::ExpandGraphJson(g);
  return g;
}
