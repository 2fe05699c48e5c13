#include "engine/leader_elector.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

// An in-memory lock with optimistic concurrency; replies after `latency`. While `hung`, calls of the
// candidates in it never answer (a partitioned client).
class FakeLock final : public LeaderLock {
 public:
  FakeLock(SimLoop* loop, std::optional<LeaderRecord>* shared, std::string name)
      : loop_(loop), record_(shared), name_(std::move(name)) {}
  bool hung = false;
  Duration latency = std::chrono::milliseconds(5);

  void Get(Callback<Result<LeaderRecord>> done) override {
    Reply(std::move(done), [this]() -> Result<LeaderRecord> {
      if (!record_->has_value()) return Status(Code::kNotFound, "none");
      return **record_;
    });
  }
  void Create(const LeaderRecord& r, Callback<Result<LeaderRecord>> done) override {
    Reply(std::move(done), [this, r]() -> Result<LeaderRecord> {
      if (record_->has_value()) return Status(Code::kAlreadyExists, "exists");
      return Write(r);
    });
  }
  void Update(const LeaderRecord& r, Callback<Result<LeaderRecord>> done) override {
    Reply(std::move(done), [this, r]() -> Result<LeaderRecord> {
      if (!record_->has_value() || (*record_)->version != r.version) return Status(Code::kConflict, "stale");
      return Write(r);
    });
  }
  std::string Describe() const override { return "fake lock (" + name_ + ")"; }

 private:
  Result<LeaderRecord> Write(LeaderRecord r) {
    static int64_t next = 0;
    r.version = std::to_string(++next);
    *record_ = r;
    return r;
  }
  template <typename F>
  void Reply(Callback<Result<LeaderRecord>> done, F apply) {
    if (hung) return;
    // Applied at the server halfway through the round trip.
    loop_->Schedule(latency / 2, [this, done = std::move(done), apply]() mutable {
      if (hung) return;
      Result<LeaderRecord> r = apply();
      loop_->Schedule(latency / 2,
                      [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    });
  }
  SimLoop* loop_;
  std::optional<LeaderRecord>* record_;
  std::string name_;
};

struct Candidate {
  Candidate(SimLoop* loop, std::optional<LeaderRecord>* record, const std::string& id, LeaderElectorOptions o)
      : lock(loop, record, id) {
    o.identity = id;
    elector = std::make_unique<LeaderElector>(
        o, &lock, loop, loop, &logger,
        LeaderElector::Callbacks{[this, loop] { started.push_back(loop->Now()); },
                                 [this, loop] { stopped.push_back(loop->Now()); }, nullptr});
  }
  FakeLock lock;
  NullLogger logger;
  std::unique_ptr<LeaderElector> elector;
  std::vector<TimePoint> started, stopped;
};

LeaderElectorOptions Defaults() { return LeaderElectorOptions{}; }  // 15 s / 10 s / 2 s

TEST(LeaderElectorTest, OneLeaderAndAStandbyTakesOverWithinLeaseDurationPlusRetryPeriod) {
  SimLoop loop;
  std::optional<LeaderRecord> record;
  std::vector<std::unique_ptr<Candidate>> c;
  for (const char* id : {"a", "b", "c"})
    c.push_back(std::make_unique<Candidate>(&loop, &record, id, Defaults()));
  for (auto& x : c) x->elector->Start();
  loop.RunFor(std::chrono::seconds(60));
  int leaders = 0;
  Candidate* leader = nullptr;
  for (auto& x : c) {
    if (x->elector->IsLeader()) {
      ++leaders;
      leader = x.get();
    }
  }
  ASSERT_EQ(leaders, 1);
  ASSERT_EQ(leader->started.size(), 1u);
  // The leader crashes: it stops renewing.
  const TimePoint last_renew = *record->renew_time;
  leader->elector->Stop();
  const TimePoint crash = loop.Now();
  loop.RunFor(std::chrono::seconds(60));
  Candidate* next = nullptr;
  for (auto& x : c) {
    if (x.get() != leader && x->elector->IsLeader()) next = x.get();
  }
  ASSERT_NE(next, nullptr);
  ASSERT_EQ(next->started.size(), 1u);
  const Duration takeover = next->started[0] - crash;
  EXPECT_LE(next->started[0] - last_renew,
            Defaults().lease_duration + Defaults().retry_period + std::chrono::milliseconds(20))
      << FormatDuration(takeover);
  EXPECT_GE(next->started[0] - last_renew, Defaults().lease_duration);
  EXPECT_EQ(record->leader_transitions, 1);
}

// A leader cut off from the lock (its calls hang) stops leading renew_deadline after its last
// successful renewal was sent, before any standby can take the lock.
TEST(LeaderElectorTest, PartitionedLeaderStopsBeforeTheStandbyStarts) {
  SimLoop loop;
  std::optional<LeaderRecord> record;
  Candidate a(&loop, &record, "a", Defaults());
  a.elector->Start();
  loop.RunFor(std::chrono::seconds(1));
  ASSERT_TRUE(a.elector->IsLeader());
  Candidate b(&loop, &record, "b", Defaults());
  b.elector->Start();
  loop.RunFor(std::chrono::seconds(30));
  ASSERT_FALSE(b.elector->IsLeader());
  const TimePoint last_renew = *record->renew_time;
  a.lock.hung = true;
  loop.RunFor(std::chrono::seconds(60));
  ASSERT_EQ(a.stopped.size(), 1u);
  ASSERT_EQ(b.started.size(), 1u);
  EXPECT_LE(a.stopped[0] - last_renew, Defaults().renew_deadline + Defaults().retry_period);
  EXPECT_LT(a.stopped[0], b.started[0]);
  EXPECT_GE(b.started[0] - a.stopped[0],
            Defaults().lease_duration - Defaults().renew_deadline - Defaults().retry_period);
  EXPECT_FALSE(a.elector->IsLeader());
}

TEST(LeaderElectorTest, RejectsInconsistentDurations) {
  LeaderElectorOptions o;
  o.identity = "x";
  EXPECT_TRUE(LeaderElector::Validate(o).ok());
  o.renew_deadline = o.lease_duration;
  EXPECT_EQ(LeaderElector::Validate(o).code(), Code::kInvalid);
  o = LeaderElectorOptions{};
  EXPECT_EQ(LeaderElector::Validate(o).code(), Code::kInvalid);  // no identity
}

}  // namespace
}  // namespace rcsim
