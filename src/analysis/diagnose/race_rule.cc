#include "analysis/diagnose/attribution_facts.h"

#include <set>
#include <utility>

#include "core/text_format.h"

namespace opscope::attribution {

void Races(const AttributionInput& in, std::vector<DiagCause>& out) {
  if (in.races == nullptr) return;
  const Diagnosis& d = *in.diagnosis;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  // The same two kernels (or a kernel and the same op's copy) racing again
  // (each repeat of an op makes its own side stream) are one cause.
  std::set<std::string> kernel_pairs;
  auto who = [](const StreamAccess& a) { return a.is_launch ? a.op + "/" + a.kernel : "copy by " + a.op; };
  const DiagLaunch* failing = in.failing >= 0 ? &d.trajectory[in.failing] : nullptr;
  for (const Race& r : in.races->races) {
    if (!seen.insert({r.first.seq, r.second.seq}).second) continue;
    if ((r.first.is_launch || !r.first.op.empty()) && (r.second.is_launch || !r.second.op.empty()) &&
        !kernel_pairs.insert(who(r.first) + "|" + who(r.second)).second) {
      continue;
    }
    DiagCause cause;
    cause.rule = "race";
    cause.confidence = "high";
    // The buffer by the name its producer gave it, where a recorded launch
    // wrote it before the race (a later op may get the same addresses again),
    // or as the op's own allocation a side launch stands in for.
    std::string buffer = "the buffer at " + Hex(r.begin) + " (" + std::to_string(r.bytes) + " bytes)";
    for (const std::string& name : {r.first_tensor, r.second_tensor}) {
      if (name.find("'s allocation of ") != std::string::npos) buffer = name + " (at " + Hex(r.begin) + ")";
    }
    for (const DiagLaunch& l : d.trajectory) {
      if (l.kind != "launch" || l.seq > r.second.seq) continue;
      for (const DiagTensor& t : l.tensors) {
        if (t.role == "output" && r.begin >= t.address && r.begin < t.address + t.bytes) {
          buffer = l.op + "'s output " + t.name + " (" + ShapeText(t) + " at " + Hex(t.address) + ")";
        }
      }
    }
    auto side = [](const StreamAccess& a, bool writes, const std::string& tensor) {
      std::string who = a.is_launch ? "kernel " + a.kernel + " (op " + a.op + ", op_id " + a.op_id + ")"
                                    : "a copy" + (a.op.empty() ? std::string(" the host issued") : " issued by " + a.op + "'s kernel");
      // "as y" for an op's tensor; an allocation standing in is the buffer's name already.
      const size_t dot = tensor.find('.');
      std::string as = a.is_launch && dot != std::string::npos ? " as " + tensor.substr(dot + 1) : "";
      return who + " on stream " + a.stream + (writes ? " writes it" : " reads it") + as;
    };
    cause.cause = "race on " + buffer + ": " + side(r.first, r.first_writes, r.first_tensor) + ", " +
                  side(r.second, r.second_writes, r.second_tensor) + ", and no event orders them";
    cause.evidence.push_back("first: " + r.first.what + ", record #" + std::to_string(r.first.seq));
    cause.evidence.push_back("second: " + r.second.what + ", record #" + std::to_string(r.second.seq));
    cause.evidence.push_back("no event recorded on " + r.first.stream + " after the first is waited for on " +
                             r.second.stream + " before the second, and the host did not synchronise in between");
    cause.fix = "record an event on stream " + r.first.stream + " after the first and make stream " + r.second.stream +
                " wait for it before the second (or put both on one stream)";
    cause.score = 80;
    // The race fed the launch that failed: it ranks above that launch's own symptom.
    if (failing && d.status != DiagnosisStatus::kClean) {
      for (const DiagTensor& t : failing->tensors) {
        if (r.begin < t.address + t.bytes && t.address < r.begin + r.bytes) cause.score = 100;
      }
      if (r.second.op_id == failing->op_id || r.first.op_id == failing->op_id) cause.score = 100;
    }
    out.push_back(cause);
  }
}

}  // namespace opscope::attribution
