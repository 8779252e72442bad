#include "analysis/diagnose/attribution_facts.h"

namespace opscope::attribution {

// The run failed as ops-debug judges an op: its verdict is the cause, with
// the pattern and findings as evidence; repeats that differ make it a
// nondeterministic result, tied to unordered launches where the race check
// saw any.
void RunVerdict(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  if (d.run_verdict.empty()) return;
  DiagCause cause;
  cause.rule = d.run_status == "nondeterministic" ? "nondeterministic" : "wrong-result";
  cause.confidence = "high";
  cause.score = 60;  // below every rule that says why the values went wrong (nan-origin, races, ...)
  cause.cause = d.run_status == "nondeterministic" ? "the op gives different results on the same inputs: " + d.run_verdict[0]
                                                   : "the op ran to the end and its result is wrong: " + d.run_verdict[0];
  for (size_t i = 1; i < d.run_verdict.size(); ++i) cause.evidence.push_back(d.run_verdict[i]);
  if (d.run_status == "nondeterministic") {
    if (in.races != nullptr && !in.races->races.empty()) {
      // The first pair by name: the race cause below says the rest.
      const Race& r = in.races->races.front();
      auto who = [](const StreamAccess& a) {
        return (a.is_launch ? "kernel " + a.kernel : std::string("a copy")) + " on stream " + a.stream;
      };
      cause.evidence.push_back("unordered launches touch one buffer: " + who(r.first) + " and " + who(r.second) +
                               ", with no event between them (" + std::to_string(in.races->races.size()) +
                               (in.races->races.size() == 1 ? " race" : " races") + " below): the likely reason the "
                               "repeats differ");
    } else {
      cause.evidence.push_back("no unordered launches were seen: look for atomics or a reduction order "
                               "that depends on the thread schedule");
    }
    cause.fix = "make the result independent of the schedule: order the launches with an event, or reduce in a fixed order";
  } else {
    cause.fix = "the pattern and findings say where and on which values; ops-debug run --repro-dir writes a reproducer";
  }
  out.push_back(cause);
}

}  // namespace opscope::attribution
