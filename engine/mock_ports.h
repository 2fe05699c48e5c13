// gmock doubles of the engine's ports, for unit tests only (include from *_test.cc).
#ifndef RCSIM_ENGINE_MOCK_PORTS_H_
#define RCSIM_ENGINE_MOCK_PORTS_H_

#include <gmock/gmock.h>

#include <memory>
#include <string>

#include "engine/api_client.h"
#include "engine/store.h"

namespace rcsim {

class MockStore : public Store {
 public:
  MOCK_METHOD(Result<RangeResponse>, Range, (const RangeRequest& req), (override));
  MOCK_METHOD(Result<PutResponse>, Put, (const PutRequest& req), (override));
  MOCK_METHOD(Result<DeleteResponse>, DeleteRange, (const DeleteRequest& req), (override));
  MOCK_METHOD(Result<TxnResponse>, Txn, (const TxnRequest& req), (override));
  MOCK_METHOD(Result<int64_t>, Compact, (int64_t revision), (override));
  MOCK_METHOD(std::unique_ptr<Watch>, StartWatch, (const WatchRequest& req, WatchCallback cb), (override));
  MOCK_METHOD(Result<LeaseGrantResponse>, LeaseGrant, (int64_t ttl_seconds, int64_t id), (override));
  MOCK_METHOD(Status, LeaseRevoke, (int64_t id), (override));
  MOCK_METHOD(Result<int64_t>, LeaseKeepAlive, (int64_t id), (override));
};

template <typename T>
class MockResourceClient : public ResourceClient<T> {
 public:
  using Ptr = std::shared_ptr<const T>;
  using EventFn = std::function<void(const ApiWatchEvent<T>&)>;
  MOCK_METHOD(void, Get, (const std::string& ns, const std::string& name, Callback<Result<Ptr>> done),
              (override));
  MOCK_METHOD(void, List,
              (const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done),
              (override));
  MOCK_METHOD(void, Create, (const std::string& ns, T object, Callback<Result<Ptr>> done), (override));
  MOCK_METHOD(void, Update, (T object, Callback<Result<Ptr>> done), (override));
  MOCK_METHOD(void, UpdateStatus, (T object, Callback<Result<Ptr>> done), (override));
  MOCK_METHOD(void, Delete,
              (const std::string& ns, const std::string& name, const DeleteOptions& opts,
               Callback<Result<Ptr>> done),
              (override));
  MOCK_METHOD(void, PatchOwnerReferences,
              (const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
               Callback<Result<Ptr>> done),
              (override));
  MOCK_METHOD(std::unique_ptr<ApiWatch>, Watch,
              (const std::string& ns, const ListOptions& opts, const std::string& resource_version,
               EventFn on_event),
              (override));
};

class MockApiClient : public ApiClient {
 public:
  ResourceClient<Pod>& pods() override { return pods_; }
  ResourceClient<ReplicationController>& controllers() override { return controllers_; }
  MockResourceClient<Pod>& mock_pods() { return pods_; }
  MockResourceClient<ReplicationController>& mock_controllers() { return controllers_; }

 private:
  ::testing::NiceMock<MockResourceClient<Pod>> pods_;
  ::testing::NiceMock<MockResourceClient<ReplicationController>> controllers_;
};

// A Watch / ApiWatch that does nothing when destroyed (the test owns the callback).
class NoopWatch : public Watch {};
class NoopApiWatch : public ApiWatch {};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_MOCK_PORTS_H_
