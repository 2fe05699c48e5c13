// HollowNodes: the stand-in for kubelets in real mode until node agents run the pods (issue 10): it
// watches every pod through the real API server and, `start_latency` (uniform) after a new pod
// appears, writes its status as a kubelet would on start: phase Running, condition Ready True (with
// its transition time), startTime, hostIP and a podIP. Nothing runs; the manager cannot tell.
// A pod deleted or terminated first is skipped. A broken watch is re-established (the re-list's
// ADDED events of pods already handled are ignored, by uid).
//
// Thread-safety: Start/Stop from one thread; the work runs on the API client's threads and one timer
// thread of its own.
#ifndef RCSIM_HARNESS_REAL_HOLLOW_NODES_H_
#define RCSIM_HARNESS_REAL_HOLLOW_NODES_H_

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "engine/api_client.h"
#include "engine/mutex.h"
#include "engine/time.h"

namespace rcsim {

class HollowNodes {
 public:
  // `api` (not owned) must outlive the object.
  HollowNodes(ApiClient* api, Duration start_min, Duration start_max, uint64_t seed);
  ~HollowNodes();  // Stop()
  void Start();
  void Stop();
  uint64_t started_pods() const;

 private:
  void Watch();
  void OnEvent(const ApiWatchEvent<Pod>& e);
  void TimerLoop();

  ApiClient* api_;
  Duration start_min_, start_max_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool rewatch_ GUARDED_BY(mu_) = false;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  std::set<std::string> seen_ GUARDED_BY(mu_);  // uids
  std::multimap<std::chrono::steady_clock::time_point, PodPtr> due_ GUARDED_BY(mu_);
  uint64_t started_ GUARDED_BY(mu_) = 0;
  std::unique_ptr<ApiWatch> watch_;  // replaced only by the timer thread (and Start/Stop)
  std::thread timer_;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_HOLLOW_NODES_H_
