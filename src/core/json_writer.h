// File: core/json_writer.h
// A JSON text written as it goes, for files too large to build as a
// document first: a 100,000-node model's graph.json is 100 MB of text, and
// its nlohmann tree took several times that in memory and most of the time
// spent writing it. Strings are written as JsonText writes them (invalid
// UTF-8 becomes U+FFFD); numbers parse back to the same double.
//
//   std::string text;
//   JsonWriter w(text);
//   w.BeginObject().Key("name").String(n.name).Key("inputs").BeginArray();
//   for (int64_t id : ids) w.Int(id);
//   w.EndArray().EndObject();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // An object's member name; the next call writes its value.
  JsonWriter& Key(std::string_view name);

  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  // Non-finite numbers, which JSON has not, are written as null.
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // A value that is already JSON text (a small part made by nlohmann).
  JsonWriter& Raw(std::string_view json_text);

 private:
  JsonWriter& Open(char c);
  JsonWriter& Close(char c);
  void BeforeValue();

  std::string& out_;
  std::vector<bool> has_member_;  // per open container: something written in it
  bool after_key_ = false;
};

// `s` as a JSON string body (no quotes), appended to `out`.
void AppendJsonEscaped(std::string& out, std::string_view s);

}  // namespace opscope
