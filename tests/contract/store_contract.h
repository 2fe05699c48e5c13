// The Store contract: one typed GoogleTest suite that every Store implementation passes (the in-memory
// etcd in fakes/, a real etcd process in backends/). The semantics are those stated in engine/store.h.
//
// To run it against an implementation, define a factory and instantiate the suite:
//
//   struct MyFactory {
//     // fresh = true: the store must be empty (revision 1, never compacted); return nullptr if this
//     // factory cannot provide one (the test is then skipped). fresh = false: the store may be shared
//     // with earlier tests (e.g. one etcd process for the whole binary).
//     std::unique_ptr<rcsim::contract::StoreHarness> Make(bool fresh);
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, StoreContractTest, ::testing::Types<MyFactory>);
//
// Rules the tests follow so that a shared real etcd works: every key is under harness->prefix() (unique
// per test), revisions are compared relative to the revision read at the start of the test, and tests
// wait only through StoreHarness::WaitFor (watch callbacks may come from another thread; they are
// collected under a mutex). Lease TTLs are 3 s (etcd's minimum TTL is 2 s with default flags).
#ifndef RCSIM_TESTS_CONTRACT_STORE_CONTRACT_H_
#define RCSIM_TESTS_CONTRACT_STORE_CONTRACT_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/status.h"
#include "engine/store.h"
#include "engine/time.h"

namespace rcsim::contract {

// One store under test and the means to let time pass around it.
class StoreHarness {
 public:
  virtual ~StoreHarness() = default;
  virtual Store& store() = 0;
  // Runs (simulation) or waits (real store) until pred() holds or `timeout` passes (virtual time for a
  // simulation, real time otherwise); returns pred(). pred is called on the test's thread.
  virtual bool WaitFor(const std::function<bool()>& pred, Duration timeout) = 0;
  // Lets `d` pass: the simulation advances its loop (running what falls due), a real store sleeps.
  virtual void Elapse(Duration d) = 0;
  // A key prefix no other test uses, e.g. "/contract/42/". Tests write only under it.
  virtual std::string prefix() = 0;
  // True if the store was empty when handed out (revision 1, never compacted).
  virtual bool fresh_store() = 0;
  // Restarts the server behind a fresh store on the same data, abruptly (SIGKILL) or gracefully
  // (SIGTERM), and returns once it serves again; false if this implementation has no server to restart
  // (the tests that need it are skipped). Only called on a fresh store.
  virtual bool RestartServer(bool /*abrupt*/) { return false; }
  // Puts key=value through a client in another process (a real etcd: etcdctl), so that nothing it does
  // can drive store()'s connections along; the revision of the write, or an error. Only called when
  // has_other_process() (otherwise the tests that need it are skipped).
  virtual bool has_other_process() { return false; }
  virtual Result<int64_t> PutFromAnotherProcess(const std::string& /*key*/, const std::string& /*value*/) {
    return Status(Code::kInternal, "no other process");
  }
};

// Collects a watch's responses; safe to feed from any thread. Outlives the callback it hands out.
class WatchCollector {
 public:
  WatchCollector() : state_(std::make_shared<State>()) {}

  WatchCallback Callback() const {
    std::shared_ptr<State> s = state_;
    return [s](const WatchResponse& r) {
      std::lock_guard<std::mutex> lock(s->mu);
      s->responses.push_back(r);
    };
  }
  std::vector<WatchResponse> Responses() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->responses;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->responses.size();
  }
  // Every event of every response, in arrival order.
  std::vector<WatchEvent> Events() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::vector<WatchEvent> out;
    for (const WatchResponse& r : state_->responses) out.insert(out.end(), r.events.begin(), r.events.end());
    return out;
  }
  size_t EventCount() const { return Events().size(); }
  bool Canceled() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (const WatchResponse& r : state_->responses) {
      if (r.canceled) return true;
    }
    return false;
  }

 private:
  struct State {
    std::mutex mu;
    std::vector<WatchResponse> responses;
  };
  std::shared_ptr<State> state_;
};

template <typename Factory>
class StoreContractTest : public ::testing::Test {
 protected:
  static constexpr Duration kWait = std::chrono::seconds(15);

  void SetUp() override {
    h_ = Factory().Make(false);
    ASSERT_NE(h_, nullptr);
    p_ = h_->prefix();
  }
  void TearDown() override {
    watches_.clear();
    h_.reset();
  }

  // Replaces the harness with a fresh store; false (and the test should return) if none is available.
  bool UseFreshStore() {
    watches_.clear();
    h_.reset();
    h_ = Factory().Make(true);
    if (h_ == nullptr) return false;
    p_ = h_->prefix();
    return h_->fresh_store();
  }

  Store& store() { return h_->store(); }
  StoreHarness& harness() { return *h_; }
  std::string K(std::string_view suffix) const { return p_ + std::string(suffix); }

  // The store's current revision (header revision of a read).
  int64_t Rev() {
    RangeRequest req;
    req.key = p_;
    auto r = store().Range(req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->revision : -1;
  }

  PutResponse PutOk(const std::string& key, const std::string& value, int64_t lease = 0,
                    bool prev_kv = false) {
    PutRequest req;
    req.key = key;
    req.value = Value(value);
    req.lease = lease;
    req.prev_kv = prev_kv;
    auto r = store().Put(req);
    EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
    return r.ok() ? std::move(r).value() : PutResponse{};
  }

  DeleteResponse DeleteOk(const std::string& key, const std::string& range_end = "", bool prev_kv = false) {
    DeleteRequest req;
    req.key = key;
    req.range_end = range_end;
    req.prev_kv = prev_kv;
    auto r = store().DeleteRange(req);
    EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
    return r.ok() ? std::move(r).value() : DeleteResponse{};
  }

  std::optional<KeyValue> GetOk(const std::string& key) {
    auto r = store().Get(key);
    EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  bool Exists(const std::string& key) { return GetOk(key).has_value(); }

  Result<RangeResponse> RangeAt(const std::string& key, int64_t revision, const std::string& range_end = "") {
    RangeRequest req;
    req.key = key;
    req.range_end = range_end;
    req.revision = revision;
    return store().Range(req);
  }

  TxnResponse TxnOk(const TxnRequest& req) {
    auto r = store().Txn(req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : TxnResponse{};
  }

  static TxnOp PutOp(const std::string& key, const std::string& value) {
    PutRequest p;
    p.key = key;
    p.value = Value(value);
    return TxnOp::Put(std::move(p));
  }
  static TxnOp DeleteOp(const std::string& key) {
    DeleteRequest d;
    d.key = key;
    return TxnOp::Delete(std::move(d));
  }
  static TxnOp GetOp(const std::string& key) {
    RangeRequest r;
    r.key = key;
    return TxnOp::Get(std::move(r));
  }

  // Starts a watch kept until the end of the test; the collector receives its responses.
  WatchCollector StartWatch(const std::string& key, const std::string& range_end, int64_t start_revision,
                            bool prev_kv = false) {
    WatchCollector c;
    WatchRequest req;
    req.key = key;
    req.range_end = range_end;
    req.start_revision = start_revision;
    req.prev_kv = prev_kv;
    auto w = store().StartWatch(req, c.Callback());
    EXPECT_NE(w, nullptr);
    watches_.push_back(std::move(w));
    return c;
  }
  WatchCollector WatchPrefix(const std::string& prefix, int64_t start_revision, bool prev_kv = false) {
    return StartWatch(prefix, PrefixEnd(prefix), start_revision, prev_kv);
  }

  bool WaitFor(const std::function<bool()>& pred) { return h_->WaitFor(pred, kWait); }
  bool WaitForResponses(const WatchCollector& c, size_t n) {
    return WaitFor([&c, n] { return c.size() >= n; });
  }

  std::unique_ptr<StoreHarness> h_;
  std::string p_;
  std::vector<std::unique_ptr<Watch>> watches_;
};

TYPED_TEST_SUITE_P(StoreContractTest);

TYPED_TEST_P(StoreContractTest, FreshStoreStartsAtRevisionOneAndFirstWriteGetsTwo) {
  if (!this->UseFreshStore()) GTEST_SKIP() << "no fresh store available";
  EXPECT_EQ(this->Rev(), 1);
  auto r = this->RangeAt(this->K(""), 0, PrefixEnd(this->K("")));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->count, 0);
  PutResponse p = this->PutOk(this->K("a"), "1");
  EXPECT_EQ(p.revision, 2);
  auto kv = this->GetOk(this->K("a"));
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->create_revision, 2);
  EXPECT_EQ(kv->mod_revision, 2);
  EXPECT_EQ(kv->version, 1);
}

TYPED_TEST_P(StoreContractTest, EachWriteAddsExactlyOne) {
  const int64_t r0 = this->Rev();
  EXPECT_EQ(this->PutOk(this->K("a"), "1").revision, r0 + 1);
  EXPECT_EQ(this->PutOk(this->K("a"), "1").revision, r0 + 2);
  EXPECT_EQ(this->PutOk(this->K("b"), "2").revision, r0 + 3);
  DeleteResponse d = this->DeleteOk(this->K("a"));
  EXPECT_EQ(d.deleted, 1);
  EXPECT_EQ(d.revision, r0 + 4);
  TxnRequest txn;
  txn.success = {this->PutOp(this->K("c"), "3"), this->PutOp(this->K("d"), "4"), this->DeleteOp(this->K("b"))};
  TxnResponse t = this->TxnOk(txn);
  EXPECT_TRUE(t.succeeded);
  EXPECT_EQ(t.revision, r0 + 5);
  DeleteResponse all = this->DeleteOk(this->K(""), PrefixEnd(this->K("")));
  EXPECT_EQ(all.deleted, 2);
  EXPECT_EQ(all.revision, r0 + 6);
  EXPECT_EQ(this->Rev(), r0 + 6);
}

TYPED_TEST_P(StoreContractTest, NonWritesAddNothing) {
  const int64_t r1 = this->PutOk(this->K("a"), "1").revision;
  DeleteResponse d = this->DeleteOk(this->K("missing"));
  EXPECT_EQ(d.deleted, 0);
  EXPECT_EQ(d.revision, r1);
  EXPECT_EQ(this->DeleteOk(this->K("x/"), PrefixEnd(this->K("x/"))).deleted, 0);

  TxnRequest read_only;
  read_only.compare = {Compare::Version(this->K("a"), Compare::Result::kEqual, 1)};
  read_only.success = {this->GetOp(this->K("a"))};
  TxnResponse t1 = this->TxnOk(read_only);
  EXPECT_TRUE(t1.succeeded);
  EXPECT_EQ(t1.revision, r1);

  TxnRequest failed;
  failed.compare = {Compare::Version(this->K("a"), Compare::Result::kEqual, 7)};
  failed.success = {this->PutOp(this->K("b"), "never")};
  failed.failure = {this->GetOp(this->K("a"))};
  TxnResponse t2 = this->TxnOk(failed);
  EXPECT_FALSE(t2.succeeded);
  EXPECT_EQ(t2.revision, r1);
  EXPECT_FALSE(this->Exists(this->K("b")));

  TxnRequest delete_missing;
  delete_missing.success = {this->DeleteOp(this->K("missing"))};
  EXPECT_EQ(this->TxnOk(delete_missing).revision, r1);

  auto lease = this->store().LeaseGrant(5);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(this->Rev(), r1);
  EXPECT_TRUE(this->store().LeaseRevoke(lease->id).ok());  // a lease without keys
  EXPECT_EQ(this->Rev(), r1);

  auto c = this->store().Compact(r1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(this->Rev(), r1);
}

TYPED_TEST_P(StoreContractTest, CreateModVersionRules) {
  const std::string k = this->K("a");
  const int64_t r1 = this->PutOk(k, "v1").revision;
  auto kv = this->GetOk(k);
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->create_revision, r1);
  EXPECT_EQ(kv->mod_revision, r1);
  EXPECT_EQ(kv->version, 1);
  EXPECT_EQ(kv->value.bytes(), "v1");

  const int64_t r2 = this->PutOk(k, "v1").revision;  // identical value still writes
  EXPECT_EQ(r2, r1 + 1);
  kv = this->GetOk(k);
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->create_revision, r1);
  EXPECT_EQ(kv->mod_revision, r2);
  EXPECT_EQ(kv->version, 2);

  const int64_t r3 = this->PutOk(k, "v2").revision;
  kv = this->GetOk(k);
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->mod_revision, r3);
  EXPECT_EQ(kv->version, 3);
  EXPECT_EQ(kv->value.bytes(), "v2");

  EXPECT_EQ(this->DeleteOk(k).deleted, 1);
  EXPECT_FALSE(this->Exists(k));
  const int64_t r5 = this->PutOk(k, "v3").revision;
  EXPECT_EQ(r5, r3 + 2);
  kv = this->GetOk(k);
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->create_revision, r5);
  EXPECT_EQ(kv->mod_revision, r5);
  EXPECT_EQ(kv->version, 1);
}

TYPED_TEST_P(StoreContractTest, RangePrefixWithLimitMoreAndCount) {
  for (const char* s : {"r/c", "r/a", "r/e", "r/b", "r/d"}) this->PutOk(this->K(s), std::string("v-") + s);
  this->PutOk(this->K("r"), "outside");
  this->PutOk(this->K("ra"), "outside");
  this->PutOk(this->K("s/a"), "outside");
  const std::string prefix = this->K("r/");

  auto all = this->store().GetPrefix(prefix);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->kvs.size(), 5u);
  EXPECT_EQ(all->count, 5);
  EXPECT_FALSE(all->more);
  const char* want[] = {"r/a", "r/b", "r/c", "r/d", "r/e"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(all->kvs[i].key, this->K(want[i]));
    EXPECT_EQ(all->kvs[i].value.bytes(), std::string("v-") + want[i]);
  }

  auto two = this->store().GetPrefix(prefix, 2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->kvs.size(), 2u);
  EXPECT_EQ(two->kvs[0].key, this->K("r/a"));
  EXPECT_EQ(two->kvs[1].key, this->K("r/b"));
  EXPECT_TRUE(two->more);
  EXPECT_EQ(two->count, 5);

  auto five = this->store().GetPrefix(prefix, 5);
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->kvs.size(), 5u);
  EXPECT_FALSE(five->more);

  RangeRequest count_only;
  count_only.key = prefix;
  count_only.range_end = PrefixEnd(prefix);
  count_only.count_only = true;
  auto c = this->store().Range(count_only);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->kvs.empty());
  EXPECT_EQ(c->count, 5);

  RangeRequest keys_only;
  keys_only.key = prefix;
  keys_only.range_end = PrefixEnd(prefix);
  keys_only.keys_only = true;
  auto k = this->store().Range(keys_only);
  ASSERT_TRUE(k.ok());
  ASSERT_EQ(k->kvs.size(), 5u);
  EXPECT_EQ(k->kvs[0].key, this->K("r/a"));
  EXPECT_TRUE(k->kvs[0].value.bytes().empty());
  EXPECT_GT(k->kvs[0].mod_revision, 0);

  auto between = this->RangeAt(this->K("r/b"), 0, this->K("r/d"));  // [b, d)
  ASSERT_TRUE(between.ok());
  ASSERT_EQ(between->kvs.size(), 2u);
  EXPECT_EQ(between->kvs[0].key, this->K("r/b"));
  EXPECT_EQ(between->kvs[1].key, this->K("r/c"));

  auto single = this->RangeAt(this->K("r"), 0);
  ASSERT_TRUE(single.ok());
  ASSERT_EQ(single->kvs.size(), 1u);
  EXPECT_EQ(single->kvs[0].value.bytes(), "outside");
}

TYPED_TEST_P(StoreContractTest, RangeAtOldRevision) {
  const std::string k = this->K("a");
  const int64_t r1 = this->PutOk(k, "v1").revision;
  const int64_t r2 = this->PutOk(k, "v2").revision;
  this->PutOk(this->K("b"), "b1");
  const int64_t r4 = this->DeleteOk(k).revision;
  const int64_t now = this->Rev();

  auto at1 = this->RangeAt(k, r1);
  ASSERT_TRUE(at1.ok());
  ASSERT_EQ(at1->kvs.size(), 1u);
  EXPECT_EQ(at1->kvs[0].value.bytes(), "v1");
  EXPECT_EQ(at1->kvs[0].mod_revision, r1);
  EXPECT_EQ(at1->kvs[0].version, 1);
  EXPECT_EQ(at1->revision, now);  // the header is the current revision

  auto at2 = this->RangeAt(k, r2);
  ASSERT_TRUE(at2.ok());
  ASSERT_EQ(at2->kvs.size(), 1u);
  EXPECT_EQ(at2->kvs[0].value.bytes(), "v2");
  EXPECT_EQ(at2->kvs[0].version, 2);

  auto at4 = this->RangeAt(k, r4);
  ASSERT_TRUE(at4.ok());
  EXPECT_TRUE(at4->kvs.empty());

  auto prefix_at1 = this->RangeAt(this->K(""), r1, PrefixEnd(this->K("")));
  ASSERT_TRUE(prefix_at1.ok());
  EXPECT_EQ(prefix_at1->count, 1);  // b did not exist yet
}

TYPED_TEST_P(StoreContractTest, PutAndDeletePrevKv) {
  const int64_t r1 = this->PutOk(this->K("a"), "1").revision;
  PutResponse fresh = this->PutOk(this->K("b"), "b", 0, /*prev_kv=*/true);
  EXPECT_FALSE(fresh.prev_kv.has_value());
  PutResponse p = this->PutOk(this->K("a"), "2", 0, /*prev_kv=*/true);
  ASSERT_TRUE(p.prev_kv.has_value());
  EXPECT_EQ(p.prev_kv->key, this->K("a"));
  EXPECT_EQ(p.prev_kv->value.bytes(), "1");
  EXPECT_EQ(p.prev_kv->mod_revision, r1);
  EXPECT_EQ(p.prev_kv->version, 1);
  EXPECT_FALSE(this->PutOk(this->K("a"), "3").prev_kv.has_value());

  DeleteResponse d = this->DeleteOk(this->K("a"), "", /*prev_kv=*/true);
  ASSERT_EQ(d.prev_kvs.size(), 1u);
  EXPECT_EQ(d.prev_kvs[0].value.bytes(), "3");
  EXPECT_EQ(d.prev_kvs[0].version, 3);

  this->PutOk(this->K("c"), "c");
  DeleteResponse all = this->DeleteOk(this->K(""), PrefixEnd(this->K("")), /*prev_kv=*/true);
  EXPECT_EQ(all.deleted, 2);
  ASSERT_EQ(all.prev_kvs.size(), 2u);
  EXPECT_EQ(all.prev_kvs[0].key, this->K("b"));
  EXPECT_EQ(all.prev_kvs[1].key, this->K("c"));

  this->PutOk(this->K("d"), "d");
  EXPECT_TRUE(this->DeleteOk(this->K("d")).prev_kvs.empty());
}

TYPED_TEST_P(StoreContractTest, TxnComparesAndBranches) {
  const std::string a = this->K("a");
  const int64_t ra = this->PutOk(a, "x").revision;
  this->PutOk(this->K("c"), "c");

  TxnRequest t;
  t.compare = {Compare::ModRevision(a, Compare::Result::kEqual, ra)};
  t.success = {this->PutOp(a, "y"), this->PutOp(this->K("b"), "z"), this->DeleteOp(this->K("c")),
               this->GetOp(a)};
  t.failure = {this->GetOp(a)};
  TxnResponse ok = this->TxnOk(t);
  ASSERT_TRUE(ok.succeeded);
  const int64_t rt = ok.revision;
  EXPECT_EQ(rt, ra + 2);
  ASSERT_EQ(ok.responses.size(), 4u);
  EXPECT_EQ(ok.responses[2].del.deleted, 1);
  ASSERT_EQ(ok.responses[3].range.kvs.size(), 1u);
  EXPECT_EQ(ok.responses[3].range.kvs[0].value.bytes(), "y");  // reads see the txn's own writes
  EXPECT_EQ(this->GetOk(a)->mod_revision, rt);
  EXPECT_EQ(this->GetOk(this->K("b"))->mod_revision, rt);
  EXPECT_FALSE(this->Exists(this->K("c")));
  EXPECT_EQ(this->Rev(), rt);

  // The same compare now fails: the failure branch runs and nothing is written.
  TxnResponse failed = this->TxnOk(t);
  EXPECT_FALSE(failed.succeeded);
  EXPECT_EQ(failed.revision, rt);
  ASSERT_EQ(failed.responses.size(), 1u);
  ASSERT_EQ(failed.responses[0].range.kvs.size(), 1u);
  EXPECT_EQ(failed.responses[0].range.kvs[0].value.bytes(), "y");

  auto holds = [this](Compare c) {
    TxnRequest r;
    r.compare = {std::move(c)};
    return this->TxnOk(r).succeeded;
  };
  using R = Compare::Result;
  EXPECT_TRUE(holds(Compare::Version(a, R::kEqual, 2)));
  EXPECT_TRUE(holds(Compare::Version(a, R::kGreater, 1)));
  EXPECT_FALSE(holds(Compare::Version(a, R::kLess, 2)));
  EXPECT_TRUE(holds(Compare::Version(a, R::kNotEqual, 3)));
  EXPECT_TRUE(holds(Compare::CreateRevision(a, R::kEqual, ra)));
  EXPECT_FALSE(holds(Compare::CreateRevision(a, R::kEqual, rt)));
  EXPECT_TRUE(holds(Compare::ModRevision(a, R::kEqual, rt)));
  EXPECT_TRUE(holds(Compare::ModRevision(a, R::kLess, rt + 1)));
  EXPECT_TRUE(holds(Compare::ValueIs(a, R::kEqual, "y")));
  EXPECT_FALSE(holds(Compare::ValueIs(a, R::kEqual, "x")));
  EXPECT_TRUE(holds(Compare::ValueIs(a, R::kNotEqual, "x")));
  EXPECT_TRUE(holds(Compare::ValueIs(a, R::kGreater, "x")));
  // A missing key has version/create/mod 0, and no value compare on it holds.
  EXPECT_TRUE(holds(Compare::Version(this->K("missing"), R::kEqual, 0)));
  EXPECT_TRUE(holds(Compare::CreateRevision(this->K("missing"), R::kEqual, 0)));
  EXPECT_FALSE(holds(Compare::ValueIs(this->K("missing"), R::kEqual, "")));
  EXPECT_FALSE(holds(Compare::ValueIs(this->K("missing"), R::kNotEqual, "y")));

  // All compares must hold.
  TxnRequest both;
  both.compare = {Compare::Version(a, R::kEqual, 2), Compare::Version(a, R::kEqual, 3)};
  EXPECT_FALSE(this->TxnOk(both).succeeded);

  // A failure branch may write; it then takes one revision.
  TxnRequest create_if_absent;
  create_if_absent.compare = {Compare::CreateRevision(a, R::kEqual, 0)};
  create_if_absent.success = {this->PutOp(a, "never")};
  create_if_absent.failure = {this->PutOp(this->K("d"), "d"), this->PutOp(this->K("e"), "e")};
  TxnResponse fw = this->TxnOk(create_if_absent);
  EXPECT_FALSE(fw.succeeded);
  EXPECT_EQ(fw.revision, rt + 1);
  EXPECT_EQ(this->GetOk(a)->value.bytes(), "y");
  EXPECT_EQ(this->GetOk(this->K("d"))->mod_revision, rt + 1);
  EXPECT_EQ(this->GetOk(this->K("e"))->mod_revision, rt + 1);
}

TYPED_TEST_P(StoreContractTest, TxnWritingOneKeyTwiceIsRejected) {
  const int64_t r0 = this->Rev();
  TxnRequest t;
  t.success = {this->PutOp(this->K("a"), "1"), this->PutOp(this->K("a"), "2")};
  EXPECT_FALSE(this->store().Txn(t).ok());
  TxnRequest t2;
  t2.success = {this->PutOp(this->K("a"), "1"), this->DeleteOp(this->K("a"))};
  EXPECT_FALSE(this->store().Txn(t2).ok());
  EXPECT_FALSE(this->Exists(this->K("a")));
  EXPECT_EQ(this->Rev(), r0);
}

TYPED_TEST_P(StoreContractTest, WatchFromPastRevisionReplaysInOrder) {
  const int64_t r1 = this->PutOk(this->K("a"), "1").revision;
  const int64_t r2 = this->PutOk(this->K("b"), "2").revision;
  const int64_t r3 = this->DeleteOk(this->K("a")).revision;
  const int64_t r4 = this->PutOk(this->K("a"), "3").revision;

  WatchCollector c = this->WatchPrefix(this->K(""), r1);
  ASSERT_TRUE(this->WaitForResponses(c, 4));
  const int64_t r5 = this->PutOk(this->K("b"), "4").revision;  // live events follow the replay
  ASSERT_TRUE(this->WaitForResponses(c, 5));
  std::vector<WatchResponse> rs = c.Responses();
  ASSERT_EQ(rs.size(), 5u);
  const int64_t want_rev[] = {r1, r2, r3, r4, r5};
  const char* want_key[] = {"a", "b", "a", "a", "b"};
  for (size_t i = 0; i < 5; ++i) {
    ASSERT_EQ(rs[i].events.size(), 1u) << i;
    EXPECT_FALSE(rs[i].canceled);
    EXPECT_EQ(rs[i].events[0].kv.mod_revision, want_rev[i]) << i;
    EXPECT_EQ(rs[i].events[0].kv.key, this->K(want_key[i])) << i;
  }
  EXPECT_EQ(rs[2].events[0].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(rs[3].events[0].type, WatchEvent::Type::kPut);
  EXPECT_EQ(rs[3].events[0].kv.value.bytes(), "3");
  EXPECT_EQ(rs[3].events[0].kv.version, 1);
  EXPECT_EQ(rs[4].events[0].kv.version, 2);

  WatchCollector from3 = this->WatchPrefix(this->K(""), r3);
  ASSERT_TRUE(this->WaitForResponses(from3, 3));
  std::vector<WatchEvent> ev = from3.Events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kv.mod_revision, r3);
  EXPECT_EQ(ev[2].kv.mod_revision, r5);
}

TYPED_TEST_P(StoreContractTest, WatchFromZeroStartsAfterTheCurrentRevision) {
  this->PutOk(this->K("a"), "old");
  WatchCollector c = this->StartWatch(this->K("a"), "", 0);
  const int64_t r = this->PutOk(this->K("a"), "new").revision;
  ASSERT_TRUE(this->WaitForResponses(c, 1));
  std::vector<WatchEvent> ev = c.Events();
  ASSERT_GE(ev.size(), 1u);
  EXPECT_EQ(ev[0].kv.mod_revision, r);
  EXPECT_EQ(ev[0].kv.value.bytes(), "new");
}

TYPED_TEST_P(StoreContractTest, OneTxnsEventsArriveInOneResponse) {
  this->PutOk(this->K("c"), "c");
  WatchCollector c = this->WatchPrefix(this->K(""), 0);
  TxnRequest t;
  t.success = {this->PutOp(this->K("a"), "a"), this->PutOp(this->K("b"), "b"), this->DeleteOp(this->K("c"))};
  const int64_t rt = this->TxnOk(t).revision;
  ASSERT_TRUE(this->WaitForResponses(c, 1));
  std::vector<WatchResponse> rs = c.Responses();
  ASSERT_EQ(rs.size(), 1u);
  ASSERT_EQ(rs[0].events.size(), 3u);
  EXPECT_EQ(rs[0].events[0].kv.key, this->K("a"));
  EXPECT_EQ(rs[0].events[1].kv.key, this->K("b"));
  EXPECT_EQ(rs[0].events[2].kv.key, this->K("c"));
  EXPECT_EQ(rs[0].events[2].type, WatchEvent::Type::kDelete);
  for (const WatchEvent& e : rs[0].events) EXPECT_EQ(e.kv.mod_revision, rt);
}

TYPED_TEST_P(StoreContractTest, DeleteEventCarriesOnlyKeyAndModRevision) {
  const std::string k = this->K("a");
  WatchCollector plain = this->StartWatch(k, "", 0);
  WatchCollector with_prev = this->StartWatch(k, "", 0, /*prev_kv=*/true);
  const int64_t r1 = this->PutOk(k, "v1").revision;
  const int64_t r2 = this->PutOk(k, "v2").revision;
  const int64_t rd = this->DeleteOk(k).revision;
  ASSERT_TRUE(this->WaitForResponses(plain, 3));
  ASSERT_TRUE(this->WaitForResponses(with_prev, 3));

  std::vector<WatchEvent> p = plain.Events();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_FALSE(p[0].prev_kv.has_value());
  EXPECT_FALSE(p[1].prev_kv.has_value());
  const WatchEvent& del = p[2];
  EXPECT_EQ(del.type, WatchEvent::Type::kDelete);
  EXPECT_EQ(del.kv.key, k);
  EXPECT_EQ(del.kv.mod_revision, rd);
  EXPECT_TRUE(del.kv.value.bytes().empty());
  EXPECT_EQ(del.kv.create_revision, 0);
  EXPECT_EQ(del.kv.version, 0);
  EXPECT_EQ(del.kv.lease, 0);
  EXPECT_FALSE(del.prev_kv.has_value());

  std::vector<WatchEvent> w = with_prev.Events();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_FALSE(w[0].prev_kv.has_value());  // a creation has no previous value
  ASSERT_TRUE(w[1].prev_kv.has_value());
  EXPECT_EQ(w[1].prev_kv->value.bytes(), "v1");
  EXPECT_EQ(w[1].prev_kv->mod_revision, r1);
  ASSERT_TRUE(w[2].prev_kv.has_value());
  EXPECT_EQ(w[2].kv.mod_revision, rd);
  EXPECT_TRUE(w[2].kv.value.bytes().empty());
  EXPECT_EQ(w[2].prev_kv->value.bytes(), "v2");
  EXPECT_EQ(w[2].prev_kv->mod_revision, r2);
  EXPECT_EQ(w[2].prev_kv->version, 2);
}

TYPED_TEST_P(StoreContractTest, WatchOnPrefixIgnoresOtherKeys) {
  WatchCollector c = this->WatchPrefix(this->K("w/"), 0);
  WatchCollector single = this->StartWatch(this->K("w/b"), "", 0);
  this->PutOk(this->K("x"), "x");
  this->PutOk(this->K("w/a"), "a");
  this->PutOk(this->K("wa"), "sibling");  // shares "w" but not "w/"
  this->PutOk(this->K("w"), "parent");
  this->PutOk(this->K("w/b"), "b");
  this->PutOk(this->K("w0"), "after");
  this->PutOk(this->K("w/z"), "sentinel");
  ASSERT_TRUE(this->WaitForResponses(c, 3));
  ASSERT_TRUE(this->WaitForResponses(single, 1));
  std::vector<WatchEvent> ev = c.Events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kv.key, this->K("w/a"));
  EXPECT_EQ(ev[1].kv.key, this->K("w/b"));
  EXPECT_EQ(ev[2].kv.key, this->K("w/z"));
  std::vector<WatchEvent> one = single.Events();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].kv.key, this->K("w/b"));
}

TYPED_TEST_P(StoreContractTest, CompactionCancelsWatchFromOlderRevision) {
  const int64_t r1 = this->PutOk(this->K("a"), "1").revision;
  this->PutOk(this->K("a"), "2");
  const int64_t r3 = this->PutOk(this->K("a"), "3").revision;
  auto c = this->store().Compact(r3);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  WatchCollector old = this->WatchPrefix(this->K(""), r1);
  ASSERT_TRUE(this->WaitFor([&old] { return old.Canceled(); }));
  std::vector<WatchResponse> rs = old.Responses();
  ASSERT_FALSE(rs.empty());
  EXPECT_TRUE(rs.back().canceled);
  EXPECT_EQ(rs.back().compact_revision, r3);
  EXPECT_EQ(old.EventCount(), 0u);

  // The compact revision itself is still readable and watchable.
  WatchCollector at = this->WatchPrefix(this->K(""), r3);
  ASSERT_TRUE(this->WaitForResponses(at, 1));
  std::vector<WatchEvent> ev = at.Events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kv.mod_revision, r3);
  EXPECT_FALSE(at.Canceled());
}

TYPED_TEST_P(StoreContractTest, RangeAtCompactedRevisionFails) {
  const int64_t r1 = this->PutOk(this->K("a"), "1").revision;
  const int64_t r2 = this->PutOk(this->K("a"), "2").revision;
  this->PutOk(this->K("a"), "3");
  auto c = this->store().Compact(r2);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  auto old = this->RangeAt(this->K("a"), r1);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), Code::kCompacted);
  auto at = this->RangeAt(this->K("a"), r2);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  ASSERT_EQ(at->kvs.size(), 1u);
  EXPECT_EQ(at->kvs[0].value.bytes(), "2");

  auto again = this->store().Compact(r2);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kCompacted);
  auto below = this->store().Compact(r1);
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.status().code(), Code::kCompacted);
  auto future = this->store().Compact(this->Rev() + 10);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), Code::kFutureRevision);
}

TYPED_TEST_P(StoreContractTest, RangeAtFutureRevisionFails) {
  this->PutOk(this->K("a"), "1");
  const int64_t now = this->Rev();
  auto future = this->RangeAt(this->K("a"), now + 1);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), Code::kFutureRevision);
  auto current = this->RangeAt(this->K("a"), now);
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->kvs.size(), 1u);
}

TYPED_TEST_P(StoreContractTest, NegativeRevisionAndLimitMeanLatestAndUnlimited) {
  this->PutOk(this->K("a"), "1");
  this->PutOk(this->K("b"), "2");
  RangeRequest req;
  req.key = this->K("");
  req.range_end = PrefixEnd(this->K(""));
  req.revision = -1;
  req.limit = -1;
  auto r = this->store().Range(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kvs.size(), 2u);
  EXPECT_FALSE(r->more);
}

TYPED_TEST_P(StoreContractTest, TxnWithMoreThan128OpsIsRejected) {
  const int64_t before = this->Rev();
  TxnRequest txn;
  for (int i = 0; i < 129; ++i) {
    PutRequest put;
    put.key = this->K("k" + std::to_string(i));
    put.value = Value(std::string("v"));
    txn.success.push_back(TxnOp::Put(std::move(put)));
  }
  auto r = this->store().Txn(txn);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kBadRequest);
  EXPECT_EQ(this->Rev(), before);
  txn.success.pop_back();  // 128 is etcd's default --max-txn-ops: accepted
  auto ok = this->store().Txn(txn);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(this->Rev(), before + 1);
}

TYPED_TEST_P(StoreContractTest, LeaseExpiryDeletesAttachedKeysInOneRevision) {
  WatchCollector c = this->WatchPrefix(this->K(""), 0);
  auto lease = this->store().LeaseGrant(3);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_GE(lease->ttl_seconds, 3);
  this->PutOk(this->K("a"), "a", lease->id);
  this->PutOk(this->K("b"), "b", lease->id);
  const int64_t rb = this->PutOk(this->K("c"), "no lease").revision;
  auto kv = this->GetOk(this->K("a"));
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->lease, lease->id);

  this->harness().Elapse(std::chrono::seconds(1));
  EXPECT_TRUE(this->Exists(this->K("a")));
  EXPECT_TRUE(this->Exists(this->K("b")));
  ASSERT_TRUE(this->WaitFor([this] { return !this->Exists(this->K("a")) && !this->Exists(this->K("b")); }));
  EXPECT_TRUE(this->Exists(this->K("c")));
  EXPECT_EQ(this->Rev(), rb + 1);

  ASSERT_TRUE(this->WaitForResponses(c, 4));
  std::vector<WatchResponse> rs = c.Responses();
  ASSERT_EQ(rs.size(), 4u);
  ASSERT_EQ(rs[3].events.size(), 2u);
  for (const WatchEvent& e : rs[3].events) {
    EXPECT_EQ(e.type, WatchEvent::Type::kDelete);
    EXPECT_EQ(e.kv.mod_revision, rb + 1);
  }
  EXPECT_FALSE(this->store().LeaseKeepAlive(lease->id).ok());
}

TYPED_TEST_P(StoreContractTest, LeaseKeepAliveExtends) {
  auto kept = this->store().LeaseGrant(3);
  auto lapsed = this->store().LeaseGrant(3);
  ASSERT_TRUE(kept.ok() && lapsed.ok());
  EXPECT_NE(kept->id, lapsed->id);
  this->PutOk(this->K("kept"), "k", kept->id);
  this->PutOk(this->K("lapsed"), "l", lapsed->id);
  this->harness().Elapse(std::chrono::seconds(2));
  auto ttl = this->store().LeaseKeepAlive(kept->id);
  ASSERT_TRUE(ttl.ok()) << ttl.status().ToString();
  EXPECT_EQ(*ttl, kept->ttl_seconds);
  // The lease with the same TTL and no keep-alive expires first.
  ASSERT_TRUE(this->WaitFor([this] { return !this->Exists(this->K("lapsed")); }));
  EXPECT_TRUE(this->Exists(this->K("kept")));
  ASSERT_TRUE(this->WaitFor([this] { return !this->Exists(this->K("kept")); }));
  auto gone = this->store().LeaseKeepAlive(kept->id);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContractTest, LeaseRevokeDeletesKeys) {
  auto lease = this->store().LeaseGrant(5);
  ASSERT_TRUE(lease.ok());
  this->PutOk(this->K("a"), "a", lease->id);
  const int64_t rb = this->PutOk(this->K("b"), "b", lease->id).revision;
  ASSERT_TRUE(this->store().LeaseRevoke(lease->id).ok());
  EXPECT_FALSE(this->Exists(this->K("a")));
  EXPECT_FALSE(this->Exists(this->K("b")));
  EXPECT_EQ(this->Rev(), rb + 1);

  Status again = this->store().LeaseRevoke(lease->id);
  EXPECT_EQ(again.code(), Code::kNotFound);
  PutRequest p;
  p.key = this->K("c");
  p.value = Value("c");
  p.lease = lease->id;
  auto put = this->store().Put(p);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), Code::kNotFound);
  EXPECT_FALSE(this->Exists(this->K("c")));
}

TYPED_TEST_P(StoreContractTest, PutWithoutLeaseDetachesKeyFromLease) {
  auto lease = this->store().LeaseGrant(5);
  ASSERT_TRUE(lease.ok());
  this->PutOk(this->K("a"), "leased", lease->id);
  this->PutOk(this->K("a"), "free");
  EXPECT_EQ(this->GetOk(this->K("a"))->lease, 0);
  ASSERT_TRUE(this->store().LeaseRevoke(lease->id).ok());
  EXPECT_TRUE(this->Exists(this->K("a")));
}

TYPED_TEST_P(StoreContractTest, DestroyingWatchStopsCallbacks) {
  const std::string k = this->K("a");
  WatchCollector c;
  WatchRequest req;
  req.key = k;
  auto w = this->store().StartWatch(req, c.Callback());
  ASSERT_NE(w, nullptr);
  this->PutOk(k, "1");
  ASSERT_TRUE(this->WaitForResponses(c, 1));
  w.reset();
  const int64_t r2 = this->PutOk(k, "2").revision;
  // A later watch that sees the second write shows the store had time to deliver it.
  WatchCollector later = this->StartWatch(k, "", r2);
  ASSERT_TRUE(this->WaitForResponses(later, 1));
  this->PutOk(k, "3");
  ASSERT_TRUE(this->WaitForResponses(later, 2));
  EXPECT_EQ(c.size(), 1u);
}

// A watch resumes after its server restarts (crash and clean stop) although the watching client makes
// no other call: every write comes from another process, as when the manager watches and the API
// server writes. The store's own watch-restart test wrote through the watching client (same process),
// and gRPC connects only while some thread of the process waits on it: the writer's unary calls made
// the connection for the watch and hid a watch that never reconnected by itself.
TYPED_TEST_P(StoreContractTest, WatchResumesAfterServerRestartWhenOnlyAnotherClientWrites) {
  if (!this->UseFreshStore()) GTEST_SKIP() << "no fresh store available";
  if (!this->harness().has_other_process()) GTEST_SKIP() << "no client in another process";
  auto put = [&](const std::string& key) -> int64_t {
    // The writer's first call after a restart may fail while the server settles.
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto r = this->harness().PutFromAnotherProcess(key, "v");
      if (r.ok()) return *r;
      this->harness().Elapse(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << key << ": the other process never wrote";
    return -1;
  };
  const std::string p = this->K("w/");
  WatchCollector c = this->WatchPrefix(p, 0);
  std::vector<int64_t> revisions = {put(p + "0")};
  ASSERT_TRUE(this->WaitFor([&] { return c.EventCount() >= 1; }));
  for (bool abrupt : {true, false}) {
    ASSERT_TRUE(this->harness().RestartServer(abrupt)) << (abrupt ? "SIGKILL" : "SIGTERM");
    for (int i = 0; i < 3; ++i) revisions.push_back(put(p + (abrupt ? "k" : "t") + std::to_string(i)));
    const size_t want = revisions.size();
    ASSERT_TRUE(this->WaitFor([&] { return c.EventCount() >= want; }))
        << "after a " << (abrupt ? "SIGKILL" : "SIGTERM") << " restart the watch delivered " << c.EventCount()
        << " of " << want << " events";
  }
  std::vector<WatchEvent> ev = c.Events();
  ASSERT_EQ(ev.size(), revisions.size());
  for (size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(ev[i].kv.mod_revision, revisions[i]) << i;
  EXPECT_FALSE(c.Canceled());
}

REGISTER_TYPED_TEST_SUITE_P(StoreContractTest, FreshStoreStartsAtRevisionOneAndFirstWriteGetsTwo,
                            EachWriteAddsExactlyOne, NonWritesAddNothing, CreateModVersionRules,
                            RangePrefixWithLimitMoreAndCount, RangeAtOldRevision, PutAndDeletePrevKv,
                            TxnComparesAndBranches, TxnWritingOneKeyTwiceIsRejected,
                            WatchFromPastRevisionReplaysInOrder, WatchFromZeroStartsAfterTheCurrentRevision,
                            OneTxnsEventsArriveInOneResponse, DeleteEventCarriesOnlyKeyAndModRevision,
                            WatchOnPrefixIgnoresOtherKeys, CompactionCancelsWatchFromOlderRevision,
                            RangeAtCompactedRevisionFails, RangeAtFutureRevisionFails,
                            NegativeRevisionAndLimitMeanLatestAndUnlimited, TxnWithMoreThan128OpsIsRejected,
                            LeaseExpiryDeletesAttachedKeysInOneRevision, LeaseKeepAliveExtends,
                            LeaseRevokeDeletesKeys, PutWithoutLeaseDetachesKeyFromLease,
                            DestroyingWatchStopsCallbacks,
                            WatchResumesAfterServerRestartWhenOnlyAnotherClientWrites);

}  // namespace rcsim::contract

#endif  // RCSIM_TESTS_CONTRACT_STORE_CONTRACT_H_
