#include "analysis/diagnose/attribution_facts.h"

#include <string>

#include "core/text_format.h"

namespace opscope::attribution {

// The thread most likely running the launch's kernel: its frames name the
// kernel or the op, or lie in a plugin.
static const DiagThread* KernelThread(const Diagnosis& d, const DiagLaunch& l) {
  const std::string op = AlnumLower(l.op), kernel = AlnumLower(l.kernel);
  const DiagThread* best = nullptr;
  int best_score = 0;
  for (const DiagThread& t : d.threads) {
    int score = 0;
    for (const DiagFrame& f : t.frames) {
      const std::string fn = AlnumLower(f.function);
      if (!kernel.empty() && fn.find(kernel) != std::string::npos) score += 4;
      else if (!op.empty() && fn.find(op) != std::string::npos) score += 3;
      // A plugin's code: neither the library nor the system's.
      if (!f.module.empty() && f.module.find("libopscope") == std::string::npos && f.module.rfind("/usr/", 0) != 0 &&
          f.module.rfind("/lib", 0) != 0 && f.module.find("ops-debug") == std::string::npos &&
          f.module.find("inspector-cli") == std::string::npos) {
        score += 2;
      }
    }
    if (score > best_score) best = &t, best_score = score;
  }
  return best;
}

void Hang(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  if (d.status != DiagnosisStatus::kHung) return;
  DiagCause cause;
  cause.rule = "hang";
  if (in.failing < 0) {
    cause.cause = "the program hung outside any kernel the recorder saw";
    cause.confidence = "medium";
    cause.evidence.push_back("no launch was in flight when the timeout passed");
    cause.fix = "look at the main thread's stack below";
    cause.score = 60;
    out.push_back(cause);
    return;
  }
  const DiagLaunch& l = d.trajectory[in.failing];
  cause.cause = "hang: kernel " + l.kernel + " (op " + l.op + ") started and never finished: a loop that does not exit or a wait that never ends";
  cause.confidence = "high";
  char when[96];
  std::snprintf(when, sizeof when, "launched at %.3g ms, still running when the timeout passed at %.3g s",
                l.start_us / 1e3, d.wall_s);
  cause.evidence.push_back(when);
  for (const DiagTensor& t : l.tensors) {
    if (t.role == "input") cause.evidence.push_back("input " + RangeText(t) + (t.has_stats && t.min < 0 ? " (negative values present)" : ""));
  }
  if (const DiagThread* t = KernelThread(d, l)) {
    const DiagFrame* f = SourceFrame(*t);
    cause.evidence.push_back("thread " + std::to_string(t->tid) + " (" + t->name + ") is in " + (f ? FrameText(*f) : "?"));
  }
  cause.fix = "check the exit condition of the kernel's loop for the input values named (a negative, zero or NaN bound), "
              "or the event/flag it waits for";
  cause.score = 90;
  out.push_back(cause);
}

}  // namespace opscope::attribution
