#include "core/gzip.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace opscope {
namespace {

std::string Json(size_t n) {
  std::string s = "[";
  for (size_t i = 0; s.size() < n; ++i) s += "{\"name\":\"/block" + std::to_string(i) + "/Relu\",\"id\":" + std::to_string(i) + "},";
  return s;
}

TEST(Gzip, RoundTripsTextAndBytesAndShrinksJson) {
  std::mt19937 rng(3);
  std::string noise(300000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  for (const std::string& data : {std::string(), std::string("x"), Json(3 << 20), noise}) {
    const std::string gz = Gzip(data);
    ASSERT_GE(gz.size(), 18u);  // header and trailer at least
    EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
    StatusOr<std::string> back = Gunzip(gz, data.size() + 1);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, data);
  }
  const std::string json = Json(3 << 20);
  EXPECT_LT(Gzip(json).size() * 4, json.size()) << "JSON of repeated names shrinks at level 1";
}

TEST(Gzip, RefusesWhatIsNotGzipCutShortOrInflatesPastTheLimit) {
  const std::string data = Json(1 << 20), gz = Gzip(data);
  EXPECT_FALSE(Gunzip("not gzip at all", 1 << 20).ok());
  EXPECT_FALSE(Gunzip(gz.substr(0, gz.size() / 2), 1 << 30).ok());
  EXPECT_FALSE(Gunzip(std::string_view(gz).substr(0, 10), 1 << 30).ok());
  StatusOr<std::string> bomb = Gunzip(gz, data.size() / 2);
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.status().message().find("inflates past"), std::string::npos) << bomb.status().message();
}

}  // namespace
}  // namespace opscope
