// Helpers shared by the fault tests (tests/faults): they observe the real stack from outside, the way
// an operator's tooling would, and never share state with the processes under test.
//
// - PollUntil: the only way these tests wait for a condition (a deadline, never a fixed sleep).
// - SnapshotRegistry / CompareSnapshots: every key under /registry/ read straight from etcd, to prove
//   that no object was lost or corrupted by a fault.
// - PodTracker: a watch on one namespace's pods through the API server that survives the server's
//   outages (it resumes at the last resourceVersion it saw, so it misses no event) and records the
//   peak number of active pods, the figure the manager must never take above an RC's replicas.
// - LatencyProbe: a thread that keeps reading and writing through the API server and records every
//   answer's status and latency (the worst is what "never hangs past its timeout" is measured by),
//   and the pods whose creation was acknowledged (201), which must survive the fault.
//
// Thread-safety: PodTracker and LatencyProbe run their own threads; their accessors are thread-safe.
#ifndef RCSIM_TESTS_FAULTS_FAULT_FIXTURE_H_
#define RCSIM_TESTS_FAULTS_FAULT_FIXTURE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/httpclient/http_api_client.h"
#include "engine/status.h"
#include "engine/time.h"
#include "engine/types.h"

namespace rcsim::faults {

using SteadyClock = std::chrono::steady_clock;

// Evaluates `pred` every 20 ms until it holds or `deadline` passes; its last value.
bool PollUntil(Duration deadline, const std::function<bool()>& pred);

// Milliseconds since `start`.
double MillisSince(SteadyClock::time_point start);

// One raw request through `client`, waited for.
Result<HttpReply> SendSync(HttpApiClient& client, const std::string& method, const std::string& target,
                           std::string body = "");

// An HTTP client for the test itself, with a request timeout long enough that it never cuts an answer
// short (the server's own timeouts are what is measured).
std::unique_ptr<HttpApiClient> TestClient(const std::string& url, int max_connections = 8);

// A controller named `name` selecting app=<name> with `replicas`, in the shape kubectl sends.
ReplicationController MakeController(const std::string& name, int replicas);
// JSON of a v1 Pod named `name` with labels app=<app>.
std::string PodJson(const std::string& name, const std::string& app);

// Creates namespace `ns` (objects can only be created in one that exists), retrying like the below;
// one that exists already is fine.
Status CreateNamespace(HttpApiClient& client, const std::string& ns,
                       Duration deadline = std::chrono::seconds(30));

// Creates or scales (PUT .../scale) the controller through the API, retrying 5xx and transport errors
// until `deadline`. The last failure if it never succeeded.
Status CreateController(HttpApiClient& client, const std::string& ns, const ReplicationController& rc,
                        Duration deadline = std::chrono::seconds(30));
Status ScaleController(HttpApiClient& client, const std::string& ns, const std::string& name, int replicas,
                       Duration deadline = std::chrono::seconds(30));

// Every key under /registry/ and its value, read from etcd in one range (retried until `deadline`).
using RegistrySnapshot = std::map<std::string, std::string>;
Result<RegistrySnapshot> SnapshotRegistry(const std::string& etcd_endpoints,
                                          Duration deadline = std::chrono::seconds(30));
// Human-readable differences: keys of `before` that are missing from `after`, and keys of `before`
// starting with one of `frozen_prefixes` whose value changed. Empty when none.
std::vector<std::string> LostOrChanged(const RegistrySnapshot& before, const RegistrySnapshot& after,
                                       const std::vector<std::string>& frozen_prefixes);
// Keys of `snapshot` whose value is not a JSON object of the kind its key's resource holds.
std::vector<std::string> Undecodable(const RegistrySnapshot& snapshot);

class PodTracker {
 public:
  // Starts listing and watching the pods of `ns` through `api_url` at once.
  PodTracker(const std::string& api_url, std::string ns);
  ~PodTracker();
  PodTracker(const PodTracker&) = delete;
  PodTracker& operator=(const PodTracker&) = delete;

  // Whether the first list has been received.
  bool synced() const;
  int active() const;   // pods now active (not terminated, not being deleted), as last observed
  int total() const;    // pods now stored, as last observed
  int peak() const;     // the largest `active` ever observed
  int relists() const;  // lists after the first (a watch resumed at its revision needs none)
  // The names of the active pods, as last observed.
  std::set<std::string> ActiveNames() const;
  // Runs `action` once, on the watch's thread right after the event that takes `active` to
  // `threshold` or more (at once if it is there already): a fault injected at an exact point of a
  // scale-up, not whenever a poll notices. `action` must be quick and must not call the tracker.
  void OnActive(int threshold, std::function<void()> action);

 private:
  void Run();
  void Apply(const Pod& pod, bool deleted);

  const std::string ns_;
  std::unique_ptr<HttpApiClient> client_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                 // guarded by mu_
  bool broken_ = false;               // guarded by mu_: the watch ended
  bool gone_ = false;                 // guarded by mu_: ... with 410 (re-list)
  bool synced_ = false;               // guarded by mu_
  std::map<std::string, bool> pods_;  // guarded by mu_: name -> active
  int active_ = 0;                    // guarded by mu_
  int peak_ = 0;                      // guarded by mu_
  int relists_ = 0;                   // guarded by mu_
  std::string resource_version_;      // guarded by mu_: the newest revision seen
  int trigger_at_ = 0;                // guarded by mu_
  std::function<void()> trigger_;     // guarded by mu_; cleared once run
  std::thread thread_;
};

// `n` watch clients on the pods of `ns` through the API server (one connection each), re-opened
// (from the last revision each saw) whenever the server ends them: the load of many kubectl --watch
// or informer clients.
class WatchCrowd {
 public:
  WatchCrowd(const std::string& api_url, std::string ns, int n);
  ~WatchCrowd();
  WatchCrowd(const WatchCrowd&) = delete;
  WatchCrowd& operator=(const WatchCrowd&) = delete;

  int64_t events() const;    // events received, over every watch
  int64_t reopened() const;  // watches re-opened after the server ended them
  // The number of watches that received an event since `epoch` was set by MarkEpoch().
  int FreshSince() const;
  void MarkEpoch();

 private:
  struct Member;
  void Run();

  const std::string ns_;
  std::unique_ptr<HttpApiClient> client_;
  std::vector<std::shared_ptr<Member>> members_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> events_{0};
  std::atomic<int64_t> reopened_{0};
  std::atomic<int> epoch_{0};
  std::thread thread_;
};

class LatencyProbe {
 public:
  struct Figures {
    int requests = 0;
    std::map<int, int> by_status;           // HTTP status (0: transport error) -> count
    double worst_ms = 0;                    // the slowest answer of any kind
    double worst_error_ms = 0;              // the slowest 5xx or transport error
    std::vector<std::string> acknowledged;  // pods whose create got 201
  };

  // Alternates GET (a list of `ns`) and POST (a new pod in `ns`) through `api_url`, one request at a
  // time, at most one every `pace`, until destroyed or Stop().
  LatencyProbe(const std::string& api_url, std::string ns, Duration pace = std::chrono::milliseconds(50));
  ~LatencyProbe();
  void Stop();
  Figures figures() const;
  // Answers with this status so far.
  int count(int status) const;

 private:
  void Run();

  const std::string ns_;
  const Duration pace_;
  std::unique_ptr<HttpApiClient> client_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  Figures figures_;    // guarded by mu_
  std::thread thread_;
};

}  // namespace rcsim::faults

#endif  // RCSIM_TESTS_FAULTS_FAULT_FIXTURE_H_
