// The minimal build's stand-in for ew_vecmath_avx2.cc (no SLEEF there): no
// vector table, so the float32 transcendental ops keep their scalar loops,
// as on a CPU without AVX2 (ew_vecmath.h).
#include "ops/builtin/ew_vecmath.h"

namespace opscope::ew {

const VecMath* Avx2VecMath() { return nullptr; }

}  // namespace opscope::ew
