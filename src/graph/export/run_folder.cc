#include "graph/export/run_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>
#include <regex>
#include <tuple>
#include <vector>

#include "core/file_util.h"
#include "core/json_field.h"
#include "graph/export/graph_json.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kPassesDir[] = "passes";

// What a reader of one file finds at the places an identity can be.
struct Found {
  std::optional<std::string> schema;
  // Per place ("run", "otherData.run"): the kind of value seen, and its fields.
  struct Place {
    std::string kind;  // "" not seen; else JsonKindName-like words
    std::optional<std::string> id, fingerprint;
    std::string id_kind, fingerprint_kind;
    bool closed = false;
  };
  Place run, other_data_run;
  std::string other_data_kind;
};

// Reads a run file's JSON event by event (no document is built, a trace of a
// million tasks costs no memory), noting the top-level "schema" and the
// identity. Without `whole`, it stops as soon as both are known: trace.json
// holds them in its first lines.
class IdentitySax {
 public:
  using string_t = json::string_t;
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using binary_t = json::binary_t;

  explicit IdentitySax(bool whole) : whole_(whole) {}

  bool null() { return Value("null"); }
  bool boolean(bool) { return Value("a boolean"); }
  bool number_integer(number_integer_t) { return Value("an integer"); }
  bool number_unsigned(number_unsigned_t) { return Value("an integer"); }
  bool number_float(number_float_t, const string_t&) { return Value("a number"); }
  bool binary(binary_t&) { return Value("binary data"); }
  bool string(string_t& s) { return Value("a string", &s); }
  bool start_object(std::size_t) {
    Value("an object");
    frames_.push_back({.object = true, .key = {}});
    return true;
  }
  bool key(string_t& k) {
    frames_.back().key = k;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    if (Found::Place* p = PlaceOf(frames_.size())) p->closed = true;
    return whole_ || !Done();
  }
  bool start_array(std::size_t) {
    Value("an array");
    frames_.push_back({.object = false, .key = {}});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_at_ = position;
    return false;
  }

  const Found& found() const { return found_; }
  std::optional<size_t> error_at() const { return error_at_; }

 private:
  struct Frame {
    bool object;
    std::string key;
  };

  // The identity an object stands for when it is the value of the keys of
  // the first `n` open frames: "run", or "otherData" then "run"; else null.
  Found::Place* PlaceOf(size_t n) {
    if (n == 1 && frames_[0].object && frames_[0].key == "run") return &found_.run;
    if (n == 2 && frames_[0].object && frames_[1].object && frames_[0].key == "otherData" &&
        frames_[1].key == "run") {
      return &found_.other_data_run;
    }
    return nullptr;
  }

  // A value (or the start of a container) as the member frames_.back().key.
  bool Value(const char* kind, const string_t* s = nullptr) {
    const size_t depth = frames_.size();
    if (depth == 0 || depth > 3 || !frames_.back().object) return true;
    const std::string& k = frames_.back().key;
    if (depth == 1) {
      if (k == "schema" && s) found_.schema = *s;
      if (k == "run") found_.run.kind = kind;
      if (k == "otherData") found_.other_data_kind = kind;
    } else if (depth == 2 && frames_[0].key == "otherData" && k == "run") {
      found_.other_data_run.kind = kind;
    } else if (Found::Place* place = PlaceOf(depth - 1)) {
      if (k == "id") {
        place->id_kind = kind;
        if (s) place->id = *s;
      } else if (k == "model_fingerprint") {
        place->fingerprint_kind = kind;
        if (s) place->fingerprint = *s;
      }
    }
    return whole_ || !Done();
  }

  bool Done() const {
    return found_.schema && (found_.run.closed || found_.other_data_run.closed);
  }

  bool whole_;
  std::vector<Frame> frames_;
  Found found_;
  std::optional<size_t> error_at_;
};

std::string RerunHint(const std::string& dir) {
  return "run `inspector-cli run MODEL.onnx --output-dir " + dir + "` again";
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

Status NoIdentity(const std::string& path, const std::string& where) {
  return InvalidArgumentError(path + ": no run identity (" + where +
                              "): written by an inspector-cli from before run identities, or not by a run; " +
                              RerunHint(DirOf(path)));
}

StatusOr<std::optional<RunIdentity>> IdentityOf(const Found& f, const std::string& path, bool trace) {
  const Found::Place& p = trace ? f.other_data_run : f.run;
  const std::string where = trace ? "otherData.run" : "run";
  if (trace && !f.other_data_kind.empty() && f.other_data_kind != "an object") {
    return InvalidArgumentError(path + ": field otherData: expected an object, found " + f.other_data_kind);
  }
  if (p.kind.empty()) return std::optional<RunIdentity>();
  if (p.kind != "an object") {
    return InvalidArgumentError(path + ": field " + where + ": expected an object, found " + p.kind);
  }
  for (const auto& [name, value, kind] :
       {std::tuple{"id", &p.id, &p.id_kind}, std::tuple{"model_fingerprint", &p.fingerprint, &p.fingerprint_kind}}) {
    if (kind->empty()) return InvalidArgumentError(path + ": field " + where + "." + name + ": missing (expected a string)");
    if (!*value) return InvalidArgumentError(path + ": field " + where + "." + name + ": expected a string, found " + *kind);
    if ((*value)->empty()) return InvalidArgumentError(path + ": field " + where + "." + name + ": empty");
  }
  return std::optional<RunIdentity>(RunIdentity{.id = *p.id, .model_fingerprint = *p.fingerprint});
}

// roofline.svg: the attributes of its first <svg ...> tag.
StatusOr<std::optional<RunIdentity>> SvgIdentity(const std::string& path, const std::string& svg) {
  const size_t open = svg.find("<svg");
  const size_t close = open == std::string::npos ? open : svg.find('>', open);
  if (close == std::string::npos) return InvalidArgumentError(path + ": no <svg> element");
  const std::string tag = svg.substr(open, close - open);
  const auto attribute = [&](const std::string& name) -> std::optional<std::string> {
    const std::string needle = " " + name + "=\"";
    const size_t at = tag.find(needle);
    if (at == std::string::npos) return std::nullopt;
    const size_t begin = at + needle.size(), end = tag.find('"', begin);
    if (end == std::string::npos) return std::nullopt;
    return tag.substr(begin, end - begin);
  };
  const std::optional<std::string> id = attribute("data-run-id"), fp = attribute("data-model-fingerprint");
  if (!id && !fp) return std::optional<RunIdentity>();
  if (!id || !fp || id->empty() || fp->empty()) {
    return InvalidArgumentError(path + ": the <svg> element needs both data-run-id and data-model-fingerprint, not empty");
  }
  return std::optional<RunIdentity>(RunIdentity{.id = *id, .model_fingerprint = *fp});
}

// The parser's own words for the error at byte `at` (counted from 1): the
// text up to that byte fails at the same place, so ParseJsonText can say
// where. The file is read again only on this path.
Status SyntaxError(const std::string& path, const std::string* text, size_t at) {
  std::string prefix;
  if (text) {
    prefix = text->substr(0, at);
  } else if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    prefix.resize(at);
    prefix.resize(std::fread(prefix.data(), 1, prefix.size(), f));
    std::fclose(f);
  }
  StatusOr<json> j = ParseJsonText(prefix, path);
  return j.ok() ? InvalidArgumentError(path + ": not valid JSON (at byte " + std::to_string(at) + ")") : j.status();
}

// The schema each JSON file of a run has (graph.json: or version 1's, which
// a reader expands the same way, graph_json.h).
bool IsGraphSchema(std::string_view schema) {
  return schema == kGraphSchema || schema == "opscope.graph/2" || schema == "opscope.graph/1";
}

const char* SchemaOf(std::string_view name) {
  if (name == "graph.json") return kGraphSchema;
  if (name == "trace.json") return "opscope.trace/1";
  if (name == "summary.json") return "opscope.summary/1";
  if (name == "capture.json") return "opscope.capture/1";
  return nullptr;
}

bool IsRunFileName(std::string_view name) {
  for (const char* f : kRunFolderFiles) {
    if (name == f) return true;
  }
  // What export --format html writes into a run folder, and diff --output may.
  return name == "report.html" || name == "diff.json";
}

bool IsPassDumpName(std::string_view name) {
  static const std::regex pass(R"([0-9]{2,}_[A-Za-z0-9_.-]+\.json)");
  return std::regex_match(name.begin(), name.end(), pass);
}

// A file of a run folder: never through a link (run_identity.h).
StatusOr<std::string> ReadRunFolderFile(const std::string& path) {
  const fs::path p(path);
  return ReadFolderFile(p.parent_path().empty() ? "." : p.parent_path().string(), p.filename().string());
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A --dump-passes file of ours: a graph.json-schema file with a "pass" member.
bool IsOurPassDump(const std::string& path) {
  StatusOr<std::string> text = ReadRunFolderFile(path);
  if (!text.ok()) return false;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && IsGraphSchema(StringMember(j, "schema")) && j.contains("pass");
}

}  // namespace

StatusOr<std::optional<RunIdentity>> FindRunFileIdentity(const std::string& path, const std::string* text) {
  const std::string name = fs::path(path).filename().string();
  if (name == "roofline.svg") {
    if (text) return SvgIdentity(path, *text);
    OPSCOPE_ASSIGN_OR_RETURN(std::string svg, ReadRunFolderFile(path));
    return SvgIdentity(path, svg);
  }
  IdentitySax sax(/*whole=*/text != nullptr);
  if (text) {
    json::sax_parse(*text, &sax);
  } else {
    // ReadFile's checks (a regular file, not too large) without reading it
    // whole; a run folder's file is never read through a link (run_identity.h).
    OPSCOPE_RETURN_IF_ERROR(InputFile::Open(path, /*follow_links=*/false).status());
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "rb");
    if (!f) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      return ErrnoStatus(err, "cannot open", path);
    }
    json::sax_parse(f, &sax);
    std::fclose(f);
  }
  if (sax.error_at()) return SyntaxError(path, text, *sax.error_at());
  OPSCOPE_ASSIGN_OR_RETURN(std::optional<RunIdentity> id, IdentityOf(sax.found(), path, name == "trace.json"));
  // A run's file is the kind its name says.
  const char* want = SchemaOf(name);
  const auto matches = [&] {
    return name == "graph.json" ? sax.found().schema && IsGraphSchema(*sax.found().schema) : sax.found().schema == want;
  };
  if (id && want && !matches()) {
    return InvalidArgumentError(path + ": field schema: " +
                                (sax.found().schema ? "\"" + *sax.found().schema + "\"" : std::string("missing")) +
                                ", expected \"" + want + "\"");
  }
  return id;
}

StatusOr<RunIdentity> ReadRunFileIdentity(const std::string& path, const std::string* text) {
  OPSCOPE_ASSIGN_OR_RETURN(std::optional<RunIdentity> id, FindRunFileIdentity(path, text));
  if (id) return *std::move(id);
  const std::string name = fs::path(path).filename().string();
  return NoIdentity(path, name == "trace.json"     ? "field otherData.run"
                          : name == "roofline.svg" ? "attributes data-run-id, data-model-fingerprint of <svg>"
                                                   : "field run");
}

StatusOr<RunIdentity> CheckRunFolder(const std::string& dir, const std::map<std::string, const std::string*>& texts) {
  std::optional<std::pair<std::string, RunIdentity>> first;
  for (const char* name : kRunFolderFiles) {
    const std::string path = dir + "/" + name;
    const auto given = texts.find(name);
    std::error_code ec;
    // A link where a run file belongs is read (and refused), not skipped.
    if (given == texts.end() && !fs::exists(fs::symlink_status(path, ec))) continue;
    OPSCOPE_ASSIGN_OR_RETURN(RunIdentity id,
                             ReadRunFileIdentity(path, given == texts.end() ? nullptr : given->second));
    if (!first) {
      first.emplace(name, std::move(id));
      continue;
    }
    const auto& [first_name, first_id] = *first;
    if (id.id != first_id.id) {
      return InvalidArgumentError(dir + ": files of two runs: " + first_name + " is of run " + first_id.id + ", " +
                                  name + " of run " + id.id + " (a run into this folder was interrupted?); " +
                                  RerunHint(dir));
    }
    if (id.model_fingerprint != first_id.model_fingerprint) {
      return InvalidArgumentError(dir + ": " + first_name + " and " + name + " are of run " + id.id +
                                  " but name two models (" + first_id.model_fingerprint + ", " +
                                  id.model_fingerprint + "); " + RerunHint(dir));
    }
  }
  if (!first) return NotFoundError(dir + ": none of graph.json, trace.json, summary.json, capture.json (not an inspector-cli run folder)");
  return first->second;
}

int RemoveRunTempFiles(const std::string& dir) {
  return RemoveStaleTempFiles(dir, IsRunFileName) + RemoveStaleTempFiles(dir + "/" + kPassesDir, IsPassDumpName);
}

Status ClearRunFolder(const std::string& dir) {
  RemoveRunTempFiles(dir);
  // capture.json first: it is what summary, path, export and diff need, so a
  // kill while the others go leaves a folder they refuse.
  for (auto it = std::rbegin(kRunFolderFiles); it != std::rend(kRunFolderFiles); ++it) {
    const std::string path = dir + "/" + *it;
    if (!IsRegularFile(path)) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "cannot remove the previous run's file", path);
    }
  }
  const std::string passes = dir + "/" + kPassesDir;
  std::error_code ec;
  // A passes/ that is a link is not ours to clean (WritePassDump refuses it).
  if (fs::is_symlink(fs::symlink_status(passes, ec))) return Status::Ok();
  for (const auto& entry : fs::directory_iterator(passes, ec)) {
    const std::string path = entry.path().string();
    if (!IsPassDumpName(entry.path().filename().string()) || !IsRegularFile(path) || !IsOurPassDump(path)) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "cannot remove the previous run's file", path);
    }
  }
  // The folder too when the run made it and nothing else is left in it.
  if (fs::is_directory(fs::symlink_status(passes, ec)) && fs::is_empty(passes, ec)) fs::remove(passes, ec);
  return Status::Ok();
}

}  // namespace opscope::graph
