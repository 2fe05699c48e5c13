// End to end: etcd, the apiserver and the controller-manager (with its garbage collector) as real
// processes. Deleting a replication controller cascades to its pods as kube-controller-manager's
// garbage collector does, for each propagationPolicy: none (core/v1 RCs default to Orphan), Orphan,
// Background and Foreground, through the API client and through kubectl's `delete rc --cascade=...`.
// And `--controllers` really selects: without the garbage collector an orphaning delete never finishes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/controller-manager/manager_test_support.h"
#include "backends/httpclient/http_api_client.h"
#include "engine/node_types.h"
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/etcd_fixture/etcd_process.h"

#if !defined(RCSIM_APISERVER_BINARY)
#error "the apiserver binary must be given"
#endif

namespace rcsim {
namespace {

constexpr const char* kKubectl = "/usr/bin/kubectl";

bool HasFinalizer(const ObjectMeta& m, const std::string& f) {
  return std::find(m.finalizers.begin(), m.finalizers.end(), f) != m.finalizers.end();
}

// Runs a command to completion (bounded: SIGKILL after `timeout`); its exit code (-1 if killed) and
// output.
std::pair<int, std::string> RunCommand(const std::vector<std::string>& args,
                                       std::chrono::seconds timeout = std::chrono::seconds(60)) {
  static int next = 0;
  const std::string out_path = (std::filesystem::temp_directory_path() /
                                ("rcsim-cascade-" + std::to_string(getpid()) + "-" + std::to_string(next++)))
                                   .string();
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  argv.reserve(copy.size() + 1);
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (fd >= 0) close(fd);
  int code = -1;
  const auto deadline = SteadyClock::now() + timeout;
  while (true) {
    int wstatus = 0;
    if (waitpid(pid, &wstatus, WNOHANG) == pid) {
      code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
      break;
    }
    if (SteadyClock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::error_code ec;
  std::filesystem::remove(out_path, ec);
  return {code, ss.str()};
}

class CascadingDeletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value();
    ApiServerProcessOptions api_options;
    api_options.binary = RCSIM_APISERVER_BINARY;
    api_options.etcd_servers = etcd_->endpoint();
    auto apiserver = ApiServerProcess::Start(api_options);
    ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
    apiserver_ = std::move(apiserver).value();
    HttpApiClientOptions client_options;
    client_options.base_url = apiserver_->url();
    auto client = HttpApiClient::Create(client_options);
    ASSERT_TRUE(client.ok());
    client_ = std::move(client).value();
  }

  void StartManager(std::vector<std::string> extra = {}) {
    std::vector<std::string> flags = {"--apiserver=" + apiserver_->url(), "--workers=2", "--resync=1",
                                      "--leader-elect=false"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    manager_ = std::make_unique<ManagerProcess>(flags);
  }

  Result<ControllerPtr> GetRc(const std::string& name) {
    return Call<Result<ControllerPtr>>([&](auto cb) { client_->controllers().Get(kNs, name, cb); });
  }
  Result<ControllerPtr> DeleteRc(const std::string& name, const std::string& policy) {
    DeleteOptions opts;
    opts.propagation_policy = policy;
    return Call<Result<ControllerPtr>>([&](auto cb) { client_->controllers().Delete(kNs, name, opts, cb); });
  }
  bool RcGone(const std::string& name) { return GetRc(name).status().code() == Code::kNotFound; }
  // Every pod labelled app=name, active or not (empty if the list failed).
  std::vector<PodPtr> Pods(const std::string& name) {
    ListOptions sel;
    sel.label_selector = LabelSelector::FromMap({{"app", name}});
    auto list = Call<Result<ObjectList<Pod>>>([&](auto cb) { client_->pods().List(kNs, sel, cb); });
    return list.ok() ? list->items : std::vector<PodPtr>{};
  }
  // Creates an RC of `replicas` and waits for its pods.
  void CreateAndConverge(const std::string& name, int replicas) {
    Cluster cluster(client_.get(), kNs);
    ASSERT_TRUE(cluster.Create(replicas, name).ok());
    ASSERT_TRUE(Eventually([&] { return cluster.ActivePods(name) == replicas; })) << manager_->Log();
  }
  // The pods of an orphaning delete: still there, none owned, and no more made (watched a while).
  void ExpectOrphans(const std::string& name, size_t count) {
    const auto until = SteadyClock::now() + std::chrono::seconds(2);
    while (SteadyClock::now() < until) {
      std::vector<PodPtr> pods = Pods(name);
      ASSERT_EQ(pods.size(), count) << manager_->Log();
      for (const PodPtr& p : pods) {
        EXPECT_TRUE(p->metadata.owner_references.empty()) << p->metadata.name;
        EXPECT_FALSE(p->metadata.deletion_timestamp) << p->metadata.name;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::pair<int, std::string> Kubectl(std::vector<std::string> args) {
    std::vector<std::string> argv = {kKubectl, "--server", apiserver_->url(), "--namespace", kNs};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  static constexpr const char* kNs = "cascade";
  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<ApiServerProcess> apiserver_;
  std::unique_ptr<HttpApiClient> client_;
  std::unique_ptr<ManagerProcess> manager_;
};

TEST_F(CascadingDeletionTest, EachPropagationPolicyThroughTheApi) {
  StartManager();

  // No policy: a core/v1 RC orphans. The GC removes the ownerReferences, then the finalizer.
  CreateAndConverge("nopolicy", 2);
  auto deleted = DeleteRc("nopolicy", "");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_TRUE(Eventually([&] { return RcGone("nopolicy"); })) << manager_->Log();
  ExpectOrphans("nopolicy", 2);

  // Orphan, given explicitly.
  CreateAndConverge("orphan", 2);
  ASSERT_TRUE(DeleteRc("orphan", kPropagationOrphan).ok());
  EXPECT_TRUE(Eventually([&] { return RcGone("orphan"); })) << manager_->Log();
  ExpectOrphans("orphan", 2);

  // Background: the RC goes at once, the GC deletes its pods after.
  CreateAndConverge("background", 2);
  ASSERT_TRUE(DeleteRc("background", kPropagationBackground).ok());
  EXPECT_TRUE(RcGone("background"));
  EXPECT_TRUE(Eventually([&] { return Pods("background").empty(); })) << manager_->Log();

  // Foreground: the RC stays (deletionTimestamp, foregroundDeletion) until its pods are gone.
  CreateAndConverge("foreground", 3);
  auto fg = DeleteRc("foreground", kPropagationForeground);
  ASSERT_TRUE(fg.ok()) << fg.status().ToString();
  EXPECT_TRUE((*fg)->metadata.deletion_timestamp);
  EXPECT_TRUE(HasFinalizer((*fg)->metadata, kForegroundFinalizer));
  EXPECT_TRUE(Eventually([&] {
    if (!RcGone("foreground")) return false;
    EXPECT_TRUE(Pods("foreground").empty()) << "the owner went before its dependents";
    return true;
  })) << manager_->Log();
  EXPECT_TRUE(Pods("foreground").empty());

  EXPECT_NE(manager_->Log().find("controllers started: replicationcontroller,garbagecollector,nodelifecycle,"
                                 "podgc,scheduler"),
            std::string::npos)
      << manager_->Log();
  EXPECT_EQ(manager_->Terminate(), 0) << manager_->Log();
}

// kubectl sends Background by default and Orphan / Foreground for --cascade=orphan / foreground, and
// waits for the RC to be gone.
TEST_F(CascadingDeletionTest, KubectlDeleteRcCascades) {
  if (access(kKubectl, X_OK) != 0) GTEST_SKIP() << kKubectl << " is not installed";
  char home[] = "/tmp/rcsim-cascade-home-XXXXXX";
  ASSERT_NE(mkdtemp(home), nullptr);
  // kubectl caches discovery under HOME: keep it away from the user's. No other thread runs yet.
  setenv("HOME", home, 1);  // NOLINT(concurrency-mt-unsafe): one thread here
  const std::string kubeconfig = std::string(home) + "/kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\n";
  setenv("KUBECONFIG", kubeconfig.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): one thread here
  StartManager();

  CreateAndConverge("kc-background", 2);
  auto bg = Kubectl({"delete", "rc", "kc-background"});
  ASSERT_EQ(bg.first, 0) << bg.second;
  EXPECT_NE(bg.second.find("replicationcontroller \"kc-background\" deleted"), std::string::npos)
      << bg.second;
  EXPECT_TRUE(Eventually([&] { return Pods("kc-background").empty(); })) << manager_->Log();

  CreateAndConverge("kc-orphan", 2);
  auto orphan = Kubectl({"delete", "rc", "kc-orphan", "--cascade=orphan"});
  ASSERT_EQ(orphan.first, 0) << orphan.second;
  EXPECT_TRUE(RcGone("kc-orphan"));  // kubectl waited for the finalizer to go
  ExpectOrphans("kc-orphan", 2);

  CreateAndConverge("kc-foreground", 2);
  auto fg = Kubectl({"delete", "rc", "kc-foreground", "--cascade=foreground"});
  ASSERT_EQ(fg.first, 0) << fg.second;
  EXPECT_TRUE(RcGone("kc-foreground"));
  EXPECT_TRUE(Pods("kc-foreground").empty()) << "foreground: the pods go before the RC";

  EXPECT_EQ(manager_->Terminate(), 0) << manager_->Log();
  std::error_code ec;
  std::filesystem::remove_all(home, ec);
}

// --controllers selects what runs: without the garbage collector nobody removes the orphan finalizer,
// so an RC deleted with no policy stays (deletionTimestamp set) and keeps its pods' ownerReferences.
TEST_F(CascadingDeletionTest, WithoutTheGarbageCollectorAnOrphaningDeleteWaits) {
  StartManager({"--controllers=*,-garbagecollector"});
  CreateAndConverge("stuck", 2);
  auto deleted = DeleteRc("stuck", "");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_TRUE(HasFinalizer((*deleted)->metadata, kOrphanFinalizer));
  // A negative check: watch a while.
  const auto until = SteadyClock::now() + std::chrono::seconds(2);
  while (SteadyClock::now() < until) {
    auto rc = GetRc("stuck");
    ASSERT_TRUE(rc.ok()) << rc.status().ToString();
    EXPECT_TRUE((*rc)->metadata.deletion_timestamp);
    EXPECT_TRUE(HasFinalizer((*rc)->metadata, kOrphanFinalizer));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<PodPtr> pods = Pods("stuck");
  ASSERT_EQ(pods.size(), 2u);
  for (const PodPtr& p : pods) EXPECT_FALSE(p->metadata.owner_references.empty()) << p->metadata.name;
  const std::string log = manager_->Log();
  EXPECT_NE(log.find("controllers started: replicationcontroller,nodelifecycle,podgc,scheduler"),
            std::string::npos)
      << log;
  EXPECT_EQ(manager_->Terminate(), 0) << log;
}

}  // namespace
}  // namespace rcsim
