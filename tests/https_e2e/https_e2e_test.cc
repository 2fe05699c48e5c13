// End to end over HTTPS: a real etcd, the apiserver binary with --tls-cert-file, --client-ca-file and
// --token-auth-file, certificates and a kubeconfig from scripts/make-certs, driven by the installed
// kubectl (with a token, with client certificate files, with inline -data fields) and the Debian
// python3-kubernetes client, and the controller-manager reconciling through the kubeconfig. Skipped (with a
// message) only when kubectl is absent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
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
constexpr auto kCommandDeadline = std::chrono::seconds(60);

// A child process whose stdout and stderr go to one pipe read with deadlines. SIGKILLed on
// destruction, and by the kernel if this test dies.
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
  // Reads until `needle` appears in the output (true) or the deadline / EOF (false).
  bool WaitFor(const std::string& needle, SteadyClock::duration timeout = kCommandDeadline) {
    const auto until = SteadyClock::now() + timeout;
    while (output_.find(needle) == std::string::npos) {
      if (!ReadSome(until)) return false;
    }
    return true;
  }
  // Reads to EOF and reaps the child; its exit code (-1 on deadline or signal).
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

// Polls `pred` every 100 ms until it holds or `timeout` passes.
bool Eventually(const std::function<bool()>& pred, SteadyClock::duration timeout = std::chrono::seconds(60)) {
  const auto until = SteadyClock::now() + timeout;
  while (!pred()) {
    if (SteadyClock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

std::string RcYaml(int replicas) {
  return "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: web\nspec:\n  replicas: " +
         std::to_string(replicas) +
         "\n  selector:\n    app: web\n  template:\n    metadata:\n      labels:\n        app: web\n"
         "    spec:\n      containers:\n      - name: web\n        image: nginx\n";
}
std::string PodYaml(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  labels:\n    app: solo\nspec:\n  containers:\n  - name: c\n    image: nginx\n";
}

constexpr const char* kPythonScript = R"(
import sys
from kubernetes import client, config, watch

config.load_kube_config(sys.argv[1], context=sys.argv[2])
api = client.CoreV1Api()
rcs = api.list_namespaced_replication_controller("default")
print("RCS", " ".join(sorted(r.metadata.name for r in rcs.items)))
pods = api.list_namespaced_pod("default", label_selector="app=py")
rv = pods.metadata.resource_version
name = "py-" + sys.argv[2]
body = client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels={"app": "py"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))
api.create_namespaced_pod("default", body)
w = watch.Watch()
for ev in w.stream(api.list_namespaced_pod, "default", label_selector="app=py",
                   resource_version=rv, timeout_seconds=30):
    print("EVENT", ev["type"], ev["object"].metadata.name)
    w.stop()
    break
)";

class HttpsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kKubectl, X_OK) != 0) {
      GTEST_SKIP() << kKubectl << " is not installed; the HTTPS end-to-end test needs it";
    }
    char tmpl[] = "/tmp/rcsim-https-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // kubectl caches under HOME. No other thread runs yet.
    setenv("HOME", dir_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    unsetenv("KUBECONFIG");           // NOLINT(concurrency-mt-unsafe)
    const std::string certs = dir_ + "/certs";
    CommandResult made = RunCommand({RCSIM_MAKE_CERTS, certs, "--server", "https://127.0.0.1:PORT", "--user",
                                     "carol", "--groups", "dev,system:masters"});
    ASSERT_EQ(made.code, 0) << made.output;
    CommandResult other = RunCommand({RCSIM_MAKE_CERTS, dir_ + "/other", "--user", "mallory"});
    ASSERT_EQ(other.code, 0) << other.output;

    Result<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value();
    apiserver_ = Child::Spawn(
        {RCSIM_APISERVER_BINARY, "--etcd_servers=" + etcd_->endpoint(), "--port=0",
         "--tls-cert-file=" + certs + "/server.crt", "--tls-private-key-file=" + certs + "/server.key",
         "--client-ca-file=" + certs + "/ca.crt", "--token-auth-file=" + certs + "/tokens.csv"});
    ASSERT_NE(apiserver_, nullptr);
    ASSERT_TRUE(apiserver_->WaitFor("listening on 127.0.0.1:")) << apiserver_->output();
    ASSERT_TRUE(apiserver_->WaitFor("\n", std::chrono::seconds(5)));
    const std::string& out = apiserver_->output();
    const size_t at = out.find("listening on 127.0.0.1:") + std::string("listening on 127.0.0.1:").size();
    ASSERT_TRUE(apiserver_->WaitFor(out.substr(at, 1)));  // at least one digit
    port_ = std::stoi(apiserver_->output().substr(at));
    // The kubeconfig names the real port.
    kubeconfig_ = certs + "/kubeconfig";
    std::string text = ReadFile(kubeconfig_);
    for (size_t p; (p = text.find("127.0.0.1:PORT")) != std::string::npos;) {
      text.replace(p, 14, "127.0.0.1:" + std::to_string(port_));
    }
    WriteFile(kubeconfig_, text);
    server_ = "https://127.0.0.1:" + std::to_string(port_);
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

  // kubectl through the generated kubeconfig with `context` (rcsim: token, rcsim-cert, rcsim-data).
  std::vector<std::string> Kubectl(const std::string& context, std::vector<std::string> args) {
    std::vector<std::string> argv = {kKubectl, "--kubeconfig", kubeconfig_, "--context",
                                     context,  "--namespace",  "default"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  CommandResult K(const std::string& context, std::vector<std::string> args) {
    return RunCommand(Kubectl(context, std::move(args)));
  }

  std::string dir_;
  std::string kubeconfig_;
  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<Child> apiserver_;
  std::string server_;
  int port_ = 0;
};

TEST_F(HttpsE2eTest, KubectlWithATokenAndWithClientCertificates) {
  // The token's user (tokens.csv) and the certificate's (CN, O) are who the server says they are.
  CommandResult who = K("rcsim", {"auth", "whoami", "-o", "json"});
  ASSERT_EQ(who.code, 0) << who.output;
  json info = json::parse(who.output, nullptr, false)["status"]["userInfo"];
  EXPECT_EQ(info["username"], "carol") << who.output;
  EXPECT_EQ(info["uid"], "carol-uid") << who.output;
  for (const std::string context : {"rcsim-cert", "rcsim-data"}) {
    CommandResult by_cert = K(context, {"auth", "whoami", "-o", "json"});
    ASSERT_EQ(by_cert.code, 0) << context << ": " << by_cert.output;
    info = json::parse(by_cert.output, nullptr, false)["status"]["userInfo"];
    EXPECT_EQ(info["username"], "carol") << by_cert.output;
    EXPECT_EQ(info["groups"], json({"dev", "system:masters", "system:authenticated"})) << by_cert.output;
    EXPECT_FALSE(info.contains("uid")) << by_cert.output;
  }

  // apply and get with the token; a watch with the client certificate sees a pod made with the token.
  WriteFile(dir_ + "/rc.yaml", RcYaml(3));
  CommandResult apply = K("rcsim", {"apply", "-f", dir_ + "/rc.yaml"});
  ASSERT_EQ(apply.code, 0) << apply.output;
  EXPECT_NE(apply.output.find("replicationcontroller/web created"), std::string::npos) << apply.output;
  CommandResult replicas = K("rcsim-data", {"get", "rc", "web", "-o", "jsonpath={.spec.replicas}"});
  ASSERT_EQ(replicas.code, 0) << replicas.output;
  EXPECT_EQ(replicas.output, "3");
  std::unique_ptr<Child> watch =
      Child::Spawn(Kubectl("rcsim-cert", {"get", "pods", "-w", "--output-watch-events"}));
  ASSERT_NE(watch, nullptr);
  WriteFile(dir_ + "/solo.yaml", PodYaml("solo"));
  // The watch may start after the create; either way its initial list or an event names the pod.
  CommandResult create = K("rcsim", {"create", "-f", dir_ + "/solo.yaml"});
  ASSERT_EQ(create.code, 0) << create.output;
  EXPECT_TRUE(watch->WaitFor("solo")) << watch->output();
  CommandResult del = K("rcsim-cert", {"delete", "pod", "solo"});
  ASSERT_EQ(del.code, 0) << del.output;
  EXPECT_TRUE(watch->WaitFor("DELETED")) << watch->output();
  watch.reset();

  // A wrong token: 401. With another CA's certificate, or trusting another CA: refused.
  CommandResult bad_token = RunCommand({kKubectl, "--server", server_, "--certificate-authority",
                                        dir_ + "/certs/ca.crt", "--token", "wrong", "get", "pods"});
  EXPECT_NE(bad_token.code, 0);
  EXPECT_NE(bad_token.output.find("Unauthorized"), std::string::npos) << bad_token.output;
  CommandResult wrong_ca = RunCommand({kKubectl, "--server", server_, "--certificate-authority",
                                       dir_ + "/other/ca.crt", "--token", "x", "get", "pods"});
  EXPECT_NE(wrong_ca.code, 0);
  EXPECT_NE(wrong_ca.output.find("certificate"), std::string::npos) << wrong_ca.output;
  CommandResult foreign_cert =
      RunCommand({kKubectl, "--server", server_, "--certificate-authority", dir_ + "/certs/ca.crt",
                  "--client-certificate", dir_ + "/other/client.crt", "--client-key",
                  dir_ + "/other/client.key", "get", "pods"});
  EXPECT_NE(foreign_cert.code, 0) << foreign_cert.output;
  // The server name checked is the URL's: the certificate names 127.0.0.1 and localhost, not others.
  CommandResult by_localhost =
      RunCommand({kKubectl, "--server", "https://localhost:" + std::to_string(port_),
                  "--certificate-authority", dir_ + "/certs/ca.crt", "--token",
                  ReadFile(dir_ + "/certs/token").substr(0, 48), "get", "rc", "-o", "name"});
  EXPECT_EQ(by_localhost.code, 0) << by_localhost.output;
  EXPECT_EQ(by_localhost.output, "replicationcontroller/web\n");
  CommandResult other_name =
      RunCommand({kKubectl, "--server", server_, "--certificate-authority", dir_ + "/certs/ca.crt",
                  "--tls-server-name", "example.com", "--token", "x", "get", "pods"});
  EXPECT_NE(other_name.code, 0);
  EXPECT_NE(other_name.output.find("certificate"), std::string::npos) << other_name.output;
}

TEST_F(HttpsE2eTest, PythonClientWithATokenAndWithAClientCertificate) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  WriteFile(dir_ + "/rc.yaml", RcYaml(1));
  ASSERT_EQ(K("rcsim", {"create", "-f", dir_ + "/rc.yaml"}).code, 0);
  WriteFile(dir_ + "/client.py", kPythonScript);
  for (const std::string context : {"rcsim", "rcsim-cert", "rcsim-data"}) {
    CommandResult py = RunCommand({kPython, dir_ + "/client.py", kubeconfig_, context});
    ASSERT_EQ(py.code, 0) << context << ": " << py.output;
    EXPECT_NE(py.output.find("RCS web"), std::string::npos) << py.output;
    EXPECT_NE(py.output.find("EVENT ADDED py-" + context), std::string::npos) << py.output;
  }
}

// The controller-manager with only --kubeconfig (HTTPS; the token, then the client certificate inline)
// and no etcd flag converges a replication controller and follows a scale.
TEST_F(HttpsE2eTest, ControllerManagerReconcilesOverHttps) {
  auto pods = [&]() -> int {
    CommandResult r = K("rcsim", {"get", "pods", "-l", "app=web", "-o", "name"});
    if (r.code != 0) return -1;
    int n = 0;
    for (size_t p = 0; (p = r.output.find("pod/", p)) != std::string::npos; ++p) ++n;
    return n;
  };
  int round = 0;
  for (const std::string context : {"rcsim", "rcsim-data"}) {
    SCOPED_TRACE(context);
    std::unique_ptr<Child> manager =
        Child::Spawn({RCSIM_CONTROLLER_MANAGER_BINARY, "--kubeconfig=" + kubeconfig_, "--context=" + context,
                      "--leader-elect=false", "--port=-1", "--secure-port=-1", "--resync=1"});
    ASSERT_NE(manager, nullptr);
    ASSERT_TRUE(manager->WaitFor("controller-manager running")) << manager->output();
    const int replicas = round == 0 ? 3 : 1;
    WriteFile(dir_ + "/rc.yaml", RcYaml(replicas));
    CommandResult apply = K("rcsim", {"apply", "-f", dir_ + "/rc.yaml"});
    ASSERT_EQ(apply.code, 0) << apply.output;
    EXPECT_TRUE(Eventually([&] { return pods() == replicas; })) << pods() << " pods\n" << manager->output();
    if (round == 0) {
      CommandResult scale = K("rcsim-cert", {"scale", "rc", "web", "--replicas=5"});
      ASSERT_EQ(scale.code, 0) << scale.output;
      EXPECT_TRUE(Eventually([&] { return pods() == 5; })) << pods() << " pods\n" << manager->output();
    }
    manager->Terminate();
    EXPECT_EQ(manager->Wait(), 0) << manager->output();
    ++round;
  }
  // A manager that does not trust the server's CA says why and does not act.
  std::string text = ReadFile(kubeconfig_);
  const std::string ca_line = "certificate-authority: ca.crt";
  text.replace(text.find(ca_line), ca_line.size(), "certificate-authority: " + dir_ + "/other/ca.crt");
  WriteFile(dir_ + "/untrusting.kubeconfig", text);
  std::unique_ptr<Child> untrusting =
      Child::Spawn({RCSIM_CONTROLLER_MANAGER_BINARY, "--kubeconfig=" + dir_ + "/untrusting.kubeconfig",
                    "--leader-elect=false", "--port=-1", "--secure-port=-1"});
  ASSERT_NE(untrusting, nullptr);
  EXPECT_TRUE(untrusting->WaitFor("certificate verify failed")) << untrusting->output();
}

}  // namespace
}  // namespace rcsim
