// The minimal reproducer of `ops-debug run --repro-dir DIR`: the input region
// behind the worst element of the first failing output (from the op's index
// map, else by perturbation), inputs cropped around it that still fail under
// the same golden and tolerance, written to DIR as .npy with the command that
// runs them (DIR/repro.sh).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "opscope/harness.h"
#include "analysis/harness/golden.h"

namespace opscope {

struct ReproContext {
  const OpRunRequest& flags;
  const OpSchema& op;
  const Attrs& attrs;
  Device* device;
  const std::map<std::string, int64_t>& tunables;
  int num_outputs = -1;
  const std::vector<OpRunInput>& inputs;
  const std::vector<Tolerance>& tolerances;
  const GoldenFn& golden;
};

ReproOutcome BuildReproducer(const ReproContext& ctx, const OpRunReport& report);

// The `ops-debug run` line for these flags; `input_files` (when not empty)
// replaces the inputs, and the report/repro-dir flags are left out.
std::string TunablesText(const std::map<std::string, int64_t>& tunables);  // "block=256,vec=4"
std::string ReproCommand(const OpRunRequest& flags, const OpSchema& op, const Attrs& attrs,
                         const std::vector<OpRunInput>& inputs, const std::vector<std::string>& input_files);

// repro.sh's text: the same command with every path absolute (plugins,
// inputs) and the tool by its absolute path when this process is ops-debug,
// else looked up on PATH with one clear line when it is not there; so the
// script runs from any folder, on any machine with the same files.
std::string ReproScript(const std::string& comment, const OpRunRequest& flags, const OpSchema& op, const Attrs& attrs,
                        const std::vector<OpRunInput>& inputs, const std::vector<std::string>& input_files);

}  // namespace opscope
