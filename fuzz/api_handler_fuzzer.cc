// The API server's request handler fed raw HTTP/1.1 request bytes: Beast parses them as the server
// does (same header and body limits), then ApiHandler serves the request over a registry on the
// in-memory etcd (seeded with a pod and a controller). Any answer is fine but a 5xx to a request
// that is not a watch of a broken store, a crash, or a hang.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "backends/http/api_handler.h"
#include "engine/codec.h"
#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;

class NullSink final : public rcsim::WatchSink {
 public:
  void OnLine(rcsim::WatchLine) override {}
  void OnEnd() override {}
};

struct World {
  rcsim::SimLoop loop;
  rcsim::MemStore store{&loop, &loop};
  rcsim::Mt19937Rng rng{1};
  rcsim::Registry registry{&store, &loop, &rng};
  rcsim::ApiHandler handler{&registry, &loop};
};

void Seed(World& w) {
  rcsim::Pod pod;
  pod.metadata.name = "a";
  pod.metadata.labels = {{"app", "web"}};
  pod.spec.containers.push_back(rcsim::Container{"c", "nginx", {}, {}});
  (void)w.registry.pods().Create("default", pod);
  rcsim::ReplicationController rc;
  rc.metadata.name = "web";
  rc.spec.replicas = 1;
  rc.spec.selector = {{"app", "web"}};
  rcsim::PodTemplateSpec t;
  t.metadata.labels = {{"app", "web"}};
  t.spec.containers.push_back(rcsim::Container{"c", "nginx", {}, {}});
  rc.spec.template_ = t;
  (void)w.registry.controllers().Create("default", rc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World w;  // fresh per input, so inputs do not depend on each other
  Seed(w);
  http::request_parser<http::string_body> parser;
  parser.body_limit(3 << 20);
  parser.header_limit(64 << 10);
  parser.eager(true);
  beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_done()) return 0;
  const auto& req = parser.get();
  rcsim::HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  r.content_type = std::string(req[http::field::content_type]);
  r.accept = std::string(req[http::field::accept]);
  r.body = req.body();
  rcsim::ApiOutcome out = w.handler.Handle(r, std::make_shared<NullSink>());
  w.loop.RunUntilIdle();
  if (out.watch == nullptr && out.response.status >= 500) std::abort();  // bad input must be 4xx
  return 0;
}
