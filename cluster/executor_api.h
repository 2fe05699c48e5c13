// ExecutorApi: an ApiClient and ClusterApi whose callbacks run on one Executor, for components that are
// single-threaded by contract (cluster/: the node agent, the scheduler, ...) over a client that calls
// back on its own threads (the HTTP client, backends/httpclient/http_api_client.h).
//
// Every `done` and every watch event of the wrapped clients is posted to the executor, in the order the
// wrapped client delivered them. A watch keeps ApiWatch's promise: once its handle is destroyed (on the
// executor's thread), no event of it runs, even one already posted.
//
// Thread-safety: as the wrapped clients; the wrapper holds no state but the pointers.
#ifndef RCSIM_CLUSTER_EXECUTOR_API_H_
#define RCSIM_CLUSTER_EXECUTOR_API_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"

namespace rcsim {
namespace executor_api {

// A watch whose events are posted to the executor; none runs once the handle is destroyed.
class HopWatch final : public ApiWatch {
 public:
  HopWatch(std::unique_ptr<ApiWatch> inner, std::shared_ptr<std::atomic<bool>> open)
      : inner_(std::move(inner)), open_(std::move(open)) {}
  ~HopWatch() override {
    open_->store(false);
    inner_.reset();
  }

 private:
  std::unique_ptr<ApiWatch> inner_;
  std::shared_ptr<std::atomic<bool>> open_;
};

template <typename T>
std::unique_ptr<ApiWatch> WatchOnExecutor(ListWatchClient<T>* inner, Executor* executor,
                                          const std::string& ns, const ListOptions& opts,
                                          const std::string& resource_version,
                                          std::function<void(const ApiWatchEvent<T>&)> on_event) {
  auto open = std::make_shared<std::atomic<bool>>(true);
  auto handler = std::make_shared<std::function<void(const ApiWatchEvent<T>&)>>(std::move(on_event));
  std::unique_ptr<ApiWatch> watch =
      inner->Watch(ns, opts, resource_version, [executor, open, handler](const ApiWatchEvent<T>& e) {
        executor->Post([open, handler, e] {
          if (open->load()) (*handler)(e);
        });
      });
  return std::make_unique<HopWatch>(std::move(watch), std::move(open));
}

}  // namespace executor_api

template <typename T>
class ExecutorResourceClient final : public ResourceClient<T> {
 public:
  using Ptr = typename ResourceClient<T>::Ptr;
  ExecutorResourceClient(ResourceClient<T>* inner, Executor* executor) : inner_(inner), executor_(executor) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) override {
    inner_->Get(ns, name, Hop(std::move(done)));
  }
  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) override {
    inner_->List(ns, opts, Hop(std::move(done)));
  }
  void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) override {
    inner_->Create(ns, std::move(object), Hop(std::move(done)));
  }
  void Update(T object, Callback<Result<Ptr>> done) override {
    inner_->Update(std::move(object), Hop(std::move(done)));
  }
  void UpdateStatus(T object, Callback<Result<Ptr>> done) override {
    inner_->UpdateStatus(std::move(object), Hop(std::move(done)));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<Ptr>> done) override {
    inner_->Delete(ns, name, opts, Hop(std::move(done)));
  }
  void PatchOwnerReferences(const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
                            Callback<Result<Ptr>> done) override {
    inner_->PatchOwnerReferences(ns, name, patch, Hop(std::move(done)));
  }
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<T>&)> on_event) override {
    return executor_api::WatchOnExecutor<T>(inner_, executor_, ns, opts, resource_version,
                                            std::move(on_event));
  }

 private:
  template <typename R>
  Callback<R> Hop(Callback<R> done) {
    return [executor = executor_, done = std::move(done)](R r) mutable {
      executor->Post([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    };
  }

  ResourceClient<T>* const inner_;
  Executor* const executor_;
};

class ExecutorLeaseClient final : public LeaseClient {
 public:
  ExecutorLeaseClient(LeaseClient* inner, Executor* executor) : inner_(inner), executor_(executor) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<LeasePtr>> done) override {
    inner_->Get(ns, name, Hop(std::move(done)));
  }
  void List(const std::string& ns, const ListOptions& opts,
            Callback<Result<ObjectList<Lease>>> done) override {
    inner_->List(ns, opts, Hop(std::move(done)));
  }
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<Lease>&)> on_event) override {
    return executor_api::WatchOnExecutor<Lease>(inner_, executor_, ns, opts, resource_version,
                                                std::move(on_event));
  }
  void Create(const std::string& ns, Lease lease, Callback<Result<LeasePtr>> done) override {
    inner_->Create(ns, std::move(lease), Hop(std::move(done)));
  }
  void Update(Lease lease, Callback<Result<LeasePtr>> done) override {
    inner_->Update(std::move(lease), Hop(std::move(done)));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<LeasePtr>> done) override {
    inner_->Delete(ns, name, opts, Hop(std::move(done)));
  }

 private:
  template <typename R>
  Callback<R> Hop(Callback<R> done) {
    return [executor = executor_, done = std::move(done)](R r) mutable {
      executor->Post([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    };
  }

  LeaseClient* const inner_;
  Executor* const executor_;
};

class ExecutorApi final : public ApiClient, public ClusterApi {
 public:
  // Nothing is owned; all must outlive the wrapper (and every callback it posted).
  ExecutorApi(ApiClient* api, ClusterApi* cluster, Executor* executor)
      : cluster_(cluster),
        executor_(executor),
        pods_(&api->pods(), executor),
        controllers_(&api->controllers(), executor),
        nodes_(&cluster->nodes(), executor),
        leases_(&cluster->leases(), executor) {}

  ResourceClient<Pod>& pods() override { return pods_; }
  ResourceClient<ReplicationController>& controllers() override { return controllers_; }
  ResourceClient<Node>& nodes() override { return nodes_; }
  LeaseClient& leases() override { return leases_; }
  void BindPod(const std::string& ns, Binding binding, Callback<Status> done) override {
    cluster_->BindPod(ns, std::move(binding), [executor = executor_, done = std::move(done)](Status s) {
      executor->Post([done, s = std::move(s)] { done(s); });
    });
  }

 private:
  ClusterApi* const cluster_;
  Executor* const executor_;
  ExecutorResourceClient<Pod> pods_;
  ExecutorResourceClient<ReplicationController> controllers_;
  ExecutorResourceClient<Node> nodes_;
  ExecutorLeaseClient leases_;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_EXECUTOR_API_H_
