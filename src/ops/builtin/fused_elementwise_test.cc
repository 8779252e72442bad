// FusedElementwise's tiled kernel against its whole-tensor double reference:
// every step code, as the first step (on an input) and as a later one (on the
// previous result, which the tile overwrites in place), over lengths that
// end mid-tile and mid-lane, in every float dtype.
#include <string>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

const char* const kUnary[] = {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf",
                              "LeakyRelu", "Elu", "Softplus", "HardSigmoid", "Gelu"};
const char* const kBinary[] = {"Add", "Sub", "Mul", "Div"};

TEST(FusedElementwiseKernel, EveryStepFirstAndOnThePreviousResult) {
  for (DType dt : kFloatTypes) {
    for (int64_t n : {1, 7, 255, 257, 1003}) {
      const Tensor x = Random(dt, Shape({n}), 11, -3, 3), z = Random(dt, Shape({n}), 12, 0.5, 2);
      for (const char* op : kUnary) {
        // op(x), then Mul(op(x), z): the unary step on an input, the binary one on its result.
        ExpectMatchesReference("FusedElementwise", {x, z},
                               std::string("ops=[") + op + ",Mul],args=[0,-2,-1,1],alphas=[0.5,0],betas=[0.25,0]");
        // Add(x, z), then op on that result, in place in the tile.
        ExpectMatchesReference("FusedElementwise", {x, z},
                               std::string("ops=[Add,") + op + "],args=[0,1,-1,-2],alphas=[0,1],betas=[0,0.5]");
      }
      for (const char* op : kBinary) {
        ExpectMatchesReference("FusedElementwise", {x, z}, std::string("ops=[Relu,") + op + "],args=[0,-2,-1,1]");
        ExpectMatchesReference("FusedElementwise", {x, z}, std::string("ops=[") + op + ",Sqrt],args=[1,1,-1,-2]");
      }
    }
  }
}

}  // namespace
}  // namespace opscope
