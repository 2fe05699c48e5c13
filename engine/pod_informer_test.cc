#include "engine/pod_informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "engine/mock_ports.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

using ::testing::_;

PodPtr MakePod(const std::string& name, const std::string& rv, const std::string& owner_uid = "") {
  auto p = std::make_shared<Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "default";
  p->metadata.resource_version = rv;
  p->metadata.labels = {{"app", "web"}};
  if (!owner_uid.empty()) {
    OwnerReference ref;
    ref.name = "web";
    ref.uid = owner_uid;
    p->metadata.owner_references.push_back(ref);
  }
  return p;
}

ObjectList<Pod> ListOf(const std::string& rv, std::vector<PodPtr> pods) {
  ObjectList<Pod> l;
  l.resource_version = rv;
  l.items = std::move(pods);
  return l;
}

class PodInformerTest : public ::testing::Test {
 protected:
  PodInformerTest() {
    ON_CALL(api_.mock_pods(), Watch(_, _, _, _))
        .WillByDefault([this](const std::string&, const ListOptions&, const std::string& rv,
                              MockResourceClient<Pod>::EventFn fn) {
          watch_rvs_.push_back(rv);
          on_event_ = std::move(fn);
          return std::make_unique<NoopApiWatch>();
        });
    PodInformer::Handlers h;
    h.on_add = [this](const PodPtr& p) { log_.push_back("add " + p->metadata.name); };
    h.on_update = [this](const PodPtr&, const PodPtr& p) { log_.push_back("update " + p->metadata.name); };
    h.on_delete = [this](const PodPtr& p) { log_.push_back("delete " + p->metadata.name); };
    informer_ = std::make_unique<PodInformer>(PodInformer::Options{}, &api_, &loop_, &logger_, &metrics_, h);
  }

  void ExpectLists(std::vector<Result<ObjectList<Pod>>> results) {
    auto shared = std::make_shared<std::vector<Result<ObjectList<Pod>>>>(std::move(results));
    auto next = std::make_shared<size_t>(0);
    EXPECT_CALL(api_.mock_pods(), List("", _, _))
        .Times(static_cast<int>(shared->size()))
        .WillRepeatedly([this, shared, next](const std::string&, const ListOptions& opts,
                                             const Callback<Result<ObjectList<Pod>>>& done) {
          list_rvs_.push_back(opts.resource_version);
          done((*shared)[(*next)++]);
        });
  }

  void Send(ApiWatchEvent<Pod>::Type type, PodPtr pod, Status error = Status()) {
    ApiWatchEvent<Pod> ev;
    ev.type = type;
    ev.object = std::move(pod);
    ev.error = std::move(error);
    on_event_(ev);
    loop_.RunUntilIdle();
  }

  SimLoop loop_;
  MockApiClient api_;
  NullLogger logger_;
  ManagerMetrics metrics_;
  std::vector<std::string> watch_rvs_;
  std::vector<std::string> list_rvs_;  // the resourceVersion of every list, in order
  MockResourceClient<Pod>::EventFn on_event_;
  std::vector<std::string> log_;
  std::unique_ptr<PodInformer> informer_;
};

TEST_F(PodInformerTest, ListsWatchesAndIndexesByOwnerAndNamespace) {
  ExpectLists({ListOf("10", {MakePod("a", "3", "u1"), MakePod("b", "4")})});
  informer_->Start();
  loop_.RunUntilIdle();
  ASSERT_TRUE(informer_->HasSynced());
  EXPECT_EQ(watch_rvs_, std::vector<std::string>{"10"});
  ASSERT_NE(informer_->OwnedBy("u1"), nullptr);
  EXPECT_EQ(informer_->OwnedBy("u1")->size(), 1u);
  ASSERT_NE(informer_->OrphansIn("default"), nullptr);
  EXPECT_EQ(informer_->OrphansIn("default")->count("default/b"), 1u);

  Send(ApiWatchEvent<Pod>::Type::kModified, MakePod("b", "11", "u1"));  // adopted
  EXPECT_EQ(informer_->OrphansIn("default"), nullptr);
  EXPECT_EQ(informer_->OwnedBy("u1")->size(), 2u);
  Send(ApiWatchEvent<Pod>::Type::kModified, MakePod("b", "9"));  // stale: ignored
  EXPECT_EQ(informer_->OwnedBy("u1")->size(), 2u);
  Send(ApiWatchEvent<Pod>::Type::kDeleted, MakePod("a", "12", "u1"));
  EXPECT_EQ(informer_->Get("default/a"), nullptr);
  EXPECT_EQ(informer_->OwnedBy("u1")->size(), 1u);
  EXPECT_EQ(log_, (std::vector<std::string>{"add a", "add b", "update b", "delete a"}));
}

TEST_F(PodInformerTest, RelistsAtOnceOnGone) {
  ExpectLists({ListOf("10", {MakePod("a", "3"), MakePod("b", "4")}),
               ListOf("20", {MakePod("b", "15"), MakePod("c", "16")})});
  informer_->Start();
  loop_.RunUntilIdle();
  TimePoint before = loop_.Now();
  Send(ApiWatchEvent<Pod>::Type::kError, nullptr, Status(Code::kGone, "too old"));
  EXPECT_EQ(loop_.Now(), before);
  EXPECT_EQ(metrics_.relists, 1u);
  EXPECT_EQ(watch_rvs_, (std::vector<std::string>{"10", "20"}));
  EXPECT_EQ(log_, (std::vector<std::string>{"add a", "add b", "update b", "add c", "delete a"}));
}

// The first list is a consistent read (""); a re-list asks, as client-go's reflector does, for a state
// not older than the newest revision the informer saw (its list or any watch event), so a lagging cache
// never takes it back in time; after a list at that revision answered 410, it reads consistently ("").
TEST_F(PodInformerTest, RelistsNotOlderThanWhatItSawAndConsistentlyAfterGone) {
  ExpectLists({ListOf("10", {MakePod("a", "3")}), Status(Code::kGone, "too old resource version: 14"),
               ListOf("20", {MakePod("a", "3")}), ListOf("25", {})});
  informer_->Start();
  loop_.RunUntilIdle();
  Send(ApiWatchEvent<Pod>::Type::kAdded, MakePod("b", "13"));
  Send(ApiWatchEvent<Pod>::Type::kDeleted, MakePod("b", "14"));
  Send(ApiWatchEvent<Pod>::Type::kError, nullptr, Status(Code::kUnavailable, "dropped"));
  loop_.RunFor(std::chrono::seconds(5));
  ASSERT_TRUE(informer_->HasSynced());
  Send(ApiWatchEvent<Pod>::Type::kError, nullptr, Status(Code::kGone, "expired"));
  EXPECT_EQ(list_rvs_, (std::vector<std::string>{"", "14", "", "20"}));
  EXPECT_EQ(informer_->size(), 0u);
}

// Regression (rcsim explore, issue 15): the first list was at "0", so a manager restarted behind a
// lagging cache listed the world as it was `lag` ago and created its predecessor's pods again.
TEST(InformerListOptionsTest, FirstListGoesBackInTimeAfterARestart) {
  EXPECT_EQ(InformerListOptions(0, false).resource_version, "");
  EXPECT_EQ(InformerListOptions(0, true).resource_version, "");
}

TEST(InformerListOptionsTest, ConsistentThenLastSyncedThenConsistent) {
  EXPECT_EQ(InformerListOptions(0, false).resource_version, "");
  EXPECT_EQ(InformerListOptions(42, false).resource_version, "42");
  EXPECT_EQ(InformerListOptions(42, true).resource_version, "");
  EXPECT_EQ(InformerListOptions(42, false).resource_version_match, ResourceVersionMatch::kNotOlderThan);
}

TEST_F(PodInformerTest, ListErrorsRetryWithBackoffAndDoNotSync) {
  ExpectLists({Status(Code::kUnavailable, "down"), Status(Code::kInternal, "boom"),
               ListOf("5", {MakePod("a", "3")})});
  informer_->Start();
  loop_.RunFor(std::chrono::milliseconds(50));
  EXPECT_FALSE(informer_->HasSynced());
  loop_.RunFor(std::chrono::milliseconds(100));  // first retry after 100ms fails again
  EXPECT_FALSE(informer_->HasSynced());
  loop_.RunFor(std::chrono::milliseconds(200));  // second retry after 200ms more
  EXPECT_TRUE(informer_->HasSynced());
  EXPECT_EQ(informer_->size(), 1u);
}

TEST_F(PodInformerTest, OtherWatchErrorsRelistAfterBackoff) {
  ExpectLists({ListOf("10", {}), ListOf("12", {MakePod("a", "11")})});
  informer_->Start();
  loop_.RunUntilIdle();
  on_event_(ApiWatchEvent<Pod>{ApiWatchEvent<Pod>::Type::kError, nullptr, Status(Code::kInternal, "x")});
  loop_.RunFor(std::chrono::milliseconds(99));
  EXPECT_EQ(informer_->size(), 0u);
  loop_.RunFor(std::chrono::milliseconds(1));
  EXPECT_EQ(informer_->size(), 1u);
}

// Engine bug 6 (pod informer): the re-list backoff must decay after a healthy period.
TEST_F(PodInformerTest, InformerRelistBackoffNeverDecays) {
  PodInformer::Handlers h;
  informer_ = std::make_unique<PodInformer>(
      PodInformer::Options{std::chrono::milliseconds(100), std::chrono::seconds(30), &loop_}, &api_, &loop_,
      &logger_, &metrics_, h);
  std::vector<TimePoint> at;
  int calls = 0;
  EXPECT_CALL(api_.mock_pods(), List("", _, _))
      .WillRepeatedly(
          [&](const std::string&, const ListOptions&, const Callback<Result<ObjectList<Pod>>>& done) {
            at.push_back(loop_.Now());
            if (++calls <= 9) {
              done(Status(Code::kUnavailable, "down"));  // 100ms .. 25.6s
            } else {
              done(ListOf("10", {}));
            }
          });
  informer_->Start();
  loop_.RunFor(std::chrono::minutes(2));
  ASSERT_TRUE(informer_->HasSynced());
  ASSERT_EQ(at.size(), 10u);
  loop_.RunFor(std::chrono::minutes(10));  // quiet: no watch event
  TimePoint blip = loop_.Now();
  on_event_(ApiWatchEvent<Pod>{ApiWatchEvent<Pod>::Type::kError, nullptr, Status(Code::kInternal, "x")});
  loop_.RunFor(std::chrono::seconds(1));
  ASSERT_EQ(at.size(), 11u);
  EXPECT_EQ(at[10] - blip, std::chrono::milliseconds(100));
}

// The counts a sync claims by (TallyOf) must always equal a recount of the owned pods, whatever the
// events: labels changing in and out of the selector, phases, readiness, deletion, adoption and release,
// other namespaces, deletes and re-lists.
PodInformer::Tally Recount(const PodInformer::PodMap* owned, const PodInformer::ClaimSpec& spec) {
  PodInformer::Tally t;
  if (owned == nullptr) return t;
  for (const auto& [key, pod] : *owned) {
    if (pod->metadata.namespace_ != spec.namespace_) continue;
    if (!spec.selector.empty() && !SelectorMapMatches(spec.selector, pod->metadata.labels)) {
      if (!pod->metadata.deletion_timestamp) ++t.unclaimed;
      continue;
    }
    if (!IsActive(*pod)) continue;
    ++t.active;
    if (IsReady(*pod)) ++t.ready;
    if (spec.template_labels && SelectorMapMatches(*spec.template_labels, pod->metadata.labels))
      ++t.fully_labeled;
  }
  return t;
}

TEST_F(PodInformerTest, TallyFollowsEveryEventLikeARecount) {
  ExpectLists({ListOf("1", {}), ListOf("100000", {MakePod("p0", "99999", "u1")})});
  informer_->Start();
  loop_.RunUntilIdle();
  const PodInformer::ClaimSpec spec{"default", {{"app", "web"}}, Labels{{"app", "web"}, {"tier", "front"}}};
  const PodInformer::ClaimSpec other{"default", {{"app", "web"}}, std::nullopt};
  std::mt19937 rng(7);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  int rv = 1;
  for (int step = 0; step < 3000; ++step) {
    const std::string owner = pick(4) == 0 ? "" : (pick(5) == 0 ? "u2" : "u1");
    auto pod = std::make_shared<Pod>(*MakePod("p" + std::to_string(pick(12)), std::to_string(++rv), owner));
    if (pick(8) == 0) pod->metadata.namespace_ = "other";
    if (pick(3) == 0) pod->metadata.labels = {{"app", "db"}};
    if (pick(2) == 0) pod->metadata.labels["tier"] = "front";
    const char* phases[] = {"Pending", "Running", "Succeeded", "Failed"};
    pod->status.phase = phases[pick(4)];
    if (pick(2) == 0)
      pod->status.conditions.push_back(PodCondition{"Ready", pick(3) == 0 ? "False" : "True"});
    if (pick(10) == 0) pod->metadata.deletion_timestamp = loop_.Now();
    if (pick(6) == 0) {
      Send(ApiWatchEvent<Pod>::Type::kDeleted, pod);
    } else {
      Send(ApiWatchEvent<Pod>::Type::kModified, pod);
    }
    const auto& which = pick(20) == 0 ? other : spec;  // a changed spec recounts
    ASSERT_EQ(informer_->TallyOf("u1", which), Recount(informer_->OwnedBy("u1"), which)) << "step " << step;
  }
  // A re-list replaces the set: the tally follows.
  Send(ApiWatchEvent<Pod>::Type::kError, nullptr, Status(Code::kGone, "too old"));
  EXPECT_EQ(informer_->TallyOf("u1", spec), Recount(informer_->OwnedBy("u1"), spec));
  EXPECT_EQ(informer_->TallyOf("u1", spec).active, 1);
}

}  // namespace
}  // namespace rcsim
