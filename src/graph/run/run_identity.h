// File: graph/run/run_identity.h
// Which run a file was written by: the run's id, unique per run (UTC time,
// pid and 64 random bits: "20250101T120000Z-4242-9f3c0a1b2c3d4e5f"), and the
// model's fingerprint (size and FNV-1a of the model file's bytes). Every file
// of a run folder carries it (graph/export/run_folder.h says where, and
// refuses a folder that holds the files of two runs).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "opscope/status.h"

namespace opscope::graph {

struct RunIdentity {
  std::string id;
  std::string model_fingerprint;
  bool operator==(const RunIdentity&) const = default;
};

// "size:fnv1a" of the file's bytes; an error names the file.
StatusOr<std::string> ModelFingerprint(const std::string& path);

// A fresh identity for a run of the model whose fingerprint is given.
RunIdentity NewRunIdentity(const std::string& model_fingerprint);

// {"id": ..., "model_fingerprint": ...}
nlohmann::json RunIdentityJson(const RunIdentity& id);
// roofline.svg with the identity as attributes of its <svg> element.
std::string StampSvg(const std::string& svg, const RunIdentity& id);

}  // namespace opscope::graph
