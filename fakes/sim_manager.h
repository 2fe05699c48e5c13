// SimManager: the manager under test in a SimWorld when it is not the modern ReplicationManager (the
// 2014 baseline, baseline2014/). SimWorldOptions::manager_factory builds one at every StartManager()
// from the world's ports; StopManager() stops and destroys it, as a crash does.
#ifndef RCSIM_FAKES_SIM_MANAGER_H_
#define RCSIM_FAKES_SIM_MANAGER_H_

#include <functional>
#include <memory>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/log.h"
#include "engine/metrics.h"
#include "engine/rng.h"
#include "engine/store.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

class SimManager {
 public:
  virtual ~SimManager() = default;
  virtual void Start() = 0;
  // Afterwards no callback touches the manager.
  virtual void Stop() = 0;
  virtual const ManagerMetrics& metrics() const = 0;
};

// What the world hands a manager: its faulted store and API views, the loop, its own Rng stream, the
// trace and a logger. None is owned; all outlive the manager.
struct SimManagerPorts {
  Store* store = nullptr;
  ApiClient* api = nullptr;
  Clock* clock = nullptr;
  Executor* executor = nullptr;
  Rng* rng = nullptr;
  TraceSink* trace = nullptr;
  Logger* logger = nullptr;
};

using SimManagerFactory = std::function<std::unique_ptr<SimManager>(const SimManagerPorts&)>;

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_MANAGER_H_
