// core/json_field.h: a file that is not JSON, or a field missing or of the
// wrong kind, is one line naming the file and the field's path.
#include "core/json_field.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace opscope {
namespace {

using nlohmann::json;

TEST(JsonField, MissingAndMistypedFieldsAreNamedByTheirPath) {
  const json doc = json::parse(R"({"tasks": [{"kernel": "k", "raw_ns": [1, 2]}, {"kernel": 5}], "n": -1,
                                   "peaks": null})");
  {
    JsonFields f("x/capture.json");
    const JsonField root = f.Root(doc);
    EXPECT_EQ(root["tasks"][0]["kernel"].String(), "k");
    EXPECT_EQ(root["tasks"][0]["raw_ns"][1].Int(), 2);
    EXPECT_FALSE(root["peaks"].Present());
    EXPECT_FALSE(root["absent"]["deeper"].Present());
    EXPECT_TRUE(f.ok()) << "asking whether an optional field is there is no error";
    EXPECT_EQ(root["tasks"][1]["kernel"].String(), "");
    EXPECT_EQ(f.status().ToString(), "x/capture.json: field tasks[1].kernel: expected a string, found an integer");
    root["streams"].Int();
    EXPECT_NE(f.status().ToString().find("tasks[1]"), std::string::npos) << "the first error is kept";
  }
  const auto first_error = [&](auto read) {
    JsonFields f("f.json");
    read(f.Root(doc));
    return f.status().ToString();
  };
  EXPECT_EQ(first_error([](JsonField r) { r["model"]["path"].String(); }),
            "f.json: field model: missing (expected a string)");
  EXPECT_EQ(first_error([](JsonField r) { r["tasks"][0]["raw_ns"][2].Int(); }),
            "f.json: field tasks[0].raw_ns[2]: missing (expected an integer)");
  EXPECT_EQ(first_error([](JsonField r) { r["n"].Uint(); }), "f.json: field n: expected an integer >= 0, found -1");
  EXPECT_EQ(first_error([](JsonField r) { r["n"].IntInRange(1, 9); }),
            "f.json: field n: expected an integer in 1..9, found -1");
  EXPECT_EQ(first_error([](JsonField r) { r["n"]["x"].String(); }),
            "f.json: field n: expected an object, found an integer");
  JsonFields top("a.json");
  top.Root(json::array());
  EXPECT_EQ(top.status().ToString(), "a.json: expected a JSON object, found an array");
}

TEST(JsonField, ParseErrorsSayWhereInOneLine) {
  EXPECT_EQ(ParseJsonText("", "e.json").status().ToString(), "e.json: not valid JSON (the file is empty)");
  EXPECT_EQ(ParseJsonText("{\"a\": 1,\n \"b\": }", "e.json").status().ToString(),
            "e.json: not valid JSON (line 2, column 7: unexpected '}')");
  EXPECT_EQ(ParseJsonText("{\"a\": [1, 2", "e.json").status().ToString(),
            "e.json: not valid JSON (line 1, column 12: it ends too early)");
  EXPECT_TRUE(ParseJsonText("{\"a\": 1}", "e.json").ok());
}

}  // namespace
}  // namespace opscope
