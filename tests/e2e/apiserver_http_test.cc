// The API server's HTTP semantics that only a raw client can see (patch types, fieldValidation,
// server-side apply, DeleteCollection, immutable metadata, bad paths), against the apiserver binary over
// a real etcd. One etcd + apiserver for the whole binary; each test uses its own object names.
// Every refused request is checked to leave the store unchanged.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/api_http_contract/apiserver_process.h"
#include "tests/contract/core_v1_manifests.h"
#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

struct Reply {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // lower-case names
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

// One request on its own connection (Connection: close), read to EOF.
Reply Request(int port, const std::string& method, const std::string& target, const std::string& body = "",
              const std::string& content_type = "application/json") {
  Reply r;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return r;
  }
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                    "User-Agent: rcsim-http-test/1.0\r\n";
  if (!body.empty()) {
    req += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return r;
  }
  std::string raw;
  char buf[8192];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.size() < 12) return r;
  r.status = std::stoi(raw.substr(9, 3));
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    const size_t eol = raw.find("\r\n", pos);
    const std::string line = raw.substr(pos, eol - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers.emplace(name, line.substr(line.find_first_not_of(' ', colon + 1)));
    }
    pos = eol + 2;
  }
  r.body = raw.substr(end + 4);
  return r;
}

class ApiserverHttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value().release();
    ApiServerProcessOptions o;
    o.binary = RCSIM_APISERVER_PATH;
    o.etcd_servers = etcd_->endpoint();
    auto api = ApiServerProcess::Start(o);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value().release();
  }
  static void TearDownTestSuite() {
    delete api_;
    delete etcd_;
    api_ = nullptr;
    etcd_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(api_, nullptr) << "the apiserver did not start"; }

  Reply Do(const std::string& method, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
    return Request(api_->port(), method, target, body, content_type);
  }
  static std::string Rc(const std::string& name) {
    return "/api/v1/namespaces/default/replicationcontrollers/" + name;
  }
  static std::string Pod(const std::string& name) { return "/api/v1/namespaces/default/pods/" + name; }
  static constexpr const char* kRcs = "/api/v1/namespaces/default/replicationcontrollers";
  static constexpr const char* kPods = "/api/v1/namespaces/default/pods";
  static constexpr const char* kSmp = "application/strategic-merge-patch+json";

  // A refused request is a Status 4xx and leaves `target` as it was.
  void ExpectRefusedUnchanged(const Reply& r, int code, const std::string& target,
                              const std::string& before) {
    EXPECT_EQ(r.status, code) << r.body;
    EXPECT_EQ(r.Json()["kind"], "Status") << r.body;
    EXPECT_EQ(Do("GET", target).body, before) << "the store changed";
  }

  static EtcdProcess* etcd_;
  static ApiServerProcess* api_;
};

EtcdProcess* ApiserverHttpTest::etcd_ = nullptr;
ApiServerProcess* ApiserverHttpTest::api_ = nullptr;

const json& Containers(const json& rc) { return rc["spec"]["template"]["spec"]["containers"]; }

TEST_F(ApiserverHttpTest, FullManifestRoundTripsThroughPutAndGet) {
  const json want = json::parse(manifests::kFullPodSpec);
  Reply created =
      Do("POST", std::string(kRcs) + "?fieldValidation=Strict", manifests::FullControllerJson("full"));
  ASSERT_EQ(created.status, 201) << created.body;
  json got = Do("GET", Rc("full")).Json();
  EXPECT_EQ(got["spec"]["template"]["spec"], want);
  got["metadata"]["labels"]["rev"] = "2";
  Reply put = Do("PUT", Rc("full") + "?fieldValidation=Strict", got.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  json again = Do("GET", Rc("full")).Json();
  EXPECT_EQ(again["spec"], got["spec"]);
  EXPECT_EQ(again["metadata"]["labels"]["rev"], "2");
  EXPECT_EQ(again["metadata"]["annotations"], got["metadata"]["annotations"]);
}

// Issue 8: an apply changing one image got 422 or dropped `command`; a sidecar patch replaced the list.
TEST_F(ApiserverHttpTest, StrategicMergePatchMergesByKey) {
  ASSERT_EQ(Do("POST", kRcs, manifests::FullControllerJson("smp")).status, 201);
  Reply image =
      Do("PATCH", Rc("smp"),
         R"({"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}})", kSmp);
  ASSERT_EQ(image.status, 200) << image.body;
  json rc = image.Json();
  ASSERT_EQ(Containers(rc).size(), 2u);
  EXPECT_EQ(Containers(rc)[0]["image"], "nginx:1.26");
  EXPECT_EQ(Containers(rc)[0]["command"], json::array({"nginx"}));
  EXPECT_EQ(Containers(rc)[0]["ports"].size(), 2u);

  Reply sidecar = Do("PATCH", Rc("smp"),
                     R"({"spec":{"template":{"spec":{"containers":[{"name":"log","image":"fluentd",
                        "env":[{"name":"X","value":"1"}]}]}}}})",
                     kSmp);
  ASSERT_EQ(sidecar.status, 200) << sidecar.body;
  EXPECT_EQ(Containers(sidecar.Json()).size(), 3u);

  Reply env = Do("PATCH", Rc("smp"), R"({"spec":{"template":{"spec":{"containers":[{"name":"web",
      "env":[{"name":"MODE","value":"debug"},{"name":"POD_IP","$patch":"delete"}]}]}}}})",
                 kSmp);
  ASSERT_EQ(env.status, 200) << env.body;
  const json env_rc = env.Json();
  const json& e = Containers(env_rc)[0]["env"];
  ASSERT_EQ(e.size(), 2u) << e.dump();
  EXPECT_EQ(e[0], json::parse(R"({"name":"MODE","value":"debug"})"));
  EXPECT_EQ(e[1]["name"], "DB_PASSWORD");

  const std::string before = Do("GET", Rc("smp")).body;
  ExpectRefusedUnchanged(
      Do("PATCH", Rc("smp"), R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})", kSmp), 400,
      Rc("smp"), before);
}

TEST_F(ApiserverHttpTest, FieldValidationStrictWarnIgnore) {
  const std::string bad = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"strict","labelz":{}},
      "spec":{"foo":1,"containers":[{"name":"c","image":"nginx","imagee":"typo"}]}})";
  Reply strict = Do("POST", std::string(kPods) + "?fieldValidation=Strict", bad);
  EXPECT_EQ(strict.status, 400) << strict.body;
  const std::string msg = strict.Json().value("message", "");
  EXPECT_NE(msg.find("unknown field \"metadata.labelz\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown field \"spec.foo\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown field \"spec.containers[0].imagee\""), std::string::npos) << msg;
  EXPECT_EQ(Do("GET", Pod("strict")).status, 404) << "a refused create stored nothing";

  Reply warn = Do("POST", std::string(kPods) + "?fieldValidation=Warn", bad);
  ASSERT_EQ(warn.status, 201) << warn.body;
  EXPECT_EQ(warn.headers.count("warning"), 3u);
  auto w = warn.headers.find("warning");
  ASSERT_NE(w, warn.headers.end());
  EXPECT_EQ(w->second.rfind("299 - \"unknown field", 0), 0u) << w->second;
  // Unknown fields are dropped, as kube-apiserver drops them.
  json stored = Do("GET", Pod("strict")).Json();
  EXPECT_FALSE(stored["spec"].contains("foo"));
  EXPECT_FALSE(stored["spec"]["containers"][0].contains("imagee"));

  EXPECT_EQ(Do("POST", std::string(kPods) + "?fieldValidation=Bogus", bad).status, 400);
  // Strict applies to PUT and PATCH too.
  const std::string before = Do("GET", Pod("strict")).body;
  ExpectRefusedUnchanged(
      Do("PATCH", Pod("strict") + "?fieldValidation=Strict", R"({"spec":{"nodeNam":"x"}})", kSmp), 400,
      Pod("strict"), before);
}

TEST_F(ApiserverHttpTest, ImmutableMetadataBadPathsAndBadResourceVersions) {
  ASSERT_EQ(Do("POST", kRcs, manifests::FullControllerJson("immutable")).status, 201);
  const std::string before = Do("GET", Rc("immutable")).body;
  for (const char* patch : {R"({"metadata":{"uid":"other"}})", R"({"metadata":{"name":"other"}})",
                            R"({"metadata":{"namespace":"other"}})",
                            R"({"metadata":{"creationTimestamp":"2001-01-01T00:00:00Z"}})"}) {
    Reply r = Do("PATCH", Rc("immutable"), patch, "application/merge-patch+json");
    ExpectRefusedUnchanged(r, 422, Rc("immutable"), before);
    EXPECT_NE(r.body.find("field is immutable"), std::string::npos) << r.body;
  }
  json put = json::parse(before);
  put["metadata"]["uid"] = "0000";
  ExpectRefusedUnchanged(Do("PUT", Rc("immutable"), put.dump()), 422, Rc("immutable"), before);

  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default/pods/..").status, 400);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/../pods").status, 400);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default/pods/a%2Fb").status, 400);
  EXPECT_EQ(Do("DELETE", "/api/v1/namespaces/default/replicationcontrollers/%2E%2E").status, 400);
  EXPECT_EQ(Do("GET", std::string(kPods) + "?resourceVersion=abc").status, 400);
  EXPECT_EQ(Do("GET", std::string(kPods) + "?resourceVersion=0").status, 200);
  EXPECT_EQ(Do("GET", Rc("immutable")).body, before);
}

TEST_F(ApiserverHttpTest, ServerSideApplyOwnsFieldsAndReportsConflicts) {
  const std::string cfg = R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"ssa",
      "labels":{"app":"ssa","owner":"a"}},"spec":{"replicas":2,"selector":{"app":"ssa"},
      "template":{"metadata":{"labels":{"app":"ssa"}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})";
  const std::string apply = "application/apply-patch+yaml";
  Reply created = Do("PATCH", Rc("ssa") + "?fieldManager=alice", cfg, apply);
  ASSERT_EQ(created.status, 201) << created.body;
  json mf = created.Json()["metadata"]["managedFields"];
  ASSERT_EQ(mf.size(), 1u) << mf.dump();
  EXPECT_EQ(mf[0]["manager"], "alice");
  EXPECT_EQ(mf[0]["operation"], "Apply");
  EXPECT_TRUE(mf[0]["fieldsV1"]["f:spec"].contains("f:replicas")) << mf.dump();

  // Bob applies a different replicas: 409 naming the field and its owner; nothing changes.
  const std::string before = Do("GET", Rc("ssa")).body;
  const std::string bob = R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"ssa"},
      "spec":{"replicas":5}})";
  Reply conflict = Do("PATCH", Rc("ssa") + "?fieldManager=bob", bob, apply);
  ExpectRefusedUnchanged(conflict, 409, Rc("ssa"), before);
  EXPECT_NE(conflict.body.find("conflict with \\\"alice\\\""), std::string::npos) << conflict.body;
  EXPECT_NE(conflict.body.find(".spec.replicas"), std::string::npos) << conflict.body;
  // The same value is shared ownership, not a conflict; force takes the field.
  EXPECT_EQ(
      Do("PATCH", Rc("ssa") + "?fieldManager=carol",
         R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"ssa"},"spec":{"replicas":2}})",
         apply)
          .status,
      200);
  Reply forced = Do("PATCH", Rc("ssa") + "?fieldManager=bob&force=true", bob, apply);
  ASSERT_EQ(forced.status, 200) << forced.body;
  EXPECT_EQ(forced.Json()["spec"]["replicas"], 5);

  // Alice re-applies without the owner label and with a new image: the label goes, the image changes.
  json a2 = json::parse(cfg);
  a2["metadata"]["labels"].erase("owner");
  a2["spec"].erase("replicas");
  a2["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2";
  Reply reapplied = Do("PATCH", Rc("ssa") + "?fieldManager=alice", a2.dump(), apply);
  ASSERT_EQ(reapplied.status, 200) << reapplied.body;
  json rc = reapplied.Json();
  EXPECT_FALSE(rc["metadata"]["labels"].contains("owner")) << rc.dump();
  EXPECT_EQ(rc["spec"]["replicas"], 5);
  EXPECT_EQ(Containers(rc)[0]["image"], "nginx:2");

  // An update by another manager takes the field: alice applying her old value now conflicts with it.
  ASSERT_EQ(Do("PATCH", Rc("ssa") + "?fieldManager=editor",
               R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:3"}]}}}})", kSmp)
                .status,
            200);
  Reply stale = Do("PATCH", Rc("ssa") + "?fieldManager=alice", a2.dump(), apply);
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_NE(stale.body.find("editor"), std::string::npos) << stale.body;
  EXPECT_EQ(Do("PATCH", Rc("ssa"), cfg, apply).status, 400) << "apply without fieldManager";
}

TEST_F(ApiserverHttpTest, DeleteCollectionBySelector) {
  for (const char* name : {"dc-a", "dc-b", "dc-c"}) {
    const std::string app = std::string(name) == "dc-c" ? "keep" : "dc";
    ASSERT_EQ(
        Do("POST", kPods,
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + std::string(name) +
               R"(","labels":{"app":")" + app + R"("}},"spec":{"containers":[{"name":"c","image":"x"}]}})")
            .status,
        201);
  }
  Reply del = Do("DELETE", std::string(kPods) + "?labelSelector=app%3Ddc");
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(del.Json()["kind"], "PodList");
  EXPECT_EQ(del.Json()["items"].size(), 2u);
  json left = Do("GET", std::string(kPods) + "?labelSelector=app%20in%20(dc,keep)").Json();
  ASSERT_EQ(left["items"].size(), 1u) << left.dump();
  EXPECT_EQ(left["items"][0]["metadata"]["name"], "dc-c");
  EXPECT_EQ(Do("DELETE", std::string(kPods) + "?labelSelector=%3D%3D").status, 400);
}

TEST_F(ApiserverHttpTest, ControllerLabelsDefaultFromTheTemplate) {
  Reply created =
      Do("POST", kRcs, R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"nolabels"},
      "spec":{"replicas":0,"template":{"metadata":{"labels":{"app":"nl"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Json()["metadata"]["labels"], json::parse(R"({"app":"nl"})"));
  EXPECT_EQ(created.Json()["spec"]["selector"], json::parse(R"({"app":"nl"})"));
}

TEST_F(ApiserverHttpTest, NamespacesGateCreationAndTakeTheirObjectsWithThem) {
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}})";
  Reply refused = Do("POST", "/api/v1/namespaces/team-a/pods", pod);
  EXPECT_EQ(refused.status, 404) << refused.body;
  EXPECT_EQ(refused.Json()["message"], "namespaces \"team-a\" not found") << refused.body;
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/team-a/pods/p").status, 404);

  Reply created = Do("POST", "/api/v1/namespaces",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Json()["status"]["phase"], "Active");
  EXPECT_EQ(Do("POST", "/api/v1/namespaces",
               R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}})")
                .status,
            409);
  EXPECT_EQ(Do("POST", "/api/v1/namespaces",
               R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"Bad_Name"}})")
                .status,
            422);
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/team-a/pods", pod).status, 201);
  ASSERT_EQ(
      Do("POST", "/api/v1/namespaces/team-a/replicationcontrollers", manifests::FullControllerJson("rc"))
          .status,
      201);

  json list = Do("GET", "/api/v1/namespaces").Json();
  std::vector<std::string> names;
  for (const json& ns : list["items"]) names.push_back(ns["metadata"]["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "default"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "team-a"), names.end());
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default").status, 200);

  Reply del = Do("DELETE", "/api/v1/namespaces/team-a");
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/team-a").status, 404);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/team-a/pods/p").status, 404);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/team-a/replicationcontrollers/rc").status, 404);
  EXPECT_EQ(Do("DELETE", "/api/v1/namespaces/default").status, 400);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default").status, 200);
}

}  // namespace
}  // namespace rcsim
