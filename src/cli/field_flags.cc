#include "cli/field_flags.h"

#include <array>

namespace opscope::cli {
namespace {

// The request fields (opscope/harness.h, profile.h, sweep.h, diagnose.h,
// calibrate.h, compare.h's ToleranceSpec) and ops-debug's flags for them.
constexpr FieldFlag kOpsDebug[] = {
    {"op", "--op"},
    {"plugins", "--plugin"},
    {"input_files", "--inputs"},
    {"inputs", "--inputs"},
    {"input_shapes", "--input-shapes"},
    {"dtypes", "--dtype"},
    {"fill", "--fill"},
    {"seed", "--seed"},
    {"attrs", "--attrs"},
    {"tunables", "--tunables"},
    {"device", "--device"},
    {"checked", "--checked"},
    {"reference", "--reference"},
    {"expected_files", "--expected"},
    {"baseline", "--baseline"},
    {"num_outputs", "--outputs"},
    {"rule", "--mode"},
    {"atol", "--abserr"},
    {"rtol", "--relerr"},
    {"max_ulp", "--max-ulp"},
    {"worst_k", "--worst"},
    {"repeat", "--repeat"},
    {"readback", "--readback"},
    {"report", "--report"},
    {"repro_dir", "--repro-dir"},
    {"save_outputs", "--save-outputs"},
    {"iterations", "--iters"},
    {"warmup", "--warmup"},
    {"peak_bw_gbs", "--peak-bw"},
    {"peak_gflops", "--peak-flops"},
    {"timeline", "--output"},
    {"chain", "--chain"},
    {"values", "--tunable"},
    {"model", "--graph"},
    {"top", "--top"},
    {"output_dir", "--output-dir"},
    {"timeout_s", "--timeout"},
    {"repetitions", "--repetitions"},
};

// opscope/model.h's requests and inspector-cli's flags for them.
constexpr FieldFlag kInspector[] = {
    {"output_dir", "--output-dir"},
    {"streams", "--streams"},
    {"warmup", "--warmup"},
    {"iterations", "--iterations"},
    {"dump_passes", "--dump-passes"},
    {"input_files", "--inputs"},
    {"seed", "--seed"},
    {"save_outputs", "--save-outputs"},
    {"plugins", "--plugin"},
    {"device", "--device"},
    {"peak_bw_gbs", "--peak-bw"},
    {"peak_gflops", "--peak-flops"},
    {"threshold_time_pct", "--threshold-time"},
    {"threshold_nodes", "--threshold-nodes"},
    {"allow_different_models", "--allow-different-models"},
    {"output", "--output"},
    {"node", "--node"},
    {"depth", "--depth"},
    {"baseline", "--baseline"},
    {"expected_files", "--expected"},
    {"disable_passes", "--disable-pass"},
    {"replay", "--replay"},
    {"rule", "--mode"},
    {"atol", "--abserr"},
    {"rtol", "--relerr"},
    {"max_ulp", "--max-ulp"},
    {"keep_bytes", "--keep-bytes"},
};

const FieldFlag* Find(std::string_view name, std::span<const FieldFlag> first, std::span<const FieldFlag> table) {
  for (std::span<const FieldFlag> t : {first, table}) {
    for (const FieldFlag& f : t) {
      if (f.field == name) return &f;
    }
  }
  return nullptr;
}

bool IdentChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

const std::span<const FieldFlag> kOpsDebugFieldFlags(kOpsDebug);
const std::span<const FieldFlag> kInspectorFieldFlags(kInspector);

std::string NameFlags(std::string_view message, std::span<const FieldFlag> table, std::span<const FieldFlag> first) {
  std::string out;
  out.reserve(message.size() + 16);
  // The leading field: "field:" or "field VALUE:" (one word of value).
  size_t i = 0;
  while (i < message.size() && IdentChar(message[i])) ++i;
  if (i > 0 && i < message.size()) {
    const FieldFlag* f = Find(message.substr(0, i), first, table);
    bool leads = message[i] == ':';
    if (!leads && message[i] == ' ') {
      const size_t colon = message.find(':', i + 1), space = message.find(' ', i + 1);
      leads = colon != std::string_view::npos && (space == std::string_view::npos || colon < space);
    }
    if (f != nullptr && leads) {
      out += f->flag;
      message.remove_prefix(i);
    }
  }
  // Backquoted fields anywhere.
  for (size_t at = 0; at < message.size();) {
    const size_t open = message.find('`', at);
    const size_t close = open == std::string_view::npos ? open : message.find('`', open + 1);
    if (close == std::string_view::npos) {
      out += message.substr(at);
      break;
    }
    const std::string_view name = message.substr(open + 1, close - open - 1);
    bool ident = !name.empty();
    for (char c : name) ident = ident && IdentChar(c);
    out += message.substr(at, open - at);
    if (ident) {
      const FieldFlag* f = Find(name, first, table);
      out += f != nullptr ? f->flag : name;
    } else {
      out += message.substr(open, close - open + 1);  // not a field: left as it was
    }
    at = close + 1;
  }
  return out;
}

}  // namespace opscope::cli
