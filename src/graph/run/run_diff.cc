#include "graph/run/run_diff.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "core/cpu_share.h"
#include "core/text_format.h"
#include "graph/run/engine_diff.h"
#include "graph/run/summary.h"

namespace opscope::graph {
namespace {

// Other processes' share of all cores above which two runs' times are not
// compared: a build on one core of two is 50%, the tools' own helpers a few.
constexpr double kLoadedShare = 0.25;

using nlohmann::json;

constexpr int kTopTasks = 10;

// null when there is no percentage to give (growth from nothing).
json ChangePct(double base, double now) {
  if (base > 0) return 100.0 * (now - base) / base;
  return now > 0 ? json(nullptr) : json(0.0);
}

std::map<std::string, int64_t> OpMix(const Graph& g) {
  std::map<std::string, int64_t> mix;
  for (const Node& n : g.nodes()) ++mix[n.op_type];
  return mix;
}

// Compiled nodes standing for several framework nodes: name -> "op_type <- a + b + c".
std::map<std::string, std::string> Fusions(const Model& m) {
  std::map<std::string, std::string> out;
  for (const Node& c : m.compiled.nodes()) {
    if (c.fused_from.size() < 2) continue;
    std::string parts = c.op_type + " <-";
    for (int64_t id : c.fused_from) {
      const Node* f = m.framework.FindNode(id);
      parts += " " + (f ? f->op_type : std::to_string(id));
    }
    out[c.name] = parts;
  }
  return out;
}

// Names in one graph and not the other: {"added": [...], "removed": [...]},
// each sorted. Nodes are matched by name, as the times are.
json NodeSets(const Graph& base, const Graph& now) {
  std::set<std::string> b, n;
  for (const Node& x : base.nodes()) b.insert(x.name);
  for (const Node& x : now.nodes()) n.insert(x.name);
  json added = json::array(), removed = json::array();
  for (const std::string& x : n) {
    if (!b.count(x)) added.push_back(x);
  }
  for (const std::string& x : b) {
    if (!n.count(x)) removed.push_back(x);
  }
  return {{"added", added}, {"removed", removed}};
}

std::string Join(const std::vector<std::string>& v) { return v.empty() ? "none" : JoinStrings(v, ","); }

// Settings that make two runs' times incomparable, when they differ.
json ChangedSettings(const CapturedRun& b, const CapturedRun& n) {
  json out = json::array();
  auto add = [&](const char* setting, const json& bv, const json& nv) {
    if (bv != nv) out.push_back({{"setting", setting}, {"base", bv}, {"new", nv}});
  };
  add("device", b.device, n.device);
  add("streams", b.schedule.compute_streams, n.schedule.compute_streams);
  add("iterations", b.iterations, n.iterations);
  add("warmup", b.warmup, n.warmup);
  add("seed", b.seed, n.seed);
  add("plugins", Join(b.plugins), Join(n.plugins));
  // The same plugin path rebuilt is another version of its kernels.
  if (b.plugins == n.plugins && !b.plugin_fingerprints.empty() && !n.plugin_fingerprints.empty()) {
    add("plugin versions", Join(b.plugin_fingerprints), Join(n.plugin_fingerprints));
  }
  return out;
}

// How the two runs' compilers differed, from the passes each recorded (see
// run_diff.h); null when they compiled alike, and for another engine's run,
// which records no passes of ours.
json CompilerChange(const CapturedRun& b, const CapturedRun& n) {
  if (b.source || n.source) return nullptr;
  auto names = [](const CapturedRun& r) {
    std::vector<std::string> v;
    for (const PassResult& p : r.passes) v.push_back(p.name);
    return v;
  };
  auto missing = [](const std::vector<std::string>& from, const std::vector<std::string>& in) {
    json out = json::array();
    for (const std::string& x : from) {
      if (std::find(in.begin(), in.end(), x) == in.end()) out.push_back(x);
    }
    return out;
  };
  const std::vector<std::string> nb = names(b), nn = names(n);
  json j = {{"left_out_by_new", missing(nb, nn)}, {"added_by_new", missing(nn, nb)}, {"first_difference", nullptr}};
  std::vector<std::string> words;
  auto list = [](const json& a) {
    std::vector<std::string> v;
    for (const json& x : a) v.push_back(x.get<std::string>());
    return JoinStrings(v, ", ");
  };
  if (!j["left_out_by_new"].empty()) words.push_back("the new run was compiled without " + list(j["left_out_by_new"]));
  if (!j["added_by_new"].empty()) words.push_back("the base run was compiled without " + list(j["added_by_new"]));
  // With the same passes, the first whose result differs is where the
  // compilers part (another opscope's version of that pass). With other
  // passes, every later count differs as a consequence: not reported.
  if (words.empty()) {
    for (size_t i = 0; i < b.passes.size() && i < n.passes.size(); ++i) {
      const PassResult &pb = b.passes[i], &pn = n.passes[i];
      if (pb.nodes_after == pn.nodes_after) continue;
      j["first_difference"] = {{"pass", pb.name}, {"index", pb.index}, {"base_nodes_after", pb.nodes_after},
                               {"new_nodes_after", pn.nodes_after}};
      words.push_back("pass " + std::to_string(pb.index) + " (" + pb.name + ") left " +
                      std::to_string(pb.nodes_after) + " nodes in the base run, " + std::to_string(pn.nodes_after) +
                      " in the new: another version of the compiler");
      break;
    }
  }
  if (words.empty()) return nullptr;
  j["summary"] = JoinStrings(words, "; ");
  return j;
}

// `loaded`: other processes took enough of the machine during either run
// that a time change is theirs as likely as the model's: within the noise.
json Compare(const Spread& b, const Spread& n, double threshold_pct, bool noise_known, bool loaded) {
  std::string verdict = Judge(b, n, threshold_pct, noise_known);
  if (loaded && (verdict == "slower" || verdict == "faster")) verdict = "within noise";
  return {{"base", SpreadJson(b)},
          {"new", SpreadJson(n)},
          {"change_us", n.median_us - b.median_us},
          {"change_pct", ChangePct(b.median_us, n.median_us)},
          {"verdict", verdict}};
}

// Compiled node name -> per-iteration total of its tasks.
std::map<std::string, Spread> NodeTimes(const CapturedRun& run, const RunTiming& t) {
  std::map<std::string, Spread> out;
  for (const auto& [id, spread] : t.nodes) {
    if (const Node* n = run.model.compiled.FindNode(id)) out[n->name] = spread;
  }
  return out;
}

template <typename Key>
json CompareAll(const std::map<Key, Spread>& b, const std::map<Key, Spread>& n, const char* key,
                double threshold_pct, bool noise_known, bool loaded) {
  std::set<Key> keys;
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& [k, v] : n) keys.insert(k);
  json out = json::array();
  for (const Key& k : keys) {
    const auto bi = b.find(k), ni = n.find(k);
    json e = Compare(bi == b.end() ? Spread{} : bi->second, ni == n.end() ? Spread{} : ni->second, threshold_pct,
                     noise_known, loaded);
    e[key] = k;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::string Judge(const Spread& b, const Spread& n, double threshold_pct, bool noise_known) {
  if (b.median_us <= 0 && n.median_us <= 0) return "unchanged";
  if (b.median_us <= 0) return "new";
  if (n.median_us <= 0) return "gone";
  const double pct = 100.0 * (n.median_us - b.median_us) / b.median_us;
  if (pct > -threshold_pct && pct < threshold_pct) return "unchanged";
  if (!noise_known) return pct > 0 ? "slower" : "faster";
  // Beyond the noise when the middle halves of the two runs' iterations do
  // not overlap: at least three quarters of one run's iterations then lie
  // beyond three quarters of the other's, a shift that the scatter inside
  // either run does not explain. The larger IQR alone would ignore the
  // narrower side, and the median alone takes one slow iteration for a trend.
  const bool apart = pct > 0 ? n.q1_us > b.q3_us : n.q3_us < b.q1_us;
  if (!apart) return "within noise";
  return pct > 0 ? "slower" : "faster";
}

RunDiff DiffRuns(const CapturedRun& base, const CapturedRun& now, const DiffOptions& o) {
  RunDiff r;
  json& j = r.json;
  j = {{"schema", "opscope.diff/1"}, {"base", base.dir}, {"new", now.dir}};
  j["models"] = {{"same", base.identity.model_fingerprint == now.identity.model_fingerprint},
                 {"base", base.identity.model_fingerprint},
                 {"new", now.identity.model_fingerprint}};
  j["changed_settings"] = ChangedSettings(base, now);
  j["compiler"] = CompilerChange(base, now);
  json reasons = json::array();
  json nodes = json::object();
  for (auto [layer, b, n] : {std::tuple{"framework", &base.model.framework, &now.model.framework},
                             std::tuple{"compiled", &base.model.compiled, &now.model.compiled}}) {
    const int64_t nb = b->nodes().size(), nn = n->nodes().size();
    nodes[layer] = {{"base", nb}, {"new", nn}, {"change", nn - nb}};
    nodes[layer].update(NodeSets(*b, *n));
    // Two engines' compiled graphs differ by design: only the framework count can regress then.
    const bool engines_differ = EngineOf(base) != EngineOf(now);
    if (std::llabs(nn - nb) > o.threshold_nodes && !(engines_differ && std::string(layer) == "compiled")) {
      reasons.push_back(std::string(layer) + " nodes " + std::to_string(nb) + " -> " + std::to_string(nn));
    }
  }
  j["nodes"] = nodes;
  json mix = json::array();
  std::map<std::string, int64_t> mb = OpMix(base.model.compiled), mn = OpMix(now.model.compiled);
  std::set<std::string> types;
  for (const auto& [t, c] : mb) types.insert(t);
  for (const auto& [t, c] : mn) types.insert(t);
  for (const std::string& t : types) {
    const int64_t b = mb.count(t) ? mb[t] : 0, n = mn.count(t) ? mn[t] : 0;
    if (b != n) mix.push_back({{"op_type", t}, {"base", b}, {"new", n}});
  }
  j["op_type_mix"] = mix;

  const RunTiming tb = TimingOf(base), tn = TimingOf(now);
  const bool noise_known = tb.iterations >= 2 && tn.iterations >= 2;
  j["noise"] = {{"known", noise_known},
                {"base_iterations", tb.iterations},
                {"new_iterations", tn.iterations},
                {"rule", noise_known ? "a change beyond the threshold counts only when the runs' [q1, q3] intervals "
                                       "do not overlap"
                                     : "unknown (a run timed one iteration): the threshold alone decides"}};
  // The machine's own noise: what other processes took while each run was
  // timed. Above a quarter of all cores on either side, no time is judged.
  // A run too short for the kernel's ticks has no share (core/cpu_share.h).
  const bool loaded = base.other_cpu_share > kLoadedShare || now.other_cpu_share > kLoadedShare;
  auto share = [](double s) { return s >= 0 ? json(s) : json(nullptr); };
  j["noise"]["other_cpu_share"] = {{"base", share(base.other_cpu_share)}, {"new", share(now.other_cpu_share)}};
  j["noise"]["machine_loaded"] = loaded;
  auto percent = [](double s) { return s >= 0 ? std::to_string(static_cast<int>(std::lround(100 * s))) + "%" : std::string("an unknown share"); };
  if (loaded) {
    j["noise"]["rule"] = "other processes took " + percent(base.other_cpu_share) +
                         " of the machine's CPU during the base run and " + percent(now.other_cpu_share) +
                         " during the new one: a time change cannot be told from theirs; no time is called a regression";
  } else if (base.other_cpu_share < 0 || now.other_cpu_share < 0) {
    const char* side = base.other_cpu_share >= 0 ? "the new run" : now.other_cpu_share >= 0 ? "the base run" : "either run";
    j["noise"]["load_unknown"] = std::string("other processes' share of the CPU is not known for ") + side +
                                 ": a run timed for under " + std::to_string(kMinTicksPerCore * 10) +
                                 " ms is too short for the kernel's 10 ms ticks (or the run predates the "
                                 "measure); more --iterations measure it";
  }
  auto held = [](int64_t b) { return b >= 0 ? json(b) : json(nullptr); };
  j["tensor_memory"] = {{"base", held(base.peak_tensor_bytes)}, {"new", held(now.peak_tensor_bytes)}};
  const double th = o.threshold_time_pct;
  j["span"] = Compare(tb.span, tn.span, th, noise_known, loaded);
  j["total_task"] = Compare(tb.total_task, tn.total_task, th, noise_known, loaded);
  // Two engines' times compare the engines: which is faster is the answer
  // sought, not a regression of either (the compiled node count likewise).
  const bool engines = EngineOf(base) != EngineOf(now);
  for (const auto& [what, key] : {std::pair{"span", "span"}, std::pair{"total task time", "total_task"}}) {
    if (engines || j[key]["verdict"] != "slower") continue;
    char s[160];
    std::snprintf(s, sizeof(s), "%s %+.1f%% (median %.1f -> %.1f us, beyond the noise)", what,
                  j[key]["change_pct"].get<double>(), j[key]["base"]["median_us"].get<double>(),
                  j[key]["new"]["median_us"].get<double>());
    reasons.push_back(s);
  }
  j["op_types"] = CompareAll(tb.op_types, tn.op_types, "op_type", th, noise_known, loaded);
  if (engines) {
    // Across engines the compiled nodes' names differ ("..._output_0_nchwc"
    // against the Conv's own): nodes are paired by the framework node each
    // is built around, and named as in the new run (the base's beside it).
    const auto b = NodeTimesByFramework(base, tb), n = NodeTimesByFramework(now, tn);
    std::set<std::string> keys;
    for (const auto& [k, v] : b) keys.insert(k);
    for (const auto& [k, v] : n) keys.insert(k);
    json rows = json::array();
    for (const std::string& k : keys) {
      const auto bi = b.find(k), ni = n.find(k);
      json e = Compare(bi == b.end() ? Spread{} : bi->second.second, ni == n.end() ? Spread{} : ni->second.second, th,
                       noise_known, loaded);
      e["node"] = ni != n.end() ? ni->second.first : bi->second.first;
      if (bi != b.end() && ni != n.end() && bi->second.first != ni->second.first) e["base_node"] = bi->second.first;
      e["framework"] = k;
      rows.push_back(std::move(e));
    }
    j["node_times"] = std::move(rows);
  } else {
    j["node_times"] = CompareAll(NodeTimes(base, tb), NodeTimes(now, tn), "node", th, noise_known, loaded);
  }

  // The fields of diffs before iterations were kept, from the same medians.
  const Summary sn = [&] {
    Summary s = Summarize(now.schedule, kTopTasks);
    AddTiming(s, now.schedule, tn, kTopTasks);
    return s;
  }();
  json times = json::array();
  for (const json& e : j["op_types"]) {
    times.push_back({{"op_type", e["op_type"]}, {"base_us", e["base"]["median_us"]}, {"new_us", e["new"]["median_us"]},
                     {"change_pct", e["change_pct"]}});
  }
  j["op_type_time"] = times;
  j["total_task_us"] = {{"base", tb.total_task.median_us}, {"new", tn.total_task.median_us},
                        {"change_pct", j["total_task"]["change_pct"]}};
  // Top tasks of the new run, matched by name to the base run's tasks
  // (across engines, by the framework node each task's node is built around).
  auto match_key = [&](const CapturedRun& run, int64_t node_id, const std::string& name) {
    const Node* n = engines && node_id >= 0 ? run.model.compiled.FindNode(node_id) : nullptr;
    const Node* principal = n != nullptr ? PrincipalFrameworkNode(run.model, *n) : nullptr;
    return principal != nullptr ? principal->name : name;
  };
  std::map<std::string, double> base_by_name;
  for (const auto& t : base.schedule.tasks) {
    const size_t id = static_cast<size_t>(t.desc.task_id);
    if (id >= tb.tasks.size()) continue;
    base_by_name[match_key(base, t.desc.op_node_id, t.node_name.empty() ? t.desc.label : t.node_name)] =
        tb.tasks[id].median_us;
  }
  json top = json::array();
  for (const TopTask& t : sn.top_tasks) {
    json e = {{"name", t.name}, {"op_type", t.op_type}, {"new_us", t.duration_us}};
    auto it = base_by_name.find(match_key(now, t.node_id, t.name));
    e["base_us"] = it == base_by_name.end() ? json(nullptr) : json(it->second);
    if (it != base_by_name.end()) e["change_pct"] = ChangePct(it->second, t.duration_us);
    top.push_back(std::move(e));
  }
  j["top_tasks"] = top;
  json added = json::array(), removed = json::array(), changed = json::array();
  // By compiled node name: across engines every name differs, and a fusion
  // both made read as added (the page badged onnxruntime's NCHWc Conv+Clip
  // "fusion added" beside opscope's FusedConv); `engines` compares them there.
  const auto fb = engines ? std::map<std::string, std::string>{} : Fusions(base.model);
  const auto fn = engines ? std::map<std::string, std::string>{} : Fusions(now.model);
  for (const auto& [name, what] : fn) {
    auto it = fb.find(name);
    if (it == fb.end()) added.push_back({{"node", name}, {"fusion", what}});
    else if (it->second != what) changed.push_back({{"node", name}, {"base", it->second}, {"new", what}});
  }
  for (const auto& [name, what] : fb) {
    if (!fn.count(name)) removed.push_back({{"node", name}, {"fusion", what}});
  }
  j["fusions"] = {{"added", added}, {"removed", removed}, {"changed", changed}};
  // Two engines name and build their compiled nodes apart: compared through the framework graph instead.
  if (engines) {
    j["engines"] = {{"base", EngineOf(base)},
                    {"new", EngineOf(now)},
                    {"fusions", EngineFusions(base, tb, now, tn)},
                    {"layouts", {{"base", LayoutChanges(base, tb)}, {"new", LayoutChanges(now, tn)}}},
                    {"framework_op_types", CompareAll(FrameworkOpTypeTimes(base), FrameworkOpTypeTimes(now), "op_type",
                                                      th, noise_known, loaded)}};
  }
  j["thresholds"] = {{"time_pct", o.threshold_time_pct}, {"nodes", o.threshold_nodes}};
  j["regressions"] = reasons;
  r.regressed = !reasons.empty();
  j["passed"] = !r.regressed;
  return r;
}

}  // namespace opscope::graph
