// A real single-member etcd (/usr/bin/etcd) on free loopback ports with its own temp data dir, for
// tests and benchmarks that talk to a real server.
//
// Start() picks free ports (bind port 0), creates a temp dir, starts etcd and polls its /health
// endpoint until it reports healthy or the start deadline passes. A port can be taken between the pick
// and etcd's bind (by another test's server, or as a connection's source port): etcd then exits with
// "address already in use", and Start() and StartCluster() try again on new ports (5 attempts).
// Stop() sends SIGTERM, then SIGKILL after a deadline, and keeps the data dir so Restart() brings the
// same member back on the same ports with its data (waiting while a port is still taken). The destructor
// stops etcd and removes the temp dir.
//
// The child gets PR_SET_PDEATHSIG(SIGKILL) so a crashed test leaves no etcd behind; note that Linux ties
// this to the *thread* that started it, so start the process from a thread that outlives it (the test's
// main thread).
//
// StartCluster() starts an N-member cluster on loopback (one EtcdProcess per member, each with its own
// ports and data dir); each member can be killed, paused and restarted on its own, as a fault test
// needs. IsLeader() reads the member's etcd_server_is_leader metric.
//
// Thread-safety: not thread-safe; use one EtcdProcess from one thread at a time.
#ifndef RCSIM_TESTS_ETCD_FIXTURE_ETCD_PROCESS_H_
#define RCSIM_TESTS_ETCD_FIXTURE_ETCD_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

// Binds `n` sockets to 127.0.0.1:0 at once (so the ports differ), releases them and returns their
// ports; empty on error.
std::vector<int> PickFreePorts(int n);

struct EtcdProcessOptions {
  std::string binary = "/usr/bin/etcd";
  Duration start_timeout = std::chrono::seconds(30);
  Duration stop_timeout = std::chrono::seconds(10);  // SIGTERM grace before SIGKILL
  std::vector<std::string> extra_args;               // appended to etcd's command line
  // Picks `n` distinct free loopback ports (empty: none); a seam for tests of the port-race retry.
  std::function<std::vector<int>(int n)> pick_ports = PickFreePorts;
};

class EtcdProcess {
 public:
  // Starts a fresh etcd; fails with kUnavailable (and the tail of etcd's log) if it does not become
  // healthy in time.
  static Result<std::unique_ptr<EtcdProcess>> Start(const EtcdProcessOptions& options = {});
  // Starts `members` members (named m0, m1, ...) of one new cluster and waits until every one is
  // healthy (which needs an elected leader).
  static Result<std::vector<std::unique_ptr<EtcdProcess>>> StartCluster(
      int members, const EtcdProcessOptions& options = {});
  // "http://127.0.0.1:a,http://127.0.0.1:b,..." of the members: the --etcd_servers value.
  static std::string Endpoints(const std::vector<std::unique_ptr<EtcdProcess>>& members);

  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;
  ~EtcdProcess();

  // Stops the server (SIGTERM, then SIGKILL after stop_timeout). Keeps the data dir. Idempotent.
  void Stop();
  // Starts etcd again on the same ports and data dir (after Stop(), or stops it first) and waits for
  // health.
  Status Restart();
  bool running() const { return pid_ > 0; }
  // Kills the server abruptly (SIGKILL, as a crash or an OOM kill would) and reaps it. Keeps the data
  // dir; Restart() brings it back. Idempotent.
  void Kill();
  // Freezes the server (SIGSTOP): its sockets stay open and the kernel still accepts bytes, but
  // nothing is answered, so a call in flight runs into its deadline. Resume() sends SIGCONT. A paused
  // server is resumed before Stop(). For fault tests that need a timeout without a deadline race.
  void Pause();
  void Resume();
  bool paused() const { return paused_; }
  // True when this member answers /health with {"health":"true"} (it has a leader) right now.
  bool Healthy() const;
  // True when this member reports itself the cluster's leader (GET /metrics: etcd_server_is_leader 1).
  bool IsLeader() const;

  // "http://127.0.0.1:<client port>"
  std::string endpoint() const;
  int client_port() const { return client_port_; }
  int peer_port() const { return peer_port_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return pid_; }

 private:
  explicit EtcdProcess(EtcdProcessOptions options);
  Status Launch();
  Status WaitHealthy();
  static Result<std::vector<std::unique_ptr<EtcdProcess>>> TryStartCluster(int members,
                                                                           const EtcdProcessOptions& options);
  static Result<std::unique_ptr<EtcdProcess>> Prepare(const EtcdProcessOptions& options, int client_port,
                                                      int peer_port);
  std::string LogTail() const;

  EtcdProcessOptions options_;
  std::string temp_dir_;  // owned; removed by the destructor
  std::string data_dir_;
  std::string log_path_;
  int client_port_ = 0;
  int peer_port_ = 0;
  std::string name_ = "default";
  std::string initial_cluster_;  // empty: this member alone
  pid_t pid_ = -1;
  bool paused_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0 and released), or 0 on error.
int PickFreeLoopbackPort();

}  // namespace rcsim

#endif  // RCSIM_TESTS_ETCD_FIXTURE_ETCD_PROCESS_H_
