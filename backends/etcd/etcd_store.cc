#include "backends/etcd/etcd_store.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#include "engine/mutex.h"
#include "rpc.grpc.pb.h"
#include "rpc.pb.h"

namespace rcsim {
namespace {

namespace pb = etcdserverpb;
using SteadyClock = std::chrono::steady_clock;

constexpr auto kWatchMaxBackoff = std::chrono::milliseconds(1000);
constexpr auto kWatchMinBackoff = std::chrono::milliseconds(50);
// How often a thread waiting for a connection checks whether its watch was cancelled.
constexpr auto kConnectSlice = std::chrono::milliseconds(100);

// etcd's error strings (server/etcdserver/api/v3rpc/rpctypes); the gRPC code alone is ambiguous.
constexpr std::string_view kErrCompacted = "required revision has been compacted";
constexpr std::string_view kErrFutureRev = "required revision is a future revision";
constexpr std::string_view kErrLeaseNotFound = "requested lease not found";
constexpr std::string_view kErrLeaseExists = "lease already exists";
constexpr std::string_view kErrNoLeader = "no leader";
constexpr std::string_view kErrTimeout = "request timed out";

bool Contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

std::chrono::system_clock::time_point DeadlineAfter(Duration d) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
}

KeyValue FromPb(const mvccpb::KeyValue& kv) {
  KeyValue out;
  out.key = kv.key();
  out.value = Value(kv.value());
  out.create_revision = kv.create_revision();
  out.mod_revision = kv.mod_revision();
  out.version = kv.version();
  out.lease = kv.lease();
  return out;
}

void ToPb(const RangeRequest& r, pb::RangeRequest* out) {
  out->set_key(r.key);
  out->set_range_end(r.range_end);
  out->set_limit(r.limit);
  out->set_revision(r.revision);
  out->set_keys_only(r.keys_only);
  out->set_count_only(r.count_only);
}

void ToPb(const PutRequest& r, pb::PutRequest* out) {
  out->set_key(r.key);
  out->set_value(r.value.bytes());
  out->set_lease(r.lease);
  out->set_prev_kv(r.prev_kv);
}

void ToPb(const DeleteRequest& r, pb::DeleteRangeRequest* out) {
  out->set_key(r.key);
  out->set_range_end(r.range_end);
  out->set_prev_kv(r.prev_kv);
}

void ToPb(const Compare& c, pb::Compare* out) {
  out->set_key(c.key);
  switch (c.result) {
    case Compare::Result::kEqual: out->set_result(pb::Compare::EQUAL); break;
    case Compare::Result::kNotEqual: out->set_result(pb::Compare::NOT_EQUAL); break;
    case Compare::Result::kGreater: out->set_result(pb::Compare::GREATER); break;
    case Compare::Result::kLess: out->set_result(pb::Compare::LESS); break;
  }
  switch (c.target) {
    case Compare::Target::kVersion:
      out->set_target(pb::Compare::VERSION);
      out->set_version(c.number);
      break;
    case Compare::Target::kCreateRevision:
      out->set_target(pb::Compare::CREATE);
      out->set_create_revision(c.number);
      break;
    case Compare::Target::kModRevision:
      out->set_target(pb::Compare::MOD);
      out->set_mod_revision(c.number);
      break;
    case Compare::Target::kValue:
      out->set_target(pb::Compare::VALUE);
      out->set_value(c.value);
      break;
  }
}

void ToPb(const TxnOp& op, pb::RequestOp* out) {
  switch (op.type) {
    case TxnOp::Type::kRange: ToPb(op.range, out->mutable_request_range()); break;
    case TxnOp::Type::kPut: ToPb(op.put, out->mutable_request_put()); break;
    case TxnOp::Type::kDelete: ToPb(op.del, out->mutable_request_delete_range()); break;
  }
}

RangeResponse FromPb(const pb::RangeResponse& r) {
  RangeResponse out;
  out.revision = r.header().revision();
  out.kvs.reserve(r.kvs_size());
  for (const auto& kv : r.kvs()) out.kvs.push_back(FromPb(kv));
  out.more = r.more();
  out.count = r.count();
  return out;
}

PutResponse FromPb(const pb::PutResponse& r) {
  PutResponse out;
  out.revision = r.header().revision();
  if (r.has_prev_kv()) out.prev_kv = FromPb(r.prev_kv());
  return out;
}

DeleteResponse FromPb(const pb::DeleteRangeResponse& r) {
  DeleteResponse out;
  out.revision = r.header().revision();
  out.deleted = r.deleted();
  out.prev_kvs.reserve(r.prev_kvs_size());
  for (const auto& kv : r.prev_kvs()) out.prev_kvs.push_back(FromPb(kv));
  return out;
}

WatchEvent FromPb(const mvccpb::Event& e) {
  WatchEvent out;
  out.type = e.type() == mvccpb::Event::DELETE ? WatchEvent::Type::kDelete : WatchEvent::Type::kPut;
  out.kv = FromPb(e.kv());
  if (e.has_prev_kv()) out.prev_kv = FromPb(e.prev_kv());
  return out;
}

// "http://host:port" or "host:port" -> "host:port"; empty on a malformed or unsupported endpoint.
std::string ToTarget(const std::string& endpoint) {
  std::string_view s = endpoint;
  constexpr std::string_view kHttp = "http://";
  if (s.substr(0, kHttp.size()) == kHttp) s.remove_prefix(kHttp.size());
  if (s.find("://") != std::string_view::npos) return {};
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  const size_t colon = s.rfind(':');
  if (s.empty() || colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) return {};
  if (s.find('/') != std::string_view::npos) return {};
  return std::string(s);
}

// How a failed call ends: move to the next endpoint, or return `status` to the caller.
struct Failure {
  bool try_next = false;
  Status status;
};

// Maps a gRPC error. `is_write`: the request may change the store, so a failure after it may have
// reached the server is an unknown outcome (kTimeout) and must not be retried elsewhere.
Failure Classify(const grpc::Status& s, bool is_write) {
  const std::string& msg = s.error_message();
  const std::string text = "etcd: " + msg;
  if (Contains(msg, kErrCompacted)) return {false, Status(Code::kCompacted, text)};
  if (Contains(msg, kErrFutureRev)) return {false, Status(Code::kFutureRevision, text)};
  if (Contains(msg, kErrLeaseNotFound)) return {false, Status(Code::kNotFound, text)};
  if (Contains(msg, kErrLeaseExists)) return {false, Status(Code::kAlreadyExists, text)};
  if (Contains(msg, kErrNoLeader)) return {true, Status(Code::kUnavailable, text)};
  if (Contains(msg, kErrTimeout)) {
    return is_write ? Failure{false, Status(Code::kTimeout, text)}
                    : Failure{true, Status(Code::kUnavailable, text)};
  }
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      // gRPC retries transparently an RPC that never left the client; a write that fails UNAVAILABLE
      // may have been applied before the connection broke.
      return is_write ? Failure{false, Status(Code::kTimeout, text)}
                      : Failure{true, Status(Code::kUnavailable, text)};
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return is_write ? Failure{false, Status(Code::kTimeout, text)}
                      : Failure{true, Status(Code::kTimeout, text)};
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE: return {false, Status(Code::kBadRequest, text)};
    case grpc::StatusCode::NOT_FOUND: return {false, Status(Code::kNotFound, text)};
    case grpc::StatusCode::FAILED_PRECONDITION: return {false, Status(Code::kConflict, text)};
    default: return {false, Status(Code::kInternal, text)};
  }
}

}  // namespace

std::vector<std::string> SplitEtcdEndpoints(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t comma = csv.find(',', start);
    if (comma == std::string::npos) comma = csv.size();
    std::string item = csv.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

// Shared by the store and its live watches. Immutable after construction except `current`.
struct EtcdStore::Impl {
  struct Endpoint {
    std::string target;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<pb::KV::Stub> kv;
    std::unique_ptr<pb::Watch::Stub> watch;
    std::unique_ptr<pb::Lease::Stub> lease;
  };

  EtcdStoreOptions options;
  Status config_error;  // non-OK: every call fails with it
  std::vector<Endpoint> endpoints;
  std::atomic<int> current{0};  // index of the endpoint calls go to first

  explicit Impl(EtcdStoreOptions opts) : options(std::move(opts)) {
    if (options.endpoints.empty()) {
      config_error = Status(Code::kBadRequest, "etcd: no endpoint given");
      return;
    }
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, -1);
    args.SetInt(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, -1);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    // Despite its name, gRPC uses this as the minimum time one connection attempt may take before it
    // is abandoned ("timed out before receiving SETTINGS frame"). At 100 ms a loaded machine or an
    // etcd that is still starting failed most attempts; give an attempt the whole dial_timeout.
    args.SetInt(
        GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
        static_cast<int>(std::max<int64_t>(
            100, std::chrono::duration_cast<std::chrono::milliseconds>(options.dial_timeout).count())));
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    // Detects a dead peer under an idle watch; etcd's default keepalive policy allows pings every 5 s.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
    for (const std::string& e : options.endpoints) {
      Endpoint ep;
      ep.target = ToTarget(e);
      if (ep.target.empty()) {
        config_error = Status(Code::kBadRequest, "etcd: malformed or unsupported endpoint \"" + e + "\"");
        endpoints.clear();
        return;
      }
      ep.channel = grpc::CreateCustomChannel(ep.target, grpc::InsecureChannelCredentials(), args);
      ep.kv = pb::KV::NewStub(ep.channel);
      ep.watch = pb::Watch::NewStub(ep.channel);
      ep.lease = pb::Lease::NewStub(ep.channel);
      endpoints.push_back(std::move(ep));
    }
  }

  // True once the endpoint's channel is READY; false at `deadline`, when `cancelled()` turns true
  // (checked every kConnectSlice), or when the channel is shut down. A TRANSIENT_FAILURE (a refused or
  // timed-out connection attempt) does not end the wait unless `fail_fast`: gRPC retries the connection
  // with backoff and the channel may still become READY before the deadline. The waiting thread is what
  // drives the connection attempt: gRPC's synchronous API makes progress on a channel's sockets only
  // while some thread waits on it (otherwise only its 5 s backup poller runs), so a watch thread must
  // wait here rather than start a fail-fast stream on a channel that is not READY.
  bool Connect(const Endpoint& ep, std::chrono::system_clock::time_point deadline, bool fail_fast,
               const std::function<bool()>& cancelled = {}) const {
    grpc_connectivity_state state = ep.channel->GetState(/*try_to_connect=*/true);
    bool attempted = false;
    while (state != GRPC_CHANNEL_READY) {
      if (state == GRPC_CHANNEL_SHUTDOWN) return false;
      if (state == GRPC_CHANNEL_TRANSIENT_FAILURE && attempted && fail_fast) return false;
      const auto now = std::chrono::system_clock::now();
      if (now >= deadline) return false;
      if (cancelled && cancelled()) return false;
      const auto slice = cancelled ? std::min(deadline, now + kConnectSlice) : deadline;
      if (ep.channel->WaitForStateChange(state, slice)) attempted = true;
      state = ep.channel->GetState(/*try_to_connect=*/true);
    }
    return true;
  }

  // Runs `rpc(endpoint, context)` on the current endpoint, moving on to the next ones while the
  // failure says it is safe. `rpc` must leave its output untouched or fully rewritten on each try.
  template <typename Rpc>
  Status Call(bool is_write, Rpc&& rpc) {
    if (!config_error.ok()) return config_error;
    const int n = static_cast<int>(endpoints.size());
    const int start = current.load(std::memory_order_relaxed);
    Status last(Code::kUnavailable, "etcd: no endpoint reachable");
    // With several endpoints the first pass moves on at an endpoint's first failed connection attempt
    // (fast failover past a dead member); when none connected, or with one endpoint, each gets its
    // share of dial_timeout: a busy or just-restarted etcd may need more than one attempt.
    const auto dial_deadline = DeadlineAfter(options.dial_timeout);
    // The whole call, every endpoint tried, ends within dial_timeout + request_timeout: with every
    // member frozen or without quorum a read must not wait request_timeout once per member.
    const auto call_deadline = DeadlineAfter(options.dial_timeout + options.request_timeout);
    bool any_connected = false;
    for (int i = 0; i < 2 * n; ++i) {
      const bool patient = n == 1 || i >= n;
      if (patient && i == n && (n == 1 || any_connected)) break;
      if (i > 0 && std::chrono::system_clock::now() >= call_deadline) break;
      const int idx = (start + i) % n;
      const Endpoint& ep = endpoints[idx];
      auto deadline = std::min(dial_deadline, call_deadline);
      if (patient && n > 1) {
        const auto now = std::chrono::system_clock::now();
        if (now < dial_deadline) deadline = now + (dial_deadline - now) / (2 * n - i);
      }
      if (!Connect(ep, deadline, /*fail_fast=*/!patient)) {
        last = Status(Code::kUnavailable, "etcd: cannot connect to " + ep.target);
        continue;
      }
      any_connected = true;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::min(DeadlineAfter(options.request_timeout), call_deadline));
      grpc::Status s = rpc(ep, &ctx);
      if (s.ok()) {
        if (idx != start) current.store(idx, std::memory_order_relaxed);
        return Status::Ok();
      }
      Failure f = Classify(s, is_write);
      if (!f.try_next) return f.status;
      last = Status(f.status.code(), f.status.message() + " (" + ep.target + ")");
    }
    if (last.code() == Code::kTimeout && !is_write) return Status(Code::kUnavailable, last.message());
    return last;
  }
};

namespace {

// One watch: its own gRPC stream and reader thread (see the header for the delivery contract).
struct WatchState {
  std::shared_ptr<EtcdStore::Impl> store;
  WatchRequest req;
  WatchCallback cb;

  Mutex mu;
  CondVar cv;
  bool cancelled GUARDED_BY(mu) = false;
  grpc::ClientContext* live_ctx GUARDED_BY(mu) = nullptr;  // the stream the thread is reading
  std::thread thread;                                      // joined (or detached) by EtcdWatch's destructor

  bool Cancelled() {
    MutexLock lock(mu);
    return cancelled;
  }

  // Runs on `thread` until the watch is cancelled or ends (compacted, or canceled by etcd).
  void Run() {
    const int n = static_cast<int>(store->endpoints.size());
    int64_t next_rev = req.start_revision;  // 0 until etcd tells us the current revision
    int idx = store->current.load(std::memory_order_relaxed);
    int failures = 0;
    bool healthy = true;  // false from the loss of a stream until a new one is created
    SteadyClock::time_point lost_at;
    std::string last_error;
    while (true) {
      if (failures > 0) {
        auto backoff =
            std::min<Duration>(kWatchMinBackoff * (1 << std::min(failures - 1, 5)), kWatchMaxBackoff);
        MutexLock lock(mu);
        if (cv.WaitFor(mu, backoff, [this]() REQUIRES(mu) { return cancelled; })) return;
      }
      const auto& ep = store->endpoints[idx];
      // Drive the connection first (see Impl::Connect): a stream started on a channel that is not
      // READY fails at once, and nothing else may be waiting on this channel to make it connect.
      if (!store->Connect(ep, DeadlineAfter(store->options.dial_timeout), /*fail_fast=*/false,
                          [this] { return Cancelled(); })) {
        if (Cancelled()) return;
        last_error = "cannot connect to " + ep.target;
        if (healthy) {
          healthy = false;
          lost_at = SteadyClock::now();
          Log(LogLevel::kWarning, "etcd: watch on " + req.key + " lost: " + last_error + "; reconnecting");
        }
        ++failures;
        idx = (idx + 1) % n;
        continue;
      }
      grpc::ClientContext ctx;
      ctx.AddMetadata("hasleader", "true");
      {
        MutexLock lock(mu);
        if (cancelled) return;
        live_ctx = &ctx;
      }
      bool finished = false;  // the watch ended for good (compacted / canceled by etcd)
      grpc::Status end;
      {
        auto stream = ep.watch->Watch(&ctx);
        pb::WatchRequest create;
        auto* c = create.mutable_create_request();
        c->set_key(req.key);
        c->set_range_end(req.range_end);
        c->set_start_revision(next_rev);
        c->set_prev_kv(req.prev_kv);
        pb::WatchResponse resp;
        if (stream->Write(create)) {
          while (stream->Read(&resp)) {
            if (resp.created() && next_rev == 0) next_rev = resp.header().revision() + 1;
            if (resp.created()) {
              failures = 0;
              if (!healthy) {
                healthy = true;
                const auto down =
                    std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - lost_at);
                Log(LogLevel::kInfo, "etcd: watch on " + req.key + " resumed on " + ep.target +
                                         " at revision " + std::to_string(next_rev) + " after " +
                                         std::to_string(down.count()) + " ms");
              }
            }
            if (resp.canceled()) {
              WatchResponse out;
              out.header_revision = resp.header().revision();
              out.canceled = true;
              out.compact_revision = resp.compact_revision();
              if (out.compact_revision == 0) {
                out.status = Status(Code::kInternal, "etcd canceled the watch: " + resp.cancel_reason());
              }
              Deliver(out);
              finished = true;
              break;
            }
            DeliverEvents(resp, &next_rev);
          }
        }
        // After a stream that ended by itself Finish() gives etcd's or gRPC's reason; a stream we leave
        // (canceled by etcd) is cancelled first so that Finish() does not wait for the server.
        if (finished) ctx.TryCancel();
        end = stream->Finish();
      }
      {
        MutexLock lock(mu);
        live_ctx = nullptr;
        if (cancelled || finished) return;
      }
      if (healthy) {
        healthy = false;
        lost_at = SteadyClock::now();
        Log(LogLevel::kWarning, "etcd: watch on " + req.key + " lost (" + ep.target + ": " +
                                    end.error_message() + "); reconnecting from revision " +
                                    std::to_string(next_rev));
      }
      ++failures;
      idx = (idx + 1) % n;
    }
  }

  void Log(LogLevel level, const std::string& message) const {
    if (store->options.log) store->options.log(level, message);
  }

  // Splits one etcd message (possibly several revisions) into one WatchResponse per revision.
  void DeliverEvents(const pb::WatchResponse& resp, int64_t* next_rev) {
    int i = 0;
    const int size = resp.events_size();
    while (i < size) {
      WatchResponse out;
      out.header_revision = resp.header().revision();
      const int64_t rev = resp.events(i).kv().mod_revision();
      while (i < size && resp.events(i).kv().mod_revision() == rev)
        out.events.push_back(FromPb(resp.events(i++)));
      if (!Deliver(out)) return;
      *next_rev = rev + 1;
    }
  }

  // Runs the callback unless the watch was cancelled; false if it was.
  bool Deliver(const WatchResponse& r) {
    if (Cancelled()) return false;
    cb(r);
    return true;
  }
};

class EtcdWatch final : public Watch {
 public:
  explicit EtcdWatch(std::shared_ptr<WatchState> state) : state_(std::move(state)) {}
  ~EtcdWatch() override {
    {
      MutexLock lock(state_->mu);
      state_->cancelled = true;
      if (state_->live_ctx != nullptr) state_->live_ctx->TryCancel();
    }
    state_->cv.NotifyAll();
    if (state_->thread.get_id() == std::this_thread::get_id()) {
      state_->thread.detach();  // destroyed from its own callback; the thread owns `state_` too
    } else {
      state_->thread.join();
    }
  }

 private:
  std::shared_ptr<WatchState> state_;
};

// A Watch for a store that cannot serve one: reports `status` once, from its own thread.
class FailedWatch final : public Watch {
 public:
  FailedWatch(Status status, WatchCallback cb)
      : thread_([status = std::move(status), cb = std::move(cb)] {
          WatchResponse r;
          r.canceled = true;
          r.status = status;
          cb(r);
        }) {}
  ~FailedWatch() override {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }

 private:
  std::thread thread_;
};

}  // namespace

EtcdStore::EtcdStore(EtcdStoreOptions options) : impl_(std::make_shared<Impl>(std::move(options))) {}

Result<std::unique_ptr<EtcdStore>> EtcdStore::Create(EtcdStoreOptions options) {
  auto store = std::make_unique<EtcdStore>(std::move(options));
  if (!store->impl_->config_error.ok()) return store->impl_->config_error;
  return store;
}

EtcdStore::~EtcdStore() = default;

int EtcdStore::current_endpoint() const { return impl_->current.load(std::memory_order_relaxed); }

Result<RangeResponse> EtcdStore::Range(const RangeRequest& req) {
  pb::RangeRequest in;
  ToPb(req, &in);
  pb::RangeResponse out;
  Status s = impl_->Call(
      false, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) { return ep.kv->Range(ctx, in, &out); });
  if (!s.ok()) return s;
  return FromPb(out);
}

Result<PutResponse> EtcdStore::Put(const PutRequest& req) {
  pb::PutRequest in;
  ToPb(req, &in);
  pb::PutResponse out;
  Status s = impl_->Call(
      true, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) { return ep.kv->Put(ctx, in, &out); });
  if (!s.ok()) return s;
  return FromPb(out);
}

Result<DeleteResponse> EtcdStore::DeleteRange(const DeleteRequest& req) {
  pb::DeleteRangeRequest in;
  ToPb(req, &in);
  pb::DeleteRangeResponse out;
  Status s = impl_->Call(true, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) {
    return ep.kv->DeleteRange(ctx, in, &out);
  });
  if (!s.ok()) return s;
  return FromPb(out);
}

Result<TxnResponse> EtcdStore::Txn(const TxnRequest& req) {
  pb::TxnRequest in;
  bool writes = false;
  for (const Compare& c : req.compare) ToPb(c, in.add_compare());
  for (const TxnOp& op : req.success) {
    ToPb(op, in.add_success());
    writes |= op.type != TxnOp::Type::kRange;
  }
  for (const TxnOp& op : req.failure) {
    ToPb(op, in.add_failure());
    writes |= op.type != TxnOp::Type::kRange;
  }
  pb::TxnResponse out;
  Status s = impl_->Call(
      writes, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) { return ep.kv->Txn(ctx, in, &out); });
  if (!s.ok()) return s;
  TxnResponse r;
  r.revision = out.header().revision();
  r.succeeded = out.succeeded();
  r.responses.reserve(out.responses_size());
  for (const pb::ResponseOp& op : out.responses()) {
    TxnOpResponse o;
    switch (op.response_case()) {
      case pb::ResponseOp::kResponseRange:
        o.type = TxnOp::Type::kRange;
        o.range = FromPb(op.response_range());
        break;
      case pb::ResponseOp::kResponsePut:
        o.type = TxnOp::Type::kPut;
        o.put = FromPb(op.response_put());
        break;
      case pb::ResponseOp::kResponseDeleteRange:
        o.type = TxnOp::Type::kDelete;
        o.del = FromPb(op.response_delete_range());
        break;
      default: return Status(Code::kInternal, "etcd: unexpected txn response op");
    }
    r.responses.push_back(std::move(o));
  }
  return r;
}

Result<int64_t> EtcdStore::Compact(int64_t revision) {
  pb::CompactionRequest in;
  in.set_revision(revision);
  pb::CompactionResponse out;
  Status s = impl_->Call(true, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) {
    return ep.kv->Compact(ctx, in, &out);
  });
  if (!s.ok()) return s;
  return out.header().revision();
}

std::unique_ptr<Watch> EtcdStore::StartWatch(const WatchRequest& req, WatchCallback cb) {
  if (!impl_->config_error.ok()) return std::make_unique<FailedWatch>(impl_->config_error, std::move(cb));
  auto state = std::make_shared<WatchState>();
  state->store = impl_;
  state->req = req;
  state->cb = std::move(cb);
  if (req.start_revision == 0) {
    // Pin "now" to the call: a linearizable read gives a revision at least that of every write that
    // completed before StartWatch, so those are left out and every later one is delivered. If etcd
    // cannot be read now, the watch starts from the revision current when its stream is created.
    RangeRequest now;
    now.key = req.key.empty() ? std::string(1, '\0') : req.key;
    now.range_end = req.range_end;
    now.count_only = true;
    if (auto r = Range(now); r.ok()) state->req.start_revision = r->revision + 1;
  }
  // The thread shares ownership of the state so that a watch destroyed from its own callback (and
  // then detached) stays valid until the thread returns.
  state->thread = std::thread([state] { state->Run(); });
  return std::make_unique<EtcdWatch>(std::move(state));
}

Result<LeaseGrantResponse> EtcdStore::LeaseGrant(int64_t ttl_seconds, int64_t id) {
  pb::LeaseGrantRequest in;
  in.set_ttl(ttl_seconds);
  in.set_id(id);
  pb::LeaseGrantResponse out;
  Status s = impl_->Call(true, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) {
    return ep.lease->LeaseGrant(ctx, in, &out);
  });
  if (!s.ok()) return s;
  if (!out.error().empty()) return Status(Code::kInternal, "etcd: lease grant: " + out.error());
  return LeaseGrantResponse{out.id(), out.ttl()};
}

Status EtcdStore::LeaseRevoke(int64_t id) {
  pb::LeaseRevokeRequest in;
  in.set_id(id);
  pb::LeaseRevokeResponse out;
  return impl_->Call(true, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) {
    return ep.lease->LeaseRevoke(ctx, in, &out);
  });
}

Result<int64_t> EtcdStore::LeaseKeepAlive(int64_t id) {
  pb::LeaseKeepAliveRequest in;
  in.set_id(id);
  pb::LeaseKeepAliveResponse out;
  // A renewal is idempotent, so any failure may move on to the next endpoint.
  Status s = impl_->Call(false, [&](const Impl::Endpoint& ep, grpc::ClientContext* ctx) {
    auto stream = ep.lease->LeaseKeepAlive(ctx);
    if (stream->Write(in) && stream->Read(&out)) {
      ctx->TryCancel();
      stream->Finish().IgnoreError();
      return grpc::Status::OK;
    }
    return stream->Finish();
  });
  if (!s.ok()) return s;
  if (out.ttl() <= 0) return Status(Code::kNotFound, "etcd: lease " + std::to_string(id) + " not found");
  return out.ttl();
}

}  // namespace rcsim

// Debian's gRPC, protobuf and Abseil are not built with ThreadSanitizer, so TSan cannot see the
// happens-before edges inside them and reports their internals (and buffers handed across their
// threads) as races. Binaries that link this library under TSan ignore races with a frame in those
// libraries; races between rcsim frames are still reported. Only TSan's runtime calls this hook.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name is TSan's, which its runtime looks up.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libgrpc.so\n"
         "race:libgrpc++.so\n"
         "race:libgpr.so\n"
         "race:libabsl_\n"
         "race:libprotobuf.so\n"
         "race:grpc::\n"
         "race:grpc_core::\n"
         "race:google::protobuf::\n"
         "called_from_lib:libgrpc.so\n"
         "called_from_lib:libgpr.so\n";
}
