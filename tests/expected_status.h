// File: expected_status.h
//
// The expected outcome of every case of a data-driven suite (ONNX's node
// tests, ONNX's model tests), kept in a committed text file, so that a case
// that changes outcome fails the suite by name: a kernel that starts returning
// Unimplemented turns "pass" into "skip" and is caught, and a case that starts
// passing asks for the list to be updated.
//
// The file: '#' lines and blank lines are comments; every other line is
//   <case name> pass
//   <case name> skip <reason, to the end of the line>
// (a failing case has no entry: failures are never expected)
// sorted by name. Setting OPSCOPE_UPDATE_EXPECTED=1 rewrites it from what the
// suite observed (keeping its leading comment block); failures are not
// written, so they stay failures.
//
//   ExpectedList expected;
//   ASSERT_TRUE(expected.Load(path, &error)) << error;
//   for (...) observed[name] = {"pass", ""};
//   for (const auto& line : expected.Differences(observed, /*complete=*/true)) ADD_FAILURE() << line;
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace opscope::testing {

struct CaseOutcome {
  std::string status;  // "pass" | "skip" | "fail"
  std::string reason;  // for "skip": why; for "fail": the first failure line (not stored)
};

inline bool UpdateExpectedRequested() {
  const char* v = std::getenv("OPSCOPE_UPDATE_EXPECTED");
  return v && *v && std::string(v) != "0";
}

class ExpectedList {
 public:
  // False with `error` set when the file is missing or a line is malformed.
  bool Load(const std::filesystem::path& path, std::string* error) {
    path_ = path;
    std::ifstream f(path);
    if (!f) {
      *error = path.string() + ": cannot open the expected-status list (regenerate it with OPSCOPE_UPDATE_EXPECTED=1)";
      return false;
    }
    std::string line;
    bool in_header = true;
    for (int number = 1; std::getline(f, line); ++number) {
      if (line.empty() || line[0] == '#') {
        if (in_header) header_ += line + "\n";
        continue;
      }
      in_header = false;
      std::istringstream is(line);
      std::string name, status;
      is >> name >> status;
      std::string reason;
      std::getline(is >> std::ws, reason);
      if (status != "pass" && status != "skip") {
        *error = path.string() + ":" + std::to_string(number) + ": '" + line +
                 "': expected '<name> pass' or '<name> skip <reason>'";
        return false;
      }
      if ((status == "skip") == reason.empty()) {
        *error = path.string() + ":" + std::to_string(number) + ": '" + line +
                 "': a skip needs a reason, a pass takes none";
        return false;
      }
      if (!entries_.emplace(name, CaseOutcome{status, reason}).second) {
        *error = path.string() + ":" + std::to_string(number) + ": '" + name + "' is listed twice";
        return false;
      }
    }
    return true;
  }

  // One line per case whose outcome differs from the list. `complete`: every
  // case of the data ran (no filter), so a listed case that did not run is a
  // difference too.
  std::vector<std::string> Differences(const std::map<std::string, CaseOutcome>& observed, bool complete) const {
    std::vector<std::string> out;
    const std::string file = path_.filename().string();
    const std::string how = "update " + file + " (run with OPSCOPE_UPDATE_EXPECTED=1 and review the diff)";
    for (const auto& [name, got] : observed) {
      auto it = entries_.find(name);
      if (it == entries_.end()) {
        out.push_back(name + ": not in " + file + "; it ran with status " + Describe(got) + ": " + how);
        continue;
      }
      const CaseOutcome& want = it->second;
      if (want.status == got.status && want.reason == got.reason) continue;
      std::string line = name + ": expected " + Describe(want) + ", got " + Describe(got);
      if (got.status == "pass") line += ": it passes now, " + how;
      else if (got.status == "skip") line += " (if that is intended, " + how + ")";
      out.push_back(line);
    }
    if (complete) {
      for (const auto& [name, want] : entries_) {
        if (!observed.count(name)) out.push_back(name + ": listed in " + file + " (" + Describe(want) + ") but not found in the test data");
      }
    }
    return out;
  }

  // Rewrites the file (the one given to Load, even if it failed): its leading
  // comment block, then every observed pass and skip, sorted. Returns "" or
  // what went wrong.
  // `default_header` is used when the file had none (or did not exist).
  std::string Write(const std::map<std::string, CaseOutcome>& observed, const std::string& default_header) const {
    const std::filesystem::path tmp = path_.string() + ".tmp";
    {
      std::ofstream f(tmp);
      f << (header_.empty() ? default_header : header_);
      for (const auto& [name, got] : observed) {
        if (got.status == "pass") f << name << " pass\n";
        else if (got.status == "skip") f << name << " skip " << got.reason << "\n";
      }
      if (!f) return tmp.string() + ": cannot write";
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path_, ec);
    return ec ? path_.string() + ": " + ec.message() : "";
  }

  const std::map<std::string, CaseOutcome>& entries() const { return entries_; }

  static std::string Describe(const CaseOutcome& o) {
    return o.reason.empty() ? o.status : o.status + " (" + o.reason + ")";
  }

 private:
  std::filesystem::path path_;
  std::string header_;
  std::map<std::string, CaseOutcome> entries_;
};

}  // namespace opscope::testing
