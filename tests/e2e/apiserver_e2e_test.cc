// End to end: etcd + the apiserver binary, driven by the installed kubectl and the Debian
// python3-kubernetes client over HTTPS with a bearer token from a kubeconfig (scripts/make-certs), as a
// user would; the raw-socket watch test alone uses plain HTTP. Skipped (with a message) only when
// /usr/bin/kubectl is absent.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kKubectl = "/usr/bin/kubectl";
constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kEtcdctl = "/usr/bin/etcdctl";
constexpr auto kCommandDeadline = std::chrono::seconds(60);

// A child process whose stdout and stderr go to one pipe we read with deadlines. Killed (SIGKILL)
// on destruction, and by the kernel if this test dies.
class Child {
 public:
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
    const pid_t pid = fork();
    if (pid < 0) return nullptr;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      std::vector<char*> args;
      args.reserve(argv.size() + 1);
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return std::unique_ptr<Child>(new Child(pid, fds[0]));
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(fd_);
  }

  // Reads until `needle` appears in the output at or after `from` (true) or the deadline / EOF (false).
  bool WaitFor(const std::string& needle, size_t from = 0) {
    const auto until = SteadyClock::now() + kCommandDeadline;
    while (output_.find(needle, from) == std::string::npos) {
      if (!ReadSome(until)) return false;
    }
    return true;
  }
  // Reads to EOF and reaps the child; returns its exit code (-1 on deadline or signal).
  int Wait(SteadyClock::duration timeout = kCommandDeadline) {
    const auto until = SteadyClock::now() + timeout;
    while (ReadSome(until)) {
    }
    if (!eof_) return -1;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void Terminate() {
    if (pid_ > 0) kill(pid_, SIGTERM);
  }
  const std::string& output() const { return output_; }

 private:
  Child(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  bool ReadSome(SteadyClock::time_point until) {
    if (eof_) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - SteadyClock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return SteadyClock::now() < until;
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof(buf));
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (n > 0) output_.append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_;
  int fd_;
  std::string output_;
  bool eof_ = false;
};

struct CommandResult {
  int code;
  std::string output;
};

CommandResult RunCommand(const std::vector<std::string>& argv) {
  std::unique_ptr<Child> c = Child::Spawn(argv);
  if (c == nullptr) return {-1, "spawn failed"};
  const int code = c->Wait();
  return {code, c->output()};
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string PodYaml(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  labels:\n    app: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n";
}

constexpr const char* kRcYaml = R"(apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 3
  selector:
    app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
)";

constexpr const char* kPythonScript = R"(
import sys
from kubernetes import client, config, watch

config.load_kube_config(sys.argv[1])
api = client.CoreV1Api()
pods = api.list_namespaced_pod("default", label_selector="app=web")
print("LISTED", " ".join(sorted(p.metadata.name for p in pods.items)))
rv = pods.metadata.resource_version
body = client.V1Pod(metadata=client.V1ObjectMeta(name="py-pod", labels={"app": "web"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))
api.create_namespaced_pod("default", body)
w = watch.Watch()
for ev in w.stream(api.list_namespaced_pod, "default", label_selector="app=web",
                   resource_version=rv, timeout_seconds=30):
    print("EVENT", ev["type"], ev["object"].metadata.name)
    w.stop()
    break
)";

// A raw HTTP watch connection: sends the request, then reads with a receive timeout.
class RawWatch {
 public:
  RawWatch(int port, const std::string& target) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{60, 0};  // generous: a missing event fails the test instead of hanging it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    connected_ = send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  }
  ~RawWatch() { close(fd_); }
  // Reads until `needle` was received; false on timeout or close.
  bool WaitFor(const std::string& needle, size_t from = 0) {
    if (!connected_) return false;
    char buf[4096];
    while (received_.find(needle, from) == std::string::npos) {
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return false;
      received_.append(buf, static_cast<size_t>(n));
    }
    return true;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_;
  bool connected_ = false;
  std::string received_;
};

class ApiserverE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kKubectl, X_OK) != 0) {
      GTEST_SKIP() << kKubectl << " is not installed; the kubectl end-to-end test needs it";
    }
    char tmpl[] = "/tmp/rcsim-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // kubectl reads and caches under HOME; keep it away from the user's. No other thread runs yet.
    setenv("HOME", dir_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    Result<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value();
    std::vector<std::string> args = {RCSIM_APISERVER_PATH, "--etcd_servers=" + etcd_->endpoint(), "--port=0"};
    // Every client goes as a user would: HTTPS, a bearer token from a kubeconfig (kubectl sends a
    // token only over TLS), and the server refuses requests without one.
    const std::string certs = dir_ + "/certs";
    if (tls_) {
      CommandResult made =
          RunCommand({RCSIM_MAKE_CERTS, certs, "--server", "https://127.0.0.1:PORT", "--user", "carol"});
      ASSERT_EQ(made.code, 0) << made.output;
      for (const std::string& flag :
           {"--tls-cert-file=" + certs + "/server.crt", "--tls-private-key-file=" + certs + "/server.key",
            "--token-auth-file=" + certs + "/tokens.csv"}) {
        args.push_back(flag);
      }
    }
    apiserver_ = Child::Spawn(args);
    ASSERT_NE(apiserver_, nullptr);
    const std::string listening = "listening on 127.0.0.1:";
    ASSERT_TRUE(apiserver_->WaitFor(listening)) << apiserver_->output();
    const size_t at = apiserver_->output().find(listening) + listening.size();
    ASSERT_TRUE(apiserver_->WaitFor("\n", at)) << apiserver_->output();
    port_ = std::stoi(apiserver_->output().substr(at));
    if (tls_) {
      // make-certs' kubeconfig (current context: the token) names the real port.
      kubeconfig_ = certs + "/kubeconfig";
      std::string text = ReadFile(kubeconfig_);
      for (size_t p; (p = text.find("127.0.0.1:PORT")) != std::string::npos;) {
        text.replace(p, 14, "127.0.0.1:" + std::to_string(port_));
      }
      WriteFile(kubeconfig_, text);
      server_ = "https://127.0.0.1:" + std::to_string(port_);
    } else {
      kubeconfig_ = dir_ + "/kubeconfig";
      WriteFile(kubeconfig_, "apiVersion: v1\nkind: Config\n");
      server_ = "http://127.0.0.1:" + std::to_string(port_);
    }
    setenv("KUBECONFIG", kubeconfig_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }

  void TearDown() override {
    if (apiserver_) {
      apiserver_->Terminate();
      EXPECT_EQ(apiserver_->Wait(), 0) << apiserver_->output();
    }
    apiserver_.reset();
    etcd_.reset();
    if (!dir_.empty()) RunCommand({"/bin/rm", "-rf", dir_});
  }

  // kubectl in `ns`: through the kubeconfig's token over HTTPS (plain: straight to --server).
  std::vector<std::string> Kubectl(std::vector<std::string> args, const std::string& ns = "default") {
    std::vector<std::string> argv = {kKubectl, "--namespace", ns};
    if (!tls_) argv.insert(argv.begin() + 1, {"--server", server_});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  CommandResult K(std::vector<std::string> args) { return RunCommand(Kubectl(std::move(args))); }

  bool tls_ = true;  // false: plain HTTP without authentication, for raw-socket clients
  std::string dir_;
  std::string kubeconfig_;
  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<Child> apiserver_;
  std::string server_;
  int port_ = 0;
};

// For tests whose clients are raw sockets (a thousand watch streams): plain HTTP.
class ApiserverPlainHttpE2eTest : public ApiserverE2eTest {
 protected:
  void SetUp() override {
    tls_ = false;
    ApiserverE2eTest::SetUp();
  }
};

TEST_F(ApiserverE2eTest, KubectlAndPythonClient) {
  WriteFile(dir_ + "/rc.yaml", kRcYaml);
  CommandResult create = K({"create", "-f", dir_ + "/rc.yaml"});
  ASSERT_EQ(create.code, 0) << create.output;
  EXPECT_NE(create.output.find("replicationcontroller/web created"), std::string::npos) << create.output;

  // No controller manager runs here: create the pods directly.
  for (const std::string name : {"web-1", "web-2"}) {
    WriteFile(dir_ + "/" + name + ".yaml", PodYaml(name));
    CommandResult pod = K({"create", "-f", dir_ + "/" + name + ".yaml"});
    ASSERT_EQ(pod.code, 0) << pod.output;
    EXPECT_NE(pod.output.find("pod/" + name + " created"), std::string::npos) << pod.output;
  }

  CommandResult get_rc = K({"get", "rc"});
  ASSERT_EQ(get_rc.code, 0) << get_rc.output;
  EXPECT_NE(get_rc.output.find("DESIRED"), std::string::npos) << get_rc.output;
  EXPECT_NE(get_rc.output.find("web"), std::string::npos) << get_rc.output;
  EXPECT_NE(get_rc.output.find('3'), std::string::npos) << get_rc.output;

  CommandResult get_pods = K({"get", "pods", "-l", "app=web", "-o", "json"});
  ASSERT_EQ(get_pods.code, 0) << get_pods.output;
  json pods = json::parse(get_pods.output, nullptr, false);
  ASSERT_FALSE(pods.is_discarded()) << get_pods.output;
  ASSERT_EQ(pods["items"].size(), 2u) << get_pods.output;
  EXPECT_EQ(pods["items"][0]["metadata"]["name"], "web-1");
  EXPECT_EQ(pods["items"][1]["metadata"]["name"], "web-2");

  CommandResult dry_scale = K({"scale", "rc", "web", "--replicas=9", "--dry-run=server"});
  ASSERT_EQ(dry_scale.code, 0) << dry_scale.output;
  EXPECT_NE(dry_scale.output.find("(server dry run)"), std::string::npos) << dry_scale.output;
  EXPECT_NE(K({"get", "rc", "web", "-o", "jsonpath={.spec.replicas}"}).output, "9");
  CommandResult scale = K({"scale", "rc", "web", "--replicas=5"});
  ASSERT_EQ(scale.code, 0) << scale.output;
  EXPECT_NE(scale.output.find("replicationcontroller/web scaled"), std::string::npos) << scale.output;
  CommandResult replicas = K({"get", "rc", "web", "-o", "jsonpath={.spec.replicas}"});
  ASSERT_EQ(replicas.code, 0) << replicas.output;
  EXPECT_EQ(replicas.output, "5");

  // A watch in the background sees a new pod and a deletion.
  std::unique_ptr<Child> watch = Child::Spawn(Kubectl({"get", "pods", "-w", "--output-watch-events"}));
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(watch->WaitFor("web-2")) << watch->output();
  WriteFile(dir_ + "/web-3.yaml", PodYaml("web-3"));
  ASSERT_EQ(K({"create", "-f", dir_ + "/web-3.yaml"}).code, 0);
  CommandResult del = K({"delete", "pod", "web-1"});
  ASSERT_EQ(del.code, 0) << del.output;
  EXPECT_NE(del.output.find("pod \"web-1\" deleted"), std::string::npos) << del.output;
  EXPECT_TRUE(watch->WaitFor("web-3")) << watch->output();
  EXPECT_TRUE(watch->WaitFor("DELETED")) << watch->output();
  const std::string watched = watch->output();
  EXPECT_NE(watched.find("ADDED"), std::string::npos) << watched;
  EXPECT_NE(watched.find("web-1", watched.find("DELETED")), std::string::npos) << watched;
  watch.reset();
  CommandResult after = K({"get", "pods", "-o", "name"});
  EXPECT_EQ(after.output, "pod/web-2\npod/web-3\n");

  // The objects are in etcd under the Kubernetes layout.
  CommandResult keys = RunCommand(
      {kEtcdctl, "--endpoints=" + etcd_->endpoint(), "get", "--prefix", "/registry/", "--keys-only"});
  ASSERT_EQ(keys.code, 0) << keys.output;
  EXPECT_NE(keys.output.find("/registry/controllers/default/web"), std::string::npos) << keys.output;
  EXPECT_NE(keys.output.find("/registry/pods/default/web-2"), std::string::npos) << keys.output;
  EXPECT_EQ(keys.output.find("/registry/pods/default/web-1"), std::string::npos) << keys.output;

  // The Python client lists by label selector and receives a watch event.
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  WriteFile(dir_ + "/client.py", kPythonScript);
  CommandResult py = RunCommand({kPython, dir_ + "/client.py", kubeconfig_});
  ASSERT_EQ(py.code, 0) << py.output;
  EXPECT_NE(py.output.find("LISTED web-2 web-3"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("EVENT ADDED py-pod"), std::string::npos) << py.output;
}

TEST_F(ApiserverE2eTest, KubectlReportsErrorsFromTheServer) {
  // Every command here goes over HTTPS with the kubeconfig's token: another token is refused.
  CommandResult stranger = K({"--token=not-the-token", "get", "pods"});
  EXPECT_NE(stranger.code, 0);
  EXPECT_NE(stranger.output.find("You must be logged in"), std::string::npos) << stranger.output;
  CommandResult missing = K({"get", "pod", "nope"});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.output.find("NotFound"), std::string::npos) << missing.output;
  WriteFile(dir_ + "/bad.yaml",
            "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: bad\n"
            "spec:\n  replicas: -1\n  selector:\n    app: bad\n  template:\n"
            "    metadata:\n      labels:\n        app: bad\n    spec:\n"
            "      containers:\n      - name: c\n        image: nginx\n");
  CommandResult bad = K({"create", "-f", dir_ + "/bad.yaml"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("spec.replicas"), std::string::npos) << bad.output;
  // A resource this server does not serve (a protobuf body of a kind it never reads): not found.
  CommandResult deployment = K({"create", "deployment", "d", "--image=nginx"});
  EXPECT_NE(deployment.code, 0);
  EXPECT_NE(deployment.output.find("the server could not find the requested resource"), std::string::npos)
      << deployment.output;
}

}  // namespace
}  // namespace rcsim

namespace rcsim {
namespace {

constexpr const char* kFullRcYaml = R"(apiVersion: v1
kind: ReplicationController
metadata:
  name: full
  labels:
    app: full
spec:
  replicas: 0
  selector:
    app: full
  template:
    metadata:
      labels:
        app: full
    spec:
      nodeSelector:
        disktype: ssd
      tolerations:
      - key: dedicated
        operator: Equal
        value: web
        effect: NoSchedule
      volumes:
      - name: data
        emptyDir: {}
      containers:
      - name: web
        image: nginx:1.25
        command: ["nginx", "-g", "daemon off;"]
        ports:
        - containerPort: 80
          name: http
        env:
        - name: MODE
          value: production
        resources:
          limits:
            cpu: 500m
            memory: 256Mi
        volumeMounts:
        - name: data
          mountPath: /data
        readinessProbe:
          httpGet:
            path: /healthz
            port: 80
)";

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// Issue 8, section 2: what kubectl does with apply, apply --server-side, edit, label and annotate
// keeps every field it does not mean to change.
TEST_F(ApiserverE2eTest, KubectlApplyEditLabelKeepEveryField) {
  WriteFile(dir_ + "/full.yaml", kFullRcYaml);
  CommandResult applied = K({"apply", "-f", dir_ + "/full.yaml"});
  ASSERT_EQ(applied.code, 0) << applied.output;
  EXPECT_NE(applied.output.find("replicationcontroller/full created"), std::string::npos) << applied.output;

  // Change the image only and apply again: only the image changes.
  WriteFile(dir_ + "/full.yaml", Replace(kFullRcYaml, "image: nginx:1.25", "image: nginx:1.27"));
  CommandResult again = K({"apply", "-f", dir_ + "/full.yaml"});
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("replicationcontroller/full configured"), std::string::npos) << again.output;
  auto get = [&] {
    CommandResult r = K({"get", "rc", "full", "-o", "json"});
    EXPECT_EQ(r.code, 0) << r.output;
    return json::parse(r.output, nullptr, false);
  };
  json rc = get();
  ASSERT_FALSE(rc.is_discarded());
  const json& c = rc["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["image"], "nginx:1.27");
  EXPECT_EQ(c["command"], json::array({"nginx", "-g", "daemon off;"}));
  EXPECT_EQ(c["ports"][0]["containerPort"], 80);
  EXPECT_EQ(c["env"][0]["value"], "production");
  EXPECT_EQ(c["resources"]["limits"]["memory"], "256Mi");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(rc["spec"]["template"]["spec"]["nodeSelector"]["disktype"], "ssd");
  EXPECT_EQ(rc["spec"]["template"]["spec"]["tolerations"].size(), 1u);
  const json before_spec = rc["spec"];

  // An apply that removes the env list: the three-way patch deletes it and nothing else.
  std::string no_env = Replace(Replace(kFullRcYaml, "image: nginx:1.25", "image: nginx:1.27"),
                               "        env:\n        - name: MODE\n          value: production\n", "");
  WriteFile(dir_ + "/full.yaml", no_env);
  ASSERT_EQ(K({"apply", "-f", dir_ + "/full.yaml"}).code, 0);
  rc = get();
  EXPECT_FALSE(rc["spec"]["template"]["spec"]["containers"][0].contains("env")) << rc.dump();
  EXPECT_EQ(rc["spec"]["template"]["spec"]["containers"][0]["ports"],
            before_spec["template"]["spec"]["containers"][0]["ports"]);

  // kubectl edit through an EDITOR that rewrites the replicas.
  const json pre_edit = get();
  // NOLINTNEXTLINE(concurrency-mt-unsafe): kubectl is a child process; no thread of the test reads it.
  setenv("EDITOR", "sed -i 's/replicas: 0/replicas: 2/'", 1);
  CommandResult edit = K({"edit", "rc", "full"});
  ASSERT_EQ(edit.code, 0) << edit.output;
  EXPECT_NE(edit.output.find("replicationcontroller/full edited"), std::string::npos) << edit.output;
  rc = get();
  EXPECT_EQ(rc["spec"]["replicas"], 2);
  EXPECT_EQ(rc["spec"]["template"], pre_edit["spec"]["template"]);
  EXPECT_EQ(rc["metadata"]["labels"], pre_edit["metadata"]["labels"]);
  EXPECT_EQ(rc["spec"]["template"]["spec"]["volumes"][0]["name"], "data");

  ASSERT_EQ(K({"label", "rc", "full", "tier=fe"}).code, 0);
  ASSERT_EQ(K({"annotate", "rc", "full", "example.com/note=kept"}).code, 0);
  json labeled = get();
  EXPECT_EQ(labeled["metadata"]["labels"]["tier"], "fe");
  EXPECT_EQ(labeled["metadata"]["annotations"]["example.com/note"], "kept");
  EXPECT_EQ(labeled["spec"], rc["spec"]);

  // Server-side apply, twice, the second time with a change; then a conflicting manager.
  const std::string ssa = ReplaceAll(kFullRcYaml, "full", "ssa");
  WriteFile(dir_ + "/ssa.yaml", ssa);
  CommandResult ss1 = K({"apply", "--server-side", "-f", dir_ + "/ssa.yaml"});
  ASSERT_EQ(ss1.code, 0) << ss1.output;
  EXPECT_NE(ss1.output.find("replicationcontroller/ssa serverside-applied"), std::string::npos) << ss1.output;
  WriteFile(dir_ + "/ssa.yaml", Replace(ssa, "replicas: 0", "replicas: 3"));
  CommandResult ss2 = K({"apply", "--server-side", "-f", dir_ + "/ssa.yaml"});
  ASSERT_EQ(ss2.code, 0) << ss2.output;
  CommandResult replicas = K({"get", "rc", "ssa", "-o", "jsonpath={.spec.replicas}"});
  EXPECT_EQ(replicas.output, "3");
  WriteFile(dir_ + "/ssa2.yaml", Replace(ssa, "replicas: 0", "replicas: 4"));
  CommandResult other = K({"apply", "--server-side", "--field-manager=other", "-f", dir_ + "/ssa2.yaml"});
  EXPECT_NE(other.code, 0) << other.output;
  EXPECT_NE(other.output.find("conflict"), std::string::npos) << other.output;
  EXPECT_NE(other.output.find(".spec.replicas"), std::string::npos) << other.output;
  EXPECT_EQ(K({"get", "rc", "ssa", "-o", "jsonpath={.spec.replicas}"}).output, "3");
}

// Issue 8, section 3: get ns, get nodes, delete pods -l, -o wide columns.
TEST_F(ApiserverE2eTest, KubectlNamespacesDeleteBySelectorAndWideOutput) {
  CommandResult ns = K({"get", "ns"});
  ASSERT_EQ(ns.code, 0) << ns.output;
  EXPECT_NE(ns.output.find("default"), std::string::npos) << ns.output;
  EXPECT_NE(ns.output.find("Active"), std::string::npos) << ns.output;
  WriteFile(dir_ + "/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n");
  CommandResult made = K({"create", "-f", dir_ + "/ns.yaml"});
  ASSERT_EQ(made.code, 0) << made.output;
  EXPECT_NE(K({"get", "ns"}).output.find("team-b"), std::string::npos);

  for (const std::string name : {"del-1", "del-2", "keep-1"}) {
    std::string yaml = PodYaml(name);
    if (name == "keep-1") yaml = Replace(yaml, "app: web", "app: keep");
    WriteFile(dir_ + "/" + name + ".yaml",
              Replace(yaml, "  containers:", "  nodeName: node-7\n  containers:"));
    ASSERT_EQ(K({"create", "-f", dir_ + "/" + name + ".yaml"}).code, 0);
  }
  // The node they name, as a node agent registers it (status through the main resource: a create).
  WriteFile(dir_ + "/node.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-7\nstatus:\n  conditions:\n"
            "  - type: Ready\n    status: \"True\"\n    reason: KubeletReady\n");
  CommandResult node = K({"create", "-f", dir_ + "/node.yaml"});
  ASSERT_EQ(node.code, 0) << node.output;
  CommandResult nodes = K({"get", "nodes"});
  ASSERT_EQ(nodes.code, 0) << nodes.output;
  const size_t row = nodes.output.find("\nnode-7 ");
  ASSERT_NE(row, std::string::npos) << nodes.output;
  EXPECT_NE(nodes.output.find(" Ready ", row), std::string::npos) << nodes.output;
  CommandResult wide = K({"get", "pods", "-o", "wide"});
  ASSERT_EQ(wide.code, 0) << wide.output;
  EXPECT_NE(wide.output.find("IP"), std::string::npos) << wide.output;
  EXPECT_NE(wide.output.find("NODE"), std::string::npos) << wide.output;
  EXPECT_NE(wide.output.find("node-7"), std::string::npos) << wide.output;

  WriteFile(dir_ + "/rc.yaml", kRcYaml);
  ASSERT_EQ(K({"create", "-f", dir_ + "/rc.yaml"}).code, 0);
  // Category "all": pods and replication controllers (it once named pods/log, and kubectl failed).
  CommandResult all = K({"get", "all", "-o", "name"});
  ASSERT_EQ(all.code, 0) << all.output;
  EXPECT_NE(all.output.find("pod/keep-1"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("replicationcontroller/web"), std::string::npos) << all.output;
  CommandResult rc_wide = K({"get", "rc", "-o", "wide"});
  ASSERT_EQ(rc_wide.code, 0) << rc_wide.output;
  for (const char* col : {"CONTAINERS", "IMAGES", "SELECTOR", "app=web", "nginx"}) {
    EXPECT_NE(rc_wide.output.find(col), std::string::npos) << col << "\n" << rc_wide.output;
  }

  // The pods are bound to a node and no node agent runs here: a graceful delete would wait for one.
  CommandResult del = K({"delete", "pods", "-l", "app=web", "--grace-period=0", "--force"});
  ASSERT_EQ(del.code, 0) << del.output;
  EXPECT_NE(del.output.find("pod \"del-1\" force deleted"), std::string::npos) << del.output;
  EXPECT_NE(del.output.find("pod \"del-2\" force deleted"), std::string::npos) << del.output;
  EXPECT_EQ(K({"get", "pods", "-o", "name"}).output, "pod/keep-1\n");

  // Objects in a namespace that does not exist are refused; deleting a namespace takes its objects.
  WriteFile(dir_ + "/ghost.yaml", PodYaml("ghost"));
  CommandResult ghost = RunCommand(Kubectl({"create", "-f", dir_ + "/ghost.yaml"}, "nowhere"));
  EXPECT_NE(ghost.code, 0);
  EXPECT_NE(ghost.output.find("not found"), std::string::npos) << ghost.output;
  ASSERT_EQ(RunCommand(Kubectl({"create", "-f", dir_ + "/ghost.yaml"}, "team-b")).code, 0);
  ASSERT_EQ(K({"delete", "namespace", "team-b"}).code, 0);
  CommandResult gone = RunCommand(Kubectl({"get", "pods", "-o", "name"}, "team-b"));
  EXPECT_EQ(gone.output, "") << gone.output;
}

// kubectl's typed clients send protobuf: `create namespace` a Namespace, `drain` Evictions, `delete`
// on a drained pod DeleteOptions. And a server-side dry run (query or DeleteOptions.dryRun) writes
// nothing: before, `kubectl delete --dry-run=server` deleted for real.
TEST_F(ApiserverE2eTest, KubectlCreateNamespaceDrainAndServerDryRuns) {
  CommandResult made = K({"create", "namespace", "team-c"});
  ASSERT_EQ(made.code, 0) << made.output;
  EXPECT_NE(made.output.find("namespace/team-c created"), std::string::npos) << made.output;
  CommandResult got = K({"get", "ns", "team-c", "-o", "jsonpath={.metadata.labels}"});
  ASSERT_EQ(got.code, 0) << got.output;
  EXPECT_NE(got.output.find("kubernetes.io/metadata.name"), std::string::npos) << got.output;
  CommandResult label = K({"label", "namespace", "team-c", "tier=backend"});
  ASSERT_EQ(label.code, 0) << label.output;
  ASSERT_EQ(K({"annotate", "namespace", "default", "owner=ops"}).code, 0);
  EXPECT_EQ(K({"get", "ns", "-l", "tier=backend", "-o", "name"}).output, "namespace/team-c\n");
  EXPECT_EQ(K({"get", "ns", "default", "-o", "jsonpath={.metadata.annotations.owner}"}).output, "ops");
  ASSERT_EQ(K({"create", "namespace", "team-d", "--dry-run=server"}).code, 0);
  EXPECT_NE(K({"get", "ns", "team-d"}).code, 0) << "a dry-run create stored the namespace";
  CommandResult dry_ns = K({"delete", "namespace", "team-c", "--dry-run=server"});
  ASSERT_EQ(dry_ns.code, 0) << dry_ns.output;
  EXPECT_EQ(K({"get", "ns", "team-c"}).code, 0) << "a dry-run delete removed the namespace";

  WriteFile(dir_ + "/node.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-8\nstatus:\n  conditions:\n"
            "  - type: Ready\n    status: \"True\"\n    reason: KubeletReady\n");
  ASSERT_EQ(K({"create", "-f", dir_ + "/node.yaml"}).code, 0);
  for (const std::string name : {"drain-1", "drain-2"}) {
    WriteFile(dir_ + "/" + name + ".yaml",
              Replace(PodYaml(name), "  containers:", "  nodeName: node-8\n  containers:"));
    ASSERT_EQ(K({"create", "-f", dir_ + "/" + name + ".yaml"}).code, 0);
  }
  CommandResult dry_pod = K({"delete", "pod", "drain-1", "--dry-run=server"});
  ASSERT_EQ(dry_pod.code, 0) << dry_pod.output;
  EXPECT_NE(dry_pod.output.find("(server dry run)"), std::string::npos) << dry_pod.output;
  CommandResult still = K({"get", "pod", "drain-1", "-o", "jsonpath={.metadata.deletionTimestamp}"});
  ASSERT_EQ(still.code, 0) << "a dry-run delete removed the pod: " << still.output;
  EXPECT_EQ(still.output, "") << "a dry-run delete marked the pod deleting";

  // kubectl auth can-i: every authenticated request is authorized here.
  CommandResult can_i = K({"auth", "can-i", "delete", "pods"});
  EXPECT_EQ(can_i.code, 0) << can_i.output;
  EXPECT_EQ(can_i.output, "yes\n");
  CommandResult rules = K({"auth", "can-i", "--list"});
  ASSERT_EQ(rules.code, 0) << rules.output;
  EXPECT_NE(rules.output.find("*.*"), std::string::npos) << rules.output;
  // kubectl explain renders the served schemas, down to a nested field, leases included.
  CommandResult explain = K({"explain", "rc.spec.template.spec.containers"});
  ASSERT_EQ(explain.code, 0) << explain.output;
  EXPECT_NE(explain.output.find("FIELD: containers <[]Container>"), std::string::npos) << explain.output;
  EXPECT_NE(explain.output.find("image\t<string>"), std::string::npos) << explain.output;
  EXPECT_NE(explain.output.find("-required-"), std::string::npos) << explain.output;
  CommandResult explain_lease = K({"explain", "leases.spec.holderIdentity"});
  ASSERT_EQ(explain_lease.code, 0) << explain_lease.output;
  EXPECT_NE(explain_lease.output.find("coordination.k8s.io"), std::string::npos) << explain_lease.output;
  // Every group the server lists answers with resources: an empty policy/v1 list failed this.
  CommandResult resources = K({"api-resources", "-o", "name"});
  ASSERT_EQ(resources.code, 0) << resources.output;
  EXPECT_NE(resources.output.find("replicationcontrollers\n"), std::string::npos) << resources.output;
  EXPECT_NE(resources.output.find("leases.coordination.k8s.io\n"), std::string::npos) << resources.output;
  CommandResult dry_drain =
      K({"drain", "node-8", "--dry-run=server", "--force", "--grace-period=0", "--timeout=30s"});
  ASSERT_EQ(dry_drain.code, 0) << dry_drain.output;
  EXPECT_EQ(K({"get", "pods", "-o", "name"}).output, "pod/drain-1\npod/drain-2\n");
  EXPECT_EQ(K({"get", "node", "node-8", "-o", "jsonpath={.spec.unschedulable}"}).output, "");
  // `kubectl apply --dry-run=server` of a changed object (a patch): answered, not stored.
  WriteFile(dir_ + "/drain-1.yaml", Replace(Replace(PodYaml("drain-1"), "app: web", "app: changed"),
                                            "  containers:", "  nodeName: node-8\n  containers:"));
  CommandResult dry_apply = K({"apply", "--dry-run=server", "-f", dir_ + "/drain-1.yaml"});
  ASSERT_EQ(dry_apply.code, 0) << dry_apply.output;
  EXPECT_NE(dry_apply.output.find("(server dry run)"), std::string::npos) << dry_apply.output;
  EXPECT_EQ(K({"get", "pod", "drain-1", "-o", "jsonpath={.metadata.labels.app}"}).output, "web");
  // No node agent runs here, so the pods go at once (grace 0), through the eviction API; they have no
  // controller, hence --force.
  CommandResult drain = K({"drain", "node-8", "--force", "--grace-period=0", "--timeout=30s"});
  ASSERT_EQ(drain.code, 0) << drain.output;
  EXPECT_NE(drain.output.find("pod/drain-1 evicted"), std::string::npos) << drain.output;
  EXPECT_NE(drain.output.find("node/node-8 drained"), std::string::npos) << drain.output;
  EXPECT_EQ(K({"get", "pods", "-o", "name"}).output, "");
  CommandResult node = K({"get", "node", "node-8", "-o", "jsonpath={.spec.unschedulable}"});
  EXPECT_EQ(node.output, "true") << node.output;
}

constexpr const char* kPythonReplaceScript = R"(
import sys
from kubernetes import client, config

config.load_kube_config(sys.argv[1])
api = client.CoreV1Api()
body = client.V1Pod(metadata=client.V1ObjectMeta(name="py-replace", labels={"app": "py"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(
                        name="c", image="nginx", ports=[client.V1ContainerPort(container_port=80)],
                        env=[client.V1EnvVar(name="A", value="1")])]))
api.create_namespaced_pod("default", body)
pod = api.read_namespaced_pod("py-replace", "default")
pod.metadata.labels["tier"] = "fe"
# The client sends creationTimestamp back as "+00:00".
replaced = api.replace_namespaced_pod("py-replace", "default", pod)
print("REPLACED", replaced.metadata.labels["tier"], replaced.spec.containers[0].ports[0].container_port,
      replaced.spec.containers[0].env[0].value)
rc = client.V1ReplicationController(metadata=client.V1ObjectMeta(name="py-rc"),
    spec=client.V1ReplicationControllerSpec(replicas=0, selector={"app": "py"},
        template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "py"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))))
api.create_namespaced_replication_controller("default", rc)
got = api.read_namespaced_replication_controller("py-rc", "default")
got.spec.replicas = 2
api.replace_namespaced_replication_controller("py-rc", "default", got)
print("RC", api.read_namespaced_replication_controller("py-rc", "default").spec.replicas)
api.delete_collection_namespaced_pod("default", label_selector="app=py")
print("LEFT", len(api.list_namespaced_pod("default", label_selector="app=py").items))
)";

// Issue 8: the python client's replace_* failed with 400 (it sends "+00:00" timestamps).
TEST_F(ApiserverE2eTest, PythonClientReplaceAndDeleteCollection) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  WriteFile(dir_ + "/replace.py", kPythonReplaceScript);
  CommandResult py = RunCommand({kPython, dir_ + "/replace.py", kubeconfig_});
  ASSERT_EQ(py.code, 0) << py.output;
  EXPECT_NE(py.output.find("REPLACED fe 80 1"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("RC 2"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("LEFT 0"), std::string::npos) << py.output;
}

constexpr const char* kPythonEvictionScript = R"(
import sys
from kubernetes import client, config

config.load_kube_config(sys.argv[1])
api = client.CoreV1Api()
api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-ns")))
api.delete_namespace("py-ns", dry_run="All")
print("NS", api.read_namespace("py-ns").metadata.name)
pod = client.V1Pod(metadata=client.V1ObjectMeta(name="py-evict"),
                   spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))
api.create_namespaced_pod("py-ns", pod)
api.delete_namespaced_pod("py-evict", "py-ns", dry_run="All")
print("KEPT", api.read_namespaced_pod("py-evict", "py-ns").metadata.name)
ev = client.V1Eviction(metadata=client.V1ObjectMeta(name="py-evict", namespace="py-ns"))
print("EVICTION", api.create_namespaced_pod_eviction("py-evict", "py-ns", ev).kind)
print("LEFT", len(api.list_namespaced_pod("py-ns").items))
)";

TEST_F(ApiserverE2eTest, PythonClientEvictionAndDryRunDeletes) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  WriteFile(dir_ + "/evict.py", kPythonEvictionScript);
  CommandResult py = RunCommand({kPython, dir_ + "/evict.py", kubeconfig_});
  ASSERT_EQ(py.code, 0) << py.output;
  EXPECT_NE(py.output.find("NS py-ns"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("KEPT py-evict"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("EVICTION Status"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("LEFT 0"), std::string::npos) << py.output;
}

// etcd's own count of its watch streams (the etcd_debugging_mvcc_watch_stream_total gauge of /metrics).
int EtcdWatchStreams(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  const int port = std::stoi(endpoint.substr(colon + 1));
  RawWatch metrics(port, "/metrics");
  const std::string name = "\netcd_debugging_mvcc_watch_stream_total ";
  if (!metrics.WaitFor(name)) return -1;
  const size_t at = metrics.received().find(name);
  if (!metrics.WaitFor("\n", at + name.size())) return -1;
  return std::stoi(metrics.received().substr(at + name.size()));
}

// Issue 8, section 4: the apiserver over a real etcd holds 1,000 watch streams on a handful of etcd
// watch streams (one per resource, the watch cache), still answers kubectl, and fans a new pod out to
// every stream.
TEST_F(ApiserverPlainHttpE2eTest, AThousandWatchStreamsOnAFewEtcdWatches) {
  constexpr int kWatches = 1000;
  const int etcd_before = EtcdWatchStreams(etcd_->endpoint());
  ASSERT_GE(etcd_before, 0) << "etcd /metrics has no etcd_debugging_mvcc_watch_stream_total";
  std::vector<std::unique_ptr<RawWatch>> watches;
  for (int i = 0; i < kWatches; ++i) {
    const char* target =
        i % 2 ? "/api/v1/namespaces/default/pods?watch=1" : "/api/v1/pods?watch=1&labelSelector=app%3Dweb";
    watches.push_back(std::make_unique<RawWatch>(port_, target));
  }
  for (int i = 0; i < kWatches; ++i) {
    ASSERT_TRUE(watches[i]->WaitFor("\r\n\r\n")) << i << ": " << watches[i]->received();
    ASSERT_TRUE(watches[i]->received().starts_with("HTTP/1.1 200")) << watches[i]->received();
  }
  const int etcd_during = EtcdWatchStreams(etcd_->endpoint());
  EXPECT_LE(etcd_during - etcd_before, 4) << "etcd watch streams before " << etcd_before << ", with "
                                          << kWatches << " HTTP watches " << etcd_during;
  CommandResult version = K({"get", "pods"});
  ASSERT_EQ(version.code, 0) << version.output;
  WriteFile(dir_ + "/fan.yaml", PodYaml("fan-out"));
  CommandResult create = K({"create", "-f", dir_ + "/fan.yaml"});
  ASSERT_EQ(create.code, 0) << create.output;
  for (int i = 0; i < kWatches; ++i) {
    EXPECT_TRUE(watches[i]->WaitFor("\"name\":\"fan-out\"")) << i << ": " << watches[i]->received();
  }
  // A list with resourceVersion=0 is served from the cache.
  RawWatch list(port_, "/api/v1/namespaces/default/pods?resourceVersion=0");
  EXPECT_TRUE(list.WaitFor("fan-out")) << list.received();
}

// Issue 8, section 3: the controller-manager records SuccessfulCreate and SuccessfulDelete on its
// controllers; `kubectl get events` lists them and `kubectl describe rc` shows them.
TEST_F(ApiserverE2eTest, KubectlDescribeRcAndGetEventsShowTheManagersEvents) {
  std::unique_ptr<Child> manager =
      Child::Spawn({RCSIM_CONTROLLER_MANAGER_PATH, "--kubeconfig=" + kubeconfig_, "--leader-elect=false",
                    "--port=-1", "--secure-port=-1", "--workers=2"});
  ASSERT_NE(manager, nullptr);
  WriteFile(dir_ + "/rc.yaml", kRcYaml);
  CommandResult apply = K({"apply", "-f", dir_ + "/rc.yaml"});
  ASSERT_EQ(apply.code, 0) << apply.output;
  auto count = [](const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  };
  // Polls `kubectl get events` until `pred` holds or the deadline passes.
  auto events_until = [&](const std::function<bool(const std::string&)>& pred) {
    const auto deadline = SteadyClock::now() + kCommandDeadline;
    CommandResult r = K({"get", "events"});
    while (!(r.code == 0 && pred(r.output)) && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      r = K({"get", "events"});
    }
    return r;
  };
  CommandResult events =
      events_until([&](const std::string& out) { return count(out, "SuccessfulCreate") == 3; });
  ASSERT_EQ(count(events.output, "SuccessfulCreate"), 3) << events.output << "\n" << manager->output();
  EXPECT_NE(events.output.find("LAST SEEN"), std::string::npos) << events.output;
  EXPECT_NE(events.output.find("replicationcontroller/web"), std::string::npos) << events.output;
  EXPECT_NE(events.output.find("Created pod: web-"), std::string::npos) << events.output;

  // kubectl get events -w: the events so far, then the deletions the scale-down records.
  std::unique_ptr<Child> watch = Child::Spawn(Kubectl({"get", "events", "-w"}));
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(watch->WaitFor("Created pod: web-")) << watch->output();
  CommandResult scale = K({"scale", "rc", "web", "--replicas=1"});
  ASSERT_EQ(scale.code, 0) << scale.output;
  EXPECT_TRUE(watch->WaitFor("Deleted pod: web-")) << watch->output();
  watch.reset();
  events = events_until([&](const std::string& out) { return count(out, "SuccessfulDelete") == 2; });
  EXPECT_EQ(count(events.output, "SuccessfulDelete"), 2) << events.output;

  CommandResult describe = K({"describe", "rc", "web"});
  ASSERT_EQ(describe.code, 0) << describe.output;
  const size_t at = describe.output.find("Events:");
  ASSERT_NE(at, std::string::npos) << describe.output;
  const std::string shown = describe.output.substr(at);
  EXPECT_EQ(count(shown, "SuccessfulCreate"), 3) << describe.output;
  EXPECT_EQ(count(shown, "SuccessfulDelete"), 2) << describe.output;
  EXPECT_NE(shown.find("replication-controller"), std::string::npos) << describe.output;  // From
  EXPECT_NE(shown.find("Deleted pod: web-"), std::string::npos) << describe.output;
  // A field selector on another object shows none of them.
  CommandResult other = K({"get", "events", "--field-selector", "involvedObject.name=other"});
  EXPECT_EQ(other.code, 0) << other.output;
  EXPECT_EQ(count(other.output, "Successful"), 0) << other.output;
  manager->Terminate();
  EXPECT_EQ(manager->Wait(), 0) << manager->output();
}

constexpr const char* kLeaseYaml = R"(apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: node-e2e
  labels:
    tier: gold
spec:
  holderIdentity: HOLDER
  leaseDurationSeconds: 40
)";

constexpr const char* kPythonLeaseWatchScript = R"(
import sys
from kubernetes import client, config, watch

config.load_kube_config(sys.argv[1])
api = client.CoordinationV1Api()
print("GOLD", [l.metadata.name for l in api.list_lease_for_all_namespaces(label_selector="tier=gold").items])
listed = api.list_namespaced_lease("kube-node-lease")
lease = api.read_namespaced_lease("node-e2e", "kube-node-lease")
lease.spec.holder_identity = "py"
api.replace_namespaced_lease("node-e2e", "kube-node-lease", lease)
w = watch.Watch()
for ev in w.stream(api.list_namespaced_lease, "kube-node-lease", resource_version=listed.metadata.resource_version,
                   timeout_seconds=30):
    print("EVENT", ev["type"], ev["object"].metadata.name, ev["object"].spec.holder_identity)
    w.stop()
)";

TEST_F(ApiserverE2eTest, KubectlAndPythonWatchLeases) {
  std::string yaml = kLeaseYaml;
  WriteFile(dir_ + "/lease.yaml", yaml.replace(yaml.find("HOLDER"), 6, "first"));
  CommandResult created = RunCommand(Kubectl({"create", "-f", dir_ + "/lease.yaml"}, "kube-node-lease"));
  ASSERT_EQ(created.code, 0) << created.output;
  std::unique_ptr<Child> watch =
      Child::Spawn(Kubectl({"get", "leases", "-w", "--output-watch-events"}, "kube-node-lease"));
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(watch->WaitFor("first")) << watch->output();  // ADDED node-e2e, HOLDER column
  EXPECT_NE(watch->output().find("ADDED"), std::string::npos) << watch->output();
  EXPECT_NE(watch->output().find("HOLDER"), std::string::npos) << watch->output();
  yaml = kLeaseYaml;
  WriteFile(dir_ + "/lease.yaml", yaml.replace(yaml.find("HOLDER"), 6, "second"));
  CommandResult replaced = RunCommand(Kubectl({"replace", "-f", dir_ + "/lease.yaml"}, "kube-node-lease"));
  ASSERT_EQ(replaced.code, 0) << replaced.output;
  EXPECT_TRUE(watch->WaitFor("second")) << watch->output();
  EXPECT_NE(watch->output().find("MODIFIED"), std::string::npos) << watch->output();
  CommandResult patched = RunCommand(Kubectl(
      {"patch", "lease", "node-e2e", "--type", "merge", "-p", R"({"spec":{"holderIdentity":"third"}})"},
      "kube-node-lease"));
  ASSERT_EQ(patched.code, 0) << patched.output;
  EXPECT_TRUE(watch->WaitFor("third")) << watch->output();
  watch.reset();
  CommandResult none = RunCommand(Kubectl({"get", "leases", "-A", "-l", "tier=none"}));
  EXPECT_EQ(none.code, 0) << none.output;
  EXPECT_EQ(none.output.find("node-e2e"), std::string::npos) << none.output;

  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  WriteFile(dir_ + "/lease_watch.py", kPythonLeaseWatchScript);
  CommandResult py = RunCommand({kPython, dir_ + "/lease_watch.py", kubeconfig_});
  ASSERT_EQ(py.code, 0) << py.output;
  EXPECT_NE(py.output.find("GOLD ['node-e2e']"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("EVENT MODIFIED node-e2e py"), std::string::npos) << py.output;
}

}  // namespace
}  // namespace rcsim
