// File: analysis/diagnose/attribution_facts.h
// What the attribution rules share: the facts they read off a snapshot (a
// tensor's size and range, the frame a person looks at first, the launch
// that wrote an address) and the rules themselves, one family per file
// (out_of_bounds_rule.cc, hang_rule.cc, value_rules.cc, refused_rule.cc,
// race_rule.cc, sanitizer_rule.cc, signal_rules.cc). Each rule appends the
// causes its evidence supports and stays quiet without it; Attribute()
// (attribution.cc) runs them all and ranks what they found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/diagnose/attribution.h"

namespace opscope::attribution {

// --- facts ---
int64_t Numel(const DiagTensor& t);
size_t ItemSize(const DiagTensor& t);  // 1 for a dtype this build does not know
// "x float32[4,256] in [-1, 3], mean 0.2, 2 NaN": a tensor as evidence.
std::string RangeText(const DiagTensor& t);
// `in` stretches to `out` by numpy's rule without being the same shape.
bool Broadcasts(const DiagTensor& in, const DiagTensor& out);
bool Finite(const DiagTensor& t);   // summarised, with no NaN or Inf
bool Extreme(const DiagTensor& t);  // NaN, Inf, or |x| >= kExtremeMagnitude
// The innermost frame with a source line outside the system's libraries.
const DiagFrame* SourceFrame(const DiagThread& t);
std::string FrameText(const DiagFrame& f);  // "fn at file:line", or its pc
const DiagThread* FaultingThread(const Diagnosis& d);
// Letters and digits only, lower case: for matching names across manglings.
std::string AlnumLower(const std::string& s);
// The latest launch or copy before trajectory[before] that wrote `address`.
const DiagLaunch* Producer(const Diagnosis& d, int before, uint64_t address);
std::string LaunchText(const DiagLaunch& l);  // "op X (kernel k, op_id i)"
std::string LastLine(const std::string& text);

// --- rules, in the order Attribute() runs them ---
void OutOfBounds(const AttributionInput& in, std::vector<DiagCause>& out);       // out_of_bounds_rule.cc
void Hang(const AttributionInput& in, std::vector<DiagCause>& out);              // hang_rule.cc
void Refused(const AttributionInput& in, std::vector<DiagCause>& out);           // refused_rule.cc
void Races(const AttributionInput& in, std::vector<DiagCause>& out);             // race_rule.cc
void NumericOrigin(const AttributionInput& in, std::vector<DiagCause>& out);     // value_rules.cc
void Upstream(const AttributionInput& in, std::vector<DiagCause>& out);          // value_rules.cc
void SanitizerReports(const AttributionInput& in, std::vector<DiagCause>& out);  // sanitizer_rule.cc
void RunVerdict(const AttributionInput& in, std::vector<DiagCause>& out);         // verdict_rule.cc
void Signals(const AttributionInput& in, std::vector<DiagCause>& out);           // signal_rules.cc

}  // namespace opscope::attribution
