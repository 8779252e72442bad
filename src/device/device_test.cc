// GetDevice's answers for names this build cannot serve: a backend left out
// at build time is named as such, a typo lists the devices there are.
#include <gtest/gtest.h>

#include "opscope/device.h"

namespace opscope {
namespace {

TEST(Device, CudaIsEitherBuiltOrSaidToBeNotBuilt) {
  StatusOr<Device*> d = GetDevice("cuda");
#ifdef OPSCOPE_HAVE_CUDA
  // Built: the backend answers, with a device or with "no GPU here".
  if (!d.ok()) {
    EXPECT_EQ(d.status().code(), StatusCode::kFailedPrecondition) << d.status().ToString();
  }
#else
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound);
  EXPECT_NE(d.status().message().find("the cuda backend is not built into this opscope (no CUDA toolkit at build time)"),
            std::string::npos)
      << d.status().ToString();
#endif
}

TEST(Device, UnknownDeviceListsTheBuiltOnes) {
  StatusOr<Device*> d = GetDevice("tpu");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound);
  EXPECT_NE(d.status().message().find("unknown device 'tpu'"), std::string::npos) << d.status().ToString();
  EXPECT_NE(d.status().message().find("cpu"), std::string::npos) << d.status().ToString();
}

}  // namespace
}  // namespace opscope
