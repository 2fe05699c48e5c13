#include "harness/manager_2014.h"

#include <memory>

#include "baseline2014/replication_manager_2014.h"

namespace rcsim {
namespace {

class SimManager2014 final : public SimManager {
 public:
  explicit SimManager2014(const SimManagerPorts& p)
      : manager_(Manager2014Options{}, p.store, p.api, p.clock, p.executor, p.trace, p.logger) {}
  void Start() override { manager_.Start(); }
  void Stop() override { manager_.Stop(); }
  const ManagerMetrics& metrics() const override { return manager_.metrics(); }

 private:
  ReplicationManager2014 manager_;
};

}  // namespace

SimManagerFactory Manager2014Factory() {
  return [](const SimManagerPorts& ports) -> std::unique_ptr<SimManager> {
    return std::make_unique<SimManager2014>(ports);
  };
}

}  // namespace rcsim
