#include "analysis/diagnose/attribution_facts.h"

#include <signal.h>

#include "core/text_format.h"

namespace opscope::attribution {

void Signals(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  const DiagLaunch* failing = in.failing >= 0 ? &d.trajectory[in.failing] : nullptr;
  const DiagThread* thread = FaultingThread(d);
  const DiagFrame* frame = thread ? SourceFrame(*thread) : nullptr;
  const std::string in_what = failing ? " in " + LaunchText(*failing) : "";
  DiagCause cause;
  cause.confidence = "high";
  if (frame) cause.evidence.push_back("the faulting thread is in " + FrameText(*frame));
  if (d.signal == SIGFPE) {
    cause.rule = "arithmetic";
    const bool div = in.crash && in.crash->code == FPE_INTDIV;
    cause.cause = std::string(div ? "integer division by zero" : "arithmetic fault (SIGFPE)") + in_what;
    cause.fix = "guard the divisor (a zero size, stride or count reached the kernel)";
    cause.score = 80;
  } else if (d.signal == SIGILL) {
    cause.rule = "illegal-instruction";
    cause.confidence = "medium";
    cause.cause = "illegal instruction" + in_what + ": code built for another CPU, or a jump through a bad function pointer";
    cause.fix = "rebuild the plugin for this machine (no -march beyond it), check function pointers";
    cause.score = 70;
  } else if (d.signal == SIGABRT) {
    cause.rule = "abort";
    std::string why = in.crash && in.crash->message[0] ? std::string(in.crash->message) : LastLine(d.stderr_tail);
    cause.cause = "aborted" + in_what + (why.empty() ? "" : ": " + why);
    if (!why.empty()) cause.evidence.push_back(why);
    cause.fix = "a failed assert or an uncaught exception: the message and the stack say which";
    cause.score = 75;
  } else if (d.signal == SIGKILL && d.status != DiagnosisStatus::kHung) {
    cause.rule = "killed";
    cause.confidence = "medium";
    cause.cause = "killed by SIGKILL" + in_what + ": the out-of-memory killer, or another process";
    cause.evidence.push_back(std::to_string(d.launches_recorded) + " launches recorded before it");
    cause.fix = "check `dmesg` for the OOM killer and the sizes the op allocates";
    cause.score = 65;
  } else if (d.status == DiagnosisStatus::kError && d.signal == 0 && d.exit_code != 0 && out.empty()) {
    cause.rule = "exit";
    cause.confidence = "low";
    std::string last = LastLine(d.stderr_tail);
    cause.cause = "the program exited with code " + std::to_string(d.exit_code) + (last.empty() ? "" : ": " + last);
    cause.fix = "see the program's own message";
    cause.score = 20;
  } else {
    return;
  }
  out.push_back(cause);
}

}  // namespace opscope::attribution
