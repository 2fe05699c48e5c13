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

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "engine/api_client.h"
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
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                                             // guarded by mu_
  bool rewatch_ = false;                                              // guarded by mu_
  std::mt19937_64 rng_;                                               // guarded by mu_
  std::set<std::string> seen_;                                        // uids, guarded by mu_
  std::multimap<std::chrono::steady_clock::time_point, PodPtr> due_;  // guarded by mu_
  uint64_t started_ = 0;                                              // guarded by mu_
  std::unique_ptr<ApiWatch> watch_;  // replaced only by the timer thread (and Start/Stop)
  std::thread timer_;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_HOLLOW_NODES_H_
