// The ApiClient contract suite (engine/api_client.h): one typed GoogleTest suite that every ApiClient
// implementation runs, the in-process client over the registry and the HTTP client against an API server
// process. A behaviour the in-process client has but the HTTP path lacks (or the reverse) is a bug.
//
// A harness H is default-constructible, one per test, and provides:
//   ApiClient& client();
//   // Waits until pred() holds or `timeout` passes (virtual or wall time; a simulated harness may give
//   // up early once nothing is left to run). Returns pred()'s last value.
//   bool WaitFor(const std::function<bool()>& pred, Duration timeout);
//   // A namespace no other test uses, so that one server can be shared by many tests.
//   std::string ns();
//   // Compacts the store's history up to its current revision; false if the harness cannot.
//   bool Compact();
// Callbacks may run on another thread: the suite keeps every result under a mutex and waits only
// through WaitFor.
//
// Instantiate with:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, ApiContractTest, ::testing::Types<MyHarness>);
#ifndef RCSIM_TESTS_CONTRACT_API_CONTRACT_H_
#define RCSIM_TESTS_CONTRACT_API_CONTRACT_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/api_client.h"
#include "engine/codec.h"
#include "engine/labels.h"
#include "engine/status.h"
#include "engine/time.h"
#include "engine/types.h"
#include "tests/contract/core_v1_manifests.h"

namespace rcsim {
namespace api_contract {

inline constexpr Duration kReplyTimeout = 10s;

inline Pod MakePod(const std::string& name, Labels labels = {{"app", "web"}}) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.labels = std::move(labels);
  Container c;
  c.name = "main";
  c.image = "nginx:1.7";
  pod.spec.containers.push_back(c);
  return pod;
}

inline ReplicationController MakeController(const std::string& name, int32_t replicas,
                                            Labels selector = {{"app", "web"}}) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.metadata.labels = selector;
  rc.spec.replicas = replicas;
  rc.spec.selector = selector;
  PodTemplateSpec t;
  t.metadata.labels = selector;
  Container c;
  c.name = "main";
  c.image = "nginx:1.7";
  t.spec.containers.push_back(c);
  rc.spec.template_ = t;
  return rc;
}

inline bool HasCause(const Status& s, const std::string& field) {
  return std::any_of(s.causes().begin(), s.causes().end(),
                     [&](const StatusCause& c) { return c.field == field; });
}

// One recorded watch event.
struct SeenEvent {
  int type = 0;  // ApiWatchEvent<T>::Type as int
  std::string name;
  std::string resource_version;
  Labels labels;
  Code error = Code::kOk;
};

// Collects the events of one watch; safe to fill from any thread.
template <typename T>
class WatchRecorder {
 public:
  using Type = typename ApiWatchEvent<T>::Type;

  std::function<void(const ApiWatchEvent<T>&)> Callback() {
    return [state = state_](const ApiWatchEvent<T>& ev) {
      SeenEvent seen;
      seen.type = static_cast<int>(ev.type);
      if (ev.object) {
        seen.name = ev.object->metadata.name;
        seen.resource_version = ev.object->metadata.resource_version;
        seen.labels = ev.object->metadata.labels;
      }
      seen.error = ev.error.code();
      std::lock_guard<std::mutex> lock(state->mu);
      state->events.push_back(std::move(seen));
    };
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->events.size();
  }
  std::vector<SeenEvent> events() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->events;
  }

 private:
  struct State {
    mutable std::mutex mu;
    std::vector<SeenEvent> events;  // guarded by mu
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace api_contract

template <typename H>
class ApiContractTest : public ::testing::Test {
 protected:
  using PodPtrT = std::shared_ptr<const Pod>;
  using RcPtrT = std::shared_ptr<const ReplicationController>;

  // Runs `start(callback)` and waits for the reply; kTimeout (of the test) if none came.
  template <typename R, typename Start>
  R Await(Start start) {
    struct Slot {
      std::mutex mu;
      std::optional<R> value;  // guarded by mu
    };
    auto slot = std::make_shared<Slot>();
    start([slot](R r) {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->value.emplace(std::move(r));
    });
    const bool replied = h_.WaitFor(
        [&] {
          std::lock_guard<std::mutex> lock(slot->mu);
          return slot->value.has_value();
        },
        api_contract::kReplyTimeout);
    std::lock_guard<std::mutex> lock(slot->mu);
    if (!replied || !slot->value) return R(Status(Code::kTimeout, "no reply from the client"));
    return std::move(*slot->value);
  }

  ResourceClient<Pod>& pods() { return h_.client().pods(); }
  ResourceClient<ReplicationController>& rcs() { return h_.client().controllers(); }

  Result<PodPtrT> CreatePod(Pod pod) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Create(ns_, std::move(pod), cb); });
  }
  Result<PodPtrT> GetPod(const std::string& name) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Get(ns_, name, cb); });
  }
  Result<PodPtrT> UpdatePod(Pod pod) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Update(std::move(pod), cb); });
  }
  Result<PodPtrT> PatchOwners(const std::string& name, const OwnerReferencePatch& patch) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().PatchOwnerReferences(ns_, name, patch, cb); });
  }
  Result<PodPtrT> DeletePod(const std::string& name, DeleteOptions opts = {}) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Delete(ns_, name, opts, cb); });
  }
  Result<ObjectList<Pod>> ListPods(const ListOptions& opts = {}) {
    return Await<Result<ObjectList<Pod>>>([&](auto cb) { pods().List(ns_, opts, cb); });
  }
  Result<RcPtrT> CreateRc(ReplicationController rc) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Create(ns_, std::move(rc), cb); });
  }
  Result<RcPtrT> GetRc(const std::string& name) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Get(ns_, name, cb); });
  }
  Result<RcPtrT> UpdateRc(ReplicationController rc) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Update(std::move(rc), cb); });
  }
  Result<RcPtrT> UpdateRcStatus(ReplicationController rc) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().UpdateStatus(std::move(rc), cb); });
  }
  Result<RcPtrT> DeleteRc(const std::string& name, DeleteOptions opts = {}) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Delete(ns_, name, opts, cb); });
  }

  template <typename T>
  bool WaitForEvents(const api_contract::WatchRecorder<T>& rec, std::size_t n) {
    return h_.WaitFor([&] { return rec.size() >= n; }, api_contract::kReplyTimeout);
  }

  static std::vector<std::string> Names(const ObjectList<Pod>& list) {
    std::vector<std::string> out;
    for (const auto& p : list.items) out.push_back(p->metadata.name);
    return out;
  }

  H h_;
  const std::string ns_ = h_.ns();
};

TYPED_TEST_SUITE_P(ApiContractTest);

TYPED_TEST_P(ApiContractTest, PodCreateGetListUpdateDelete) {
  auto created = this->CreatePod(api_contract::MakePod("web-1"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const Pod& c = **created;
  EXPECT_EQ(c.metadata.name, "web-1");
  EXPECT_EQ(c.metadata.namespace_, this->ns_);
  EXPECT_FALSE(c.metadata.uid.empty());
  EXPECT_FALSE(c.metadata.resource_version.empty());
  EXPECT_TRUE(c.metadata.creation_timestamp.has_value());

  auto got = this->GetPod("web-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)->metadata.uid, c.metadata.uid);
  EXPECT_EQ((*got)->metadata.resource_version, c.metadata.resource_version);
  EXPECT_EQ((*got)->spec, c.spec);

  auto list = this->ListPods();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(this->Names(*list), std::vector<std::string>{"web-1"});
  EXPECT_FALSE(list->resource_version.empty());

  Pod changed = **got;
  changed.metadata.labels["tier"] = "front";
  auto updated = this->UpdatePod(changed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)->metadata.labels.at("tier"), "front");
  EXPECT_EQ((*updated)->metadata.uid, c.metadata.uid);
  EXPECT_NE((*updated)->metadata.resource_version, c.metadata.resource_version);

  auto deleted = this->DeletePod("web-1");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ((*deleted)->metadata.uid, c.metadata.uid);
  EXPECT_EQ(this->GetPod("web-1").status().code(), Code::kNotFound);
  auto after = this->ListPods();
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->items.empty());
}

TYPED_TEST_P(ApiContractTest, ControllerCreateGetUpdateDelete) {
  auto created = this->CreateRc(api_contract::MakeController("web", 3));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)->metadata.generation, 1);
  EXPECT_EQ((*created)->spec.replicas, 3);
  EXPECT_FALSE((*created)->metadata.uid.empty());

  auto got = this->GetRc("web");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)->spec, (*created)->spec);

  ReplicationController scaled = **got;
  scaled.spec.replicas = 5;
  auto updated = this->UpdateRc(scaled);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)->spec.replicas, 5);
  EXPECT_EQ((*updated)->metadata.generation, 2);

  ReplicationController relabeled = **updated;
  relabeled.metadata.labels["owner"] = "team-a";
  auto meta_only = this->UpdateRc(relabeled);
  ASSERT_TRUE(meta_only.ok()) << meta_only.status().ToString();
  EXPECT_EQ((*meta_only)->metadata.generation, 2) << "a metadata-only change keeps generation";

  // Background, as kubectl sends it: with no policy a replication controller is orphaning (it stays,
  // with the orphan finalizer, until the garbage collector removes it; see cluster_api_contract.h).
  DeleteOptions background;
  background.propagation_policy = "Background";
  auto deleted = this->DeleteRc("web", background);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(this->GetRc("web").status().code(), Code::kNotFound);
}

TYPED_TEST_P(ApiContractTest, ControllerSelectorDefaultsToTemplateLabels) {
  ReplicationController rc = api_contract::MakeController("web", 1);
  rc.spec.selector.clear();
  auto created = this->CreateRc(rc);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)->spec.selector, (Labels{{"app", "web"}}));
}

TYPED_TEST_P(ApiContractTest, GenerateNameGivesUniqueNamesWithThePrefix) {
  std::set<std::string> names;
  for (int i = 0; i < 5; ++i) {
    Pod pod = api_contract::MakePod("");
    pod.metadata.generate_name = "web-";
    auto created = this->CreatePod(pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    const std::string& name = (*created)->metadata.name;
    EXPECT_EQ(name.rfind("web-", 0), 0u) << name;
    EXPECT_GT(name.size(), 4u);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 5u);
}

TYPED_TEST_P(ApiContractTest, ListByLabelSelectorAndFieldSelector) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("a", {{"app", "web"}})).ok());
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("b", {{"app", "db"}})).ok());
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("c", {{"app", "web"}, {"tier", "x"}})).ok());

  ListOptions by_label;
  by_label.label_selector = LabelSelector::FromMap({{"app", "web"}});
  auto web = this->ListPods(by_label);
  ASSERT_TRUE(web.ok()) << web.status().ToString();
  EXPECT_EQ(this->Names(*web), (std::vector<std::string>{"a", "c"}));

  auto parsed = LabelSelector::Parse("app!=web");
  ASSERT_TRUE(parsed.ok());
  ListOptions not_web;
  not_web.label_selector = *parsed;
  auto others = this->ListPods(not_web);
  ASSERT_TRUE(others.ok());
  EXPECT_EQ(this->Names(*others), std::vector<std::string>{"b"});

  ListOptions by_name;
  by_name.field_name = "c";
  auto one = this->ListPods(by_name);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(this->Names(*one), std::vector<std::string>{"c"});

  by_name.field_name = "missing";
  auto none = this->ListPods(by_name);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->items.empty());
}

TYPED_TEST_P(ApiContractTest, ListPagesWithLimitAndContinue) {
  for (const char* n : {"p1", "p2", "p3", "p4", "p5"}) {
    ASSERT_TRUE(this->CreatePod(api_contract::MakePod(n)).ok());
  }
  std::vector<std::string> all;
  ListOptions opts;
  opts.limit = 2;
  std::string rv;
  int pages = 0;
  while (true) {
    auto page = this->ListPods(opts);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    EXPECT_LE(page->items.size(), 2u);
    if (rv.empty()) rv = page->resource_version;
    EXPECT_EQ(page->resource_version, rv) << "every page is read at the first page's revision";
    for (const auto& n : this->Names(*page)) all.push_back(n);
    if (page->continue_token.empty()) break;
    opts.continue_token = page->continue_token;
    if (pages == 2) {
      // A write between pages is not seen by the rest of the list.
      ASSERT_TRUE(this->CreatePod(api_contract::MakePod("p6")).ok());
    }
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(all, (std::vector<std::string>{"p1", "p2", "p3", "p4", "p5"}));
}

// resourceVersionMatch=Exact: a list shows the state at that revision (what a lagging cache shows); a
// compacted revision is Gone.
TYPED_TEST_P(ApiContractTest, ListAtAnExactResourceVersionShowsTheStateThen) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("p1")).ok());
  auto then = this->ListPods(ListOptions{});
  ASSERT_TRUE(then.ok()) << then.status().ToString();
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("p2")).ok());
  ListOptions opts;
  opts.resource_version = then->resource_version;
  opts.resource_version_match = ResourceVersionMatch::kExact;
  auto at = this->ListPods(opts);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(this->Names(*at), std::vector<std::string>{"p1"});
  EXPECT_EQ(at->resource_version, then->resource_version);
  auto now = this->ListPods(ListOptions{});
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(this->Names(*now), (std::vector<std::string>{"p1", "p2"}));
  if (!this->h_.Compact()) GTEST_SKIP() << "the harness cannot compact";
  EXPECT_EQ(this->ListPods(opts).status().code(), Code::kGone);
}

TYPED_TEST_P(ApiContractTest, CreateDuplicateIsAlreadyExists) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("dup")).ok());
  auto again = this->CreatePod(api_contract::MakePod("dup"));
  EXPECT_EQ(again.status().code(), Code::kAlreadyExists) << again.status().ToString();
  ASSERT_TRUE(this->CreateRc(api_contract::MakeController("dup", 1)).ok());
  auto rc_again = this->CreateRc(api_contract::MakeController("dup", 1));
  EXPECT_EQ(rc_again.status().code(), Code::kAlreadyExists);
}

TYPED_TEST_P(ApiContractTest, UpdateWithStaleResourceVersionIsConflict) {
  auto created = this->CreatePod(api_contract::MakePod("p"));
  ASSERT_TRUE(created.ok());
  Pod first = **created;
  first.metadata.labels["v"] = "1";
  ASSERT_TRUE(this->UpdatePod(first).ok());
  Pod stale = **created;  // still carries the creation resourceVersion
  stale.metadata.labels["v"] = "2";
  auto conflict = this->UpdatePod(stale);
  EXPECT_EQ(conflict.status().code(), Code::kConflict) << conflict.status().ToString();
  auto now = this->GetPod("p");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->get()->metadata.labels.at("v"), "1");

  // An empty resourceVersion is unconditional.
  stale.metadata.resource_version.clear();
  auto forced = this->UpdatePod(stale);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ((*forced)->metadata.labels.at("v"), "2");

  auto rc = this->CreateRc(api_contract::MakeController("rc", 1));
  ASSERT_TRUE(rc.ok());
  ReplicationController a = **rc;
  a.spec.replicas = 2;
  ASSERT_TRUE(this->UpdateRc(a).ok());
  ReplicationController b = **rc;
  b.spec.replicas = 3;
  EXPECT_EQ(this->UpdateRc(b).status().code(), Code::kConflict);
  b.status.replicas = 1;
  EXPECT_EQ(this->UpdateRcStatus(b).status().code(), Code::kConflict);
}

TYPED_TEST_P(ApiContractTest, MissingObjectsAreNotFound) {
  EXPECT_EQ(this->GetPod("nope").status().code(), Code::kNotFound);
  EXPECT_EQ(this->DeletePod("nope").status().code(), Code::kNotFound);
  EXPECT_EQ(this->GetRc("nope").status().code(), Code::kNotFound);
  EXPECT_EQ(this->DeleteRc("nope").status().code(), Code::kNotFound);
  Pod ghost = api_contract::MakePod("ghost");
  ghost.metadata.namespace_ = this->ns_;
  EXPECT_EQ(this->UpdatePod(ghost).status().code(), Code::kNotFound);
}

TYPED_TEST_P(ApiContractTest, DeletePreconditions) {
  auto created = this->CreatePod(api_contract::MakePod("p"));
  ASSERT_TRUE(created.ok());
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-4000-8000-000000000000";
  EXPECT_EQ(this->DeletePod("p", wrong_uid).status().code(), Code::kConflict);
  DeleteOptions right_uid;
  right_uid.precondition_uid = (*created)->metadata.uid;
  auto deleted = this->DeletePod("p", right_uid);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
}

TYPED_TEST_P(ApiContractTest, InvalidObjectsAreRejectedWithCauses) {
  auto negative = this->CreateRc(api_contract::MakeController("neg", -1));
  EXPECT_EQ(negative.status().code(), Code::kInvalid);
  EXPECT_TRUE(api_contract::HasCause(negative.status(), "spec.replicas")) << negative.status().ToString();

  ReplicationController no_selector = api_contract::MakeController("nosel", 1);
  no_selector.spec.selector.clear();
  no_selector.spec.template_->metadata.labels.clear();
  auto missing = this->CreateRc(no_selector);
  EXPECT_EQ(missing.status().code(), Code::kInvalid);
  EXPECT_TRUE(api_contract::HasCause(missing.status(), "spec.selector")) << missing.status().ToString();

  Pod empty = api_contract::MakePod("empty");
  empty.spec.containers.clear();
  auto no_containers = this->CreatePod(empty);
  EXPECT_EQ(no_containers.status().code(), Code::kInvalid);
  EXPECT_TRUE(api_contract::HasCause(no_containers.status(), "spec.containers"))
      << no_containers.status().ToString();

  auto unnamed = this->CreatePod(api_contract::MakePod(""));
  EXPECT_EQ(unnamed.status().code(), Code::kInvalid);
  EXPECT_TRUE(api_contract::HasCause(unnamed.status(), "metadata.name"));

  auto bad_name = this->CreatePod(api_contract::MakePod("Bad_Name"));
  EXPECT_EQ(bad_name.status().code(), Code::kInvalid);

  // Nothing was stored.
  EXPECT_EQ(this->GetRc("neg").status().code(), Code::kNotFound);
  EXPECT_EQ(this->GetPod("empty").status().code(), Code::kNotFound);

  // The same checks apply on update.
  auto ok = this->CreateRc(api_contract::MakeController("ok", 1));
  ASSERT_TRUE(ok.ok());
  ReplicationController neg = **ok;
  neg.spec.replicas = -2;
  auto upd = this->UpdateRc(neg);
  EXPECT_EQ(upd.status().code(), Code::kInvalid);
  EXPECT_TRUE(api_contract::HasCause(upd.status(), "spec.replicas"));
}

TYPED_TEST_P(ApiContractTest, UpdateStatusChangesOnlyStatus) {
  auto created = this->CreateRc(api_contract::MakeController("web", 3));
  ASSERT_TRUE(created.ok());
  ReplicationController rc = **created;
  rc.status.replicas = 2;
  rc.status.observed_generation = 1;
  rc.spec.replicas = 7;                   // ignored by UpdateStatus
  rc.metadata.labels["ignored"] = "yes";  // ignored by UpdateStatus
  auto st = this->UpdateRcStatus(rc);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)->status.replicas, 2);
  EXPECT_EQ((*st)->status.observed_generation, 1);
  EXPECT_EQ((*st)->spec.replicas, 3);
  EXPECT_EQ((*st)->metadata.labels.count("ignored"), 0u);
  EXPECT_EQ((*st)->metadata.generation, 1);
  EXPECT_NE((*st)->metadata.resource_version, (*created)->metadata.resource_version);

  // Update does not change status, and a spec change bumps generation.
  ReplicationController spec_change = **st;
  spec_change.spec.replicas = 4;
  spec_change.status.replicas = 99;
  auto up = this->UpdateRc(spec_change);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ((*up)->spec.replicas, 4);
  EXPECT_EQ((*up)->status.replicas, 2);
  EXPECT_EQ((*up)->metadata.generation, 2);

  // Pods too.
  auto pod = this->CreatePod(api_contract::MakePod("p"));
  ASSERT_TRUE(pod.ok());
  Pod running = **pod;
  running.status.phase = phase::kRunning;
  auto ps = this->template Await<Result<typename TestFixture::PodPtrT>>(
      [&](auto cb) { this->pods().UpdateStatus(running, cb); });
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  EXPECT_EQ((*ps)->status.phase, phase::kRunning);
  auto again = this->GetPod("p");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->status.phase, phase::kRunning);
}

TYPED_TEST_P(ApiContractTest, PodSpecIsImmutableExceptBinding) {
  auto created = this->CreatePod(api_contract::MakePod("p"));
  ASSERT_TRUE(created.ok());
  Pod bind = **created;
  bind.spec.node_name = "node-1";
  auto bound = this->UpdatePod(bind);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ((*bound)->spec.node_name, "node-1");

  Pod rebind = **bound;
  rebind.spec.node_name = "node-2";
  EXPECT_EQ(this->UpdatePod(rebind).status().code(), Code::kInvalid);

  Pod more = **bound;
  more.spec.containers.push_back(more.spec.containers.front());
  more.spec.containers.back().name = "sidecar";
  EXPECT_EQ(this->UpdatePod(more).status().code(), Code::kInvalid);
}

TYPED_TEST_P(ApiContractTest, WatchFromResourceVersionSeesChangesInOrder) {
  auto list = this->ListPods();
  ASSERT_TRUE(list.ok());
  api_contract::WatchRecorder<Pod> rec;
  auto watch = this->pods().Watch(this->ns_, {}, list->resource_version, rec.Callback());
  ASSERT_NE(watch, nullptr);

  auto created = this->CreatePod(api_contract::MakePod("w"));
  ASSERT_TRUE(created.ok());
  Pod changed = **created;
  changed.metadata.labels["step"] = "2";
  auto updated = this->UpdatePod(changed);
  ASSERT_TRUE(updated.ok());
  ASSERT_TRUE(this->DeletePod("w").ok());

  ASSERT_TRUE(this->WaitForEvents(rec, 3));
  using Type = ApiWatchEvent<Pod>::Type;
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].type, static_cast<int>(Type::kAdded));
  EXPECT_EQ(ev[1].type, static_cast<int>(Type::kModified));
  EXPECT_EQ(ev[2].type, static_cast<int>(Type::kDeleted));
  for (const auto& e : ev) EXPECT_EQ(e.name, "w");
  EXPECT_EQ(ev[0].resource_version, (*created)->metadata.resource_version);
  EXPECT_EQ(ev[1].resource_version, (*updated)->metadata.resource_version);
  EXPECT_EQ(ev[1].labels.at("step"), "2");
  EXPECT_LT(std::stoll(ev[1].resource_version), std::stoll(ev[2].resource_version));
}

TYPED_TEST_P(ApiContractTest, WatchFromZeroStartsWithTheCurrentObjects) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("a")).ok());
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("b")).ok());
  api_contract::WatchRecorder<Pod> rec;
  auto watch = this->pods().Watch(this->ns_, {}, "0", rec.Callback());
  ASSERT_TRUE(this->WaitForEvents(rec, 2));
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("c")).ok());
  ASSERT_TRUE(this->WaitForEvents(rec, 3));
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 3u);
  std::set<std::string> initial = {ev[0].name, ev[1].name};
  EXPECT_EQ(initial, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(ev[2].name, "c");
  for (const auto& e : ev) EXPECT_EQ(e.type, static_cast<int>(ApiWatchEvent<Pod>::Type::kAdded));
}

TYPED_TEST_P(ApiContractTest, WatchSeesALabelChangeOutOfTheSelectorAsDeleted) {
  auto list = this->ListPods();
  ASSERT_TRUE(list.ok());
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap({{"app", "web"}});
  api_contract::WatchRecorder<Pod> rec;
  auto watch = this->pods().Watch(this->ns_, opts, list->resource_version, rec.Callback());

  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("other", {{"app", "db"}})).ok());
  auto created = this->CreatePod(api_contract::MakePod("p", {{"app", "web"}}));
  ASSERT_TRUE(created.ok());
  Pod out = **created;
  out.metadata.labels["app"] = "db";
  auto moved_out = this->UpdatePod(out);
  ASSERT_TRUE(moved_out.ok());
  Pod back = **moved_out;
  back.metadata.labels["app"] = "web";
  ASSERT_TRUE(this->UpdatePod(back).ok());

  ASSERT_TRUE(this->WaitForEvents(rec, 3));
  using Type = ApiWatchEvent<Pod>::Type;
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].type, static_cast<int>(Type::kAdded));
  EXPECT_EQ(ev[1].type, static_cast<int>(Type::kDeleted));
  EXPECT_EQ(ev[2].type, static_cast<int>(Type::kAdded));
  for (const auto& e : ev) EXPECT_EQ(e.name, "p");
}

TYPED_TEST_P(ApiContractTest, WatchFromACompactedResourceVersionIsGone) {
  auto created = this->CreatePod(api_contract::MakePod("p"));
  ASSERT_TRUE(created.ok());
  const std::string old_rv = (*created)->metadata.resource_version;
  Pod p = **created;
  for (int i = 0; i < 3; ++i) {
    p.metadata.labels["i"] = std::to_string(i);
    p.metadata.resource_version.clear();
    ASSERT_TRUE(this->UpdatePod(p).ok());
  }
  if (!this->h_.Compact()) GTEST_SKIP() << "the harness cannot compact";
  api_contract::WatchRecorder<Pod> rec;
  auto watch = this->pods().Watch(this->ns_, {}, old_rv, rec.Callback());
  ASSERT_TRUE(this->WaitForEvents(rec, 1));
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, static_cast<int>(ApiWatchEvent<Pod>::Type::kError));
  EXPECT_EQ(ev[0].error, Code::kGone);
}

TYPED_TEST_P(ApiContractTest, ControllerWatchSeesGenerationChanges) {
  auto list = this->template Await<Result<ObjectList<ReplicationController>>>(
      [&](auto cb) { this->rcs().List(this->ns_, {}, cb); });
  ASSERT_TRUE(list.ok());
  api_contract::WatchRecorder<ReplicationController> rec;
  auto watch = this->rcs().Watch(this->ns_, {}, list->resource_version, rec.Callback());
  auto created = this->CreateRc(api_contract::MakeController("web", 1));
  ASSERT_TRUE(created.ok());
  ReplicationController rc = **created;
  rc.spec.replicas = 2;
  ASSERT_TRUE(this->UpdateRc(rc).ok());
  DeleteOptions background;
  background.propagation_policy = "Background";
  ASSERT_TRUE(this->DeleteRc("web", background).ok());
  ASSERT_TRUE(this->WaitForEvents(rec, 3));
  using Type = ApiWatchEvent<ReplicationController>::Type;
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].type, static_cast<int>(Type::kAdded));
  EXPECT_EQ(ev[1].type, static_cast<int>(Type::kModified));
  EXPECT_EQ(ev[2].type, static_cast<int>(Type::kDeleted));
}

// Issue 8: an RC whose template has ports, env, resources, volumes, probes... kept only
// name/image/command/args. Every field survives create -> get -> update -> get.
TYPED_TEST_P(ApiContractTest, FullManifestRoundTripsLosslessly) {
  const nlohmann::json want_spec = nlohmann::json::parse(manifests::kFullPodSpec);
  auto rc = DecodeController(manifests::FullControllerJson("full"));
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  auto created = this->CreateRc(*rc);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto got = this->GetRc("full");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  nlohmann::json j = ControllerToJson(**got);
  EXPECT_EQ(j["spec"]["template"]["spec"], want_spec) << j["spec"]["template"]["spec"].dump(2);
  EXPECT_EQ(j["spec"]["template"]["metadata"]["annotations"]["prometheus.io/scrape"], "true");
  EXPECT_EQ(j["spec"]["minReadySeconds"], 3);
  EXPECT_EQ(j["metadata"]["annotations"]["example.com/owner"], "edge-team");

  ReplicationController changed = **got;
  changed.metadata.labels["rev"] = "2";
  auto updated = this->UpdateRc(changed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)->metadata.generation, 1) << "the spec did not change";
  auto again = this->GetRc("full");
  ASSERT_TRUE(again.ok());
  nlohmann::json j2 = ControllerToJson(**again);
  EXPECT_EQ(j2["spec"], j["spec"]);
  EXPECT_EQ(j2["metadata"]["labels"]["rev"], "2");

  auto pod = DecodePod(manifests::FullPodJson("full-pod"));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  auto pod_created = this->CreatePod(*pod);
  ASSERT_TRUE(pod_created.ok()) << pod_created.status().ToString();
  auto pod_got = this->GetPod("full-pod");
  ASSERT_TRUE(pod_got.ok());
  EXPECT_EQ(PodToJson(**pod_got)["spec"], want_spec);
  Pod relabeled = **pod_got;
  relabeled.metadata.labels["rev"] = "2";
  ASSERT_TRUE(this->UpdatePod(relabeled).ok());
  auto pod_again = this->GetPod("full-pod");
  ASSERT_TRUE(pod_again.ok());
  EXPECT_EQ(PodToJson(**pod_again)["spec"], want_spec);
  EXPECT_EQ(PodToJson(**pod_again)["metadata"]["annotations"]["example.com/note"], "lossless");
}

// Adoption and release as controllers send them: a patch of the ownerReferences alone, with the
// object's uid as the precondition, applied whatever the caller's resourceVersion.
TYPED_TEST_P(ApiContractTest, OwnerReferencePatchAddsAndRemovesByUidWithAUidPrecondition) {
  auto created = this->CreatePod(api_contract::MakePod("orphan"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string uid = (*created)->metadata.uid;
  Pod touched = **created;  // a writer changes another field: a cached copy would now be stale
  touched.metadata.labels["touched"] = "yes";
  ASSERT_TRUE(this->UpdatePod(touched).ok());

  OwnerReference ref;
  ref.name = "web";
  ref.uid = "rc-uid-1";
  OwnerReferencePatch adopt;
  adopt.uid = uid;
  adopt.add = ref;
  auto adopted = this->PatchOwners("orphan", adopt);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  ASSERT_EQ((*adopted)->metadata.owner_references.size(), 1u);
  EXPECT_EQ((*adopted)->metadata.owner_references[0], ref);
  EXPECT_EQ((*adopted)->metadata.labels.at("touched"), "yes");  // the other writer's change is kept
  // Adopting again is one reference, not two.
  auto again = this->PatchOwners("orphan", adopt);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->metadata.owner_references.size(), 1u);

  // A second controller is refused; so is a uid that is not the object's (it was replaced).
  OwnerReferencePatch other = adopt;
  other.add->uid = "rc-uid-2";
  other.add->name = "db";
  EXPECT_EQ(this->PatchOwners("orphan", other).status().code(), Code::kInvalid);
  OwnerReferencePatch stale = adopt;
  stale.uid = "not-the-pods-uid";
  EXPECT_EQ(this->PatchOwners("orphan", stale).status().code(), Code::kInvalid);
  EXPECT_EQ(this->PatchOwners("missing", adopt).status().code(), Code::kNotFound);

  OwnerReferencePatch release;
  release.uid = uid;
  release.remove_uid = "rc-uid-1";
  auto released = this->PatchOwners("orphan", release);
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_TRUE((*released)->metadata.owner_references.empty());
  // Releasing what is not there changes nothing.
  auto noop = this->PatchOwners("orphan", release);
  ASSERT_TRUE(noop.ok()) << noop.status().ToString();
  EXPECT_EQ((*noop)->metadata.resource_version, (*released)->metadata.resource_version);
  auto got = this->GetPod("orphan");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE((*got)->metadata.owner_references.empty());
  EXPECT_EQ((*got)->metadata.labels.at("touched"), "yes");
}

REGISTER_TYPED_TEST_SUITE_P(ApiContractTest, PodCreateGetListUpdateDelete, FullManifestRoundTripsLosslessly,
                            OwnerReferencePatchAddsAndRemovesByUidWithAUidPrecondition,
                            ControllerCreateGetUpdateDelete, ControllerSelectorDefaultsToTemplateLabels,
                            GenerateNameGivesUniqueNamesWithThePrefix, ListByLabelSelectorAndFieldSelector,
                            ListPagesWithLimitAndContinue, ListAtAnExactResourceVersionShowsTheStateThen,
                            CreateDuplicateIsAlreadyExists, UpdateWithStaleResourceVersionIsConflict,
                            MissingObjectsAreNotFound, DeletePreconditions,
                            InvalidObjectsAreRejectedWithCauses, UpdateStatusChangesOnlyStatus,
                            PodSpecIsImmutableExceptBinding, WatchFromResourceVersionSeesChangesInOrder,
                            WatchFromZeroStartsWithTheCurrentObjects,
                            WatchSeesALabelChangeOutOfTheSelectorAsDeleted,
                            WatchFromACompactedResourceVersionIsGone, ControllerWatchSeesGenerationChanges);

}  // namespace rcsim

#endif  // RCSIM_TESTS_CONTRACT_API_CONTRACT_H_
