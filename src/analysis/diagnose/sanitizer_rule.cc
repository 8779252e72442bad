#include "analysis/diagnose/attribution_facts.h"

#include <signal.h>

#include <optional>
#include <string>
#include <vector>

#include "core/text_format.h"

namespace opscope::attribution {

// What a sanitizer reports, to the line, names the bug better than the
// signal that may follow. Each report of ASan, TSan and LSan ends with
// "SUMMARY: <Tool>: <kind> <where>"; UBSan heads each of its with
// "<file>:<line>:<col>: runtime error: <what>". The first report is the
// root: later ones are often its consequences.
namespace {

struct SanitizerReport {
  std::string tool, kind, where, what;  // what: UBSan's message, "" for the others
};

std::optional<SanitizerReport> FirstSanitizerReport(const std::string& text, std::vector<std::string>& lines) {
  std::optional<SanitizerReport> first;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    line.erase(0, line.find_first_not_of(" \t"));
    if (const size_t at = line.find(": runtime error: "); at != std::string::npos) {
      if (!first) first = SanitizerReport{.tool = "UndefinedBehaviorSanitizer", .kind = "", .where = line.substr(0, at),
                                          .what = line.substr(at + 17)};
      lines.push_back(line);
    } else if (line.rfind("SUMMARY: ", 0) == 0 && line.find("Sanitizer: ") != std::string::npos) {
      lines.push_back(line);
      const size_t colon = line.find(": ", 9);
      const std::string rest = line.substr(colon + 2);
      const size_t space = rest.find(' ');
      SanitizerReport r{.tool = line.substr(9, colon - 9), .kind = rest.substr(0, space),
                        .where = space == std::string::npos ? "" : rest.substr(space + 1), .what = ""};
      if (!first) first = r;
      else if (first->kind.empty() && first->tool == r.tool) first->kind = r.kind;  // UBSan's summary of its own report
    }
  }
  return first;
}

std::string SanitizerFix(const SanitizerReport& r) {
  const std::string k = r.kind + " " + r.what;
  if (k.find("overflow") != std::string::npos && k.find("buffer") != std::string::npos)
    return "an index past the buffer's end: clamp the loop bound to the size (a `<=` for `<`, an unclamped tail block)";
  if (k.find("use-after") != std::string::npos) return "the buffer was freed before this access: check who owns it and when it is released";
  if (k.find("race") != std::string::npos) return "order the two accesses: an event, a lock, or one stream";
  if (k.find("leak") != std::string::npos) return "free what the report's allocation stack allocated";
  if (k.find("null pointer") != std::string::npos) return "a null pointer reached the kernel: check the buffer was allocated and passed";
  if (k.find("integer overflow") != std::string::npos) return "compute sizes and offsets in int64_t (or check them before the arithmetic)";
  if (k.find("division by zero") != std::string::npos) return "guard the divisor (a zero size, stride or count reached the kernel)";
  if (k.find("shift") != std::string::npos) return "keep the shift below the type's width";
  return "the report's first stack frame is the line to read";
}

}  // namespace

void SanitizerReports(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  std::vector<std::string> lines;
  std::optional<SanitizerReport> r = FirstSanitizerReport(d.stderr_tail, lines);
  if (!r) return;
  DiagCause cause;
  cause.rule = "sanitizer";
  cause.confidence = "high";
  cause.cause = r->tool + ": " + (r->what.empty() ? r->kind : r->what) + (r->where.empty() ? "" : " at " + r->where);
  for (size_t i = 0; i < lines.size() && i < 4; ++i) cause.evidence.push_back(lines[i]);
  if (lines.size() > 4) cause.evidence.push_back(std::to_string(lines.size() - 4) + " more sanitizer lines in the stderr tail");
  cause.fix = SanitizerFix(*r);
  // The report ended the program (its exit, or abort_on_error's SIGABRT):
  // it is the cause. A fault that came after it is named by its own rule
  // first, the report beside it.
  const bool ended_it = d.signal == 0 || d.signal == SIGABRT;
  cause.score = ended_it ? 88 : 45;
  out.push_back(cause);
}

}  // namespace opscope::attribution
