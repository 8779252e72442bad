// `ops-debug calibrate --device cpu [--json] [--refresh]`: the device's
// measured roofs (opscope/calibrate.h), cached per machine.
#pragma once

#include <ostream>

#include "opscope/calibrate.h"
#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct CalibrateFlags {
  CalibrateRequest request;
  bool json = false;
};

Status RunCalibrate(const CalibrateFlags& flags, std::ostream& out);
CLI::App* AddCalibrateCommand(CLI::App& app, CalibrateFlags& flags);

}  // namespace opscope::cli
