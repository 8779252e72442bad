#include "analysis/diagnose/attribution_facts.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/text_format.h"
#include "opscope/dtype.h"

namespace opscope::attribution {

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
static bool SystemFrame(const DiagFrame& f) {
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

std::string AlnumLower(const std::string& s) {
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

std::string LastLine(const std::string& text) {
  std::string s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace opscope::attribution
