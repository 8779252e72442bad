#include "core/json_field.h"

#include <limits>

namespace opscope {

using nlohmann::json;

StatusOr<json> ParseJsonText(std::string_view text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return InvalidArgumentError(file + ": not valid JSON (the file is empty)");
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte counts from 1; past the end means the text stopped short.
    const size_t at = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') ++line, column = 1;
      else ++column;
    }
    std::string why = "it ends too early";
    if (at < text.size()) {
      const unsigned char c = static_cast<unsigned char>(text[at]);
      why = c >= 0x20 && c < 0x7f ? std::string("unexpected '") + static_cast<char>(c) + "'"
                                  : "an unexpected byte " + std::to_string(c);
    }
    return InvalidArgumentError(file + ": not valid JSON (line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " + why + ")");
  } catch (const json::exception& e) {
    // Parsed, but not representable: a number past double's range (out_of_range
    // 406, found by capture_fuzzer) is not a parse_error.
    return InvalidArgumentError(file + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

const char* JsonKindName(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "another kind of value";
  }
}

JsonField JsonFields::Root(const json& j) {
  if (!j.is_object()) {
    if (status_.ok()) status_ = InvalidArgumentError(file_ + ": expected a JSON object, found " + JsonKindName(j));
    return JsonField(this, nullptr, "", "");
  }
  return JsonField(this, &j, "");
}

JsonField JsonFields::RootArray(const json& j) {
  if (!j.is_array()) {
    if (status_.ok()) status_ = InvalidArgumentError(file_ + ": expected a JSON array, found " + JsonKindName(j));
    return JsonField(this, nullptr, "", "");
  }
  return JsonField(this, &j, "");
}

void JsonFields::Fail(const std::string& path, const std::string& what) {
  if (status_.ok()) status_ = InvalidArgumentError(file_ + ": field " + path + ": " + what);
}

JsonField JsonField::operator[](std::string_view key) const {
  const std::string path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (j_ == nullptr) return JsonField(owner_, nullptr, path, missing_);
  if (!j_->is_object()) {
    owner_->Fail(path_, std::string("expected an object, found ") + JsonKindName(*j_));
    return JsonField(owner_, nullptr, path, "");
  }
  const auto it = j_->find(key);
  if (it == j_->end()) return JsonField(owner_, nullptr, path, path);
  return JsonField(owner_, &*it, path);
}

JsonField JsonField::operator[](size_t index) const {
  const std::string path = path_ + "[" + std::to_string(index) + "]";
  if (j_ == nullptr) return JsonField(owner_, nullptr, path, missing_);
  if (!j_->is_array()) {
    owner_->Fail(path_, std::string("expected an array, found ") + JsonKindName(*j_));
    return JsonField(owner_, nullptr, path, "");
  }
  if (index >= j_->size()) {
    return JsonField(owner_, nullptr, path, path);
  }
  return JsonField(owner_, &(*j_)[index], path);
}

const json* JsonField::Want(bool (*is)(const json&), const char* want) const {
  if (j_ == nullptr) {
    // Below a value of the wrong kind the error is already recorded.
    if (!missing_.empty()) owner_->Fail(missing_, std::string("missing (expected ") + want + ")");
    return nullptr;
  }
  if (!is(*j_)) {
    owner_->Fail(path_, std::string("expected ") + want + ", found " + JsonKindName(*j_));
    return nullptr;
  }
  return j_;
}

std::string JsonField::String() const {
  const json* j = Want([](const json& v) { return v.is_string(); }, "a string");
  return j ? j->get<std::string>() : std::string();
}

int64_t JsonField::Int() const {
  const json* j = Want([](const json& v) { return v.is_number_integer(); }, "an integer");
  if (!j) return 0;
  if (j->is_number_unsigned() && j->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    owner_->Fail(path_, "expected an integer below 2^63");
    return 0;
  }
  return j->get<int64_t>();
}

int JsonField::IntInRange(int64_t lo, int64_t hi) const {
  const json* j = Want([](const json& v) { return v.is_number_integer(); }, "an integer");
  if (!j) return 0;
  const bool big = j->is_number_unsigned() && j->get<uint64_t>() > static_cast<uint64_t>(hi);
  const int64_t v = big ? hi : j->get<int64_t>();
  if (big || v < lo || v > hi) {
    owner_->Fail(path_, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", found " +
                            j->dump());
    return 0;
  }
  return static_cast<int>(v);
}

uint64_t JsonField::Uint() const {
  const json* j = Want([](const json& v) { return v.is_number_integer(); }, "an integer >= 0");
  if (!j) return 0;
  if (j->is_number_unsigned()) return j->get<uint64_t>();
  if (j->get<int64_t>() < 0) {
    owner_->Fail(path_, "expected an integer >= 0, found " + j->dump());
    return 0;
  }
  return static_cast<uint64_t>(j->get<int64_t>());
}

double JsonField::Number() const {
  const json* j = Want([](const json& v) { return v.is_number(); }, "a number");
  return j ? j->get<double>() : 0;
}

bool JsonField::Bool() const {
  const json* j = Want([](const json& v) { return v.is_boolean(); }, "true or false");
  return j ? j->get<bool>() : false;
}

size_t JsonField::Size() const {
  const json* j = Want([](const json& v) { return v.is_array(); }, "an array");
  return j ? j->size() : 0;
}

bool JsonField::Object() const { return Want([](const json& v) { return v.is_object(); }, "an object") != nullptr; }

std::vector<std::string> JsonField::Strings() const {
  std::vector<std::string> out;
  const size_t n = Size();
  for (size_t i = 0; i < n; ++i) out.push_back((*this)[i].String());
  return out;
}

const json& JsonField::raw() const {
  static const json null_value;
  return j_ ? *j_ : null_value;
}

std::string StringMember(const json& j, std::string_view key, std::string fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

int64_t IntMember(const json& j, std::string_view key, int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

}  // namespace opscope
