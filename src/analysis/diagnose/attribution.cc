#include "analysis/diagnose/attribution.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "analysis/diagnose/supervise.h"
#include "core/text_format.h"
#include "opscope/dtype.h"

namespace opscope {

std::string ShapeText(const DiagTensor& t) { return t.dtype + CoordsText(t.shape); }

namespace {

int64_t Numel(const DiagTensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n;
}

size_t ItemSize(const DiagTensor& t) {
  auto dt = ParseDType(t.dtype);
  return dt.ok() ? DTypeSize(*dt) : 1;
}

std::string RangeText(const DiagTensor& t) {
  if (!t.has_stats) return t.name + " " + ShapeText(t) + " (not summarised)";
  std::string s = t.name + " " + ShapeText(t) + " in [" + ShortNum(t.min) + ", " + ShortNum(t.max) + "], mean " +
                  ShortNum(t.mean);
  if (t.nan) s += ", " + std::to_string(t.nan) + " NaN";
  if (t.inf) s += ", " + std::to_string(t.inf) + " Inf";
  return s;
}

// `in` stretches to `out` by numpy's rule (its dims are 1 or equal, from the
// right) without being the same shape: what a kernel must index with strides of 0.
bool Broadcasts(const DiagTensor& in, const DiagTensor& out) {
  if (in.shape == out.shape || in.shape.size() > out.shape.size()) return false;
  for (size_t k = 0; k < in.shape.size(); ++k) {
    const int64_t a = in.shape[in.shape.size() - 1 - k], b = out.shape[out.shape.size() - 1 - k];
    if (a != b && a != 1) return false;
  }
  return true;
}

bool Finite(const DiagTensor& t) { return t.has_stats && t.nan == 0 && t.inf == 0; }

bool Extreme(const DiagTensor& t) {
  return t.has_stats && (t.nan > 0 || t.inf > 0 || std::max(std::fabs(t.min), std::fabs(t.max)) >= kExtremeMagnitude);
}

// The frame a person looks at first: the innermost one with a source line,
// outside the C library.
bool SystemFrame(const DiagFrame& f) {
  return f.file.empty() || f.line <= 0 || f.file.rfind("/usr/", 0) == 0 || f.file[0] != '/' ||
         f.module.rfind("/lib", 0) == 0 || f.module.rfind("/usr/lib", 0) == 0;
}

const DiagFrame* SourceFrame(const DiagThread& t) {
  for (const DiagFrame& f : t.frames) {
    if (!SystemFrame(f)) return &f;
  }
  return t.frames.empty() ? nullptr : &t.frames.front();
}

std::string FrameText(const DiagFrame& f) {
  std::string s = f.function.empty() ? Hex(f.pc) : f.function;
  if (!f.file.empty()) s += " at " + f.file + ":" + std::to_string(f.line);
  return s;
}

const DiagThread* FaultingThread(const Diagnosis& d) {
  for (const DiagThread& t : d.threads) {
    if (t.faulting) return &t;
  }
  return nullptr;
}

std::string Lower(std::string s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The producer of the bytes at `address` before trajectory[before]: the
// latest launch or copy that wrote them.
const DiagLaunch* Producer(const Diagnosis& d, int before, uint64_t address) {
  for (int i = before - 1; i >= 0; --i) {
    for (const DiagTensor& t : d.trajectory[i].tensors) {
      if (t.role == "output" && address >= t.address && address < t.address + std::max<uint64_t>(t.bytes, 1)) {
        return &d.trajectory[i];
      }
    }
  }
  return nullptr;
}

std::string LaunchText(const DiagLaunch& l) {
  if (l.kind != "launch") return l.kind + " on stream " + l.device + "/" + std::to_string(l.stream_id);
  return "op " + l.op + " (kernel " + l.kernel + ", op_id " + l.op_id + ")";
}

void OutOfBounds(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  const CrashRecord* c = in.crash;
  if (c == nullptr || !c->written || (c->signal != SIGSEGV && c->signal != SIGBUS)) return;
  const uint64_t fault = c->fault_address;
  const DiagLaunch* failing = in.failing >= 0 ? &d.trajectory[in.failing] : nullptr;
  // The tensor the fault lies next to: the checked allocation holding the
  // fault, else a tensor of the failing launch within a page of it.
  const DiagTensor* tensor = nullptr;
  const DiagLaunch* owner = nullptr;
  uint64_t begin = 0, bytes = 0;
  bool guard = c->in_checked_allocation != 0;
  if (guard) {
    begin = c->alloc_begin, bytes = c->alloc_bytes;
    for (int i = in.failing >= 0 ? in.failing : static_cast<int>(d.trajectory.size()) - 1; i >= 0 && !tensor; --i) {
      for (const DiagTensor& t : d.trajectory[i].tensors) {
        if (t.address == begin && d.trajectory[i].kind == "launch") {
          tensor = &t, owner = &d.trajectory[i];
          break;
        }
      }
    }
  } else if (failing) {
    for (const DiagTensor& t : failing->tensors) {
      if (fault + 4096 >= t.address && fault < t.address + t.bytes + 4096 && (fault < t.address || fault >= t.address + t.bytes)) {
        tensor = &t, owner = failing, begin = t.address, bytes = t.bytes;
        break;
      }
    }
  }
  const DiagThread* thread = FaultingThread(d);
  const DiagFrame* frame = thread ? SourceFrame(*thread) : nullptr;
  DiagCause cause;
  cause.rule = "out-of-bounds";
  const std::string verb = c->access == 2 ? "writes" : c->access == 1 ? "reads" : "accesses";
  if (tensor == nullptr && !guard) {
    const bool null = fault < 4096;
    const std::string what = null ? "a null pointer dereference"
                             : c->signal == SIGBUS ? "a read or write of a mapping past the end of its file (or misaligned)"
                                                   : "an invalid memory access";
    cause.cause = SignalName(c->signal) + ": " + what + " at " + Hex(fault) + (frame ? " in " + FrameText(*frame) : "");
    cause.confidence = null ? "high" : "medium";
    cause.evidence.push_back("fault address " + Hex(fault) + " lies in no tensor the recorded launches used");
    if (failing) cause.evidence.push_back("running: " + LaunchText(*failing));
    cause.fix = "a pointer the kernel computes or receives is wrong: check it against the tensors' addresses";
    cause.score = 50;
    out.push_back(cause);
    return;
  }
  const std::string name = tensor ? tensor->name : std::string(c->alloc_label[0] ? c->alloc_label : "a buffer");
  const size_t item = tensor ? ItemSize(*tensor) : 1;
  const int64_t n = tensor ? Numel(*tensor) : static_cast<int64_t>(bytes);
  const std::string desc = tensor ? ShapeText(*tensor) : std::to_string(bytes) + " bytes";
  std::string where;
  if (fault >= begin + bytes) {
    const int64_t index = static_cast<int64_t>((fault - begin) / item);
    const int64_t past = index - n + 1;
    where = verb + " " + name + "[" + std::to_string(index) + "]: " + std::to_string(past) + " element" +
            (past == 1 ? "" : "s") + " past the end of " + name + ", " + desc;
  } else {
    const int64_t before = static_cast<int64_t>((begin - fault + item - 1) / item);
    where = verb + " " + name + "[-" + std::to_string(before) + "]: " + std::to_string(before) + " element" +
            (before == 1 ? "" : "s") + " before the start of " + name + ", " + desc;
  }
  const bool is_output = tensor && tensor->role == "output";
  cause.cause = "out-of-bounds " + std::string(c->access == 2 || (c->access == 0 && is_output) ? "write" : "read") +
                " on " + name + (owner ? " in " + LaunchText(*owner) : "") + ": " + where;
  cause.confidence = guard ? "high" : "medium";
  cause.evidence.push_back(std::string(guard ? "fault address " + Hex(fault) + " is in the guard page of " : "fault address " + Hex(fault) + " is next to ") +
                           name + " (" + Hex(begin) + ", " + std::to_string(bytes) + " bytes)");
  if (owner && !owner->grid.empty()) {
    const int64_t threads = owner->grid[0] * owner->grid[1] * owner->grid[2] * owner->block[0] * owner->block[1] * owner->block[2];
    cause.evidence.push_back("launch grid=[" + std::to_string(owner->grid[0]) + "," + std::to_string(owner->grid[1]) + "," +
                             std::to_string(owner->grid[2]) + "] block=[" + std::to_string(owner->block[0]) + "," +
                             std::to_string(owner->block[1]) + "," + std::to_string(owner->block[2]) + "]: " +
                             std::to_string(threads) + " threads for " + std::to_string(n) + " elements");
  }
  if (frame) cause.evidence.push_back("the faulting instruction: " + FrameText(*frame));
  if (fault >= begin + bytes) {
    cause.fix = "likely index arithmetic: guard the access with `if (i < n)` for the tail, where n (" + std::to_string(n) +
                ") need not be a multiple of the block, and check the bound (`<` not `<=`)";
  } else {
    cause.fix = "an index below 0 reached the kernel: check the index arithmetic, or where the indices come from";
    // An integer input holding negative values is where such an index comes from.
    if (owner) {
      for (const DiagTensor& t : owner->tensors) {
        if (t.role == "input" && t.has_stats && t.min < 0 && t.dtype.find("int") != std::string::npos) {
          cause.evidence.push_back("index input " + RangeText(t) + ": negative indices");
          cause.fix = "the index input " + t.name + " holds negative values: find who wrote it (see the other causes)";
        }
      }
    }
  }
  cause.score = guard ? 90 : 60;
  out.push_back(cause);
  // An input smaller than the output it was read for: a broadcast the kernel does not do.
  if (tensor && tensor->role == "input" && owner) {
    for (const DiagTensor& o : owner->tensors) {
      if (o.role == "output" && Broadcasts(*tensor, o)) {
        DiagCause b;
        b.rule = "shape";
        b.confidence = "high";
        b.cause = "broadcast not handled: " + LaunchText(*owner) + " reads " + name + " " + ShapeText(*tensor) +
                  " as if it had the output's shape " + ShapeText(o);
        b.evidence.push_back(where);
        b.fix = "index " + name + " with broadcast strides (0 along its size-1 or missing dims), or refuse the shape in the op's shape inference";
        b.score = 88;
        out.push_back(b);
        break;
      }
    }
  }
}

const DiagThread* KernelThread(const Diagnosis& d, const DiagLaunch& l) {
  const std::string op = Lower(l.op), kernel = Lower(l.kernel);
  const DiagThread* best = nullptr;
  int best_score = 0;
  for (const DiagThread& t : d.threads) {
    int score = 0;
    for (const DiagFrame& f : t.frames) {
      const std::string fn = Lower(f.function);
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

void NumericOrigin(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  for (const DiagLaunch& l : d.trajectory) {
    if (l.kind != "launch") continue;
    bool inputs_finite = true, any_input = false;
    for (const DiagTensor& t : l.tensors) {
      if (t.role != "input") continue;
      if (!t.has_stats) { inputs_finite = false; break; }
      any_input = true;
      inputs_finite = inputs_finite && Finite(t);
    }
    if (!inputs_finite || !any_input) continue;
    for (const DiagTensor& o : l.tensors) {
      if (o.role != "output" || !o.has_stats || (o.nan == 0 && o.inf == 0)) continue;
      DiagCause cause;
      cause.rule = "nan-origin";
      const bool nan = o.nan > 0;
      cause.cause = std::string(nan ? "NaN" : "Inf") + " first appears in " + LaunchText(l) + ": its output " + o.name +
                    " holds " + std::to_string(nan ? o.nan : o.inf) + " of " + std::to_string(o.count) + " " +
                    (nan ? "NaN" : "Inf") + " while its inputs are finite: numerical instability in " + l.op;
      cause.confidence = "high";
      // Inf alone: values grew past the dtype's range; NaN: 0/0, Inf-Inf, or a log or sqrt of a negative.
      std::string hint = !nan ? "an overflow: values past the dtype's range (an exp, a square or a product)" : "";
      if (!o.first_bad.empty()) {
        std::string at;
        for (size_t k = 0; k < o.first_bad.size(); ++k) at += (k ? "," : "") + std::to_string(o.first_bad[k]);
        cause.evidence.push_back("first " + std::string(nan ? "NaN" : "Inf") + " at " + o.name + "[" + at + "], row " +
                                 std::to_string(o.row));
      }
      for (const DiagTensor& t : l.tensors) {
        if (t.role != "input") continue;
        cause.evidence.push_back("input " + RangeText(t));
        if (t.row >= 0) {
          cause.evidence.push_back("row " + std::to_string(t.row) + " of " + t.name + " is in [" + ShortNum(t.row_min) +
                                   ", " + ShortNum(t.row_max) + "]" +
                                   (t.row_min == 0 && t.row_max == 0 ? ": all zeros" : ""));
          if (nan && t.row_min <= 0 && t.row_max >= 0) {
            hint = "row " + std::to_string(t.row) + " of " + t.name +
                   " reaches 0: a division by (about) zero, e.g. a norm without an epsilon";
          }
        }
        if (!hint.empty()) continue;
        if (nan && t.min <= 0 && t.max >= 0) hint = "an input range that includes 0: a division by (about) zero or a log/sqrt of a non-positive value";
        else if (nan) hint = "0/0, Inf - Inf, or a log or sqrt of a negative value";
      }
      cause.evidence.push_back("output " + RangeText(o));
      if (!hint.empty()) cause.evidence.push_back("likely: " + hint);
      cause.fix = "add an epsilon to the denominator (or under the sqrt), clamp before exp/log, or accumulate in a wider type";
      cause.score = 70;
      out.push_back(cause);
      return;  // the first origin is the one that matters
    }
  }
}

void Upstream(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  if (in.failing < 0) return;
  const DiagLaunch& l = d.trajectory[in.failing];
  for (const DiagTensor& t : l.tensors) {
    if (t.role != "input" || !Extreme(t)) continue;
    const DiagLaunch* p = Producer(d, in.failing, t.address);
    DiagCause cause;
    cause.rule = "upstream-values";
    cause.confidence = "medium";
    cause.cause = "input " + t.name + " of " + LaunchText(l) + " already held " +
                  (t.nan || t.inf ? std::string("NaN/Inf") : "extreme values (|x| >= 1e30)") + ": the fault is upstream, " +
                  (p ? "in " + LaunchText(*p) + " that wrote it" : "in the data the program passed in");
    cause.evidence.push_back("input " + RangeText(t));
    if (p) cause.evidence.push_back("written by " + LaunchText(*p) + " (record #" + std::to_string(p->seq) + ")");
    cause.fix = p ? "diagnose " + p->op + " first: it produced these values" : "check the program's input data";
    cause.score = 55;
    out.push_back(cause);
  }
}

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

void Races(const AttributionInput& in, std::vector<DiagCause>& out) {
  if (in.races == nullptr) return;
  const Diagnosis& d = *in.diagnosis;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  const DiagLaunch* failing = in.failing >= 0 ? &d.trajectory[in.failing] : nullptr;
  for (const Race& r : in.races->races) {
    if (!seen.insert({r.first.seq, r.second.seq}).second) continue;
    DiagCause cause;
    cause.rule = "race";
    cause.confidence = "high";
    // The buffer by the name its producer gave it, where a recorded launch wrote it.
    std::string buffer = "the buffer at " + Hex(r.begin) + " (" + std::to_string(r.bytes) + " bytes)";
    for (const DiagLaunch& l : d.trajectory) {
      if (l.kind != "launch") continue;
      for (const DiagTensor& t : l.tensors) {
        if (t.role == "output" && r.begin >= t.address && r.begin < t.address + t.bytes) {
          buffer = l.op + "'s output " + t.name + " (" + ShapeText(t) + " at " + Hex(t.address) + ")";
        }
      }
    }
    auto side = [](const StreamAccess& a, bool writes, const std::string& tensor) {
      std::string who = a.is_launch ? "kernel " + a.kernel + " (op " + a.op + ", op_id " + a.op_id + ")"
                                    : "a copy" + (a.op.empty() ? std::string(" the host issued") : " issued by " + a.op + "'s kernel");
      std::string as = a.is_launch ? " as " + tensor.substr(tensor.find('.') + 1) : "";
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

std::string LastLine(const std::string& text) {
  std::string s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

// What a sanitizer reports, to the line, names the bug better than the
// signal that may follow. Each report of ASan, TSan and LSan ends with
// "SUMMARY: <Tool>: <kind> <where>"; UBSan heads each of its with
// "<file>:<line>:<col>: runtime error: <what>". The first report is the
// root: later ones are often its consequences.
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

}  // namespace

std::vector<DiagCause> Attribute(const AttributionInput& in) {
  std::vector<DiagCause> out;
  if (in.diagnosis == nullptr) return out;
  OutOfBounds(in, out);
  Hang(in, out);
  Refused(in, out);
  Races(in, out);
  NumericOrigin(in, out);
  Upstream(in, out);
  SanitizerReports(in, out);
  Signals(in, out);
  // Values that were already bad when the failing launch read them explain
  // its crash: their origin, then the hand-over, rank above the symptom.
  const bool upstream = std::any_of(out.begin(), out.end(), [](const DiagCause& c) { return c.rule == "upstream-values"; });
  for (DiagCause& c : out) {
    if (upstream && c.rule == "upstream-values") c.score = 93;
    if (upstream && c.rule == "nan-origin") c.score = 95;
  }
  std::stable_sort(out.begin(), out.end(), [](const DiagCause& a, const DiagCause& b) { return a.score > b.score; });
  return out;
}

}  // namespace opscope
