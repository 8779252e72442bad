#include "core/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace opscope {
namespace {

using nlohmann::json;

std::string Written(const std::function<void(JsonWriter&)>& f) {
  std::string text;
  JsonWriter w(text);
  f(w);
  return text;
}

TEST(JsonWriter, NestsWithCommasOnlyBetweenMembers) {
  const std::string text = Written([](JsonWriter& w) {
    w.BeginObject().Key("a").Int(1).Key("b").BeginArray().Int(2).BeginObject().EndObject().BeginArray().EndArray();
    w.Null().EndArray().Key("c").Bool(false).Key("d").String("x").EndObject();
  });
  EXPECT_EQ(text, R"({"a":1,"b":[2,{},[],null],"c":false,"d":"x"})");
}

// Valid strings come out as nlohmann's JsonText writes them, control
// characters included; each byte that starts no valid UTF-8 sequence becomes
// U+FFFD (as trace.json's writer does; nlohmann gives a cut sequence one).
TEST(JsonWriter, StringsAreEscapedAndInvalidUtf8Replaced) {
  const std::string valid[] = {"plain", "q\"uote", "back\\slash", std::string("nul\0in", 6), "\b\f\n\r\t\x01\x1f\x7f",
                               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"};
  for (const std::string& s : valid) {
    SCOPED_TRACE(s);
    EXPECT_EQ(Written([&](JsonWriter& w) { w.String(s); }), JsonText(json(s)));
  }
  const std::pair<std::string, std::string> invalid[] = {
      {"bad\xff\xfename", "bad\xef\xbf\xbd\xef\xbf\xbdname"},
      {"cut\xe2\x82", "cut\xef\xbf\xbd\xef\xbf\xbd"},
      {"over\xc0\xaflong", "over\xef\xbf\xbd\xef\xbf\xbdlong"},
      {"lone\x80", "lone\xef\xbf\xbd"}};
  for (const auto& c : invalid) {  // not a structured binding: clang 14 cannot capture one
    SCOPED_TRACE(c.first);
    const std::string text = Written([&](JsonWriter& w) { w.String(c.first); });
    EXPECT_EQ(text, "\"" + c.second + "\"");
    EXPECT_EQ(json::parse(text).get<std::string>(), c.second);
  }
  EXPECT_EQ(Written([](JsonWriter& w) { w.BeginObject().Key("k\"\n").Int(0).EndObject(); }), R"({"k\"\n":0})");
}

// Every double reads back as itself; whole numbers stay floats ("2.0") and
// numbers JSON cannot hold are null.
TEST(JsonWriter, DoublesReadBackExactly) {
  std::mt19937_64 rng(7);
  std::vector<double> values = {0.0, -0.0, 1.0, -2.0, 0.1, 1e-5, 12.755, 1e300, -4.9e-324, 123456789012.0,
                                std::numeric_limits<double>::max(), std::numeric_limits<double>::min()};
  for (int i = 0; i < 2000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isfinite(d)) values.push_back(d);
    values.push_back(std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(rng() % 80) - 40));
  }
  for (double d : values) {
    const std::string text = Written([&](JsonWriter& w) { w.Double(d); });
    const json back = json::parse(text);
    ASSERT_TRUE(back.is_number_float()) << text;
    EXPECT_EQ(std::signbit(back.get<double>()), std::signbit(d)) << text;
    EXPECT_EQ(back.get<double>(), d) << text;
  }
  EXPECT_EQ(Written([](JsonWriter& w) { w.Double(2); }), "2.0");
  EXPECT_EQ(Written([](JsonWriter& w) {
              w.BeginArray().Double(std::nan("")).Double(INFINITY).Double(-INFINITY).EndArray();
            }),
            "[null,null,null]");
}

TEST(JsonWriter, IntsAndRawTextAsGiven) {
  EXPECT_EQ(Written([](JsonWriter& w) {
              w.BeginArray().Int(std::numeric_limits<int64_t>::min()).Int(0).Raw(R"({"x":[1]})").EndArray();
            }),
            R"([-9223372036854775808,0,{"x":[1]}])");
}

}  // namespace
}  // namespace opscope
