#include "device/cpu/helper_cpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace opscope {
namespace {

TEST(HelperCpus, EachHelperGetsACpuOfItsOwnAndTheFirstIsSpare) {
  HelperCpus cpus({2, 5, 7, 9}, 3);
  ASSERT_TRUE(cpus.active());
  EXPECT_EQ(cpus.spare(), 2);
  EXPECT_EQ(cpus.cpu_of(0), 5);
  EXPECT_EQ(cpus.cpu_of(1), 7);
  EXPECT_EQ(cpus.cpu_of(2), 9);
}

TEST(HelperCpus, NoBindingWithoutACpuForEveryHelperAndTheLauncher) {
  EXPECT_FALSE(HelperCpus({0, 1}, 2).active());   // 2 helpers + a launcher on 2 CPUs
  EXPECT_FALSE(HelperCpus({}, 1).active());       // the affinity could not be read
  EXPECT_FALSE(HelperCpus({0, 1, 2}, 0).active());  // no helpers
  EXPECT_TRUE(HelperCpus({0, 1, 2}, 1).active());   // more CPUs than needed
  EXPECT_EQ(HelperCpus({0, 1}, 2).MakeRoomFor(1), -1);
}

TEST(HelperCpus, ALauncherOnAHelpersCpuSwapsItWithTheSpare) {
  HelperCpus cpus({0, 1, 2}, 2);
  EXPECT_EQ(cpus.MakeRoomFor(0), -1);  // already on the spare: nothing moves
  EXPECT_EQ(cpus.MakeRoomFor(2), 1);   // helper 1 was on 2: it moves to 0
  EXPECT_EQ(cpus.cpu_of(1), 0);
  EXPECT_EQ(cpus.spare(), 2);
  EXPECT_EQ(cpus.MakeRoomFor(2), -1);  // the launcher stays: no more moves
  EXPECT_EQ(cpus.MakeRoomFor(1), 0);   // then on helper 0's CPU
  EXPECT_EQ(cpus.cpu_of(0), 2);
  EXPECT_EQ(cpus.spare(), 1);
  // Helpers and spare always cover the set, each CPU once.
  std::set<int> all = {cpus.spare(), cpus.cpu_of(0), cpus.cpu_of(1)};
  EXPECT_EQ(all, (std::set<int>{0, 1, 2}));
}

TEST(HelperCpus, ALauncherOutsideTheSetMovesNothing) {
  HelperCpus cpus({4, 5}, 1);
  EXPECT_EQ(cpus.MakeRoomFor(0), -1);
  EXPECT_EQ(cpus.cpu_of(0), 5);
  EXPECT_EQ(cpus.spare(), 4);
}

TEST(HelperCpus, AllowedCpusAreTheProcesssOwnInOrder) {
  std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
  EXPECT_EQ(std::set<int>(cpus.begin(), cpus.end()).size(), cpus.size());
}

}  // namespace
}  // namespace opscope
