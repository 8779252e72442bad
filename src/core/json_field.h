// File: core/json_field.h
// Reading a JSON file that opscope wrote, so that a malformed file or a
// missing or mistyped field is one line naming the file and the field's path
// ("out/capture.json: field tasks[3].kernel: expected a string, found a
// number"), never a json exception's text.
//
//   OPSCOPE_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonText(text, file));
//   JsonFields f(file);
//   const JsonField root = f.Root(j);
//   int64_t streams = root["streams"].Int();
//   for (size_t i = 0; i < root["tasks"].Size(); ++i) kernels.push_back(root["tasks"][i]["kernel"].String());
//   OPSCOPE_RETURN_IF_ERROR(f.status());  // the first wrong field, if any
//
// A wrong field reads as an empty value (0, "", false, size 0) and only the
// first one is kept, so the reading code stays straight; check status()
// before acting on what was read. A missing member is an error only when a
// value is read from it: Present() asks about an optional one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "opscope/status.h"

namespace opscope {

// The whole text as JSON; "FILE: not valid JSON (line L, column C: what)".
StatusOr<nlohmann::json> ParseJsonText(std::string_view text, const std::string& file);

class JsonField;

// Owns the file's name and the first error found while reading it.
class JsonFields {
 public:
  explicit JsonFields(std::string file) : file_(std::move(file)) {}
  JsonFields(const JsonFields&) = delete;
  JsonFields& operator=(const JsonFields&) = delete;

  // The document itself, which must be an object.
  JsonField Root(const nlohmann::json& j);
  // The same for a document that is an array (an onnxruntime profile):
  // its elements' paths read "[3].name".
  JsonField RootArray(const nlohmann::json& j);
  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  const std::string& file() const { return file_; }
  // Records an error of the caller's own about the field at `path`
  // (a value out of range, say); the first error is kept.
  void Fail(const std::string& path, const std::string& what);

 private:
  std::string file_;
  Status status_;
};

// One value of the document, by its path; a missing one is a null pointer.
class JsonField {
 public:
  JsonField operator[](std::string_view key) const;  // a member of an object
  JsonField operator[](size_t index) const;          // an element of an array

  // Present and not null: for fields that an older file may lack or that are
  // null when unknown. Never an error.
  bool Present() const { return j_ != nullptr && !j_->is_null(); }
  bool Has(std::string_view key) const { return j_ != nullptr && j_->is_object() && j_->contains(key); }

  std::string String() const;
  int64_t Int() const;
  int IntInRange(int64_t lo, int64_t hi) const;
  uint64_t Uint() const;
  double Number() const;
  bool Bool() const;
  // The size of an array (an error and 0 otherwise).
  size_t Size() const;
  std::vector<std::string> Strings() const;
  // Whether this is an object (an error otherwise): for a field only checked.
  bool Object() const;

  // Records an error of the caller's own about this field (a value out of range).
  void Fail(const std::string& what) const { owner_->Fail(path_, what); }
  const std::string& path() const { return path_; }
  // The value as it is, for code that hands it on; null when missing.
  const nlohmann::json& raw() const;

 private:
  friend class JsonFields;
  JsonField(JsonFields* owner, const nlohmann::json* j, std::string path, std::string missing = "")
      : owner_(owner), j_(j), path_(std::move(path)), missing_(std::move(missing)) {}
  // j_ when it is of the kind `want` is; else records why not and returns null.
  const nlohmann::json* Want(bool (*is)(const nlohmann::json&), const char* want) const;

  JsonFields* owner_;
  const nlohmann::json* j_;  // null: missing, or below a value of the wrong kind
  std::string path_;
  std::string missing_;      // the first missing member on the way here ("" when none is)
};

// "an object", "a string", "a number", ... for messages.
const char* JsonKindName(const nlohmann::json& j);

// j[key] when `j` is an object holding it with that type, else `fallback`:
// for a quick look at a file that may not be ours (nlohmann's value() throws
// when the member is there with another type: "schema": 5).
std::string StringMember(const nlohmann::json& j, std::string_view key, std::string fallback = "");
int64_t IntMember(const nlohmann::json& j, std::string_view key, int64_t fallback);

}  // namespace opscope
