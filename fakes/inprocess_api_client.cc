#include "fakes/inprocess_api_client.h"

#include <utility>

#include "registry/watch_cache.h"

namespace rcsim {
namespace {

// A watch's handler, shared by its handle and the events posted: an event posted before the handle
// went runs only while the handle lives.
template <typename T>
struct WatchShared : std::enable_shared_from_this<WatchShared<T>> {
  std::atomic<bool> alive{true};
  std::function<void(const ApiWatchEvent<T>&)> on_event;

  void Post(Executor* executor, const ApiWatchEvent<T>& ev) {
    executor->Post([shared = this->shared_from_this(), ev] {
      if (shared->alive.load()) shared->on_event(ev);
    });
  }
};

template <typename T>
struct WatchHandle final : ApiWatch {
  ~WatchHandle() override {
    shared->alive.store(false);
    registry_watch.reset();
  }
  std::shared_ptr<WatchShared<T>> shared = std::make_shared<WatchShared<T>>();
  std::unique_ptr<RegistryWatch> registry_watch;
};

// A watch whose events are posted to `executor`: `start(deliver)` opens the registry's watch, handing it
// the callback to deliver through; a watch the registry refuses ends at once with a kError event.
template <typename T, typename Start>
std::unique_ptr<ApiWatch> PostingWatch(Executor* executor,
                                       std::function<void(const ApiWatchEvent<T>&)> on_event, Start start) {
  auto handle = std::make_unique<WatchHandle<T>>();
  handle->shared->on_event = std::move(on_event);
  std::weak_ptr<WatchShared<T>> weak = handle->shared;
  auto w = start([weak, executor](const ApiWatchEvent<T>& ev) {
    // Holding the shared state keeps on_event alive until it runs.
    if (auto shared = weak.lock()) shared->Post(executor, ev);
  });
  if (w.ok()) {
    handle->registry_watch = std::move(*w);
  } else {
    ApiWatchEvent<T> ev;
    ev.type = ApiWatchEvent<T>::Type::kError;
    ev.error = w.status();
    handle->shared->Post(executor, ev);
  }
  return handle;
}

}  // namespace

template <typename T>
class InProcessApiClient::Resource final : public ResourceClient<T> {
 public:
  using Ptr = std::shared_ptr<const T>;

  // `cache` (null: none) serves watches and lists with resourceVersion=0, as in the HTTP server.
  Resource(ResourceRegistry<T>* registry, WatchCache<T>* cache, Executor* executor,
           std::array<std::atomic<uint64_t>, kVerbCount>* counters)
      : registry_(registry), cache_(cache), executor_(executor), counters_(counters) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) override {
    Count(Verb::kGet);
    Reply(std::move(done), registry_->Get(ns, name));
  }
  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) override {
    Count(Verb::kList);
    const bool from_cache = cache_ != nullptr && WatchCache<T>::Serves(opts);
    Reply(std::move(done), from_cache ? cache_->List(ns, opts) : registry_->List(ns, opts));
  }
  void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) override {
    Count(Verb::kCreate);
    Reply(std::move(done), registry_->Create(ns, std::move(object)));
  }
  void Update(T object, Callback<Result<Ptr>> done) override {
    Count(Verb::kUpdate);
    Reply(std::move(done), registry_->Update(std::move(object)));
  }
  void UpdateStatus(T object, Callback<Result<Ptr>> done) override {
    Count(Verb::kUpdate);
    Reply(std::move(done), registry_->UpdateStatus(std::move(object)));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<Ptr>> done) override {
    Count(Verb::kDelete);
    Reply(std::move(done), registry_->Delete(ns, name, opts));
  }
  void PatchOwnerReferences(const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
                            Callback<Result<Ptr>> done) override {
    Count(Verb::kPatch);
    Reply(std::move(done), registry_->PatchOwnerReferences(ns, name, patch));
  }

  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<T>&)> on_event) override {
    Count(Verb::kWatch);
    return PostingWatch<T>(executor_, std::move(on_event), [&](auto deliver) {
      return cache_ != nullptr ? cache_->Watch(ns, opts, resource_version, std::move(deliver))
                               : registry_->Watch(ns, opts, resource_version, std::move(deliver));
    });
  }

 private:
  void Count(Verb verb) { (*counters_)[static_cast<std::size_t>(verb)].fetch_add(1); }

  template <typename R>
  void Reply(Callback<R> done, R result) {
    executor_->Post(
        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  }

  ResourceRegistry<T>* const registry_;
  WatchCache<T>* const cache_;
  Executor* const executor_;
  std::array<std::atomic<uint64_t>, kVerbCount>* const counters_;
};

class InProcessApiClient::Leases final : public LeaseClient {
 public:
  Leases(LeaseRegistry* registry, Executor* executor, std::array<std::atomic<uint64_t>, kVerbCount>* counters)
      : registry_(registry), executor_(executor), counters_(counters) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<LeasePtr>> done) override {
    Count(Verb::kGet);
    Reply(std::move(done), registry_->Get(ns, name));
  }
  void List(const std::string& ns, const ListOptions& opts,
            Callback<Result<ObjectList<Lease>>> done) override {
    Count(Verb::kList);
    Reply(std::move(done), registry_->List(ns, opts));
  }
  // As Resource<T>::Watch: every event is posted to the executor, and none runs once the handle is gone.
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<Lease>&)> on_event) override {
    Count(Verb::kWatch);
    return PostingWatch<Lease>(executor_, std::move(on_event), [&](auto deliver) {
      return registry_->Watch(ns, opts, resource_version, std::move(deliver));
    });
  }
  void Create(const std::string& ns, Lease lease, Callback<Result<LeasePtr>> done) override {
    Count(Verb::kCreate);
    Reply(std::move(done), registry_->Create(ns, std::move(lease)));
  }
  void Update(Lease lease, Callback<Result<LeasePtr>> done) override {
    Count(Verb::kUpdate);
    Reply(std::move(done), registry_->Update(lease));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<LeasePtr>> done) override {
    Count(Verb::kDelete);
    Reply(std::move(done), registry_->Delete(ns, name, opts));
  }

 private:
  void Count(Verb verb) { (*counters_)[static_cast<std::size_t>(verb)].fetch_add(1); }
  template <typename R>
  void Reply(Callback<R> done, R result) {
    executor_->Post(
        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  }

  LeaseRegistry* const registry_;
  Executor* const executor_;
  std::array<std::atomic<uint64_t>, kVerbCount>* const counters_;
};

InProcessApiClient::InProcessApiClient(Registry* registry, Executor* executor)
    : pods_(std::make_unique<Resource<Pod>>(&registry->pods(), &registry->pod_cache(), executor, &counters_)),
      controllers_(std::make_unique<Resource<ReplicationController>>(
          &registry->controllers(), &registry->controller_cache(), executor, &counters_)),
      nodes_(std::make_unique<Resource<Node>>(&registry->nodes(), nullptr, executor, &counters_)),
      lease_registry_(&registry->context()),
      leases_(std::make_unique<Leases>(&lease_registry_, executor, &counters_)),
      registry_(registry),
      executor_(executor) {}

InProcessApiClient::~InProcessApiClient() = default;

ResourceClient<Pod>& InProcessApiClient::pods() { return *pods_; }
ResourceClient<ReplicationController>& InProcessApiClient::controllers() { return *controllers_; }
ResourceClient<Node>& InProcessApiClient::nodes() { return *nodes_; }
LeaseClient& InProcessApiClient::leases() { return *leases_; }

void InProcessApiClient::BindPod(const std::string& ns, Binding binding, Callback<Status> done) {
  counters_[static_cast<std::size_t>(Verb::kCreate)].fetch_add(1);
  Status s = registry_->BindPod(ns, binding).status();
  executor_->Post([done = std::move(done), s = std::move(s)]() mutable { done(std::move(s)); });
}

std::array<uint64_t, InProcessApiClient::kVerbCount> InProcessApiClient::calls() const {
  std::array<uint64_t, kVerbCount> out{};
  for (std::size_t i = 0; i < kVerbCount; ++i) out[i] = counters_[i].load();
  return out;
}

}  // namespace rcsim
