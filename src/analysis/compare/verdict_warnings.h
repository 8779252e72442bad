// File: analysis/compare/verdict_warnings.h
// What a pass cannot see, said beside it: an absolute floor that judges
// most elements alone where it allows a tenth of their size or more, a
// cosine similarity below kCosineWarnBelow, a sign flipped on most elements.
// An output that is the exact negation of tiny expected values passes the
// mixed rule's floor; with these it is never a silent pass.
#pragma once

#include "opscope/compare.h"

namespace opscope {

// Fills r.warnings from r's counts (a failed compare gets none: its
// verdict is already loud, and its findings say how).
void AddVerdictWarnings(CompareResult& r);

}  // namespace opscope
