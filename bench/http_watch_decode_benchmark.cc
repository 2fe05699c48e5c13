// Decoding one pod watch event line ({"type":"MODIFIED","object":{...}}) as the HTTP client does:
// - Nlohmann: the client's path today (rest_wire.h DecodeWatchLine: nlohmann parse + PodFromJson);
// - NlohmannParseOnly: the parse alone, to split the cost;
// - ParseJsonOnly: engine/json_parse.h's parse (simdjson, then the same nlohmann value);
// - SimdjsonInformerFields: simdjson DOM parse plus the fields an informer and the manager read
//   (type, name, namespace, uid, resourceVersion, labels, controller ownerReference, phase, Ready),
//   i.e. what a simdjson decoder would at least cost;
// - SimdjsonParseOnly: the parse alone.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>
#include <string_view>

#include "backends/httpclient/rest_wire.h"
#include "engine/codec.h"
#include "engine/json_parse.h"
#include "engine/types.h"

namespace rcsim {
namespace {

std::string PodEventLine() {
  Pod pod;
  pod.metadata.name = "web-7f9c4-xk2lp";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "0b8f2a6e-3c1d-4e5f-9a7b-1c2d3e4f5a6b";
  pod.metadata.resource_version = "123456";
  pod.metadata.labels = {{"app", "web"}, {"tier", "frontend"}, {"track", "stable"}};
  OwnerReference ref;
  ref.name = "web";
  ref.uid = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";
  pod.metadata.owner_references.push_back(ref);
  pod.metadata.creation_timestamp = TimePoint(std::chrono::seconds(1700000000));
  Container c;
  c.name = "main";
  c.image = "nginx:1.7.9";
  c.command = {"nginx", "-g", "daemon off;"};
  pod.spec.containers.push_back(c);
  pod.spec.node_name = "node-17";
  pod.status.phase = phase::kRunning;
  pod.status.conditions.push_back({"Ready", "True", TimePoint(std::chrono::seconds(1700000010)), "", ""});
  pod.status.container_statuses.push_back({.name = "main", .ready = true, .restart_count = 0});
  pod.status.host_ip = "10.0.0.17";
  pod.status.pod_ip = "10.244.17.5";
  pod.status.start_time = TimePoint(std::chrono::seconds(1700000005));
  return R"({"type":"MODIFIED","object":)" + EncodePod(pod) + "}";
}

void BM_WatchLineNlohmann(benchmark::State& state) {
  const std::string line = PodEventLine();
  for (auto _ : state) {
    Result<ApiWatchEvent<Pod>> ev = DecodeWatchLine<Pod>(line);
    benchmark::DoNotOptimize(ev);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(line.size()));
  state.counters["line_bytes"] = static_cast<double>(line.size());
}
BENCHMARK(BM_WatchLineNlohmann);

void BM_WatchLineNlohmannParseOnly(benchmark::State& state) {
  const std::string line = PodEventLine();
  for (auto _ : state) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    benchmark::DoNotOptimize(j);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WatchLineNlohmannParseOnly);

// ParseJson (engine/json_parse.h): simdjson's parse building the nlohmann value the codec reads.
void BM_WatchLineParseJsonOnly(benchmark::State& state) {
  const std::string line = PodEventLine();
  for (auto _ : state) {
    nlohmann::json j = ParseJson(line);
    benchmark::DoNotOptimize(j);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WatchLineParseJsonOnly);

void BM_WatchLineSimdjsonInformerFields(benchmark::State& state) {
  const std::string line = PodEventLine();
  simdjson::dom::parser parser;
  for (auto _ : state) {
    simdjson::padded_string padded(line);  // the client would read into a padded buffer directly
    simdjson::dom::element doc;
    if (parser.parse(padded).get(doc)) {
      state.SkipWithError("parse failed");
      break;
    }
    Pod pod;
    std::string_view type, s;
    simdjson::dom::object obj, meta, labels;
    bool ok = !doc["type"].get(type) && !doc["object"].get(obj) && !obj["metadata"].get(meta);
    if (ok && !meta["name"].get(s)) pod.metadata.name = s;
    if (ok && !meta["namespace"].get(s)) pod.metadata.namespace_ = s;
    if (ok && !meta["uid"].get(s)) pod.metadata.uid = s;
    if (ok && !meta["resourceVersion"].get(s)) pod.metadata.resource_version = s;
    if (ok && !meta["labels"].get(labels)) {
      for (auto field : labels) {
        std::string_view v;
        if (!field.value.get(v)) pod.metadata.labels.emplace(field.key, v);
      }
    }
    simdjson::dom::array refs;
    if (ok && !meta["ownerReferences"].get(refs)) {
      for (simdjson::dom::element r : refs) {
        OwnerReference ref;
        if (!r["uid"].get(s)) ref.uid = s;
        if (!r["name"].get(s)) ref.name = s;
        pod.metadata.owner_references.push_back(std::move(ref));
      }
    }
    simdjson::dom::object status;
    if (ok && !obj["status"].get(status)) {
      if (!status["phase"].get(s)) pod.status.phase = s;
      simdjson::dom::array conds;
      if (!status["conditions"].get(conds)) {
        for (simdjson::dom::element cnd : conds) {
          PodCondition pc;
          if (!cnd["type"].get(s)) pc.type = s;
          if (!cnd["status"].get(s)) pc.status = s;
          pod.status.conditions.push_back(std::move(pc));
        }
      }
    }
    benchmark::DoNotOptimize(pod);
    benchmark::DoNotOptimize(type);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WatchLineSimdjsonInformerFields);

void BM_WatchLineSimdjsonParseOnly(benchmark::State& state) {
  const std::string line = PodEventLine();
  simdjson::dom::parser parser;
  simdjson::padded_string padded(line);
  for (auto _ : state) {
    simdjson::dom::element doc;
    auto err = parser.parse(padded).get(doc);
    benchmark::DoNotOptimize(err);
    benchmark::DoNotOptimize(doc);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WatchLineSimdjsonParseOnly);

}  // namespace
}  // namespace rcsim

BENCHMARK_MAIN();
