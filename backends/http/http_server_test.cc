// The HTTP API server end to end over sockets: a real server on a free port over the in-memory etcd,
// driven by a minimal Beast client.
#include "backends/http/http_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/http/thread_executor.h"
#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using json = nlohmann::json;

struct Reply {
  int status = 0;
  std::string content_type;
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

// A keep-alive HTTP/1.1 client (one connection, synchronous).
class Client {
 public:
  explicit Client(uint16_t port, std::string token = "") : port_(port), token_(std::move(token)) {}

  Reply Do(http::verb verb, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json", const std::string& accept = "") {
    if (!socket_.is_open()) {
      socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
      timeval tv{30, 0};  // generous: a server that stops answering fails the test, not hangs it
      ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
      req.set(http::field::content_type, content_type);
      req.body() = body;
    }
    if (!accept.empty()) req.set(http::field::accept, accept);
    if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
    req.prepare_payload();
    http::write(socket_, req);
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(socket_, buffer_, res, ec);
    if (ec) return Reply{-1, "", ec.message()};
    if (!res.keep_alive()) {
      socket_.close();
      buffer_.clear();
    }
    return Reply{static_cast<int>(res.result_int()), std::string(res[http::field::content_type]), res.body()};
  }
  Reply Get(const std::string& target, const std::string& accept = "") {
    return Do(http::verb::get, target, "", "", accept);
  }
  Reply Post(const std::string& target, const json& body) {
    return Do(http::verb::post, target, body.dump());
  }
  Reply Put(const std::string& target, const json& body) { return Do(http::verb::put, target, body.dump()); }
  Reply Patch(const std::string& target, const std::string& body, const std::string& type) {
    return Do(http::verb::patch, target, body, type);
  }
  Reply Delete(const std::string& target) { return Do(http::verb::delete_, target); }

 private:
  uint16_t port_;
  std::string token_;
  net::io_context ioc_;
  tcp::socket socket_{ioc_};
  beast::flat_buffer buffer_;
};

// Reads a chunked watch stream event by event, with a receive timeout.
class WatchReader {
 public:
  // `headers`: extra header lines, each ending in "\r\n".
  WatchReader(uint16_t port, const std::string& target, const std::string& headers = "") {
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    timeval tv{30, 0};  // generous: a missing event fails the test instead of hanging it
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
    net::write(socket_, net::buffer(req));
    const size_t end = ReadUntil("\r\n\r\n");
    if (end != std::string::npos) {
      header_ = buf_.substr(0, end);
      buf_.erase(0, end + 4);
    }
  }
  const std::string& header() const { return header_; }
  bool Ok() const { return header_.starts_with("HTTP/1.1 200"); }

  // The next event, or nullopt when the stream ended (last chunk or connection closed) or timed out.
  std::optional<json> Next() {
    while (true) {
      const size_t nl = lines_.find('\n');
      if (nl != std::string::npos) {
        json j = json::parse(lines_.substr(0, nl), nullptr, false);
        lines_.erase(0, nl + 1);
        return j;
      }
      if (ended_) return std::nullopt;
      const size_t eol = ReadUntil("\r\n");
      if (eol == std::string::npos) return std::nullopt;
      const size_t size = std::stoul(buf_.substr(0, eol), nullptr, 16);
      buf_.erase(0, eol + 2);
      if (size == 0) {
        ended_ = true;
        continue;
      }
      while (buf_.size() < size + 2) {
        if (!Fill()) return std::nullopt;
      }
      lines_ += buf_.substr(0, size);
      buf_.erase(0, size + 2);
    }
  }
  bool Ended() { return !Next().has_value(); }

 private:
  bool Fill() {
    char tmp[4096];
    beast::error_code ec;
    const size_t n = socket_.read_some(net::buffer(tmp), ec);
    if (ec || n == 0) return false;
    buf_.append(tmp, n);
    return true;
  }
  size_t ReadUntil(const std::string& delim) {
    while (buf_.find(delim) == std::string::npos) {
      if (!Fill()) return std::string::npos;
    }
    return buf_.find(delim);
  }

  net::io_context ioc_;
  tcp::socket socket_{ioc_};
  std::string header_, buf_, lines_;
  bool ended_ = false;
};

json PodJson(const std::string& name, const std::string& app = "web") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}};
}

json RcJson(const std::string& name, int replicas = 2) {
  return {{"apiVersion", "v1"},
          {"kind", "ReplicationController"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"app", name}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}}}}}};
}

const std::string kPods = "/api/v1/namespaces/default/pods";
const std::string kRcs = "/api/v1/namespaces/default/replicationcontrollers";

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(HttpServerOptions{}); }

  void StartServer(HttpServerOptions opts) {
    server_.reset();
    opts.port = 0;
    server_ = std::make_unique<HttpServer>(&registry_, &clock_, opts);
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<Client>(server_->port(), opts.bearer_token);
  }

  // The store's revision and contents, to check that a refused request changed nothing.
  std::string Snapshot() {
    Result<RangeResponse> r = store_.GetPrefix("/registry/");
    EXPECT_TRUE(r.ok());
    std::string out = std::to_string(r->revision);
    for (const KeyValue& kv : r->kvs) out += "|" + kv.key + "=" + kv.value.bytes();
    return out;
  }

  SystemClock clock_;
  ThreadExecutor executor_;
  MemStore store_{&clock_, &executor_};
  Mt19937Rng rng_{42};
  Registry registry_{&store_, &clock_, &rng_};
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(HttpServerTest, Discovery) {
  Reply v = client_->Get("/version");
  ASSERT_EQ(v.status, 200);
  EXPECT_EQ(v.Json()["major"], "1");
  EXPECT_EQ(v.Json()["minor"], "32");
  EXPECT_EQ(client_->Get("/api").Json()["versions"], json::array({"v1"}));
  Reply apis = client_->Get("/apis");
  EXPECT_EQ(apis.Json()["kind"], "APIGroupList");
  // The self reviews' groups; no leases without etcd leases; no policy group (it would list
  // PodDisruptionBudgets).
  ASSERT_EQ(apis.Json()["groups"].size(), 2u);
  EXPECT_EQ(apis.Json()["groups"][0]["name"], "authentication.k8s.io");
  EXPECT_EQ(apis.Json()["groups"][1]["name"], "authorization.k8s.io");
  EXPECT_EQ(client_->Get("/apis/authorization.k8s.io/v1").Json()["resources"].size(), 2u);
  EXPECT_EQ(client_->Get("/apis/policy/v1").status, 404);
  json v1 = client_->Get("/api/v1").Json();
  EXPECT_EQ(v1["kind"], "APIResourceList");
  std::map<std::string, json> by_name;
  for (const json& r : v1["resources"]) by_name[r["name"]] = r;
  ASSERT_TRUE(by_name.count("replicationcontrollers"));
  EXPECT_EQ(by_name["replicationcontrollers"]["shortNames"], json::array({"rc"}));
  EXPECT_EQ(by_name["replicationcontrollers"]["namespaced"], true);
  ASSERT_TRUE(by_name.count("replicationcontrollers/scale"));
  EXPECT_EQ(by_name["replicationcontrollers/scale"]["group"], "autoscaling");
  EXPECT_TRUE(by_name.count("pods/status"));
  json root = client_->Get("/openapi/v3").Json();
  const std::string url = root["paths"]["api/v1"]["serverRelativeURL"];
  json doc = client_->Get(url).Json();
  json patch = doc["paths"]["/api/v1/namespaces/{namespace}/replicationcontrollers/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "ReplicationController");
  bool has_field_validation = false;
  for (const json& p : patch["parameters"]) has_field_validation |= p["name"] == "fieldValidation";
  EXPECT_TRUE(has_field_validation);
  // kubectl apply builds its strategic merge patch from the schema when the PATCH takes one.
  EXPECT_TRUE(patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
  const json& schemas = doc["components"]["schemas"];
  const json& containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
  EXPECT_EQ(containers["type"], "array");
  EXPECT_EQ(containers["items"]["allOf"][0]["$ref"], "#/components/schemas/io.k8s.api.core.v1.Container");
  EXPECT_EQ(containers["x-kubernetes-patch-strategy"], "merge");
  EXPECT_EQ(containers["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["finalizers"]
                   ["x-kubernetes-list-type"],
            "set");
  EXPECT_FALSE(schemas["io.k8s.api.core.v1.Container"]["properties"]["image"]["description"].empty());
  EXPECT_EQ(schemas["io.k8s.api.core.v1.PodSpec"]["required"], json::array({"containers"}));
  // Every reference resolves inside the document (kubectl explain follows them).
  std::vector<const json*> walk = {&doc};
  size_t refs = 0;
  while (!walk.empty()) {
    const json* j = walk.back();
    walk.pop_back();
    if (j->is_object() && j->contains("$ref")) {
      const std::string ref = (*j)["$ref"];
      ++refs;
      EXPECT_TRUE(schemas.contains(ref.substr(std::string("#/components/schemas/").size()))) << ref;
    }
    if (j->is_structured()) {
      for (const json& v : *j) walk.push_back(&v);
    }
  }
  EXPECT_GT(refs, 100u);
  // No leases without etcd leases: no coordination document.
  EXPECT_FALSE(root["paths"].contains("apis/coordination.k8s.io/v1"));
  EXPECT_EQ(client_->Get("/healthz").body, "ok");
}

TEST_F(HttpServerTest, PodCrud) {
  Reply created = client_->Post(kPods, PodJson("a"));
  ASSERT_EQ(created.status, 201) << created.body;
  json a = created.Json();
  EXPECT_EQ(a["metadata"]["namespace"], "default");
  EXPECT_FALSE(a["metadata"]["uid"].get<std::string>().empty());
  const std::string rv = a["metadata"]["resourceVersion"];

  Reply got = client_->Get(kPods + "/a");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.Json(), a);

  ASSERT_EQ(client_->Post(kPods, PodJson("b", "db")).status, 201);
  json list = client_->Get(kPods).Json();
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_FALSE(list["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(list["items"].size(), 2u);

  json web = client_->Get(kPods + "?labelSelector=app%3Dweb").Json();
  ASSERT_EQ(web["items"].size(), 1u);
  EXPECT_EQ(web["items"][0]["metadata"]["name"], "a");
  json named = client_->Get(kPods + "?fieldSelector=metadata.name%3Db").Json();
  ASSERT_EQ(named["items"].size(), 1u);
  EXPECT_EQ(named["items"][0]["metadata"]["name"], "b");
  json none = client_->Get(kPods + "?labelSelector=app%3Dnothing").Json();
  EXPECT_TRUE(none["items"].is_array());
  EXPECT_EQ(none["items"].size(), 0u);

  json page = client_->Get(kPods + "?limit=1").Json();
  ASSERT_EQ(page["items"].size(), 1u);
  const std::string cont = page["metadata"]["continue"];
  EXPECT_FALSE(cont.empty());
  json page2 = client_->Get(kPods + "?limit=1&continue=" + cont).Json();
  ASSERT_EQ(page2["items"].size(), 1u);
  EXPECT_EQ(page2["items"][0]["metadata"]["name"], "b");

  EXPECT_EQ(client_->Get("/api/v1/pods").Json()["items"].size(), 2u);

  // PUT with the current resourceVersion, then with the stale one.
  json updated = a;
  updated["metadata"]["labels"]["tier"] = "front";
  Reply put = client_->Put(kPods + "/a", updated);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Json()["metadata"]["labels"]["tier"], "front");
  EXPECT_NE(put.Json()["metadata"]["resourceVersion"], rv);
  const std::string before = Snapshot();
  updated["metadata"]["labels"]["tier"] = "back";
  Reply stale = client_->Put(kPods + "/a", updated);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(stale.Json()["reason"], "Conflict");
  EXPECT_EQ(Snapshot(), before);

  // Status subresource.
  json status_obj = put.Json();
  status_obj["status"] = {{"phase", "Running"}};
  Reply st = client_->Put(kPods + "/a/status", status_obj);
  ASSERT_EQ(st.status, 200) << st.body;
  EXPECT_EQ(client_->Get(kPods + "/a/status").Json()["status"]["phase"], "Running");

  // Delete returns the object; then it is gone.
  Reply del = client_->Delete(kPods + "/a");
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(del.Json()["metadata"]["name"], "a");
  Reply gone = client_->Get(kPods + "/a");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.Json()["kind"], "Status");
  EXPECT_EQ(gone.Json()["reason"], "NotFound");
  EXPECT_EQ(client_->Delete(kPods + "/a").status, 404);
}

TEST_F(HttpServerTest, GenerateName) {
  json pod = PodJson("");
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "web-";
  Reply r = client_->Post(kPods, pod);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string name = r.Json()["metadata"]["name"];
  EXPECT_TRUE(name.starts_with("web-")) << name;
  EXPECT_GT(name.size(), 4u);
  EXPECT_EQ(client_->Get(kPods + "/" + name).status, 200);
}

TEST_F(HttpServerTest, Patches) {
  ASSERT_EQ(client_->Post(kPods, PodJson("p")).status, 201);
  Reply merge =
      client_->Patch(kPods + "/p", R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json");
  ASSERT_EQ(merge.status, 200) << merge.body;
  EXPECT_EQ(merge.Json()["metadata"]["labels"], json({{"app", "web"}, {"x", "1"}}));
  Reply smp = client_->Patch(kPods + "/p", R"({"metadata":{"labels":{"x":null,"y":"2"}}})",
                             "application/strategic-merge-patch+json");
  ASSERT_EQ(smp.status, 200) << smp.body;
  EXPECT_EQ(smp.Json()["metadata"]["labels"], json({{"app", "web"}, {"y", "2"}}));
  Reply jp = client_->Patch(kPods + "/p", R"([{"op":"add","path":"/metadata/labels/z","value":"3"}])",
                            "application/json-patch+json");
  ASSERT_EQ(jp.status, 200) << jp.body;
  EXPECT_EQ(jp.Json()["metadata"]["labels"]["z"], "3");
  Reply status = client_->Patch(kPods + "/p/status", R"({"status":{"phase":"Running"}})",
                                "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Json()["status"]["phase"], "Running");

  const std::string before = Snapshot();
  EXPECT_EQ(client_->Patch(kPods + "/p", "{", "application/merge-patch+json").status, 400);
  // Server-side apply needs apiVersion, kind and a fieldManager.
  EXPECT_EQ(client_->Patch(kPods + "/p", R"({"a":1})", "application/apply-patch+yaml").status, 400);
  EXPECT_EQ(client_->Patch(kPods + "/p", R"({"a":1})", "application/x-yaml").status, 415);
  EXPECT_EQ(client_
                ->Patch(kPods + "/p", R"([{"op":"test","path":"/metadata/name","value":"q"}])",
                        "application/json-patch+json")
                .status,
            422);
  EXPECT_EQ(
      client_->Patch(kPods + "/p", R"({"metadata":{"resourceVersion":"1"}})", "application/merge-patch+json")
          .status,
      409);
  EXPECT_EQ(client_->Patch(kPods + "/nope", R"({})", "application/merge-patch+json").status, 404);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(HttpServerTest, ControllersScaleAndTables) {
  Reply created = client_->Post(kRcs, RcJson("web", 2));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Json()["spec"]["replicas"], 2);

  json scale = client_->Get(kRcs + "/web/scale").Json();
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(scale["spec"]["replicas"], 2);
  EXPECT_EQ(scale["status"]["selector"], "app=web");

  Reply patched =
      client_->Patch(kRcs + "/web/scale", R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["spec"]["replicas"], 5);
  scale = patched.Json();
  scale["spec"]["replicas"] = 3;
  Reply put = client_->Put(kRcs + "/web/scale", scale);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(client_->Get(kRcs + "/web").Json()["spec"]["replicas"], 3);

  const std::string before = Snapshot();
  Reply stale = client_->Put(kRcs + "/web/scale", scale);
  EXPECT_EQ(stale.status, 409);
  Reply negative =
      client_->Patch(kRcs + "/web/scale", R"({"spec":{"replicas":-1}})", "application/merge-patch+json");
  EXPECT_EQ(negative.status, 422) << negative.body;
  EXPECT_EQ(client_->Get(kPods + "/x/scale").status, 404);
  EXPECT_EQ(Snapshot(), before);

  const std::string table_accept =
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
      "application/json";
  Reply table = client_->Get(kRcs, table_accept);
  ASSERT_EQ(table.status, 200);
  EXPECT_NE(table.content_type.find("as=Table"), std::string::npos);
  json t = table.Json();
  EXPECT_EQ(t["kind"], "Table");
  std::vector<std::string> columns;
  for (const json& c : t["columnDefinitions"]) columns.push_back(c["name"]);
  EXPECT_EQ(columns, (std::vector<std::string>{"Name", "Desired", "Current", "Ready", "Age", "Containers",
                                               "Images", "Selector"}));
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"][0], "web");
  EXPECT_EQ(t["rows"][0]["cells"][1], 3);
  EXPECT_EQ(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");

  ASSERT_EQ(client_->Post(kPods, PodJson("p1")).status, 201);
  json pt = client_->Get(kPods + "/p1", table_accept).Json();
  EXPECT_EQ(pt["kind"], "Table");
  ASSERT_EQ(pt["rows"].size(), 1u);
  EXPECT_EQ(pt["rows"][0]["cells"][0], "p1");
  EXPECT_EQ(pt["rows"][0]["cells"][1], "0/1");
  EXPECT_EQ(pt["rows"][0]["cells"][2], "Pending");
  EXPECT_EQ(pt["rows"][0]["cells"][3], "0");
}

TEST_F(HttpServerTest, BadRequestsLeaveTheStoreUnchanged) {
  ASSERT_EQ(client_->Post(kRcs, RcJson("web")).status, 201);
  ASSERT_EQ(client_->Post(kPods, PodJson("a")).status, 201);
  const std::string before = Snapshot();

  struct Case {
    const char* what;
    Reply reply;
    int want;
  };
  json no_selector = RcJson("bad");
  no_selector["spec"].erase("selector");
  no_selector["spec"]["template"]["metadata"].erase("labels");
  json negative = RcJson("neg", -1);
  json wrong_ns = PodJson("c");
  wrong_ns["metadata"]["namespace"] = "other";
  json wrong_name = PodJson("zzz");
  std::vector<Case> cases;
  cases.push_back({"malformed JSON", client_->Do(http::verb::post, kPods, "{\"kind\":"), 400});
  cases.push_back({"not an object", client_->Do(http::verb::post, kPods, "[1,2]"), 400});
  cases.push_back({"wrong kind", client_->Post(kRcs, PodJson("p")), 422});
  cases.push_back(
      {"wrong type", client_->Do(http::verb::post, kPods, R"({"kind":"Pod","metadata":{"name":7}})"), 400});
  cases.push_back({"negative replicas", client_->Post(kRcs, negative), 422});
  cases.push_back({"missing selector", client_->Post(kRcs, no_selector), 422});
  cases.push_back({"already exists", client_->Post(kPods, PodJson("a")), 409});
  cases.push_back({"namespace mismatch", client_->Post(kPods, wrong_ns), 400});
  cases.push_back({"name mismatch", client_->Put(kPods + "/a", wrong_name), 400});
  cases.push_back({"unknown resource", client_->Get("/api/v1/namespaces/default/services"), 404});
  cases.push_back({"unknown path", client_->Get("/nope"), 404});
  cases.push_back({"unknown subresource", client_->Get(kPods + "/a/frobnicate"), 404});
  cases.push_back({"log of a pod on no node", client_->Get(kPods + "/a/log"), 400});
  cases.push_back(
      {"delete collection with a bad selector", client_->Delete(kPods + "?labelSelector=%3D%3D"), 400});
  cases.push_back({"list at a malformed resourceVersion", client_->Get(kPods + "?resourceVersion=abc"), 400});
  cases.push_back({"dot-dot name", client_->Get(kPods + "/.."), 400});
  cases.push_back(
      {"uid patch",
       client_->Patch(kPods + "/a", R"({"metadata":{"uid":"x"}})", "application/merge-patch+json"), 422});
  cases.push_back(
      {"strict unknown field",
       client_->Post(
           kPods + "?fieldValidation=Strict",
           json::parse(
               R"({"kind":"Pod","metadata":{"name":"s"},"spec":{"x":1,"containers":[{"name":"c","image":"i"}]}})")),
       400});
  cases.push_back(
      {"pod in a missing namespace", client_->Post("/api/v1/namespaces/nowhere/pods", PodJson("n")), 404});
  cases.push_back({"post to cluster list", client_->Post("/api/v1/pods", PodJson("d")), 405});
  cases.push_back(
      {"form content type",
       client_->Do(http::verb::post, kPods, PodJson("e").dump(), "application/x-www-form-urlencoded"), 415});
  cases.push_back({"bad label selector", client_->Get(kPods + "?labelSelector=app%3D%3D%3D"), 400});
  cases.push_back({"bad field selector", client_->Get(kPods + "?fieldSelector=spec.hostname%3Dx"), 400});
  cases.push_back({"bad limit", client_->Get(kPods + "?limit=abc"), 400});
  cases.push_back({"bad watch flag", client_->Get(kPods + "?watch=maybe"), 400});
  cases.push_back({"bad percent escape", client_->Get(kPods + "?labelSelector=%zz"), 400});
  cases.push_back(
      {"invalid UTF-8 resourceVersion", client_->Get(kPods + "?watch=1&resourceVersion=%A3x"), 400});
  cases.push_back({"invalid UTF-8 name", client_->Get(kPods + "/%A3%FF"), 404});
  cases.push_back({"invalid UTF-8 selector", client_->Get(kPods + "?labelSelector=%A3%3D"), 400});
  cases.push_back({"bad resourceVersion", client_->Get(kPods + "?watch=1&resourceVersion=x"), 400});
  cases.push_back({"bad scale body", client_->Put(kRcs + "/web/scale", PodJson("web")), 422});
  cases.push_back({"bad delete options", client_->Do(http::verb::delete_, kPods + "/a", "{"), 400});
  cases.push_back({"dry-run value", client_->Put(kPods + "/a?dryRun=Everything", PodJson("a")), 400});
  cases.push_back({"bad dryRun value", client_->Post(kPods + "?dryRun=Yes", PodJson("f")), 400});
  cases.push_back(
      {"dry-run create of a taken name", client_->Post(kPods + "?dryRun=All", PodJson("a")), 409});
  cases.push_back({"invalid dry-run create", client_->Post(kRcs + "?dryRun=All", negative), 422});
  cases.push_back(
      {"stale delete precondition",
       client_->Do(http::verb::delete_, kPods + "/a", R"({"preconditions":{"uid":"not-the-uid"}})"), 409});
  for (const Case& c : cases) {
    EXPECT_EQ(c.reply.status, c.want) << c.what << ": " << c.reply.body;
    json j = c.reply.Json();
    EXPECT_EQ(j["kind"], "Status") << c.what;
    EXPECT_EQ(j["code"], c.want) << c.what;
  }
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(HttpServerTest, DryRunCreateStoresNothing) {
  const std::string before = Snapshot();
  Reply r = client_->Post(kRcs + "?dryRun=All", RcJson("web"));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Json()["metadata"]["name"], "web");
  EXPECT_EQ(r.Json()["spec"]["selector"]["app"], "web");
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(client_->Get(kRcs + "/web").status, 404);
}

// `kubectl delete --dry-run=server` sends DeleteOptions.dryRun in the body: it deleted for real.
TEST_F(HttpServerTest, DryRunDeletesStoreNothing) {
  ASSERT_EQ(client_->Post(kPods, PodJson("p1")).status, 201);
  ASSERT_EQ(client_->Post(kRcs, RcJson("web")).status, 201);
  ASSERT_EQ(client_->Post("/api/v1/namespaces", {{"metadata", {{"name", "team"}}}}).status, 201);
  // Bound to a node, the pod would be deleted gracefully: the answer shows the deletionTimestamp the
  // delete would set, and the pod read back afterwards has none (the registry's result cache too).
  json bound = client_->Get(kPods + "/p1").Json();
  bound["spec"]["nodeName"] = "node-1";
  ASSERT_EQ(client_->Put(kPods + "/p1", bound).status, 200);
  const std::string before = Snapshot();
  Reply q = client_->Delete(kPods + "/p1?dryRun=All");
  ASSERT_EQ(q.status, 200) << q.body;
  EXPECT_EQ(q.Json()["metadata"]["name"], "p1");
  EXPECT_TRUE(q.Json()["metadata"].contains("deletionTimestamp")) << q.body;
  EXPECT_FALSE(client_->Get(kPods + "/p1").Json()["metadata"].contains("deletionTimestamp"));
  Reply body = client_->Do(http::verb::delete_, kRcs + "/web", R"({"dryRun":["All"]})");
  ASSERT_EQ(body.status, 200) << body.body;
  Reply coll = client_->Do(http::verb::delete_, kPods, R"({"dryRun":["All"],"gracePeriodSeconds":0})");
  ASSERT_EQ(coll.status, 200) << coll.body;
  EXPECT_EQ(coll.Json()["items"].size(), 1u);
  EXPECT_EQ(client_->Delete("/api/v1/namespaces/team?dryRun=All").status, 200);
  EXPECT_EQ(client_->Post("/api/v1/namespaces?dryRun=All", {{"metadata", {{"name", "other"}}}}).status, 201);
  EXPECT_EQ(client_->Post("/api/v1/namespaces?dryRun=All", {{"metadata", {{"name", "team"}}}}).status, 409);
  EXPECT_EQ(client_->Do(http::verb::delete_, kPods + "/p1", R"({"dryRun":["Some"]})").status, 400);
  EXPECT_EQ(client_->Delete(kPods + "/p1?dryRun=Some").status, 400);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(client_->Get(kPods + "/p1").status, 200);
  EXPECT_EQ(client_->Get("/api/v1/namespaces/other").status, 404);
}

// `kubectl apply --dry-run=server` patches; `kubectl replace --dry-run=server` puts: validated and
// answered with the result, nothing stored. Where dry run is not implemented it is refused.
TEST_F(HttpServerTest, DryRunUpdatesPatchesAndAppliesStoreNothing) {
  ASSERT_EQ(client_->Post(kRcs, RcJson("web")).status, 201);
  const std::string before = Snapshot();
  Reply patched = client_->Patch(kRcs + "/web?dryRun=All", R"({"spec":{"replicas":7}})",
                                 "application/strategic-merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["spec"]["replicas"], 7);
  EXPECT_EQ(patched.Json()["metadata"]["generation"], 2);  // the update rules ran
  json rc = client_->Get(kRcs + "/web").Json();
  rc["spec"]["replicas"] = 9;
  Reply put = client_->Put(kRcs + "/web?dryRun=All", rc);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Json()["spec"]["replicas"], 9);
  rc["spec"]["replicas"] = -1;
  EXPECT_EQ(client_->Put(kRcs + "/web?dryRun=All", rc).status, 422);  // validated
  json applied = RcJson("web", 4);
  Reply ssa = client_->Patch(kRcs + "/web?dryRun=All&fieldManager=t&force=true", applied.dump(),
                             "application/apply-patch+yaml");
  ASSERT_EQ(ssa.status, 200) << ssa.body;
  EXPECT_EQ(ssa.Json()["spec"]["replicas"], 4);
  Reply fresh = client_->Patch(kRcs + "/new?dryRun=All&fieldManager=t", RcJson("new").dump(),
                               "application/apply-patch+yaml");
  EXPECT_EQ(fresh.status, 201) << fresh.body;
  Reply status = client_->Patch(kRcs + "/web/status?dryRun=All", R"({"status":{"replicas":3}})",
                                "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Json()["status"]["replicas"], 3);
  // Scale (kubectl scale --dry-run=server): answered with the new replicas, validated, not stored.
  const json scale = {{"apiVersion", "autoscaling/v1"},
                      {"kind", "Scale"},
                      {"metadata", {{"name", "web"}, {"namespace", "default"}}},
                      {"spec", {{"replicas", 5}}}};
  Reply put_scale = client_->Put(kRcs + "/web/scale?dryRun=All", scale);
  ASSERT_EQ(put_scale.status, 200) << put_scale.body;
  EXPECT_EQ(put_scale.Json()["spec"]["replicas"], 5);
  Reply patch_scale = client_->Patch(kRcs + "/web/scale?dryRun=All", R"({"spec":{"replicas":7}})",
                                     "application/merge-patch+json");
  ASSERT_EQ(patch_scale.status, 200) << patch_scale.body;
  EXPECT_EQ(patch_scale.Json()["spec"]["replicas"], 7);
  EXPECT_EQ(client_
                ->Patch(kRcs + "/web/scale?dryRun=All", R"({"spec":{"replicas":-1}})",
                        "application/merge-patch+json")
                .status,
            422);
  EXPECT_EQ(Snapshot(), before);
  const json after = client_->Get(kRcs + "/web").Json();  // also through the registry's result cache
  EXPECT_EQ(after["spec"]["replicas"], 2);
  EXPECT_EQ(after["metadata"]["generation"], 1);
}

// kubectl label/annotate ns patch the namespace (strategic merge); a PUT replaces its metadata. An
// implicit namespace is stored by its first update.
TEST_F(HttpServerTest, NamespacesTakePatchesAndUpdatesOfTheirMetadata) {
  const std::string ns = "/api/v1/namespaces";
  Reply label = client_->Patch(ns + "/default", R"({"metadata":{"labels":{"team":"a"}}})",
                               "application/strategic-merge-patch+json");
  ASSERT_EQ(label.status, 200) << label.body;
  EXPECT_EQ(label.Json()["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(label.Json()["metadata"]["labels"]["kubernetes.io/metadata.name"], "default");
  EXPECT_EQ(client_->Get(ns + "/default").Json()["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(client_->Get(ns + "?labelSelector=team%3Da").Json()["items"].size(), 1u);

  ASSERT_EQ(client_->Post(ns, {{"metadata", {{"name", "team"}}}}).status, 201);
  json got = client_->Get(ns + "/team").Json();
  got["metadata"]["annotations"] = {{"owner", "ops"}};
  got["spec"]["finalizers"] = json::array();  // spec is not changed by an update
  Reply put = client_->Put(ns + "/team", got);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Json()["metadata"]["annotations"]["owner"], "ops");
  EXPECT_EQ(put.Json()["spec"]["finalizers"], json::array({"kubernetes"}));
  const std::string before = Snapshot();
  EXPECT_EQ(client_->Put(ns + "/team", got).status, 409);  // its resourceVersion is stale now
  got["metadata"]["resourceVersion"] = put.Json()["metadata"]["resourceVersion"];
  got["metadata"]["uid"] = "other";
  EXPECT_EQ(client_->Put(ns + "/team", got).status, 422);
  EXPECT_EQ(client_
                ->Patch(ns + "/team?dryRun=All", R"({"metadata":{"labels":{"x":"y"}}})",
                        "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(
      client_->Patch(ns + "/nowhere", R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json")
          .status,
      404);
  EXPECT_EQ(Snapshot(), before);
}

// kubectl get ns -w: the namespaces listed, then each change, as JSON or Tables.
TEST_F(HttpServerTest, NamespacesCanBeWatched) {
  const std::string ns = "/api/v1/namespaces";
  ASSERT_EQ(client_->Post(ns, {{"metadata", {{"name", "team"}, {"labels", {{"t", "1"}}}}}}).status, 201);
  const std::string rv = client_->Get(ns).Json()["metadata"]["resourceVersion"];
  WatchReader from_rv(server_->port(), ns + "?watch=true&resourceVersion=" + rv);
  WatchReader initial(server_->port(), ns + "?watch=1&labelSelector=t%3D1");
  WatchReader table(server_->port(), ns + "?watch=1&fieldSelector=metadata.name%3Dlater",
                    "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n");
  ASSERT_TRUE(from_rv.Ok() && initial.Ok() && table.Ok()) << table.header();
  std::optional<json> listed = initial.Next();
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ((*listed)["type"], "ADDED");
  EXPECT_EQ((*listed)["object"]["metadata"]["name"], "team");
  ASSERT_EQ(client_->Post(ns, {{"metadata", {{"name", "later"}, {"labels", {{"t", "1"}}}}}}).status, 201);
  ASSERT_EQ(
      client_->Patch(ns + "/later", R"({"metadata":{"labels":{"u":"2"}}})", "application/merge-patch+json")
          .status,
      200);
  ASSERT_EQ(client_->Delete(ns + "/later").status, 200);
  std::vector<std::string> types;
  json last;
  for (int i = 0; i < 3; ++i) {
    std::optional<json> ev = from_rv.Next();
    ASSERT_TRUE(ev.has_value()) << i;
    types.push_back((*ev)["type"]);
    last = *ev;
  }
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"}));
  EXPECT_EQ(last["object"]["metadata"]["labels"]["u"], "2");  // the last state
  EXPECT_EQ(last["object"]["status"]["phase"], "Terminating");
  std::optional<json> later = initial.Next();
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ((*later)["object"]["metadata"]["name"], "later");
  std::optional<json> first = table.Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ((*first)["object"]["kind"], "Table");
  EXPECT_EQ((*first)["object"]["columnDefinitions"].size(), 3u);
  EXPECT_EQ((*first)["object"]["rows"][0]["cells"][0], "later");
  std::optional<json> second = table.Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE((*second)["object"]["columnDefinitions"].empty());
  EXPECT_EQ(client_->Get(ns + "?watch=1&resourceVersion=abc").status, 400);
}

// An Event about pod p in default, labelled a=1.
json EventJson(const std::string& name, const std::string& reason) {
  return json{{"apiVersion", "v1"},
              {"kind", "Event"},
              {"metadata", {{"name", name}, {"labels", {{"a", "1"}}}}},
              {"involvedObject", {{"kind", "Pod"}, {"name", "p"}, {"namespace", "default"}}},
              {"reason", reason},
              {"message", "m"},
              {"count", 1},
              {"type", "Normal"}};
}

// kubectl get events -w: JSON or Tables, all namespaces or one, by name on the watch path.
TEST_F(HttpServerTest, EventsCanBeWatched) {
  const std::string events = "/api/v1/namespaces/default/events";
  ASSERT_EQ(client_->Post(events, EventJson("e1", "Started")).status, 201);
  WatchReader all(server_->port(), "/api/v1/events?watch=true");
  WatchReader named(server_->port(), "/api/v1/watch/namespaces/default/events/e2");
  WatchReader table(server_->port(), events + "?watch=1&fieldSelector=reason%3DKilled",
                    "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n");
  ASSERT_TRUE(all.Ok() && named.Ok() && table.Ok()) << table.header();
  std::optional<json> listed = all.Next();
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ((*listed)["type"], "ADDED");
  EXPECT_EQ((*listed)["object"]["metadata"]["name"], "e1");
  ASSERT_EQ(client_->Post(events, EventJson("e2", "Killed")).status, 201);
  std::optional<json> added = named.Next();
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ((*added)["object"]["reason"], "Killed");
  std::optional<json> second = all.Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ((*second)["object"]["metadata"]["name"], "e2");
  std::optional<json> row = table.Next();
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ((*row)["object"]["kind"], "Table");
  EXPECT_EQ((*row)["object"]["rows"].size(), 1u);
  ASSERT_EQ(client_->Delete(events + "/e2").status, 200);
  std::optional<json> deleted = named.Next();
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ((*deleted)["type"], "DELETED");
  EXPECT_EQ(client_->Get(events + "?watch=1&resourceVersion=abc").status, 400);
  EXPECT_EQ(client_->Get(events + "?watch=1&fieldSelector=bogus%3D1").status, 400);
  EXPECT_EQ(client_->Get(events + "?watch=maybe").status, 400);
}

// python patch_namespaced_event and delete_collection_namespaced_event (client-go's recorder patches too).
TEST_F(HttpServerTest, EventsTakePatchesAndCollectionDeletes) {
  const std::string events = "/api/v1/namespaces/default/events";
  for (const char* name : {"e1", "e2", "e3"})
    ASSERT_EQ(client_->Post(events, EventJson(name, name)).status, 201);
  Reply merged =
      client_->Patch(events + "/e1", R"({"count":2,"message":"again"})", "application/merge-patch+json");
  ASSERT_EQ(merged.status, 200) << merged.body;
  EXPECT_EQ(merged.Json()["count"], 2);
  EXPECT_EQ(merged.Json()["reason"], "e1");  // the rest kept
  Reply strategic =
      client_->Patch(events + "/e1", R"({"count":3})", "application/strategic-merge-patch+json");
  ASSERT_EQ(strategic.status, 200) << strategic.body;
  EXPECT_EQ(strategic.Json()["message"], "again");
  Reply json_patch = client_->Patch(events + "/e1", R"([{"op":"replace","path":"/count","value":4}])",
                                    "application/json-patch+json");
  ASSERT_EQ(json_patch.status, 200) << json_patch.body;
  EXPECT_EQ(client_->Get(events + "/e1").Json()["count"], 4);
  const std::string before = Snapshot();
  EXPECT_EQ(client_->Patch(events + "/e1", R"({"kind":"Pod"})", "application/merge-patch+json").status, 422);
  EXPECT_EQ(client_->Patch(events + "/nope", R"({"count":1})", "application/merge-patch+json").status, 404);
  EXPECT_EQ(client_->Patch(events + "/e1", "{}", "application/apply-patch+yaml").status, 415);
  EXPECT_EQ(Snapshot(), before);
  // A collection delete by field selector: e2 goes, the others stay; the answer lists what went.
  Reply gone = client_->Delete(events + "?fieldSelector=reason%3De2");
  ASSERT_EQ(gone.status, 200) << gone.body;
  ASSERT_EQ(gone.Json()["items"].size(), 1u);
  EXPECT_EQ(gone.Json()["items"][0]["metadata"]["name"], "e2");
  EXPECT_EQ(client_->Get(events + "/e2").status, 404);
  EXPECT_EQ(client_->Delete(events + "?labelSelector=a%3D1").Json()["items"].size(), 2u);
  EXPECT_TRUE(client_->Get(events).Json()["items"].empty());
}

// kubectl drain evicts through pods/{name}/eviction (policy/v1), found in the core list with its group
// and version; no PodDisruptionBudget is served, so an eviction is a delete with its deleteOptions.
TEST_F(HttpServerTest, EvictionDeletesThePodWithItsOptions) {
  const json core = client_->Get("/api/v1").Json();
  bool listed = false;
  for (const json& r : core["resources"]) {
    if (r["name"] == "pods/eviction")
      listed = r["kind"] == "Eviction" && r["group"] == "policy" && r["version"] == "v1";
  }
  EXPECT_TRUE(listed) << core.dump();

  ASSERT_EQ(client_->Post(kPods, PodJson("p1")).status, 201);
  const std::string before = Snapshot();
  auto eviction = [](const std::string& name) {
    return json{{"apiVersion", "policy/v1"},
                {"kind", "Eviction"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"deleteOptions", {{"gracePeriodSeconds", 0}}}};
  };
  EXPECT_EQ(client_->Post(kPods + "/p1/eviction", eviction("p2")).status, 400);  // names disagree
  EXPECT_EQ(client_->Post(kPods + "/p2/eviction", eviction("p2")).status, 404);
  EXPECT_EQ(client_->Post(kPods + "/p1/eviction?dryRun=All", eviction("p1")).status, 201);
  json dry = eviction("p1");
  dry["deleteOptions"]["dryRun"] = {"All"};
  EXPECT_EQ(client_->Post(kPods + "/p1/eviction", dry).status, 201);
  EXPECT_EQ(Snapshot(), before);
  Reply r = client_->Post(kPods + "/p1/eviction", eviction("p1"));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Json()["kind"], "Status");
  EXPECT_EQ(r.Json()["status"], "Success");
  EXPECT_EQ(client_->Get(kPods + "/p1").status, 404);
}

// kubectl's typed clients send protobuf: Namespace, DeleteOptions and Eviction bodies are read.
TEST_F(HttpServerTest, ProtobufBodiesOfTheKindsKubectlSendsAreRead) {
  auto len = [](int field, const std::string& bytes) {
    return std::string(1, static_cast<char>(field << 3 | 2)) + static_cast<char>(bytes.size()) + bytes;
  };
  auto envelope = [&](const std::string& version, const std::string& kind, const std::string& raw) {
    return std::string("k8s\0", 4) + len(1, len(1, version) + len(2, kind)) + len(2, raw);
  };
  const std::string type = "application/vnd.kubernetes.protobuf";
  Reply ns = client_->Do(http::verb::post, "/api/v1/namespaces",
                         envelope("v1", "Namespace", len(1, len(1, "team"))), type);
  ASSERT_EQ(ns.status, 201) << ns.body;
  EXPECT_EQ(ns.Json()["metadata"]["name"], "team");
  EXPECT_EQ(client_->Get("/api/v1/namespaces/team").status, 200);

  ASSERT_EQ(client_->Post(kPods, PodJson("p1")).status, 201);
  const std::string before = Snapshot();
  // A Pod in protobuf is not read: 415, store unchanged. A malformed body: 400.
  Reply pod = client_->Do(http::verb::post, kPods, envelope("v1", "Pod", len(1, len(1, "p2"))), type);
  EXPECT_EQ(pod.status, 415) << pod.body;
  EXPECT_NE(pod.Json()["message"].get<std::string>().find("not Pod"), std::string::npos) << pod.body;
  EXPECT_EQ(client_->Do(http::verb::post, kPods, "k8s", type).status, 400);
  // kubectl auth can-i: a SelfSubjectAccessReview {spec: {nonResourceAttributes: {path, verb}}}.
  Reply can_i = client_->Do(http::verb::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                            envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview",
                                     len(2, len(2, len(1, "/logs") + len(2, "get")))),
                            type);
  ASSERT_EQ(can_i.status, 201) << can_i.body;
  EXPECT_EQ(can_i.Json()["status"]["allowed"], true) << can_i.body;
  EXPECT_EQ(can_i.Json()["spec"]["nonResourceAttributes"]["path"], "/logs") << can_i.body;
  EXPECT_EQ(
      client_->Post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json{{"spec", json::object()}})
          .status,
      422);
  // A kind served nowhere here (kubectl create deployment) to a path not served: 404, not 415.
  Reply deployment = client_->Do(http::verb::post, "/apis/apps/v1/namespaces/default/deployments",
                                 envelope("apps/v1", "Deployment", len(1, len(1, "d"))), type);
  EXPECT_EQ(deployment.status, 404) << deployment.body;
  EXPECT_EQ(deployment.Json()["reason"], "NotFound") << deployment.body;
  // DeleteOptions{dryRun: [All]} in protobuf on a DELETE: nothing deleted.
  const std::string dry = envelope("v1", "DeleteOptions", len(5, "All"));
  EXPECT_EQ(client_->Do(http::verb::delete_, kPods + "/p1", dry, type).status, 200);
  EXPECT_EQ(Snapshot(), before);
  const std::string now = envelope("v1", "DeleteOptions", std::string("\x08\x00", 2));  // grace 0
  EXPECT_EQ(client_->Do(http::verb::delete_, kPods + "/p1", now, type).status, 200);
  EXPECT_EQ(client_->Get(kPods + "/p1").status, 404);
}

TEST_F(HttpServerTest, OversizedBodyGets413) {
  HttpServerOptions opts;
  opts.max_body_bytes = 1024;
  StartServer(opts);
  const std::string before = Snapshot();
  json pod = PodJson("big");
  pod["metadata"]["annotations"] = {{"blob", std::string(4096, 'x')}};
  Reply r = client_->Post(kPods, pod);
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(r.Json()["code"], 413);
  EXPECT_EQ(Snapshot(), before);
  Client fresh(server_->port());
  EXPECT_EQ(fresh.Post(kPods, PodJson("small")).status, 201);
}

TEST_F(HttpServerTest, BearerToken) {
  HttpServerOptions opts;
  opts.bearer_token = "s3cret";
  StartServer(opts);
  Client anonymous(server_->port());
  Reply denied = anonymous.Get(kPods);
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.Json()["reason"], "Unauthorized");
  Client wrong(server_->port(), "guess");
  EXPECT_EQ(wrong.Get(kPods).status, 401);
  EXPECT_EQ(client_->Get(kPods).status, 200);
}

TEST_F(HttpServerTest, WatchStreamsEvents) {
  ASSERT_EQ(client_->Post(kPods, PodJson("old")).status, 201);
  json list = client_->Get(kPods).Json();
  const std::string rv = list["metadata"]["resourceVersion"];

  WatchReader from_now(server_->port(), kPods + "?watch=true&resourceVersion=" + rv);
  ASSERT_TRUE(from_now.Ok()) << from_now.header();
  EXPECT_NE(from_now.header().find("chunked"), std::string::npos);
  WatchReader from_zero(server_->port(), "/api/v1/watch/namespaces/default/pods?labelSelector=app%3Dweb");
  ASSERT_TRUE(from_zero.Ok());
  std::optional<json> initial = from_zero.Next();
  ASSERT_TRUE(initial.has_value());
  EXPECT_EQ((*initial)["type"], "ADDED");
  EXPECT_EQ((*initial)["object"]["metadata"]["name"], "old");

  ASSERT_EQ(client_->Post(kPods, PodJson("new")).status, 201);
  std::optional<json> added = from_now.Next();
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ((*added)["type"], "ADDED");
  EXPECT_EQ((*added)["object"]["kind"], "Pod");
  EXPECT_EQ((*added)["object"]["metadata"]["name"], "new");
  ASSERT_EQ(
      client_->Patch(kPods + "/new", R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json")
          .status,
      200);
  std::optional<json> modified = from_now.Next();
  ASSERT_TRUE(modified.has_value());
  EXPECT_EQ((*modified)["type"], "MODIFIED");
  ASSERT_EQ(client_->Delete(kPods + "/new").status, 200);
  std::optional<json> deleted = from_now.Next();
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ((*deleted)["type"], "DELETED");
  EXPECT_EQ((*deleted)["object"]["metadata"]["name"], "new");
  EXPECT_EQ(from_zero.Next().value()["object"]["metadata"]["name"], "new");  // ADDED
}

TEST_F(HttpServerTest, WatchTimeoutEndsTheStream) {
  WatchReader w(server_->port(), kPods + "?watch=1&timeoutSeconds=1");
  ASSERT_TRUE(w.Ok());
  EXPECT_TRUE(w.Ended());
}

TEST_F(HttpServerTest, WatchOfCompactedVersionGets410InStream) {
  ASSERT_EQ(client_->Post(kPods, PodJson("a")).status, 201);
  ASSERT_EQ(client_->Post(kPods, PodJson("b")).status, 201);
  ASSERT_EQ(client_->Post(kPods, PodJson("c")).status, 201);
  ASSERT_TRUE(store_.Compact(store_.revision()).ok());
  // Pod "a" was written at revision 2; events after it were compacted.
  WatchReader w(server_->port(), kPods + "?watch=True&resourceVersion=2");
  ASSERT_TRUE(w.Ok()) << w.header();
  std::optional<json> ev = w.Next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ((*ev)["type"], "ERROR");
  EXPECT_EQ((*ev)["object"]["kind"], "Status");
  EXPECT_EQ((*ev)["object"]["code"], 410);
  EXPECT_TRUE(w.Ended());
}

TEST_F(HttpServerTest, WatchAsTable) {
  ASSERT_EQ(client_->Post(kPods, PodJson("a")).status, 201);
  // A raw request with the Accept header kubectl sends for `get -w`.
  net::io_context ioc;
  tcp::socket s(ioc);
  s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server_->port()));
  const std::string req = "GET " + kPods +
                          "?watch=1&timeoutSeconds=1 HTTP/1.1\r\nHost: x\r\n"
                          "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n\r\n";
  net::write(s, net::buffer(req));
  std::string all;
  beast::error_code ec;
  char buf[4096];
  while (!ec) {
    const size_t n = s.read_some(net::buffer(buf), ec);
    all.append(buf, n);
  }
  EXPECT_NE(all.find("\"type\":\"ADDED\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"kind\":\"Table\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"columnDefinitions\":[{"), std::string::npos) << all;
}

// A clock the test moves; the server dates Table AGE columns by it.
class SteppedClock final : public Clock {
 public:
  explicit SteppedClock(TimePoint t) : now_(t.time_since_epoch().count()) {}
  TimePoint Now() const override { return TimePoint(Duration(now_.load())); }
  void Set(TimePoint t) { now_.store(t.time_since_epoch().count()); }

 private:
  std::atomic<Duration::rep> now_;
};

// Issue 8: `kubectl get pods -w` showed AGE <invalid> for a pod created after the watch started:
// every row of a watch was dated as of the watch's start.
TEST_F(HttpServerTest, WatchTableAgeIsAsOfEachEvent) {
  SteppedClock tables(clock_.Now() - std::chrono::hours(1));
  HttpServerOptions opts;
  opts.port = 0;
  HttpServer server(&registry_, &tables, opts);
  ASSERT_TRUE(server.Start().ok());
  Client client(server.port());
  WatchReader w(server.port(), kPods + "?watch=1",
                "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n");
  ASSERT_TRUE(w.Ok()) << w.header();
  tables.Set(clock_.Now() + std::chrono::seconds(15 * 60 + 30));  // "15m" whatever the second
  ASSERT_EQ(client.Post(kPods, PodJson("late")).status, 201);
  std::optional<json> ev = w.Next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ((*ev)["type"], "ADDED");
  const json& row = (*ev)["object"]["rows"][0];
  EXPECT_EQ(row["cells"][0], "late");
  EXPECT_EQ(row["cells"][4], "15m") << ev->dump();  // NAME READY STATUS RESTARTS AGE
}

TEST_F(HttpServerTest, TwoHundredWatchesAndAPromptGet) {
  constexpr int kWatches = 200;
  std::vector<std::unique_ptr<WatchReader>> watches;
  for (int i = 0; i < kWatches; ++i) {
    watches.push_back(std::make_unique<WatchReader>(server_->port(), kPods + "?watch=1"));
    ASSERT_TRUE(watches.back()->Ok()) << i;
  }
  // Other requests are still served while every stream is open.
  Reply created = client_->Post(kPods, PodJson("fanout"));
  ASSERT_EQ(created.status, 201);
  EXPECT_EQ(client_->Get(kPods + "/fanout").status, 200);
  EXPECT_EQ(client_->Get("/version").status, 200);
  // And every stream gets the event.
  for (int i = 0; i < kWatches; ++i) {
    std::optional<json> ev = watches[i]->Next();
    ASSERT_TRUE(ev.has_value()) << i;
    EXPECT_EQ((*ev)["object"]["metadata"]["name"], "fanout");
  }
}

TEST_F(HttpServerTest, StopClosesOpenWatches) {
  WatchReader w(server_->port(), kPods + "?watch=1");
  ASSERT_TRUE(w.Ok());
  server_->Stop();
  EXPECT_TRUE(w.Ended());
}

}  // namespace
}  // namespace rcsim
