// File: analysis/diagnose/links.h
// op_id links: the launch a diagnosis is about, found again in earlier
// `ops-debug run` / `profile` reports (report.json files in the output folder
// or in --history folders). op_id is an identity within one process, so the
// link is made on the op instance key (op, attrs, input shapes and dtypes),
// and the input fingerprints say whether the data was the same: "the last
// batch worked, this one crashes".
#pragma once

#include <string>
#include <vector>

#include "opscope/diagnose.h"

namespace opscope {

// Reads every *.json of the folders (not recursively) that is an
// "opscope.report/1" with an instance key; unreadable files are skipped.
std::vector<DiagLink> LinkEarlierReports(const Diagnosis& d, const std::vector<std::string>& dirs);

}  // namespace opscope
