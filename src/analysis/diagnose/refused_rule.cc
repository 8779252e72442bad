#include "analysis/diagnose/attribution_facts.h"

#include "core/text_format.h"

namespace opscope::attribution {

void Refused(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  if (in.failing < 0) return;
  const DiagLaunch& l = d.trajectory[in.failing];
  if (l.error.empty()) return;
  DiagCause cause;
  std::string e = l.error;
  const std::string low = AsciiLower(e);
  const bool shape = low.find("shape") != std::string::npos || low.find("broadcast") != std::string::npos ||
                     low.find("rank") != std::string::npos || low.find("dim") != std::string::npos;
  if (l.state == "rejected" || shape) {
    cause.rule = "shape";
    cause.cause = (shape ? "shape or broadcast mismatch: " : "call refused: ") + std::string("op ") + l.op + ": " + e;
    cause.fix = shape ? "an attribute or broadcast rule the kernel does not handle: fix the input shapes or teach the op's "
                        "shape inference and kernel that case"
                      : "the call breaks the op's schema: see the message";
  } else {
    cause.rule = "kernel-error";
    cause.cause = "kernel " + l.kernel + " (op " + l.op + ") returned an error: " + e;
    cause.fix = "the kernel reported this itself: see the message";
  }
  cause.confidence = "high";
  for (const DiagTensor& t : l.tensors) {
    if (t.role == "input") cause.evidence.push_back("input " + RangeText(t));
  }
  if (!l.attrs.empty()) cause.evidence.push_back("attrs " + l.attrs);
  cause.score = 85;
  out.push_back(cause);
}

}  // namespace opscope::attribution
