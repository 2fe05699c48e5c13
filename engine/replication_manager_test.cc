// The manager against gmock ports: a scripted pod API (held or immediate replies) and a mock store.
#include "engine/replication_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/event_recorder.h"
#include "engine/mock_ports.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

using ::testing::_;

ReplicationController MakeRc(const std::string& name, int replicas, const std::string& ns = "default") {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.metadata.namespace_ = ns;
  rc.metadata.uid = "uid-" + ns + "-" + name;
  rc.metadata.generation = 1;
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}, {"tier", "fe"}};
  t.spec.containers.push_back(Container{"c", "nginx", {}, {}});
  rc.spec.template_ = t;
  return rc;
}

class ScriptedWorld {
 public:
  struct HeldCall {
    Pod pod;
    std::string name;  // delete: name
    Callback<Result<PodPtr>> done;
  };

  explicit ScriptedWorld(SimLoop* loop) : loop_(loop) {
    auto& pods = api_.mock_pods();
    ON_CALL(pods, List(_, _, _))
        .WillByDefault(
            [this](const std::string&, const ListOptions&, const Callback<Result<ObjectList<Pod>>>& done) {
              if (list_failures_ > 0) {
                --list_failures_;
                Reply(done, Result<ObjectList<Pod>>(Status(Code::kUnavailable, "apiserver down")));
                return;
              }
              ObjectList<Pod> l;
              l.resource_version = std::to_string(rv_);
              for (auto& [k, p] : pods_) l.items.push_back(p);
              Reply(done, Result<ObjectList<Pod>>(l));
            });
    ON_CALL(pods, Watch(_, _, _, _))
        .WillByDefault([this](const std::string&, const ListOptions&, const std::string&,
                              MockResourceClient<Pod>::EventFn fn) {
          pod_watch_ = std::move(fn);
          return std::make_unique<NoopApiWatch>();
        });
    ON_CALL(pods, Create(_, _, _))
        .WillByDefault([this](const std::string&, Pod pod, Callback<Result<PodPtr>> done) {
          ++create_calls_;
          creates_in_flight_by_rc_[pod.metadata.generate_name]++;
          max_concurrent_rcs_creating_ = std::max<int>(max_concurrent_rcs_creating_, CountCreatingRcs());
          held_creates_.push_back(HeldCall{std::move(pod), "", std::move(done)});
          if (!hold_creates_) CompleteCreates(held_creates_.size());
        });
    ON_CALL(pods, Delete(_, _, _, _))
        .WillByDefault([this](const std::string& ns, const std::string& name, const DeleteOptions&,
                              Callback<Result<PodPtr>> done) {
          deleted_names_.push_back(name);
          Pod p;
          p.metadata.namespace_ = ns;
          p.metadata.name = name;
          held_deletes_.push_back(HeldCall{p, name, std::move(done)});
          if (!hold_deletes_) CompleteDeletes(held_deletes_.size());
        });
    ON_CALL(pods, Get(_, _, _))
        .WillByDefault(
            [this](const std::string& ns, const std::string& name, const Callback<Result<PodPtr>>& done) {
              ++pod_gets_;
              auto it = pods_.find(ns + "/" + name);
              if (it == pods_.end()) {
                Reply(done, Result<PodPtr>(Status(Code::kNotFound, "no")));
              } else {
                Reply(done, Result<PodPtr>(it->second));
              }
            });
    ON_CALL(pods, Update(_, _)).WillByDefault([this](Pod pod, const Callback<Result<PodPtr>>& done) {
      ++update_calls_;
      std::string key = KeyOf(pod.metadata);
      if (pods_.count(key) == 0) {
        Reply(done, Result<PodPtr>(Status(Code::kNotFound, "gone")));
        return;
      }
      if (auto err = update_errors_.find(pod.metadata.name); err != update_errors_.end()) {
        Reply(done, Result<PodPtr>(err->second));
        return;
      }
      if (!pod.metadata.resource_version.empty() &&
          pod.metadata.resource_version != pods_.at(key)->metadata.resource_version) {
        Reply(done, Result<PodPtr>(Status(Code::kConflict, "the object has been modified")));
        return;
      }
      PodPtr stored = Store(std::move(pod));
      Reply(done, Result<PodPtr>(stored));
      Emit(ApiWatchEvent<Pod>::Type::kModified, stored);
    });
    auto& rcs = api_.mock_controllers();
    // The uid precondition, the merge by owner uid and the one-controller rule, as the registry does.
    ON_CALL(pods, PatchOwnerReferences(_, _, _, _))
        .WillByDefault([this](const std::string& ns, const std::string& name,
                              const OwnerReferencePatch& patch, const Callback<Result<PodPtr>>& done) {
          ++patch_calls_;
          auto it = pods_.find(ns + "/" + name);
          if (it == pods_.end()) return Reply(done, Result<PodPtr>(Status(Code::kNotFound, "gone")));
          if (auto err = update_errors_.find(name); err != update_errors_.end()) {
            return Reply(done, Result<PodPtr>(err->second));
          }
          if (it->second->metadata.uid != patch.uid) {
            return Reply(done, Result<PodPtr>(Status(Code::kInvalid, "metadata.uid: field is immutable")));
          }
          Pod next = *it->second;
          auto& refs = next.metadata.owner_references;
          std::erase_if(refs, [&](const OwnerReference& r) {
            return r.uid == patch.remove_uid || (patch.add && r.uid == patch.add->uid);
          });
          if (patch.add) refs.push_back(*patch.add);
          if (std::count_if(refs.begin(), refs.end(), [](const OwnerReference& r) { return r.controller; }) >
              1) {
            return Reply(done,
                         Result<PodPtr>(Status(Code::kInvalid, "Only one reference can have Controller")));
          }
          if (next == *it->second) return Reply(done, Result<PodPtr>(it->second));
          PodPtr stored = Store(std::move(next));
          Reply(done, Result<PodPtr>(stored));
          Emit(ApiWatchEvent<Pod>::Type::kModified, stored);
        });
    ON_CALL(rcs, UpdateStatus(_, _))
        .WillByDefault([this](const ReplicationController& rc, const Callback<Result<ControllerPtr>>& done) {
          if (status_conflicts_ > 0) {
            --status_conflicts_;
            Reply(done, Result<ControllerPtr>(Status(Code::kConflict, "stale")));
            return;
          }
          statuses_.push_back(rc.status);
          PutController(rc);
          Reply(done, Result<ControllerPtr>(controllers_[KeyOf(rc.metadata)]));
        });
    ON_CALL(rcs, Get(_, _, _))
        .WillByDefault([this](const std::string& ns, const std::string& name,
                              const Callback<Result<ControllerPtr>>& done) {
          ++rc_gets_;
          auto it = controllers_.find(ns + "/" + name);
          if (it == controllers_.end()) {
            Reply(done, Result<ControllerPtr>(Status(Code::kNotFound, "no")));
          } else {
            Reply(done, Result<ControllerPtr>(it->second));
          }
        });
    ON_CALL(store_, Range(_)).WillByDefault([this](const RangeRequest&) {
      RangeResponse r;
      r.revision = rv_;
      for (auto& [k, rc] : controllers_) {
        KeyValue kv;
        kv.key = "/registry/controllers/" + k;
        kv.value = Value(rc);
        kv.mod_revision = std::stoll(rc->metadata.resource_version);
        r.kvs.push_back(kv);
      }
      return Result<RangeResponse>(r);
    });
    ON_CALL(store_, StartWatch(_, _)).WillByDefault([this](const WatchRequest&, WatchCallback cb) {
      rc_watch_ = std::move(cb);
      return std::make_unique<NoopWatch>();
    });
  }

  // Replies never run inline (the ApiClient contract): they go through the loop.
  template <typename R>
  void Reply(Callback<R> done, R r) {
    loop_->Schedule(reply_delay_,
                    [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  }

  PodPtr Store(Pod pod) {
    pod.metadata.resource_version = std::to_string(++rv_);
    auto p = std::make_shared<const Pod>(std::move(pod));
    pods_[KeyOf(p->metadata)] = p;
    return p;
  }
  void Emit(ApiWatchEvent<Pod>::Type type, PodPtr pod) {
    if (!deliver_events_) {
      lagging_events_.push_back({type, pod, Status()});
      return;
    }
    if (pod_watch_) pod_watch_(ApiWatchEvent<Pod>{type, std::move(pod), Status()});
  }
  void FlushLaggingEvents() {
    deliver_events_ = true;
    for (auto& ev : lagging_events_) pod_watch_(ev);
    lagging_events_.clear();
  }

  // Adds a pod directly (another actor created it). Emits ADDED.
  PodPtr AddPod(const std::string& name, const Labels& labels, const ReplicationController* owner,
                const char* phase = phase::kRunning, bool ready = true, const std::string& node = "n1") {
    Pod p;
    p.metadata.name = name;
    p.metadata.namespace_ = owner ? owner->metadata.namespace_ : "default";
    p.metadata.uid = "pod-uid-" + name;
    p.metadata.labels = labels;
    p.metadata.creation_timestamp = loop_->Now();
    if (owner) p.metadata.owner_references.push_back(ControllerOwnerRef(*owner));
    p.spec.node_name = node;
    p.status.phase = phase;
    p.status.conditions.push_back(PodCondition{"Ready", ready ? "True" : "False", loop_->Now(), "", ""});
    PodPtr stored = Store(std::move(p));
    Emit(ApiWatchEvent<Pod>::Type::kAdded, stored);
    return stored;
  }
  void ModifyPod(const std::string& key, const std::function<void(Pod&)>& fn) {
    Pod p = *pods_.at(key);
    fn(p);
    Emit(ApiWatchEvent<Pod>::Type::kModified, Store(std::move(p)));
  }

  void PutController(ReplicationController rc) {
    rc.metadata.resource_version = std::to_string(++rv_);
    auto p = std::make_shared<const ReplicationController>(std::move(rc));
    controllers_[KeyOf(p->metadata)] = p;
    if (rc_watch_) {
      WatchResponse resp;
      KeyValue kv;
      kv.key = "/registry/controllers/" + KeyOf(p->metadata);
      kv.value = Value(p);
      kv.mod_revision = rv_;
      resp.events.push_back(WatchEvent{WatchEvent::Type::kPut, kv, std::nullopt});
      rc_watch_(resp);
    }
  }

  // Deletes a controller; `notify`: the watch delivers the delete (else the manager's cache is stale).
  void DeleteController(const std::string& name, bool notify) {
    auto it = controllers_.find("default/" + name);
    ASSERT_NE(it, controllers_.end());
    controllers_.erase(it);
    ++rv_;
    if (notify && rc_watch_) {
      WatchResponse resp;
      KeyValue kv;
      kv.key = "/registry/controllers/default/" + name;
      kv.mod_revision = rv_;
      resp.events.push_back(WatchEvent{WatchEvent::Type::kDelete, kv, std::nullopt});
      rc_watch_(resp);
    }
  }
  int ActivePodsOwnedBy(const std::string& uid) const {
    int n = 0;
    for (auto& [k, p] : pods_) {
      const OwnerReference* ref = p->metadata.ControllerRef();
      if (ref && ref->uid == uid && IsActive(*p)) ++n;
    }
    return n;
  }

  void CompleteCreates(size_t n, const Status& error = Status()) {
    for (size_t i = 0; i < n && !held_creates_.empty(); ++i) {
      HeldCall call = std::move(held_creates_.front());
      held_creates_.erase(held_creates_.begin());
      creates_in_flight_by_rc_[call.pod.metadata.generate_name]--;
      Status err = error;
      if (err.ok() && !create_errors_.empty()) {
        err = create_errors_.front();
        create_errors_.erase(create_errors_.begin());
      }
      if (!err.ok() && !(err.code() == Code::kTimeout && timeouts_applied_)) {
        Reply(call.done, Result<PodPtr>(err));
        continue;
      }
      Pod pod = std::move(call.pod);
      pod.metadata.name = pod.metadata.generate_name + std::to_string(++name_seq_);
      pod.metadata.uid = "pod-uid-" + pod.metadata.name;
      pod.metadata.creation_timestamp = loop_->Now();
      PodPtr stored = Store(std::move(pod));
      Reply(call.done, err.ok() ? Result<PodPtr>(stored) : Result<PodPtr>(err));
      Emit(ApiWatchEvent<Pod>::Type::kAdded, stored);
    }
  }

  void CompleteDeletes(size_t n) {
    for (size_t i = 0; i < n && !held_deletes_.empty(); ++i) {
      HeldCall call = std::move(held_deletes_.front());
      held_deletes_.erase(held_deletes_.begin());
      if (!delete_errors_.empty()) {
        Status err = delete_errors_.front();
        delete_errors_.erase(delete_errors_.begin());
        Reply(call.done, Result<PodPtr>(err));
        continue;
      }
      std::string key = KeyOf(call.pod.metadata);
      auto it = pods_.find(key);
      if (it == pods_.end()) {
        Reply(call.done, Result<PodPtr>(Status(Code::kNotFound, "gone")));
        continue;
      }
      PodPtr last = it->second;
      pods_.erase(it);
      ++rv_;
      if (applied_delete_timeouts_ > 0) {
        --applied_delete_timeouts_;  // applied, but the reply is lost
        Reply(call.done, Result<PodPtr>(Status(Code::kTimeout, "deadline exceeded")));
      } else {
        Reply(call.done, Result<PodPtr>(last));
      }
      Emit(ApiWatchEvent<Pod>::Type::kDeleted, last);
    }
  }

  int CountCreatingRcs() const {
    int n = 0;
    for (auto& [rc, count] : creates_in_flight_by_rc_) n += count > 0 ? 1 : 0;
    return n;
  }
  int ActivePodsOf(const std::string& rc_name) const {
    int n = 0;
    for (auto& [k, p] : pods_) {
      const OwnerReference* ref = p->metadata.ControllerRef();
      if (ref && ref->name == rc_name && IsActive(*p)) ++n;
    }
    return n;
  }

  SimLoop* loop_;
  MockApiClient api_;
  ::testing::NiceMock<MockStore> store_;
  int64_t rv_ = 1;
  std::map<std::string, PodPtr> pods_;
  std::map<std::string, ControllerPtr> controllers_;
  MockResourceClient<Pod>::EventFn pod_watch_;
  WatchCallback rc_watch_;
  bool hold_creates_ = false;
  bool hold_deletes_ = false;
  bool deliver_events_ = true;
  bool timeouts_applied_ = false;  // a create answered kTimeout was applied anyway
  int list_failures_ = 0;
  int applied_delete_timeouts_ = 0;
  int pod_gets_ = 0;
  Duration reply_delay_ = Duration::zero();
  std::map<std::string, Status> update_errors_;  // by pod name
  int status_conflicts_ = 0;
  int create_calls_ = 0;
  int update_calls_ = 0;
  int patch_calls_ = 0;  // PatchOwnerReferences: adoptions and releases
  int rc_gets_ = 0;
  int name_seq_ = 0;
  int max_concurrent_rcs_creating_ = 0;
  std::map<std::string, int> creates_in_flight_by_rc_;
  std::vector<HeldCall> held_creates_;
  std::vector<HeldCall> held_deletes_;
  std::vector<Status> create_errors_;
  std::vector<Status> delete_errors_;
  std::vector<std::string> deleted_names_;
  std::vector<ReplicationControllerStatus> statuses_;
  std::vector<ApiWatchEvent<Pod>> lagging_events_;
};

class ReplicationManagerTest : public ::testing::Test {
 protected:
  ReplicationManagerTest() : world_(&loop_), rng_(1) {}

  void StartManager(const ManagerOptions& options = {}) {
    manager_ = std::make_unique<ReplicationManager>(options, &world_.store_, &world_.api_, &loop_, &loop_,
                                                    &rng_, &trace_, &logger_);
    manager_->Start();
  }
  void Settle() { loop_.RunFor(std::chrono::seconds(1)); }

  SimLoop loop_;
  ScriptedWorld world_;
  Mt19937Rng rng_;
  NullTraceSink trace_;
  NullLogger logger_;
  std::unique_ptr<ReplicationManager> manager_;
};

TEST_F(ReplicationManagerTest, CreatesMissingReplicasInSlowStartBatches) {
  world_.PutController(MakeRc("web", 7));
  world_.hold_creates_ = true;
  StartManager();
  Settle();
  ASSERT_TRUE(manager_->HasSynced());
  std::vector<size_t> batches;
  while (!world_.held_creates_.empty()) {
    batches.push_back(world_.held_creates_.size());
    world_.CompleteCreates(world_.held_creates_.size());
    Settle();
  }
  EXPECT_EQ(batches, (std::vector<size_t>{1, 2, 4}));
  EXPECT_EQ(world_.ActivePodsOf("web"), 7);
  const Pod& any = *world_.pods_.begin()->second;
  EXPECT_EQ(any.metadata.generate_name, "web-");
  EXPECT_EQ(any.metadata.labels, (Labels{{"app", "web"}, {"tier", "fe"}}));
  ASSERT_NE(any.metadata.ControllerRef(), nullptr);
  EXPECT_EQ(*any.metadata.ControllerRef(), ControllerOwnerRef(MakeRc("web", 7)));
  ASSERT_FALSE(world_.statuses_.empty());
  EXPECT_EQ(world_.statuses_.back().replicas, 7);
  EXPECT_EQ(world_.statuses_.back().fully_labeled_replicas, 7);
  EXPECT_EQ(world_.statuses_.back().observed_generation, 1);
  EXPECT_EQ(manager_->metrics().creates, 7u);
}

// A controller's pods share its uid's buffer in their ownerReference (one copy per controller, not one per
// pod), and the reference's kind and apiVersion are the static constants (engine/shared_string.h).
TEST_F(ReplicationManagerTest, CreatedPodsShareTheControllersUid) {
  world_.PutController(MakeRc("web", 3));
  StartManager();
  Settle();
  ASSERT_EQ(world_.ActivePodsOf("web"), 3);
  const SharedString& uid = world_.controllers_.at("default/web")->metadata.uid;
  ASSERT_EQ(uid, "uid-default-web");
  for (const auto& [key, pod] : world_.pods_) {
    const OwnerReference* ref = pod->metadata.ControllerRef();
    ASSERT_NE(ref, nullptr) << key;
    EXPECT_EQ(ref->uid.c_str(), uid.c_str()) << key;  // the same buffer, not an equal copy
    EXPECT_TRUE(ref->kind.is_constant()) << key;
    EXPECT_TRUE(ref->api_version.is_constant()) << key;
  }
}

TEST_F(ReplicationManagerTest, CreatedPodsShareTheTemplatesLabels) {
  world_.PutController(MakeRc("web", 3));
  StartManager();
  Settle();
  ASSERT_EQ(world_.ActivePodsOf("web"), 3);
  const Labels& labels = world_.controllers_.at("default/web")->spec.template_->metadata.labels;
  ASSERT_FALSE(labels.empty());
  for (const auto& [key, pod] : world_.pods_) {
    EXPECT_TRUE(pod->metadata.labels.shares_with(labels)) << key;  // one map, not equal copies
  }
}

TEST_F(ReplicationManagerTest, BurstReplicasCapsOneSync) {
  world_.PutController(MakeRc("web", 10));
  ManagerOptions opts;
  opts.burst_replicas = 3;
  world_.deliver_events_ = false;  // expectations cannot be satisfied by events
  StartManager(opts);
  Settle();
  EXPECT_EQ(world_.create_calls_, 3);
}

// 2014 flaw: creates in flight were not tracked, so a sync running before the pod list caught up
// created the same replicas again.
TEST_F(ReplicationManagerTest, DoubleCreationWhenPodListLags) {
  world_.PutController(MakeRc("web", 3));
  world_.deliver_events_ = false;
  StartManager();
  Settle();
  EXPECT_EQ(world_.create_calls_, 3);
  // The controller changes (and the periodic resync fires) while the pod events still lag.
  ReplicationController rc = *world_.controllers_["default/web"];
  rc.metadata.annotations["touched"] = "yes";
  world_.PutController(rc);
  loop_.RunFor(std::chrono::seconds(31));
  EXPECT_EQ(world_.create_calls_, 3);
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::seconds(31));
  EXPECT_EQ(world_.create_calls_, 3);
  EXPECT_EQ(world_.ActivePodsOf("web"), 3);
  EXPECT_TRUE(manager_->expectations().Satisfied("uid-default-web"));
}

TEST_F(ReplicationManagerTest, TimedOutCreateHoldsExpectationsOnlyForTheGrace) {
  world_.PutController(MakeRc("web", 2));
  world_.deliver_events_ = false;
  world_.create_errors_ = {Status(Code::kTimeout, "maybe")};  // the first create's outcome is unknown
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  // Timeout: not applied here, but it might have been, so no replacement within the grace.
  int calls = world_.create_calls_;
  EXPECT_EQ(calls, 1);
  loop_.RunFor(std::chrono::seconds(9));
  EXPECT_EQ(world_.create_calls_, calls);
  // After the grace (10s), the controller acts on what it sees instead of waiting 5 minutes.
  loop_.RunFor(std::chrono::seconds(2));
  EXPECT_GT(world_.create_calls_, calls);
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::minutes(2));
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
}

// Found by tests/faults (etcd SIGKILLed for longer than the grace while the manager created pods): the
// creates that timed out had been applied, but the API server's etcd watch delivered them only after
// etcd came back, later than the grace; the manager replaced them from its stale view and overshot
// (101 of 100). After the grace it must count the controller's pods with a live List first.
TEST_F(ReplicationManagerTest, TimedOutCreateAppliedButUnseenPastTheGraceIsNotReplaced) {
  world_.PutController(MakeRc("web", 3));
  world_.deliver_events_ = false;
  world_.timeouts_applied_ = true;
  world_.create_errors_ = {Status(Code::kTimeout, "etcd: recvmsg:Connection reset by peer")};
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  ASSERT_EQ(world_.create_calls_, 1);
  ASSERT_EQ(world_.ActivePodsOf("web"), 1);  // applied, though the manager was told "timeout"
  loop_.RunFor(std::chrono::seconds(12));    // past the grace, the event still on its way
  EXPECT_EQ(world_.ActivePodsOf("web"), 3) << "no replacement for the applied create";
  EXPECT_EQ(world_.create_calls_, 3);
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::minutes(6));
  EXPECT_EQ(world_.ActivePodsOf("web"), 3);
  EXPECT_EQ(world_.create_calls_, 3);
}

// The live List itself failing (etcd still down) creates nothing; the sync retries.
TEST_F(ReplicationManagerTest, TimedOutCreateVerificationFailingCreatesNothing) {
  world_.PutController(MakeRc("web", 2));
  world_.deliver_events_ = false;
  world_.timeouts_applied_ = true;
  world_.create_errors_ = {Status(Code::kTimeout, "maybe")};
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  ASSERT_EQ(world_.create_calls_, 1);
  world_.list_failures_ = 1000;
  loop_.RunFor(std::chrono::seconds(20));
  EXPECT_EQ(world_.create_calls_, 1);
  world_.list_failures_ = 0;
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::minutes(20));
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
}

TEST_F(ReplicationManagerTest, CreateErrorsAreNotIgnored) {
  ReplicationController rc = MakeRc("web", 7);
  // No status write, whose watch event would re-enqueue at once: the failed sync finds the status it
  // would write (ReplicaFailure already set) in place.
  rc.status.observed_generation = 1;
  rc.status.conditions.push_back({kReplicaFailure, "True", SimLoop::Epoch(), "FailedCreate", "earlier"});
  world_.PutController(rc);
  world_.create_errors_ = {Status(Code::kInternal, "etcd write failed")};
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  // Slow start stopped at the first failing batch of 1.
  EXPECT_EQ(world_.create_calls_, 1);
  EXPECT_EQ(manager_->metrics().create_errors, 1u);
  EXPECT_EQ(manager_->metrics().sync_errors, 1u);
  EXPECT_EQ(manager_->metrics().requeues, 1u);
  EXPECT_TRUE(manager_->expectations().Satisfied("uid-default-web"));
  Settle();  // requeued after backoff, converges
  EXPECT_EQ(world_.ActivePodsOf("web"), 7);
  EXPECT_EQ(manager_->metrics().creates, 7u);
}

TEST_F(ReplicationManagerTest, DeleteErrorsAreNotIgnored) {
  ReplicationController rc = MakeRc("web", 1);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  world_.delete_errors_ = {Status(Code::kInternal, "boom")};
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  EXPECT_EQ(manager_->metrics().delete_errors, 1u);
  EXPECT_EQ(manager_->metrics().sync_errors, 1u);
  Settle();
  EXPECT_EQ(world_.ActivePodsOf("web"), 1);
  EXPECT_EQ(manager_->metrics().deletes, 2u);
}

// Creates refused (a quota) set ReplicaFailure with the API's message; the first sync whose creates
// succeed removes it, as upstream's ReplicaSet controller does.
TEST_F(ReplicationManagerTest, FailedCreatesSetReplicaFailureAndSuccessClearsIt) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  world_.create_errors_ = {Status(Code::kForbidden, "exceeded quota: pods=3"),
                           Status(Code::kForbidden, "exceeded quota: pods=3")};
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  ASSERT_FALSE(world_.statuses_.empty());
  const ReplicationControllerStatus& failed = world_.statuses_.back();
  ASSERT_EQ(failed.conditions.size(), 1u);
  EXPECT_EQ(failed.conditions[0].type, kReplicaFailure);
  EXPECT_EQ(failed.conditions[0].status, "True");
  EXPECT_EQ(failed.conditions[0].reason, "FailedCreate");
  EXPECT_EQ(failed.conditions[0].message, "exceeded quota: pods=3");
  EXPECT_TRUE(failed.conditions[0].last_transition_time.has_value());
  Settle();
  EXPECT_EQ(world_.ActivePodsOf("web"), 3);
  EXPECT_TRUE(world_.statuses_.back().conditions.empty());
}

TEST_F(ReplicationManagerTest, FailedDeletesSetReplicaFailureWithReasonFailedDelete) {
  ReplicationController rc = MakeRc("web", 1);
  world_.PutController(rc);
  for (int i = 0; i < 2; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  world_.delete_errors_ = {Status(Code::kForbidden, "denied by admission")};
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(1));
  // The failed sync wrote the condition; the retry, whose delete succeeds, removes it.
  ASSERT_FALSE(world_.statuses_.empty());
  ASSERT_EQ(world_.statuses_.front().conditions.size(), 1u);
  EXPECT_EQ(world_.statuses_.front().conditions[0].reason, "FailedDelete");
  EXPECT_EQ(world_.statuses_.front().conditions[0].message, "denied by admission");
  Settle();
  EXPECT_EQ(world_.ActivePodsOf("web"), 1);
  EXPECT_TRUE(world_.statuses_.back().conditions.empty());
}

TEST_F(ReplicationManagerTest, NotFoundOnDeleteCountsAsDone) {
  ReplicationController rc = MakeRc("web", 0);
  world_.PutController(rc);
  world_.AddPod("p0", {{"app", "web"}}, &rc);
  world_.delete_errors_ = {Status(Code::kNotFound, "already gone")};
  StartManager();
  Settle();
  EXPECT_EQ(manager_->metrics().delete_errors, 0u);
  EXPECT_EQ(manager_->metrics().sync_errors, 0u);
}

TEST_F(ReplicationManagerTest, CreatesOfDifferentControllersRunConcurrently) {
  world_.PutController(MakeRc("a", 3));
  world_.PutController(MakeRc("b", 3));
  world_.hold_creates_ = true;
  StartManager();
  Settle();
  EXPECT_EQ(world_.CountCreatingRcs(), 2);
  EXPECT_EQ(manager_->syncs_in_flight(), 2);
}

TEST_F(ReplicationManagerTest, WorkersBoundSyncsInFlight) {
  world_.PutController(MakeRc("a", 3));
  world_.PutController(MakeRc("b", 3));
  world_.hold_creates_ = true;
  ManagerOptions opts;
  opts.workers = 1;
  StartManager(opts);
  Settle();
  EXPECT_EQ(world_.CountCreatingRcs(), 1);
  EXPECT_EQ(manager_->syncs_in_flight(), 1);
  world_.hold_creates_ = false;
  world_.CompleteCreates(world_.held_creates_.size());
  Settle();
  EXPECT_EQ(world_.max_concurrent_rcs_creating_, 1);
  EXPECT_EQ(world_.ActivePodsOf("a"), 3);
  EXPECT_EQ(world_.ActivePodsOf("b"), 3);
}

// 2014 flaw: a failed pod list left the controller's lock held, blocking it (and others) forever.
TEST_F(ReplicationManagerTest, LockLeftHeldWhenListingFails) {
  world_.PutController(MakeRc("a", 2));
  world_.PutController(MakeRc("b", 2));
  world_.list_failures_ = 3;
  StartManager();
  loop_.RunFor(std::chrono::milliseconds(50));
  EXPECT_FALSE(manager_->HasSynced());
  EXPECT_EQ(world_.create_calls_, 0);  // no sync acts on an unsynced pod cache
  loop_.RunFor(std::chrono::seconds(2));
  EXPECT_TRUE(manager_->HasSynced());
  EXPECT_EQ(world_.ActivePodsOf("a"), 2);
  EXPECT_EQ(world_.ActivePodsOf("b"), 2);
}

// 2014 flaw: scale-down deleted whichever pods the list returned first, often the healthy ones.
TEST_F(ReplicationManagerTest, ScaleDownDeletesWhateverComesFirst) {
  ReplicationController rc = MakeRc("web", 2);
  world_.PutController(rc);
  world_.AddPod("a-healthy", {{"app", "web"}}, &rc, phase::kRunning, true, "n1");
  world_.AddPod("b-healthy", {{"app", "web"}}, &rc, phase::kRunning, true, "n2");
  world_.AddPod("y-pending", {{"app", "web"}}, &rc, phase::kPending, false, "n3");
  world_.AddPod("z-unscheduled", {{"app", "web"}}, &rc, phase::kPending, false, "");
  StartManager();
  Settle();
  std::set<std::string> deleted(world_.deleted_names_.begin(), world_.deleted_names_.end());
  EXPECT_EQ(deleted, (std::set<std::string>{"y-pending", "z-unscheduled"}));
}

TEST_F(ReplicationManagerTest, AdoptsMatchingOrphansAndReleasesNonMatching) {
  ReplicationController rc = MakeRc("web", 2);
  world_.PutController(rc);
  world_.AddPod("orphan", {{"app", "web"}}, nullptr);
  world_.AddPod("other-app", {{"app", "db"}}, nullptr);
  world_.AddPod("relabelled", {{"app", "old"}}, &rc);
  StartManager();
  Settle();
  EXPECT_EQ(manager_->metrics().adoptions, 1u);
  EXPECT_EQ(manager_->metrics().releases, 1u);
  EXPECT_NE(world_.pods_.at("default/orphan")->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(world_.pods_.at("default/relabelled")->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(world_.pods_.at("default/other-app")->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);  // the orphan plus one create
  EXPECT_EQ(world_.create_calls_, 1);
}

TEST_F(ReplicationManagerTest, DeletingControllerCreatesAndAdoptsNothing) {
  ReplicationController rc = MakeRc("web", 3);
  rc.metadata.deletion_timestamp = loop_.Now();
  world_.PutController(rc);
  world_.AddPod("orphan", {{"app", "web"}}, nullptr);
  StartManager();
  Settle();
  EXPECT_EQ(world_.create_calls_, 0);
  EXPECT_EQ(world_.patch_calls_, 0);
}

TEST_F(ReplicationManagerTest, PodFailureWakesItsControllerAtOnce) {
  world_.PutController(MakeRc("web", 2));
  ManagerOptions opts;
  opts.resync_period = std::chrono::hours(1);
  StartManager(opts);
  Settle();
  ASSERT_EQ(world_.ActivePodsOf("web"), 2);
  std::string victim = world_.pods_.begin()->first;
  world_.ModifyPod(victim, [](Pod& p) { p.status.phase = phase::kFailed; });
  loop_.RunFor(std::chrono::milliseconds(10));
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
  EXPECT_EQ(world_.create_calls_, 3);
}

TEST_F(ReplicationManagerTest, StatusWrittenOnlyWhenChangedAndConflictsRetry) {
  world_.PutController(MakeRc("web", 1));
  world_.status_conflicts_ = 1;
  StartManager();
  Settle();
  EXPECT_EQ(world_.rc_gets_, 1);
  EXPECT_GE(manager_->metrics().sync_errors, 1u);
  EXPECT_EQ(world_.statuses_.size(), 1u);
  EXPECT_EQ(world_.statuses_.back().replicas, 1);
  EXPECT_EQ(world_.statuses_.back().ready_replicas, 0);
  size_t writes = world_.statuses_.size();
  loop_.RunFor(std::chrono::seconds(65));  // resyncs: nothing changed, nothing written
  EXPECT_EQ(world_.statuses_.size(), writes);
  world_.ModifyPod(world_.pods_.begin()->first, [&](Pod& p) {
    p.status.phase = phase::kRunning;
    p.status.conditions = {PodCondition{"Ready", "True", loop_.Now(), "", ""}};
  });
  Settle();
  ASSERT_EQ(world_.statuses_.size(), writes + 1);
  EXPECT_EQ(world_.statuses_.back().ready_replicas, 1);
  EXPECT_EQ(world_.statuses_.back().available_replicas, 1);
}

TEST_F(ReplicationManagerTest, NoCallbackTouchesTheManagerAfterStop) {
  world_.PutController(MakeRc("web", 3));
  world_.hold_creates_ = true;
  StartManager();
  Settle();
  ASSERT_FALSE(world_.held_creates_.empty());
  manager_->Stop();
  manager_->Stop();  // idempotent
  manager_.reset();
  world_.CompleteCreates(world_.held_creates_.size());
  loop_.RunFor(std::chrono::minutes(1));  // under ASan, a touch of the freed manager would fail here
  SUCCEED();
}

TEST_F(ReplicationManagerTest, ScalesUpThenDown) {
  world_.PutController(MakeRc("web", 5));
  StartManager();
  Settle();
  EXPECT_EQ(world_.ActivePodsOf("web"), 5);
  ReplicationController rc = *world_.controllers_["default/web"];
  rc.spec.replicas = 2;
  rc.metadata.generation = 2;
  world_.PutController(rc);
  Settle();
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
  EXPECT_EQ(world_.statuses_.back().replicas, 2);
  EXPECT_EQ(world_.statuses_.back().observed_generation, 2);
}

// --- Regression tests of the engine bugs of issue 9 and the manager findings of issue 7. ---

ReplicationController Successor(const std::string& name, int replicas) {
  ReplicationController rc = MakeRc(name, replicas);
  rc.metadata.uid = "uid-" + name + "-successor";
  return rc;
}

// Engine bug 1: a controller recreated under the same name (its delete missed) inherited the old
// one's pending expectations and waited the full 5-minute timeout.
TEST_F(ReplicationManagerTest, RecreatedControllerInheritsOldExpectations) {
  world_.PutController(MakeRc("web", 3));
  world_.deliver_events_ = false;  // the old controller's creates are never observed
  StartManager();
  Settle();
  ASSERT_EQ(world_.create_calls_, 3);
  world_.PutController(Successor("web", 2));  // the delete was missed: the watch shows a new uid
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.create_calls_, 5);
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-web-successor"), 2);
}

// Engine bug 2: with slow API calls, a sync that began before its controller was deleted recorded
// expectations (and created pods) afterwards; the successor of the same name then stalled.
TEST_F(ReplicationManagerTest, InFlightSyncRecreatesExpectationsAfterDelete) {
  world_.reply_delay_ = std::chrono::milliseconds(150);
  world_.PutController(MakeRc("web", 3));
  world_.AddPod("orphan", {{"app", "web"}}, nullptr);
  StartManager();
  // The pod list lands at 150ms; the first sync's claim call is in flight until ~300ms.
  loop_.RunFor(std::chrono::milliseconds(200));
  ASSERT_GE(world_.rc_gets_ + world_.patch_calls_, 1);
  ASSERT_EQ(world_.create_calls_, 0);
  world_.DeleteController("web", /*notify=*/true);
  world_.PutController(Successor("web", 3));
  loop_.RunFor(std::chrono::seconds(5));
  // Nothing created for the dead one (the orphan may have been adopted by it: its GET was served
  // before the delete), and the successor is not stalled by the dead one's expectations.
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-web-successor"), 3);
  EXPECT_EQ(world_.create_calls_, 3);
  EXPECT_TRUE(manager_->expectations().Satisfied("uid-web-successor"));
}

// Engine bug 3: a controller already deleted (the cache does not know yet) adopted orphans and
// created pods that its successor then duplicated.
TEST_F(ReplicationManagerTest, DeletedControllerAdoptsOrphans) {
  ReplicationController rc = MakeRc("web", 2);
  world_.PutController(rc);
  world_.DeleteController("web", /*notify=*/false);
  world_.AddPod("orphan", {{"app", "web"}}, nullptr);
  StartManager();
  Settle();
  EXPECT_EQ(world_.patch_calls_, 0);
  EXPECT_EQ(world_.pods_.at("default/orphan")->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(world_.create_calls_, 0);
  // Being deleted (deletionTimestamp set in the API, not yet in the cache): no adoption either.
  ReplicationController db = MakeRc("db", 1);
  world_.PutController(db);
  Settle();
  db = *world_.controllers_.at("default/db");
  db.metadata.deletion_timestamp = loop_.Now();
  db.metadata.resource_version = std::to_string(++world_.rv_);
  world_.controllers_["default/db"] = std::make_shared<const ReplicationController>(db);
  int patches = world_.patch_calls_;
  world_.AddPod("db-orphan", {{"app", "db"}}, nullptr);
  Settle();
  EXPECT_EQ(world_.patch_calls_, patches);
}

// Found by rcsim explore (scenarios/regressions/successor-duplicates-unseen-orphans-*): a controller
// deleted with its pods orphaned and recreated under the same name while the pod informer lags (its
// watch down, the re-list failing or stale) saw its predecessor's pods as still owned by the dead uid,
// created a full set beside them, and adopted the orphans once the informer caught up: twice the
// replicas active until the surplus was deleted.
TEST_F(ReplicationManagerTest, SuccessorDuplicatesOrphansTheInformerShowsAsItsPredecessors) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  ASSERT_EQ(world_.create_calls_, 0);
  world_.deliver_events_ = false;  // the pod informer misses the orphaning
  for (int i = 0; i < 3; ++i) {
    world_.ModifyPod("default/p" + std::to_string(i), [](Pod& p) { p.metadata.owner_references.clear(); });
  }
  world_.DeleteController("web", /*notify=*/true);
  world_.PutController(Successor("web", 3));
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.create_calls_, 0) << "the orphans the informer does not show yet are not duplicated";
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-web-successor"), 3);
  EXPECT_EQ(world_.create_calls_, 0);
  EXPECT_TRUE(world_.deleted_names_.empty());
}

// Found by rcsim explore (regressions/successor-duplicates-orphans-seen-during-its-claim): the pod
// informer shows one of a deleted predecessor's pods orphaned and the others still owned by it; the
// successor's sync adopts the orphan, and while it does, the informer sees the others orphaned too.
// The sync counted only what it claimed at its start and, the dead owner showing no pods any more, did
// not count live: it created 2 pods beside the 2 orphans it adopted next (5 active, bound 3).
TEST_F(ReplicationManagerTest, SuccessorDuplicatesOrphansSeenDuringItsClaim) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  ASSERT_EQ(world_.create_calls_, 0);
  world_.reply_delay_ = std::chrono::milliseconds(100);  // the claim's Get and patch take a while
  world_.deliver_events_ = false;
  for (int i = 0; i < 3; ++i) {
    world_.ModifyPod("default/p" + std::to_string(i), [](Pod& p) { p.metadata.owner_references.clear(); });
  }
  world_.pod_watch_(world_.lagging_events_.front());  // the informer sees p0 orphaned, not p1 and p2
  world_.lagging_events_.erase(world_.lagging_events_.begin());
  world_.DeleteController("web", /*notify=*/true);
  world_.PutController(Successor("web", 3));
  loop_.RunFor(std::chrono::milliseconds(50));  // the successor's sync is adopting p0
  world_.FlushLaggingEvents();                  // p1 and p2 show up orphaned meanwhile
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.create_calls_, 0) << "the orphans seen during the claim are adopted, not duplicated";
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-web-successor"), 3);
  EXPECT_TRUE(world_.deleted_names_.empty());
}

// Found by rcsim explore (basic/min-ready-seconds with a manager restart at 36ms): the availability
// re-check was a full minReadySeconds after the sync that saw a pod ready but not available. A sync
// woken by an earlier re-check (for another pod) pushed it past the moment the pod became available,
// and the work queue keeps one wake-up per key, the earliest: status.availableReplicas lagged by up to
// minReadySeconds (the run ended with it stale). The re-check is now when the next pod becomes available.
TEST_F(ReplicationManagerTest, AvailabilityRecheckLateBehindAnEarlierOne) {
  ManagerOptions options;
  options.resync_period = std::chrono::minutes(10);
  ReplicationController rc = MakeRc("web", 2);
  rc.spec.min_ready_seconds = 20;
  world_.PutController(rc);
  world_.AddPod("p0", {{"app", "web"}}, &rc);  // ready at 0s: available at 20s
  StartManager(options);
  loop_.RunFor(std::chrono::seconds(10));
  world_.AddPod("p1", {{"app", "web"}}, &rc);  // ready at 10s: available at 30s
  loop_.RunFor(std::chrono::seconds(21));      // to 31s
  ASSERT_FALSE(world_.statuses_.empty());
  EXPECT_EQ(world_.controllers_.at("default/web")->status.available_replicas, 2)
      << "p1 has been available since 30s";
}

// Found by the explore sweep on the cluster world (regressions/successor-duplicates-orphans-created-unseen):
// a controller's creates succeed but its pod informer never shows the pods (a stale re-list across
// them); the controller is deleted with its pods orphaned and a successor comes. The informer shows no
// pod and so no dead owner: the successor created 3 beside the 3 orphans (6 active, bound 3). The
// manager knew those pods existed (their creations were still expected at the delete).
TEST_F(ReplicationManagerTest, SuccessorDuplicatesOrphansItsPredecessorCreatedUnseen) {
  world_.PutController(MakeRc("web", 3));
  world_.deliver_events_ = false;  // the informer never sees the creates
  StartManager();
  Settle();
  ASSERT_EQ(world_.create_calls_, 3);
  std::vector<std::string> keys;
  for (const auto& [key, pod] : world_.pods_) keys.push_back(key);
  for (const std::string& key : keys) {
    world_.ModifyPod(key, [](Pod& p) { p.metadata.owner_references.clear(); });
  }
  world_.DeleteController("web", /*notify=*/true);
  world_.PutController(Successor("web", 3));
  loop_.RunFor(std::chrono::seconds(2));
  EXPECT_EQ(world_.create_calls_, 3) << "the successor counts live before it creates";
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.create_calls_, 3);
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-web-successor"), 3)
      << "it adopts them once the informer shows them";
  EXPECT_TRUE(world_.deleted_names_.empty());
}

// The live count behind that fix does not hold the successor back when the predecessor's pods are
// still its own (a background cascading delete whose garbage collection is pending): they are not
// the successor's, so it creates its replicas at once.
TEST_F(ReplicationManagerTest, SuccessorCreatesBesidePodsItsPredecessorStillOwns) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  world_.DeleteController("web", /*notify=*/true);
  world_.PutController(Successor("web", 3));
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(world_.create_calls_, 3);
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-web-successor"), 3);
  EXPECT_EQ(world_.patch_calls_, 0);
}

// Engine bug 4: one timed-out create voided the expectations of the creates known to have succeeded,
// so the next sync (the watch lagging) created them all again.
TEST_F(ReplicationManagerTest, CreateTimeoutVoidsExpectationsOfSucceededCreates) {
  world_.PutController(MakeRc("web", 4));
  world_.deliver_events_ = false;
  // Batch 1: ok; batch 2: one ok, one timed out (not applied); the slow start stops there.
  world_.create_errors_ = {Status(), Status(), Status(Code::kTimeout, "maybe")};
  StartManager();
  loop_.RunFor(std::chrono::seconds(15));  // past the 10s grace of the timed-out create
  EXPECT_EQ(world_.create_calls_, 3);      // the two known creates are still expected
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.ActivePodsOf("web"), 4);
  EXPECT_EQ(world_.create_calls_, 5);
}

// Engine bug 5: adoption was a whole-object update from a stale cache; its conflict failed the whole
// sync again and again. Adoption is now a patch of the ownerReferences with the pod's uid as the
// precondition: a stale copy cannot conflict, and a change made since is kept.
TEST_F(ReplicationManagerTest, AdoptionConflictFailsWholeSync) {
  StartManager();
  world_.AddPod("o1", {{"app", "web"}}, nullptr);
  world_.AddPod("o2", {{"app", "web"}}, nullptr);
  Settle();
  world_.deliver_events_ = false;  // the manager's copy of o1 goes stale
  world_.ModifyPod("default/o1", [](Pod& p) { p.metadata.annotations["touched"] = "yes"; });
  world_.deliver_events_ = true;
  world_.PutController(MakeRc("web", 2));
  Settle();
  EXPECT_EQ(manager_->metrics().adoptions, 2u);
  EXPECT_EQ(manager_->metrics().sync_errors, 0u);
  EXPECT_EQ(world_.patch_calls_, 2);  // one per pod, the stale one too
  EXPECT_EQ(world_.update_calls_, 0);
  EXPECT_EQ(world_.pods_.at("default/o1")->metadata.annotations.at("touched"), "yes");  // not overwritten
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-default-web"), 2);
  EXPECT_EQ(world_.create_calls_, 0);
}

TEST_F(ReplicationManagerTest, AdoptionConflictOnPodAlreadyMineIsSuccess) {
  ReplicationController rc = MakeRc("web", 1);
  StartManager();
  world_.AddPod("o1", {{"app", "web"}}, nullptr);
  Settle();
  world_.deliver_events_ = false;  // adopted meanwhile (e.g. by a predecessor whose reply was lost)
  world_.ModifyPod("default/o1",
                   [&](Pod& p) { p.metadata.owner_references.push_back(ControllerOwnerRef(rc)); });
  world_.deliver_events_ = true;
  world_.PutController(rc);
  Settle();
  EXPECT_EQ(manager_->metrics().sync_errors, 0u);
  EXPECT_EQ(manager_->metrics().claim_errors, 0u);
  EXPECT_EQ(world_.create_calls_, 0);
  // The patch merged by owner uid: still one reference, not two.
  EXPECT_EQ(world_.pods_.at("default/o1")->metadata.owner_references.size(), 1u);
}

// A pod replaced under the same name (new uid) after the cache saw the orphan: the patch's uid
// precondition refuses it (422) and the sync goes on with the other pods.
TEST_F(ReplicationManagerTest, AdoptionOfAReplacedPodIsRefusedByItsUid) {
  StartManager();
  world_.AddPod("o1", {{"app", "web"}}, nullptr);
  world_.AddPod("o2", {{"app", "web"}}, nullptr);
  Settle();
  world_.deliver_events_ = false;
  world_.ModifyPod("default/o1", [](Pod& p) { p.metadata.uid = "uid-o1-replaced"; });
  world_.deliver_events_ = true;
  world_.PutController(MakeRc("web", 2));
  Settle();
  EXPECT_EQ(manager_->metrics().sync_errors, 0u);
  EXPECT_GE(manager_->metrics().claim_errors, 1u);
  EXPECT_EQ(world_.pods_.at("default/o1")->metadata.ControllerRef(), nullptr);
  EXPECT_NE(world_.pods_.at("default/o2")->metadata.ControllerRef(), nullptr);
}

// Issue 7, finding 5: one orphan whose adoption fails for good (413 for a 10 MB pod) stalled its
// controller forever.
TEST_F(ReplicationManagerTest, OversizedOrphanStallsItsController) {
  world_.PutController(MakeRc("web", 2));
  world_.AddPod("huge", {{"app", "web"}}, nullptr);
  world_.update_errors_["huge"] = Status(Code::kRequestTooLarge, "request entity too large");
  StartManager();
  Settle();
  EXPECT_GE(manager_->metrics().claim_errors, 1u);
  EXPECT_EQ(manager_->metrics().sync_errors, 0u);
  EXPECT_EQ(world_.ActivePodsOwnedBy("uid-default-web"), 2);  // it created its replicas
}

// Engine bug 7: a timed-out delete counted as observed at once; the next sync deleted another pod.
TEST_F(ReplicationManagerTest, TimedOutDeleteCountedAsObservedAtOnce) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  world_.deliver_events_ = false;
  world_.applied_delete_timeouts_ = 1;
  rc = *world_.controllers_.at("default/web");
  rc.spec.replicas = 2;
  world_.PutController(rc);
  loop_.RunFor(std::chrono::seconds(5));
  // The timed-out delete may be sent again (the same pod, its uid the precondition), never another pod.
  auto distinct = [&] {
    return std::set<std::string>(world_.deleted_names_.begin(), world_.deleted_names_.end());
  };
  EXPECT_EQ(distinct().size(), 1u);
  world_.FlushLaggingEvents();
  loop_.RunFor(std::chrono::seconds(20));
  EXPECT_EQ(distinct().size(), 1u);
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
  EXPECT_EQ(world_.create_calls_, 0);
}

// A delete that timed out without being applied (the API server's etcd write hit its deadline while
// the etcd leader died) left the pod alone for the whole unknown-outcome grace: after a leader kill a
// scale-down converged 15 s late (5 s etcd deadline + 10 s grace). The delete is sent again instead.
TEST_F(ReplicationManagerTest, TimedOutDeleteWaitedOutTheGraceInsteadOfAskingAgain) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  world_.delete_errors_ = {Status(Code::kTimeout, "etcd: Deadline Exceeded"),
                           Status(Code::kTimeout, "etcd: Deadline Exceeded")};  // not applied, twice
  rc = *world_.controllers_.at("default/web");
  rc.spec.replicas = 2;
  world_.PutController(rc);
  loop_.RunFor(std::chrono::seconds(2));  // well inside the 10 s grace
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
  ASSERT_EQ(world_.deleted_names_.size(), 3u);  // one pod, asked three times
  EXPECT_EQ(std::set<std::string>(world_.deleted_names_.begin(), world_.deleted_names_.end()).size(), 1u);
  EXPECT_EQ(manager_->metrics().delete_errors, 2u);
  EXPECT_EQ(manager_->metrics().deletes, 1u);
  loop_.RunFor(std::chrono::seconds(20));
  EXPECT_EQ(world_.ActivePodsOf("web"), 2);
  EXPECT_EQ(world_.deleted_names_.size(), 3u);
  EXPECT_EQ(world_.create_calls_, 0);
}

// A timed-out delete is not sent again once its controller is gone: the retry belongs to the sync.
TEST_F(ReplicationManagerTest, TimedOutDeleteIsNotSentAgainForADeletedController) {
  ReplicationController rc = MakeRc("web", 3);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  world_.delete_errors_ = {Status(Code::kTimeout, "etcd: Deadline Exceeded")};
  world_.hold_deletes_ = true;
  rc = *world_.controllers_.at("default/web");
  rc.spec.replicas = 2;
  world_.PutController(rc);
  Settle();
  ASSERT_EQ(world_.held_deletes_.size(), 1u);
  world_.DeleteController("web", /*notify=*/true);
  Settle();
  world_.CompleteDeletes(1);  // the timeout comes back after the controller went
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.deleted_names_.size(), 1u);
}

// Engine bug 8: a slow start kept issuing batches after its controller was deleted.
TEST_F(ReplicationManagerTest, StartedSyncKeepsCreatingAfterDelete) {
  world_.PutController(MakeRc("web", 100));
  world_.hold_creates_ = true;
  StartManager();
  Settle();
  world_.CompleteCreates(world_.held_creates_.size());  // batch 1
  Settle();
  ASSERT_EQ(world_.held_creates_.size(), 2u);  // batch 2 in flight
  world_.DeleteController("web", /*notify=*/true);
  Settle();
  world_.hold_creates_ = false;
  world_.CompleteCreates(world_.held_creates_.size());
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(world_.create_calls_, 3);
}

// Found by rcsim explore (scenarios/regressions/verified-create-expects-pods-already-seen): after a
// timed-out create's grace, the live List that counts the controller's pods compared them with the
// informer's count taken when the sync began. The applied pod reached the informer while the List was
// in flight, so it was expected once more, as a create never to be observed: the controller waited
// for the 5-minute timeout (every sync "waiting for expectations", pods missing).
TEST_F(ReplicationManagerTest, VerifiedCreateExpectsPodsTheInformerAlreadySaw) {
  world_.reply_delay_ = std::chrono::seconds(1);
  world_.PutController(MakeRc("web", 3));
  world_.deliver_events_ = false;
  world_.timeouts_applied_ = true;
  world_.create_errors_ = {Status(Code::kTimeout, "maybe")};  // applied, its reply lost
  StartManager();
  // Pod list at 1s, the create at 1s times out at 2s; its grace ends at 12s; the sync then lists
  // the controller's pods live (the reply at ~13s).
  loop_.RunFor(std::chrono::milliseconds(12500));
  ASSERT_EQ(world_.create_calls_, 1);
  world_.FlushLaggingEvents();  // the informer sees the applied pod while the List is in flight
  loop_.RunFor(std::chrono::seconds(10));
  ASSERT_EQ(world_.ActivePodsOf("web"), 3);
  EXPECT_EQ(world_.create_calls_, 3);
  EXPECT_TRUE(manager_->expectations().Satisfied("uid-default-web"))
      << manager_->expectations().PendingAdds("uid-default-web");
  // A pod fails: it is replaced at once, not after the expectations' 5-minute timeout.
  world_.ModifyPod(world_.pods_.begin()->first, [](Pod& p) { p.status.phase = phase::kFailed; });
  loop_.RunFor(std::chrono::seconds(10));
  EXPECT_EQ(world_.create_calls_, 4);
  EXPECT_EQ(world_.ActivePodsOf("web"), 3);
}

// Issue 7, finding 2: a stored controller whose selector does not select its template's labels made
// the manager create pods without end (none ever counted as its own).
TEST_F(ReplicationManagerTest, SelectorNotMatchingTemplateCreatesRunaway) {
  ReplicationController rc = MakeRc("web", 3);
  rc.spec.template_->metadata.labels = {{"app", "other"}};
  world_.reply_delay_ = std::chrono::milliseconds(10);  // before the fix: a bounded runaway
  world_.PutController(rc);
  StartManager();
  loop_.RunFor(std::chrono::seconds(70));
  EXPECT_EQ(world_.create_calls_, 0);
  EXPECT_GE(manager_->metrics().invalid_controllers, 1u);
}

// Issue 7, finding 4: negative replicas in a stored controller were acted on as 0 (all pods deleted).
TEST_F(ReplicationManagerTest, NegativeReplicasDeletesAllPods) {
  ReplicationController rc = MakeRc("web", -1);
  world_.PutController(rc);
  for (int i = 0; i < 3; ++i) world_.AddPod("p" + std::to_string(i), {{"app", "web"}}, &rc);
  StartManager();
  Settle();
  EXPECT_TRUE(world_.deleted_names_.empty());
  EXPECT_EQ(world_.ActivePodsOf("web"), 3);
  EXPECT_GE(manager_->metrics().invalid_controllers, 1u);
}

TEST(ComputeStatusTest, CountsActiveFullyLabeledReadyAndAvailable) {
  ReplicationController rc = MakeRc("web", 4);
  rc.spec.min_ready_seconds = 10;
  rc.metadata.generation = 3;
  TimePoint now = SimLoop::Epoch() + std::chrono::minutes(1);
  auto pod = [&](Labels labels, const char* phase, bool ready, int ready_for_s, bool deleting = false) {
    auto p = std::make_shared<Pod>();
    p->metadata.labels = std::move(labels);
    if (deleting) p->metadata.deletion_timestamp = now;
    p->status.phase = phase;
    p->status.conditions.push_back(
        PodCondition{"Ready", ready ? "True" : "False", now - std::chrono::seconds(ready_for_s), "", ""});
    return PodPtr(p);
  };
  Labels full = {{"app", "web"}, {"tier", "fe"}};
  std::vector<PodPtr> pods = {
      pod(full, phase::kRunning, true, 60),              // available
      pod(full, phase::kRunning, true, 5),               // ready, not yet available
      pod({{"app", "web"}}, phase::kPending, false, 0),  // active, not fully labeled
      pod(full, phase::kFailed, false, 0),               // terminated: not counted
      pod(full, phase::kRunning, true, 60, true),        // being deleted: not counted
  };
  ReplicationControllerStatus st = ComputeStatus(rc, pods, now);
  EXPECT_EQ(st.replicas, 3);
  EXPECT_EQ(st.fully_labeled_replicas, 2);
  EXPECT_EQ(st.ready_replicas, 2);
  EXPECT_EQ(st.available_replicas, 1);
  EXPECT_EQ(st.observed_generation, 3);
}

TEST(WithReplicaFailureTest, AddsOnceKeepsOthersAndClears) {
  const TimePoint t0 = SimLoop::Epoch();
  std::vector<ReplicationControllerCondition> conds = {{"Custom", "True", t0, "R", "m"}};
  auto failed = WithReplicaFailure(conds, Status(Code::kForbidden, "quota"), "FailedCreate", t0);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[1].type, kReplicaFailure);
  EXPECT_EQ(failed[1].reason, "FailedCreate");
  // A second failure keeps the first condition (and its transition time), as upstream does.
  auto again = WithReplicaFailure(failed, Status(Code::kForbidden, "other"), "FailedDelete",
                                  t0 + std::chrono::minutes(1));
  EXPECT_EQ(again, failed);
  auto cleared = WithReplicaFailure(again, Status(), "", t0 + std::chrono::minutes(2));
  EXPECT_EQ(cleared, conds);
}

TEST(PodFromTemplateTest, UsesGenerateNameTemplateAndOwnerRef) {
  ReplicationController rc = MakeRc("web", 1);
  rc.spec.template_->metadata.annotations = {{"a", "b"}};
  Pod p = PodFromTemplate(rc);
  EXPECT_EQ(p.metadata.generate_name, "web-");
  EXPECT_TRUE(p.metadata.name.empty());
  EXPECT_EQ(p.metadata.namespace_, "default");
  EXPECT_EQ(p.metadata.labels, rc.spec.template_->metadata.labels);
  EXPECT_EQ(p.metadata.annotations, (Labels{{"a", "b"}}));
  ASSERT_EQ(p.metadata.owner_references.size(), 1u);
  const OwnerReference& ref = p.metadata.owner_references[0];
  EXPECT_EQ(ref.api_version, "v1");
  EXPECT_EQ(ref.kind, "ReplicationController");
  EXPECT_EQ(ref.name, "web");
  EXPECT_EQ(ref.uid, rc.metadata.uid);
  EXPECT_TRUE(ref.controller);
  EXPECT_TRUE(ref.block_owner_deletion);
  EXPECT_EQ(p.spec, rc.spec.template_->spec);
}

class CollectingEventSink final : public EventSink {
 public:
  void Write(const Event& ev, bool update) override {
    if (!update) reasons.push_back(ev.reason + " " + ev.type + " " + ev.message);
  }
  std::vector<std::string> reasons;
};

// Issue 8: kubectl describe rc showed no events; the manager records them as kube's does.
TEST_F(ReplicationManagerTest, RecordsCreateAndDeleteEventsOnItsController) {
  CollectingEventSink sink;
  EventRecorder recorder({}, &loop_, &sink);
  ReplicationController rc = MakeRc("web", 2);
  rc.status.observed_generation = 1;
  world_.PutController(rc);
  world_.create_errors_ = {Status(Code::kInvalid, "exceeded quota")};
  manager_ = std::make_unique<ReplicationManager>(ManagerOptions{}, &world_.store_, &world_.api_, &loop_,
                                                  &loop_, &rng_, &trace_, &logger_);
  manager_->set_event_recorder(&recorder);
  manager_->Start();
  Settle();
  ASSERT_EQ(world_.ActivePodsOf("web"), 2);
  ASSERT_GE(sink.reasons.size(), 3u);
  EXPECT_EQ(sink.reasons[0], "FailedCreate Warning Error creating: exceeded quota");
  EXPECT_TRUE(sink.reasons[1].starts_with("SuccessfulCreate Normal Created pod: web-")) << sink.reasons[1];

  sink.reasons.clear();
  world_.delete_errors_ = {Status(Code::kInternal, "boom")};
  rc = *world_.controllers_["default/web"];
  rc.spec.replicas = 0;
  rc.metadata.generation = 2;
  world_.PutController(rc);
  Settle();
  EXPECT_EQ(world_.ActivePodsOf("web"), 0);
  ASSERT_EQ(sink.reasons.size(), 3u);
  EXPECT_EQ(sink.reasons[0], "FailedDelete Warning Error deleting: boom");
  EXPECT_TRUE(sink.reasons[1].starts_with("SuccessfulDelete Normal Deleted pod: web-")) << sink.reasons[1];
  EXPECT_TRUE(sink.reasons[2].starts_with("SuccessfulDelete Normal Deleted pod: web-")) << sink.reasons[2];
}

}  // namespace
}  // namespace rcsim
