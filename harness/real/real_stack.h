// RealStack: the processes of one real-mode run (rcsim run --real), on free loopback ports with one
// temporary directory (etcd's data, every log):
//   etcd (Debian's etcd-server)  <-  apiserver (apps/apiserver)  <-  FaultProxy  <-  controller-manager
// The manager reaches the API server only through the in-process FaultProxy, so the harness can
// inject the API faults of a scenario; the harness itself (its actions, its watch, the hollow nodes)
// talks to the API server directly. The manager runs with --leader-elect=false (a restarted manager
// must not wait out its predecessor's lease) and --kube-api-qps=-1 (no client rate limit, as the
// simulated manager has none).
//
// Stop() (and the destructor) stops every process it started (SIGTERM, then SIGKILL), the proxy, and
// removes the temporary directory; a child that outlives rcsim is killed by the kernel
// (PR_SET_PDEATHSIG). Start and the process controls must be called from one thread that outlives
// the children (rcsim's main thread).
#ifndef RCSIM_HARNESS_REAL_REAL_STACK_H_
#define RCSIM_HARNESS_REAL_REAL_STACK_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/faultproxy/fault_proxy.h"
#include "engine/status.h"
#include "engine/time.h"
#include "harness/real/child_process.h"

namespace rcsim {

struct RealStackOptions {
  std::string etcd_binary = "/usr/bin/etcd";
  std::string apiserver_binary;
  std::string controller_manager_binary;
  std::vector<std::string> manager_flags;  // appended to the manager's command line
  uint64_t seed = 1;                       // the proxy's fault draws
  Duration start_timeout = std::chrono::seconds(30);
  Duration proxy_timeout = std::chrono::seconds(1);  // how long a timed-out call is held
};

class RealStack {
 public:
  // Starts etcd, the apiserver, the proxy and the manager, each waited for (etcd healthy, the API
  // server answering /readyz, the manager's log saying it started). On failure everything started is
  // stopped and the error carries the failing process's log tail.
  static Result<std::unique_ptr<RealStack>> Start(RealStackOptions options);
  ~RealStack();
  RealStack(const RealStack&) = delete;
  RealStack& operator=(const RealStack&) = delete;

  // Stops everything, removes the temporary directory. Idempotent.
  void Stop();

  std::string api_url() const;  // the API server, direct
  std::string etcd_url() const;
  FaultProxy& proxy() { return *proxy_; }

  // The manager: SIGKILL (a crash), and a fresh start (waited for, as in Start).
  void KillManager();
  Status StartManager();
  bool ManagerRunning() { return manager_.Running(); }
  // etcd: SIGKILL, and a restart on the same ports and data (waited for until healthy).
  void KillEtcd();
  Status StartEtcd();
  // Compacts etcd at its current revision (physical); the revision.
  Result<int64_t> CompactEtcd();

  // Every process's pid (running ones), every port, the temporary directory: for logs and for the
  // test that checks nothing is left behind.
  std::vector<pid_t> pids();
  std::vector<int> ports() const;
  const std::string& temp_dir() const { return temp_dir_; }
  // One line: "etcd pid=... port=..., apiserver pid=... port=..., proxy port=..., manager pid=...,
  // dir=...".
  std::string Describe();

 private:
  explicit RealStack(RealStackOptions options) : options_(std::move(options)) {}
  Status WaitEtcd();
  Status WaitApiServer();
  Status WaitManager(std::size_t log_offset);

  RealStackOptions options_;
  std::string temp_dir_;
  int etcd_client_port_ = 0, etcd_peer_port_ = 0, api_port_ = 0;
  ChildProcess etcd_, apiserver_, manager_;
  std::unique_ptr<FaultProxy> proxy_;
  bool stopped_ = false;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_REAL_STACK_H_
