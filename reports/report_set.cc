#include "reports/report_set.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/manager_pairs.h"

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Duration FromSeconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::microseconds(std::llround(s * 1e6)));
}

std::vector<SeriesPoint> SeriesFromJson(const json& j) {
  std::vector<SeriesPoint> out;
  const json& t = j.at("t");
  for (std::size_t i = 0; i < t.size(); ++i) {
    out.push_back({FromSeconds(t[i].get<double>()), j.at("desired")[i].get<int32_t>(),
                   j.at("active")[i].get<int32_t>(), j.at("running")[i].get<int32_t>()});
  }
  return out;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kInternal, "cannot write " + path.string());
  out << text;
  out.close();
  if (!out) return Status(Code::kInternal, "cannot write " + path.string());
  return Status::Ok();
}

Result<json> ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kInvalid, path.string() + ": cannot read the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  json j = json::parse(buf.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(Code::kInvalid, path.string() + ": not JSON");
  return j;
}

}  // namespace

Result<RunResult> RunResultFromJson(const json& j) {
  try {
    RunResult r;
    r.scenario = j.at("scenario").get<std::string>();
    r.file = j.at("file").get<std::string>();
    r.seed = j.at("seed").get<uint64_t>();
    r.tier = j.at("tier").get<std::string>();
    r.mode = j.value("mode", "sim");
    r.manager_kind = j.value("manager_kind", "modern");
    r.manager_from_flag = j.value("manager_from_flag", false);
    r.passed = j.at("verdict") == "PASS";
    r.error = j.at("error").get<std::string>();
    for (const json& e : j.at("expectations")) {
      ExpectationOutcome o;
      o.kind = e.at("kind").get<std::string>();
      o.text = e.at("expectation").is_string() ? e.at("expectation").get<std::string>()
                                               : e.at("expectation").dump();
      o.passed = e.at("passed").get<bool>();
      o.measured = e.at("measured");
      o.detail = e.at("detail").get<std::string>();
      r.expectations.push_back(std::move(o));
    }
    for (const json& c : j.at("convergence")) {
      if (c.at("seconds").is_number()) {
        Duration d = FromSeconds(c.at("seconds").get<double>());
        r.convergence = r.convergence ? std::max(*r.convergence, d) : d;
      } else {
        r.any_not_converged = true;
      }
    }
    for (const auto& [verb, n] : j.at("api_calls").items()) {
      if (verb == "total") {
        r.api_calls_total = n.get<uint64_t>();
      } else {
        r.api_calls[verb] = n.get<uint64_t>();
      }
    }
    r.peak_active = j.at("peak_active").get<int32_t>();
    r.virtual_time = FromSeconds(j.at("virtual_seconds").get<double>());
    r.end_reason = j.at("end_reason").get<std::string>();
    r.changes = j.at("changes").get<uint64_t>();
    r.loop_events = j.at("loop_events").get<uint64_t>();
    const json& m = j.at("manager");
    r.manager_starts = m.at("starts").get<int>();
    r.manager.syncs = m.at("syncs").get<uint64_t>();
    r.manager.sync_errors = m.at("sync_errors").get<uint64_t>();
    r.manager.creates = m.at("creates").get<uint64_t>();
    r.manager.create_errors = m.at("create_errors").get<uint64_t>();
    r.manager.deletes = m.at("deletes").get<uint64_t>();
    r.manager.delete_errors = m.at("delete_errors").get<uint64_t>();
    r.manager.adoptions = m.at("adoptions").get<uint64_t>();
    r.manager.releases = m.at("releases").get<uint64_t>();
    r.manager.status_updates = m.at("status_updates").get<uint64_t>();
    r.manager.relists = m.at("relists").get<uint64_t>();
    r.manager.requeues = m.at("requeues").get<uint64_t>();
    r.trace_digest = std::stoull(j.at("trace").at("digest").get<std::string>(), nullptr, 16);
    r.trace_lines = j.at("trace").at("lines").get<uint64_t>();
    for (const json& e : j.at("events")) {
      const json& ev = e.at("event");
      r.events.push_back({FromSeconds(e.at("at").get<double>()), e.at("kind").get<std::string>(),
                          ev.is_string() ? ev.get<std::string>() : ev.dump()});
    }
    for (const json& c : j.at("controllers")) {
      ControllerOutcome o;
      o.ns = c.at("namespace").get<std::string>();
      o.name = c.at("name").get<std::string>();
      o.peak_active = c.at("peak_active").get<int32_t>();
      const json& f = c.at("final");
      o.exists = f.at("exists").get<bool>();
      o.desired = f.at("desired").get<int32_t>();
      o.active = f.at("active").get<int32_t>();
      o.running = f.at("running").get<int32_t>();
      o.ready = f.at("ready").get<int32_t>();
      o.status_replicas = f.at("status_replicas").get<int32_t>();
      o.series = SeriesFromJson(c.at("series"));
      r.controllers.push_back(std::move(o));
    }
    r.totals = SeriesFromJson(j.at("totals"));
    r.wall_seconds = j.at("wall_seconds").get<double>();
    return r;
  } catch (const json::exception& e) {
    return Status(Code::kInvalid, std::string("not an rcsim run report: ") + e.what());
  }
}

Status WriteReportSet(const std::string& dir, const ReportSet& set, const HtmlOptions& html,
                      const JunitOptions& junit) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status(Code::kInvalid, "cannot create " + dir + ": " + ec.message());
  json runs = json::array();
  std::vector<RunResult> rendered;
  for (std::size_t i = 0; i < set.results.size(); ++i) {
    const RunResult& r = set.results[i];
    json j = i < set.raw.size() ? set.raw[i] : RunResultToJson(r);
    std::string name = JsonReportFileName(r, set.per_seed);
    if (Status st = WriteText(fs::path(dir) / name, j.dump(2) + "\n"); !st.ok()) return st;
    runs.push_back(
        {{"plan_index", set.plan_index.at(i)}, {"scenario", r.scenario}, {"seed", r.seed}, {"report", name}});
    Result<RunResult> back = RunResultFromJson(j);
    if (!back.ok()) return back.status();
    rendered.push_back(std::move(back).value());
  }
  json manifest = {{"format", 1},
                   {"per_seed", set.per_seed},
                   {"shard", set.shard},
                   {"plan_size", set.plan_size},
                   {"wall_seconds", set.wall_seconds},
                   {"runs", runs}};
  if (Status st = WriteText(fs::path(dir) / "runs.json", manifest.dump(2) + "\n"); !st.ok()) return st;
  if (Status st = WriteJunitReport(rendered, set.per_seed, (fs::path(dir) / "junit.xml").string(), junit);
      !st.ok())
    return st;
  // Runs of one scenario and seed on both managers (rcsim run --manager both): their verdicts side by
  // side, written here so that a merge of shards writes them as the unsharded run did.
  if (std::vector<ManagerPair> pairs = PairManagers(rendered); !pairs.empty()) {
    if (Status st = WriteText(fs::path(dir) / "managers.json", ManagerPairsToJson(pairs).dump(2) + "\n");
        !st.ok())
      return st;
  }
  HtmlOptions options = html;
  if (options.wall_seconds < 0) options.wall_seconds = set.wall_seconds;
  return WriteHtmlReport(rendered, (fs::path(dir) / "index.html").string(), options);
}

Result<ReportSet> ReadReportSet(const std::string& dir) {
  Result<json> manifest = ReadJson(fs::path(dir) / "runs.json");
  if (!manifest.ok()) {
    return Status(Code::kInvalid,
                  manifest.status().message() + " (not a report directory of rcsim run --report)");
  }
  ReportSet set;
  try {
    set.per_seed = manifest->at("per_seed").get<bool>();
    set.shard = manifest->at("shard").get<std::string>();
    set.plan_size = manifest->at("plan_size").get<std::size_t>();
    set.wall_seconds = manifest->at("wall_seconds").get<double>();
    for (const json& run : manifest->at("runs")) {
      fs::path p = fs::path(dir) / run.at("report").get<std::string>();
      Result<json> j = ReadJson(p);
      if (!j.ok()) return j.status();
      Result<RunResult> r = RunResultFromJson(*j);
      if (!r.ok()) return Status(Code::kInvalid, p.string() + ": " + r.status().message());
      set.plan_index.push_back(run.at("plan_index").get<std::size_t>());
      set.results.push_back(std::move(r).value());
      set.raw.push_back(std::move(j).value());
    }
  } catch (const json::exception& e) {
    return Status(Code::kInvalid, dir + "/runs.json: " + e.what());
  }
  return set;
}

Result<ReportSet> MergeReportSets(const std::vector<ReportSet>& sets) {
  if (sets.empty()) return Status(Code::kInvalid, "nothing to merge");
  ReportSet out;
  out.per_seed = sets[0].per_seed;
  out.plan_size = sets[0].plan_size;
  std::map<std::size_t, std::pair<const RunResult*, const json*>> by_index;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const ReportSet& set = sets[s];
    if (set.per_seed != out.per_seed || set.plan_size != out.plan_size) {
      return Status(Code::kInvalid, "the reports are of different suites (per_seed or plan size differ)");
    }
    out.wall_seconds += set.wall_seconds;
    for (std::size_t i = 0; i < set.results.size(); ++i) {
      const json* raw = i < set.raw.size() ? &set.raw[i] : nullptr;
      if (!by_index.emplace(set.plan_index[i], std::make_pair(&set.results[i], raw)).second) {
        return Status(Code::kInvalid, "run " + std::to_string(set.plan_index[i]) + " (" +
                                          set.results[i].scenario + " seed " +
                                          std::to_string(set.results[i].seed) + ") is in two reports");
      }
    }
  }
  bool all_raw = true;
  for (const auto& [index, r] : by_index) all_raw = all_raw && r.second != nullptr;
  for (const auto& [index, r] : by_index) {
    out.plan_index.push_back(index);
    out.results.push_back(*r.first);
    if (all_raw) out.raw.push_back(*r.second);
  }
  return out;
}

}  // namespace rcsim
