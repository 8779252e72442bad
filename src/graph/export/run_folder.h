// File: graph/export/run_folder.h
// Which run wrote each file of an `inspector-cli run` folder, so that a
// folder holding the files of two runs (a rerun killed half way through its
// writes) is refused instead of being read as one run.
//
// A run's identity is its id, unique per run (UTC time, pid and 64 random
// bits: "20250101T120000Z-4242-9f3c0a1b2c3d4e5f"), and the model's
// fingerprint (ModelFingerprint: size and FNV-1a of the model file's bytes).
// graph.json, summary.json, capture.json and the --dump-passes files hold it
// as "run": {"id": ..., "model_fingerprint": ...}; trace.json, in the Chrome
// Trace Event Format, as "otherData": {"run": {...}} (where Chrome's viewers
// keep a trace's metadata); roofline.svg as the data-run-id and
// data-model-fingerprint attributes of its <svg>. `export` writes the files
// again from capture.json under the same identity: they describe that run.
//
//   OPSCOPE_RETURN_IF_ERROR(ClearRunFolder(dir));   // a run, before it writes
//   OPSCOPE_ASSIGN_OR_RETURN(RunIdentity id, CheckRunFolder(dir));  // a reader
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "graph/run/run_identity.h"
#include "opscope/status.h"

namespace opscope::graph {

// The files of a run, in the order a run writes them: capture.json, which
// summary, path, export and diff rebuild the run from, comes last.
inline constexpr const char* kRunFolderFiles[] = {"graph.json", "trace.json", "summary.json", "roofline.svg",
                                                  "capture.json"};

// The identity the run file `path` (named as in kRunFolderFiles) carries.
// With `text`, the file's contents the caller already holds, the whole text
// is checked as JSON; without, the file is read only as far as its identity.
// Errors, one line naming the file: not valid JSON (line, column), the
// identity's fields missing or of the wrong kind, no identity at all
// (written before runs had one, or not by a run: run it again).
StatusOr<RunIdentity> ReadRunFileIdentity(const std::string& path, const std::string* text = nullptr);
// The same, with nullopt instead of an error for a file without an identity
// (a trace that no run wrote, shown alone).
StatusOr<std::optional<RunIdentity>> FindRunFileIdentity(const std::string& path, const std::string* text = nullptr);

// The identity every run file present in `dir` shares (`texts`: name ->
// contents of the files the caller already read). A file of another run
// is refused in one line naming both files and both ids; so is a file
// without an identity. NotFound when the folder holds none of the files.
StatusOr<RunIdentity> CheckRunFolder(const std::string& dir, const std::map<std::string, const std::string*>& texts = {});

// Removes what a killed writer left in `dir` (and in dir/passes): the
// temporary files of the atomic writer, for the names a run or export
// writes only. Returns how many.
int RemoveRunTempFiles(const std::string& dir);

// Before a run writes into `dir`: RemoveRunTempFiles, then the files of the
// previous run that this one replaces, capture.json first (regular files
// only: a FIFO or a device named like a run file is the user's, and is
// written through as before; a symbolic link is replaced by the new file,
// never followed), and the previous run's --dump-passes files (only those
// that are opscope's own pass dumps, in a passes/ that is no link). A kill
// from here on leaves files that readers refuse (missing, or of two runs),
// never a mix they would read as one run.
Status ClearRunFolder(const std::string& dir);

}  // namespace opscope::graph
