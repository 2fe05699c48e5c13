// InProcessApiClient: the ApiClient of the simulation, calling the Registry directly (no HTTP, no JSON).
//
// Every call runs the registry operation synchronously, then Posts `done(result)` to the executor
// (never inline). Pod and controller watches, and their lists with resourceVersion=0, are served by
// the registry's watch caches (Registry::pod_cache()), as the HTTP server serves them; nodes by the
// registry itself. Watch events are Posted in the order the registry delivers them; destroying the
// ApiWatch stops them (a shared flag is checked inside each posted closure), so once the destructor
// has returned on the executor's thread no further event callback runs. Argument errors of a watch
// (a malformed resourceVersion) are delivered as one kError event.
//
// Thread-safety: calls may come from any thread; the call counters are atomic. With SimLoop everything
// runs on the loop's thread. The registry, the executor and the client must outlive every ApiWatch.
#ifndef RCSIM_FAKES_INPROCESS_API_CLIENT_H_
#define RCSIM_FAKES_INPROCESS_API_CLIENT_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "registry/lease_registry.h"
#include "registry/registry.h"

namespace rcsim {

class InProcessApiClient final : public ApiClient, public ClusterApi {
 public:
  static constexpr std::size_t kVerbCount = 7;

  InProcessApiClient(Registry* registry, Executor* executor);
  ~InProcessApiClient() override;
  InProcessApiClient(const InProcessApiClient&) = delete;
  InProcessApiClient& operator=(const InProcessApiClient&) = delete;

  ResourceClient<Pod>& pods() override;
  ResourceClient<ReplicationController>& controllers() override;
  ResourceClient<Node>& nodes() override;
  // Over a LeaseRegistry of the registry's context (the same store, clock and uids).
  LeaseClient& leases() override;
  void BindPod(const std::string& ns, Binding binding, Callback<Status> done) override;

  // Calls made so far, indexed by static_cast<size_t>(Verb) (pods and controllers together).
  // UpdateStatus counts as kUpdate, BindPod as kCreate, PatchOwnerReferences as kPatch; leases too.
  std::array<uint64_t, kVerbCount> calls() const;
  uint64_t calls(Verb verb) const { return counters_[static_cast<std::size_t>(verb)].load(); }

 private:
  template <typename T>
  class Resource;
  class Leases;

  std::array<std::atomic<uint64_t>, kVerbCount> counters_{};
  std::unique_ptr<Resource<Pod>> pods_;
  std::unique_ptr<Resource<ReplicationController>> controllers_;
  std::unique_ptr<Resource<Node>> nodes_;
  LeaseRegistry lease_registry_;
  std::unique_ptr<Leases> leases_;
  Registry* const registry_;
  Executor* const executor_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_INPROCESS_API_CLIENT_H_
