#include "registry/registry.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

#include "engine/codec.h"
#include "engine/labels.h"
#include "engine/mutex.h"
#include "engine/node_codec.h"
#include "registry/node_validation.h"
#include "registry/object_size.h"
#include "registry/validation.h"
#include "registry/watch_cache.h"

namespace rcsim {
namespace {

constexpr int kGenerateNameAttempts = 8;
constexpr int kUpdateAttempts = 32;
constexpr std::size_t kGeneratedSuffixLength = 5;
constexpr std::size_t kMaxGenerateNamePrefix = 63 - kGeneratedSuffixLength;
// The result cache starts at kInitialCacheSlots and doubles, emptied, each time a write evicts a live
// entry by collision, up to kCacheSlots: a registry that sees few writes (a simulation run's nodes, a
// fuzzer input) does not pay for 4,096 slots. Both are powers of two.
constexpr std::size_t kInitialCacheSlots = 1 << 4;
constexpr std::size_t kCacheSlots = 1 << 12;
// Keys scanned per store read when a filtered list has a limit.
constexpr int64_t kMinFilteredPage = 256;

template <typename T>
struct Traits;

template <>
struct Traits<Pod> {
  static constexpr const char* kKind = "Pod";
  static constexpr const char* kResource = "pods";
  static constexpr bool kNamespaced = true;
  static constexpr const char* kDefaultPropagation = kPropagationBackground;
  static std::string Prefix(std::string_view ns) { return PodPrefix(ns); }
  static const PodPtr& Typed(const Value& v) { return v.pod(); }
  // The registry's fresh object: the in-memory etcd stamps its revision on it (Value::Stampable).
  static Value ValueOf(std::shared_ptr<Pod> pod) { return Value::Stampable(std::move(pod)); }
  // The fieldSelector fields pods support; nullopt for any other.
  static std::optional<std::string> Field(const Pod& p, std::string_view f) {
    if (f == "metadata.name") return p.metadata.name;
    if (f == "metadata.namespace") return p.metadata.namespace_;
    if (f == "spec.nodeName") return p.spec.node_name;
    if (f == "spec.restartPolicy") return p.spec.restart_policy;
    if (f == "status.phase") return p.status.phase;
    if (f == "status.podIP") return p.status.pod_ip;
    return std::nullopt;
  }
  // kube-apiserver's pod strategy: an unbound or terminated pod goes at once; otherwise the request's
  // grace, else spec.terminationGracePeriodSeconds, else 30 s.
  static int64_t GracePeriod(const Pod& p, const DeleteOptions& opts) {
    if (p.spec.node_name.empty() || IsTerminated(p)) return 0;
    if (opts.grace_period_seconds) return *opts.grace_period_seconds;
    return p.spec.termination_grace_period_seconds.value_or(30);
  }
  static Result<Pod> DecodeBytes(std::string_view bytes) { return DecodePod(bytes); }

  static void PrepareForCreate(Pod& pod) {
    pod.metadata.generation = 0;
    pod.status = PodStatus();
  }
  static Status Validate(const Pod& pod) { return ValidatePod(pod); }
  // Applied to every update (after the immutable metadata has been restored from `stored`).
  static Status PrepareForUpdate(Pod& next, const Pod& stored) {
    next.metadata.generation = stored.metadata.generation;
    if (Status s = ValidatePod(next); !s.ok()) return s;
    if (Status s = ValidatePodUpdate(next, stored); !s.ok()) return s;
    return ValidatePodStatus(next);
  }
};

template <>
struct Traits<ReplicationController> {
  static constexpr const char* kKind = "ReplicationController";
  static constexpr const char* kResource = "replicationcontrollers";
  static constexpr bool kNamespaced = true;
  // kube-apiserver kept the pre-garbage-collector behaviour for core/v1 replication controllers.
  static constexpr const char* kDefaultPropagation = kPropagationOrphan;
  static std::string Prefix(std::string_view ns) { return ControllerPrefix(ns); }
  static const ControllerPtr& Typed(const Value& v) { return v.controller(); }
  static Value ValueOf(std::shared_ptr<ReplicationController> rc) { return Value::Stampable(std::move(rc)); }
  static std::optional<std::string> Field(const ReplicationController& rc, std::string_view f) {
    if (f == "metadata.name") return rc.metadata.name;
    if (f == "metadata.namespace") return rc.metadata.namespace_;
    if (f == "status.replicas") return std::to_string(rc.status.replicas);
    return std::nullopt;
  }
  static int64_t GracePeriod(const ReplicationController&, const DeleteOptions&) { return 0; }
  static Result<ReplicationController> DecodeBytes(std::string_view bytes) { return DecodeController(bytes); }

  // Kubernetes defaults an empty selector to the template's labels whenever it decodes an object.
  // Likewise empty labels default to the template's labels (SetDefaults_ReplicationController).
  static void DefaultSelector(ReplicationController& rc) {
    if (rc.spec.selector.empty() && rc.spec.template_) {
      rc.spec.selector = rc.spec.template_->metadata.labels;
    }
    if (rc.metadata.labels.empty() && rc.spec.template_) {
      rc.metadata.labels = rc.spec.template_->metadata.labels;
    }
  }
  static void PrepareForCreate(ReplicationController& rc) {
    rc.metadata.generation = 1;
    rc.status = ReplicationControllerStatus();
    DefaultSelector(rc);
  }
  static Status Validate(const ReplicationController& rc) { return ValidateController(rc); }
  // Applied to every update (after the immutable metadata has been restored from `stored`).
  static Status PrepareForUpdate(ReplicationController& next, const ReplicationController& stored) {
    DefaultSelector(next);
    next.metadata.generation = stored.metadata.generation + (next.spec == stored.spec ? 0 : 1);
    if (Status s = ValidateController(next); !s.ok()) return s;
    return ValidateControllerStatus(next);
  }
};

template <>
struct Traits<Node> {
  static constexpr const char* kKind = "Node";
  static constexpr const char* kResource = "nodes";
  static constexpr bool kNamespaced = false;
  static constexpr const char* kDefaultPropagation = kPropagationBackground;
  static std::string Prefix(std::string_view) { return NodePrefix(); }
  // Nodes are few and change rarely: they are stored as bytes, never typed.
  static const NodePtr& Typed(const Value&) {
    static const NodePtr kNone;
    return kNone;
  }
  static Value ValueOf(const NodePtr& node) { return Value(EncodeNode(*node)); }
  static Result<Node> DecodeBytes(std::string_view bytes) { return DecodeNode(bytes); }
  static std::optional<std::string> Field(const Node& n, std::string_view f) {
    if (f == "metadata.name") return n.metadata.name;
    if (f == "spec.unschedulable") return n.spec.unschedulable ? "true" : "false";
    return std::nullopt;
  }
  static int64_t GracePeriod(const Node&, const DeleteOptions&) { return 0; }
  // A node agent registers with its status: kept at creation.
  static void PrepareForCreate(Node& node) { node.metadata.generation = 0; }
  static Status Validate(const Node& node) { return ValidateNode(node); }
  static Status PrepareForUpdate(Node& next, const Node& stored) {
    next.metadata.generation = stored.metadata.generation;
    return ValidateNode(next);
  }
};

template <typename T>
Status NotFound(std::string_view name) {
  return Status(Code::kNotFound, std::string(Traits<T>::kResource) + " " + Quote(name) + " not found");
}

template <typename T>
Status Conflict(std::string_view name) {
  return Status(Code::kConflict, "Operation cannot be fulfilled on " + std::string(Traits<T>::kResource) +
                                     " " + Quote(name) +
                                     ": the object has been modified; please apply your changes "
                                     "to the latest version and try again");
}

template <typename T>
Status AlreadyExists(std::string_view name) {
  return Status(Code::kAlreadyExists,
                std::string(Traits<T>::kResource) + " " + Quote(name) + " already exists");
}

// Keeps the fields a client cannot change on update. A uid or creationTimestamp given and different
// from the stored one is an attempt to change it: kInvalid (422), as kube-apiserver's
// ValidateObjectMetaUpdate; left empty, they are filled in.
Status KeepImmutableMeta(ObjectMeta& next, const ObjectMeta& stored, const char* kind) {
  FieldErrors errs;
  if (!next.uid.empty() && next.uid != stored.uid) {
    errs.Invalid("metadata.uid", next.uid, "field is immutable");
  }
  // Compared at the second, the precision of the wire (metav1.Time).
  using std::chrono::floor;
  using std::chrono::seconds;
  if (next.creation_timestamp && stored.creation_timestamp &&
      floor<seconds>(*next.creation_timestamp) != floor<seconds>(*stored.creation_timestamp)) {
    errs.Invalid("metadata.creationTimestamp", FormatRfc3339(*next.creation_timestamp), "field is immutable");
  }
  if (Status s = errs.ToStatus(kind, stored.name); !s.ok()) return s;
  next.uid = stored.uid;
  next.generate_name = stored.generate_name;
  next.creation_timestamp = stored.creation_timestamp;
  next.deletion_timestamp = stored.deletion_timestamp;
  next.deletion_grace_period_seconds = stored.deletion_grace_period_seconds;
  next.resource_version.clear();
  return Status::Ok();
}

// --- continue tokens: base64url("<revision>:<key suffix after the list prefix>") ---

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
  }
  return out;
}

bool Base64UrlDecode(std::string_view in, std::string* out) {
  if (in.size() % 4 == 1) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::find(kB64, kB64 + 64, c);
    if (p == kB64 + 64) return false;
    acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

std::string EncodeContinue(int64_t revision, std::string_view key_suffix) {
  return Base64UrlEncode(std::to_string(revision) + ":" + std::string(key_suffix));
}

Result<std::pair<int64_t, std::string>> DecodeContinue(std::string_view token) {
  const Status bad(Code::kBadRequest, "continue key is not valid");
  std::string raw;
  if (!Base64UrlDecode(token, &raw)) return bad;
  std::size_t colon = raw.find(':');
  if (colon == std::string::npos) return bad;
  auto rev = ParseResourceVersion(std::string_view(raw).substr(0, colon));
  if (!rev.ok() || *rev <= 0) return bad;
  std::string suffix = raw.substr(colon + 1);
  // The suffix stays inside the list prefix: no climbing into another namespace's keys by '/'.
  if (suffix.empty()) return bad;
  return std::make_pair(*rev, std::move(suffix));
}

// True when `meta` already carries `revision` as its resourceVersion (no allocation: it fits SSO).
bool StampedAt(const ObjectMeta& meta, int64_t revision) {
  return !meta.resource_version.empty() && meta.resource_version == std::to_string(revision);
}

// Equal but for the resourceVersion: an update that changed nothing else writes nothing. (A stored
// object carries its version; `obj` had it cleared.)
template <typename T>
bool SameButVersion(T& obj, const T& stored) {
  // Most updates change the status (a node agent's, a controller's): compared first, the whole
  // object is compared only when it is the same.
  if constexpr (requires { obj.status == stored.status; }) {
    if (!(obj.status == stored.status)) return false;
  }
  if (obj.metadata.resource_version == stored.metadata.resource_version) return obj == stored;
  std::string own = std::move(obj.metadata.resource_version);
  obj.metadata.resource_version = stored.metadata.resource_version;
  const bool same = obj == stored;
  obj.metadata.resource_version = std::move(own);
  return same;
}

// `obj` is the registry's own fresh object: a store that keeps typed values stamps its revision on it.
template <typename T>
PutRequest PutOf(const std::string& key, const std::shared_ptr<T>& obj) {
  PutRequest put;
  put.key = key;
  put.value = Traits<T>::ValueOf(obj);
  return put;
}

template <typename T>
bool MatchesOptions(const T& obj, const ListOptions& opts) {
  if (!opts.field_name.empty() && obj.metadata.name != opts.field_name) return false;
  if (!opts.label_selector.Matches(obj.metadata.labels)) return false;
  for (const FieldRequirement& r : opts.fields) {
    if ((Traits<T>::Field(obj, r.field).value_or("") == r.value) != r.equal) return false;
  }
  return true;
}

// kBadRequest naming the first field selector term the resource does not support.
template <typename T>
Status CheckFields(const ListOptions& opts) {
  static const T kProbe{};
  for (const FieldRequirement& r : opts.fields) {
    if (!Traits<T>::Field(kProbe, r.field)) {
      return Status(Code::kBadRequest, "field label not supported: " + r.field);
    }
  }
  return Status::Ok();
}

// The deletion finalizers kube-apiserver sets for DeleteOptions.propagationPolicy: the policy given,
// else the one an existing finalizer already asks for, else the resource's default. True if changed.
bool ApplyPropagationPolicy(ObjectMeta& meta, const std::string& requested, const char* default_policy) {
  auto has = [&](const char* f) {
    return std::find(meta.finalizers.begin(), meta.finalizers.end(), f) != meta.finalizers.end();
  };
  std::string policy = requested;
  if (policy.empty()) {
    if (has(kOrphanFinalizer)) {
      policy = kPropagationOrphan;
    } else if (has(kForegroundFinalizer)) {
      policy = kPropagationForeground;
    } else {
      policy = default_policy;
    }
  }
  std::vector<std::string> next;
  for (const std::string& f : meta.finalizers) {
    if (f != kOrphanFinalizer && f != kForegroundFinalizer) next.push_back(f);
  }
  if (policy == kPropagationOrphan) next.emplace_back(kOrphanFinalizer);
  if (policy == kPropagationForeground) next.emplace_back(kForegroundFinalizer);
  if (std::is_permutation(next.begin(), next.end(), meta.finalizers.begin(), meta.finalizers.end()) &&
      next.size() == meta.finalizers.size()) {
    return false;
  }
  meta.finalizers = std::move(next);
  return true;
}

// An object whose deletion was requested, whose grace period is over and which has no finalizer left
// is removed from the store.
bool ReadyToRemove(const ObjectMeta& meta) {
  return meta.deletion_timestamp && meta.finalizers.empty() &&
         meta.deletion_grace_period_seconds.value_or(0) == 0;
}

}  // namespace

// --- keys ---

std::string PodPrefix(std::string_view ns) {
  std::string p = "/registry/pods/";
  if (!ns.empty()) {
    p += ns;
    p += '/';
  }
  return p;
}

std::string ControllerPrefix(std::string_view ns) {
  std::string p = "/registry/controllers/";
  if (!ns.empty()) {
    p += ns;
    p += '/';
  }
  return p;
}

std::string NodePrefix() { return "/registry/minions/"; }

std::string NodeKey(std::string_view name) {
  std::string k = NodePrefix();
  k += name;
  return k;
}

std::string PodKey(std::string_view ns, std::string_view name) {
  std::string k = PodPrefix(ns);
  k += name;
  return k;
}

std::string ControllerKey(std::string_view ns, std::string_view name) {
  std::string k = ControllerPrefix(ns);
  k += name;
  return k;
}

namespace {

// The revision a list reads at: 0 (the latest) unless resourceVersionMatch=Exact names one.
Result<int64_t> ExactListRevision(const ListOptions& opts) {
  if (opts.resource_version_match != ResourceVersionMatch::kExact) return int64_t{0};
  if (!opts.continue_token.empty()) {
    return Status(Code::kBadRequest, "specifying resource version is not allowed when using continue");
  }
  Result<int64_t> rv = ParseResourceVersion(opts.resource_version);
  if (!rv.ok()) return rv.status();
  if (*rv == 0) {
    return Status(Code::kBadRequest, "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"");
  }
  return *rv;
}

// What a failed read at an exact revision answers, as kube-apiserver does (410 Gone either way).
Status ExactListError(const Status& s, const ListOptions& opts) {
  if (s.code() == Code::kCompacted) {
    return Status(Code::kGone, "too old resource version: " + opts.resource_version);
  }
  if (s.code() == Code::kFutureRevision) {
    return Status(Code::kGone, "too large resource version: " + opts.resource_version);
  }
  return s;
}

}  // namespace

Result<int64_t> ParseResourceVersion(std::string_view rv) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (rv.empty() || ec != std::errc() || ptr != rv.data() + rv.size() || v < 0) {
    return Status(Code::kBadRequest, "invalid resource version " + Quote(rv));
  }
  return v;
}

// --- RegistryContext ---

std::string RegistryContext::NewUid() {
  uint8_t b[16];
  {
    MutexLock lock(rng_mu_);
    for (int i = 0; i < 2; ++i) {
      uint64_t x = rng_->Next();
      for (int j = 0; j < 8; ++j) b[i * 8 + j] = static_cast<uint8_t>(x >> (8 * j));
    }
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0xf];
  }
  return out;
}

void RegistryContext::ReportMalformed(const std::string& key, const Status& why) {
  malformed_values_.fetch_add(1, std::memory_order_relaxed);
  if (log_) log_("registry: skipping " + key + ": its stored value does not decode: " + why.message());
}

std::string RegistryContext::RandomSuffix(int n) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  out.reserve(n);
  MutexLock lock(rng_mu_);
  for (int i = 0; i < n; ++i) out += kAlphabet[rng_->Below(kAlphabet.size())];
  return out;
}

// --- the watch ---

namespace {

template <typename T>
class RegistryWatchImpl final : public RegistryWatch {
 public:
  using Ptr = std::shared_ptr<const T>;
  using EventCallback = typename ResourceRegistry<T>::EventCallback;

  // Shared with the store's watch callback; outlives it.
  struct State {
    ResourceRegistry<T>* registry = nullptr;
    ListOptions opts;
    EventCallback on_event;
    Mutex mu;  // serialises deliveries (initial list, then store events)
    bool ended GUARDED_BY(mu) = false;

    // Delivers one event.
    void Emit(typename ApiWatchEvent<T>::Type type, Ptr object) REQUIRES(mu) {
      ApiWatchEvent<T> ev;
      ev.type = type;
      ev.object = std::move(object);
      on_event(ev);
    }
    void Fail(const Status& status) REQUIRES(mu) {
      ended = true;
      ApiWatchEvent<T> ev;
      ev.type = ApiWatchEvent<T>::Type::kError;
      ev.error = status;
      on_event(ev);
    }

    void OnResponse(const WatchResponse& resp) {
      MutexLock lock(mu);
      if (ended) return;
      for (const WatchEvent& ev : resp.events) {
        if (!Translate(ev)) return;
      }
      if (resp.canceled) {
        if (resp.compact_revision > 0) {
          Fail(Status(Code::kGone, "too old resource version (compacted at revision " +
                                       std::to_string(resp.compact_revision) + ")"));
        } else if (!resp.status.ok()) {
          Fail(resp.status);
        } else {
          Fail(Status(Code::kUnavailable, "watch closed by the store"));
        }
      }
    }

    // False if the watch ended.
    bool Translate(const WatchEvent& ev) REQUIRES(mu) {
      using Type = typename ApiWatchEvent<T>::Type;
      // A value that does not decode is skipped and reported, as a list leaves it out: the watch
      // goes on. The client saw the previous state (if any) as it was: it becomes absent.
      Ptr prev;
      if (ev.prev_kv) {
        auto p = registry->StoredAt(*ev.prev_kv);
        if (!p.ok()) {
          registry->context()->ReportMalformed(ev.prev_kv->key, p.status());
        } else if (MatchesOptions(**p, opts)) {
          prev = std::move(*p);
        }
      }
      const int64_t rev = ev.kv.mod_revision;
      if (ev.type == WatchEvent::Type::kDelete) {
        if (prev) Emit(Type::kDeleted, registry->WithRevision(ev.kv.key, prev, rev, true));
        return true;
      }
      auto cur = registry->StoredAt(ev.kv);
      if (!cur.ok()) {
        registry->context()->ReportMalformed(ev.kv.key, cur.status());
        if (prev) Emit(Type::kDeleted, registry->WithRevision(ev.kv.key, prev, rev, false));
        return true;
      }
      if (MatchesOptions(**cur, opts)) {
        Emit(prev ? Type::kModified : Type::kAdded, registry->WithRevision(ev.kv.key, *cur, rev, true));
      } else if (prev) {
        // Stopped matching: the last matching state, at the revision it stopped.
        Emit(Type::kDeleted, registry->WithRevision(ev.kv.key, prev, rev, false));
      }
      return true;
    }
  };

  RegistryWatchImpl(std::shared_ptr<State> state) : state_(std::move(state)) {}
  ~RegistryWatchImpl() override { store_watch_.reset(); }

  std::shared_ptr<State> state_;
  std::unique_ptr<Watch> store_watch_;  // destroyed first: its callbacks use state_
};

}  // namespace

// --- ResourceRegistry<T> ---

template <typename T>
ResourceRegistry<T>::ResourceRegistry(RegistryContext* ctx) : ctx_(ctx), cache_(kInitialCacheSlots) {}

template <typename T>
std::size_t ResourceRegistry<T>::SlotIndex(std::string_view key, int64_t revision) const {
  const std::size_t h =
      std::hash<std::string_view>()(key) ^ (static_cast<std::size_t>(revision) * 0x9e3779b97f4a7c15ULL);
  return (h ^ (h >> 29)) & (cache_.size() - 1);
}

template <typename T>
std::size_t ResourceRegistry<T>::cached_bytes() {
  MutexLock lock(cache_mu_);
  return cache_bytes_;
}

template <typename T>
std::size_t ResourceRegistry<T>::cache_slots() {
  MutexLock lock(cache_mu_);
  return cache_.size();
}

template <typename T>
std::size_t ResourceRegistry<T>::cache_budget() {
  MutexLock lock(cache_mu_);
  return cache_budget_;
}

template <typename T>
void ResourceRegistry<T>::set_cache_budget(std::size_t bytes) {
  MutexLock lock(cache_mu_);
  cache_budget_ = bytes;
  EvictOverBudget(0);
}

template <typename T>
void ResourceRegistry<T>::EvictOverBudget(std::size_t incoming) {
  while (cache_bytes_ + incoming > cache_budget_) {
    CacheSlot& victim = cache_[cache_hand_++ & (cache_.size() - 1)];
    cache_bytes_ -= victim.bytes;
    victim = CacheSlot();
  }
}

template <typename T>
typename ResourceRegistry<T>::Ptr ResourceRegistry<T>::CachedStored(const std::string& key,
                                                                    int64_t revision) {
  MutexLock lock(cache_mu_);
  const CacheSlot& slot = cache_[SlotIndex(key, revision)];
  if (slot.revision == revision && slot.key == key) return slot.stored;
  return nullptr;
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::Stored(const Value& value,
                                                                      const std::string& key) {
  if (const auto& typed = Traits<T>::Typed(value)) return Ptr(typed);
  auto decoded = Traits<T>::DecodeBytes(value.bytes());
  if (!decoded.ok()) {
    return Status(Code::kInternal, "cannot decode " + key + ": " + decoded.status().message());
  }
  decoded->metadata.resource_version.clear();
  return Ptr(std::make_shared<const T>(std::move(*decoded)));
}

template <typename T>
typename ResourceRegistry<T>::Ptr ResourceRegistry<T>::WithRevision(const std::string& key, const Ptr& stored,
                                                                    int64_t revision, bool cache) {
  // The in-memory etcd stamped the object it stored (Value::Stampable): it is served as it is.
  if (StampedAt(stored->metadata, revision)) return stored;
  if (cache) {
    MutexLock lock(cache_mu_);
    const CacheSlot& slot = cache_[SlotIndex(key, revision)];
    if (slot.revision == revision && slot.key == key) return slot.object;
  }
  auto copy = std::make_shared<T>(*stored);
  copy->metadata.resource_version = std::to_string(revision);
  Ptr out = std::move(copy);
  if (cache) {
    // The slot keeps `stored` and its stamped copy alive (deleted objects too): both count against
    // the byte budget. An object over a sixteenth of the budget is not cached.
    const std::size_t bytes = 2 * ApproxObjectBytes(*out);
    MutexLock lock(cache_mu_);
    if (cache_[SlotIndex(key, revision)].revision != 0 && cache_.size() < kCacheSlots) {
      std::vector<CacheSlot>(cache_.size() * 2).swap(cache_);  // a collision: grow, empty
      cache_bytes_ = 0;
      cache_hand_ = 0;
    }
    CacheSlot& slot = cache_[SlotIndex(key, revision)];
    cache_bytes_ -= slot.bytes;
    slot = CacheSlot();
    if (bytes <= cache_budget_ / 16) {
      EvictOverBudget(bytes);
      slot.key = key;
      slot.revision = revision;
      slot.stored = stored;
      slot.object = out;
      slot.bytes = bytes;
      cache_bytes_ += bytes;
    }
  }
  return out;
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::StoredAt(const KeyValue& kv) {
  if (Traits<T>::Typed(kv.value) == nullptr) {
    if (Ptr cached = CachedStored(kv.key, kv.mod_revision)) return cached;
  }
  return Stored(kv.value, kv.key);
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::FromKv(const KeyValue& kv) {
  // Bytes are decoded at most once per (key, revision) while the cache holds them.
  auto stored = StoredAt(kv);
  if (!stored.ok()) return stored.status();
  return WithRevision(kv.key, *stored, kv.mod_revision, true);
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::Get(const std::string& ns,
                                                                   const std::string& name) {
  if ((Traits<T>::kNamespaced && ns.empty()) || name.empty()) return NotFound<T>(name);
  auto got = ctx_->store()->Get(Traits<T>::Prefix(ns) + name);
  if (!got.ok()) return got.status();
  if (!got->has_value()) return NotFound<T>(name);
  return FromKv(**got);
}

template <typename T>
Result<ObjectList<T>> ResourceRegistry<T>::List(const std::string& ns, const ListOptions& opts) {
  if (opts.limit < 0) return Status(Code::kBadRequest, "limit must be non-negative");
  if (Status s = CheckFields<T>(opts); !s.ok()) return s;
  Result<int64_t> exact = ExactListRevision(opts);
  if (!exact.ok()) return exact.status();
  const std::string prefix = Traits<T>::Prefix(ns);
  ObjectList<T> out;

  if ((!Traits<T>::kNamespaced || !ns.empty()) && !opts.field_name.empty() && opts.continue_token.empty()) {
    // metadata.name in one namespace: one key.
    RangeRequest one;
    one.key = prefix + opts.field_name;
    one.revision = *exact;
    auto r = ctx_->store()->Range(one);
    if (!r.ok()) return ExactListError(r.status(), opts);
    out.resource_version = std::to_string(*exact > 0 ? *exact : r->revision);
    for (const KeyValue& kv : r->kvs) {
      auto obj = FromKv(kv);
      if (!obj.ok()) {
        ctx_->ReportMalformed(kv.key, obj.status());
        continue;
      }
      if (MatchesOptions(**obj, opts)) out.items.push_back(std::move(*obj));
    }
    return out;
  }

  int64_t revision = *exact;
  std::string start = prefix;
  if (!opts.continue_token.empty()) {
    auto token = DecodeContinue(opts.continue_token);
    if (!token.ok()) return token.status();
    revision = token->first;
    start += token->second;
  }
  const std::string end = PrefixEnd(prefix);
  const bool filtered = !opts.label_selector.Empty() || !opts.field_name.empty() || !opts.fields.empty();
  const int64_t page = opts.limit == 0 ? 0 : (filtered ? std::max(opts.limit, kMinFilteredPage) : opts.limit);

  while (true) {
    RangeRequest req;
    req.key = start;
    req.range_end = end;
    req.limit = page;
    req.revision = revision;
    auto r = ctx_->store()->Range(req);
    if (!r.ok()) {
      if (*exact > 0) return ExactListError(r.status(), opts);
      if (r.status().code() == Code::kCompacted) {
        return Status(Code::kGone,
                      "The provided continue parameter is too old to display a consistent list "
                      "result. You can start a new list without the continue parameter.");
      }
      if (r.status().code() == Code::kFutureRevision) {  // only a forged token names one
        return Status(Code::kGone,
                      "The provided continue parameter names a revision newer than the store's. You "
                      "can start a new list without the continue parameter.");
      }
      return r.status();
    }
    if (revision == 0) revision = r->revision;
    for (std::size_t i = 0; i < r->kvs.size(); ++i) {
      const KeyValue& kv = r->kvs[i];
      if (filtered) {
        auto stored = StoredAt(kv);
        if (!stored.ok()) {
          ctx_->ReportMalformed(kv.key, stored.status());
          continue;
        }
        if (!MatchesOptions(**stored, opts)) continue;
      }
      auto obj = FromKv(kv);
      if (!obj.ok()) {
        ctx_->ReportMalformed(kv.key, obj.status());
        continue;
      }
      out.items.push_back(std::move(*obj));
      if (opts.limit > 0 && static_cast<int64_t>(out.items.size()) == opts.limit) {
        if (i + 1 < r->kvs.size() || r->more) {
          out.continue_token = EncodeContinue(revision, kv.key.substr(prefix.size()) + '\0');
        }
        out.resource_version = std::to_string(revision);
        return out;
      }
    }
    if (!r->more || r->kvs.empty()) break;
    start = r->kvs.back().key + '\0';
  }
  out.resource_version = std::to_string(revision);
  return out;
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::Create(const std::string& ns, T object) {
  if (!object.metadata.namespace_.empty() && object.metadata.namespace_ != ns) {
    return Status(Code::kBadRequest,
                  "the namespace of the provided object does not match the namespace sent on the "
                  "request");
  }
  auto next = std::make_shared<T>(std::move(object));
  ObjectMeta& meta = next->metadata;
  meta.namespace_ = ns;
  meta.uid = ctx_->NewUid();
  meta.creation_timestamp = ctx_->Now();
  meta.resource_version.clear();
  meta.deletion_timestamp.reset();
  meta.deletion_grace_period_seconds.reset();
  Traits<T>::PrepareForCreate(*next);
  const bool generate = meta.name.empty() && !meta.generate_name.empty();
  const std::string base = meta.generate_name.substr(0, kMaxGenerateNamePrefix);

  for (int attempt = 0;; ++attempt) {
    if (generate) meta.name = base + ctx_->RandomSuffix(kGeneratedSuffixLength);
    if (attempt == 0) {
      if (Status s = Traits<T>::Validate(*next); !s.ok()) return s;
    }
    std::string key = Traits<T>::Prefix(ns) + meta.name;
    TxnRequest txn;
    txn.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
    txn.success.push_back(TxnOp::Put(PutOf(key, next)));
    auto r = ctx_->store()->Txn(txn);
    if (!r.ok()) return r.status();
    if (r->succeeded) return WithRevision(key, next, r->revision, true);
    if (!generate || attempt + 1 >= kGenerateNameAttempts) return AlreadyExists<T>(meta.name);
    // The store did not keep the value of a failed Txn: `next` is ours again.
  }
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::TryUpdate(
    const std::string& key, const std::string& name, const Ptr& stored, int64_t revision, bool verified,
    const std::function<Result<std::shared_ptr<T>>(const T& stored)>& mutate, Attempt* attempt,
    bool dry_run) {
  *attempt = verified ? Attempt::kDone : Attempt::kUnverified;
  auto next = mutate(*stored);
  if (!next.ok()) return next.status();
  std::shared_ptr<T> obj = std::move(*next);
  if (Status s = KeepImmutableMeta(obj->metadata, stored->metadata, Traits<T>::kKind); !s.ok()) return s;
  if (Status s = Traits<T>::PrepareForUpdate(*obj, *stored); !s.ok()) return s;
  if (SameButVersion(*obj, *stored)) return WithRevision(key, stored, revision, true);
  // Not cached: the cache holds what the key held at `revision`, which a dry run did not change.
  if (dry_run) return WithRevision(key, obj, revision, /*cache=*/false);
  // The update removed the last finalizer of an object whose deletion is due: it goes now.
  const bool remove = ReadyToRemove(obj->metadata);
  TxnRequest txn;
  txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, revision));
  if (remove) {
    DeleteRequest del;
    del.key = key;
    txn.success.push_back(TxnOp::Delete(std::move(del)));
  } else {
    txn.success.push_back(TxnOp::Put(PutOf(key, obj)));
  }
  RangeRequest exists;
  exists.key = key;
  exists.count_only = true;
  txn.failure.push_back(TxnOp::Get(std::move(exists)));
  auto r = ctx_->store()->Txn(txn);
  *attempt = Attempt::kDone;
  if (!r.ok()) return r.status();
  if (r->succeeded) return WithRevision(key, obj, r->revision, !remove);
  if (r->responses.empty() || r->responses.front().range.count == 0) return NotFound<T>(name);
  *attempt = Attempt::kRaced;
  return Conflict<T>(name);
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::GuaranteedUpdate(
    const std::string& ns, const std::string& name, const std::string& expected_rv,
    const std::function<Result<std::shared_ptr<T>>(const T& stored)>& mutate, bool dry_run) {
  int64_t expected = 0;
  if (!expected_rv.empty()) {
    auto rv = ParseResourceVersion(expected_rv);
    if (!rv.ok()) return rv.status();
    expected = *rv;
  }
  const std::string key = Traits<T>::Prefix(ns) + name;
  Attempt attempt = Attempt::kDone;
  if (expected != 0 && !dry_run) {  // a dry run has no Txn to check the cached revision
    // The caller read `expected`; if this registry still has what the key held then, the Txn's
    // compare checks that it is current and no read is needed.
    if (Ptr cached = CachedStored(key, expected)) {
      auto r = TryUpdate(key, name, cached, expected, false, mutate, &attempt);
      if (attempt != Attempt::kUnverified) return r;
    }
  }
  for (int i = 0; i < kUpdateAttempts; ++i) {
    auto got = ctx_->store()->Get(key);
    if (!got.ok()) return got.status();
    if (!got->has_value()) return NotFound<T>(name);
    const KeyValue& kv = **got;
    if (expected != 0 && expected != kv.mod_revision) return Conflict<T>(name);
    auto stored = StoredAt(kv);
    if (!stored.ok()) return stored.status();
    auto r = TryUpdate(key, name, *stored, kv.mod_revision, true, mutate, &attempt, dry_run);
    if (attempt != Attempt::kRaced || expected != 0) return r;
  }
  return Conflict<T>(name);
}

namespace {

Status CheckUpdateTarget(const ObjectMeta& meta, const char* kind, bool namespaced) {
  FieldErrors errs;
  if (meta.name.empty()) errs.Required("metadata.name");
  if (namespaced && meta.namespace_.empty()) errs.Required("metadata.namespace");
  return errs.ToStatus(kind, meta.name);
}

}  // namespace

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::Update(T object, bool dry_run) {
  if (Status s = CheckUpdateTarget(object.metadata, Traits<T>::kKind, Traits<T>::kNamespaced); !s.ok()) {
    return s;
  }
  const std::string ns = object.metadata.namespace_;
  const std::string name = object.metadata.name;
  const std::string rv = object.metadata.resource_version;
  // The caller's object is the working copy; every attempt overwrites what it takes from storage.
  auto work = std::make_shared<T>(std::move(object));
  return GuaranteedUpdate(
      ns, name, rv,
      [&](const T& stored) -> Result<std::shared_ptr<T>> {
        work->status = stored.status;
        return work;
      },
      dry_run);
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::UpdateStatus(T object, bool dry_run) {
  if (Status s = CheckUpdateTarget(object.metadata, Traits<T>::kKind, Traits<T>::kNamespaced); !s.ok()) {
    return s;
  }
  const std::string ns = object.metadata.namespace_;
  const std::string name = object.metadata.name;
  const std::string rv = object.metadata.resource_version;
  // The caller's object is the working copy: assigning over its metadata and spec mostly reuses
  // their storage.
  auto work = std::make_shared<T>(std::move(object));
  return GuaranteedUpdate(
      ns, name, rv,
      [&](const T& stored) -> Result<std::shared_ptr<T>> {
        work->metadata = stored.metadata;
        work->spec = stored.spec;
        return work;
      },
      dry_run);
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::PatchOwnerReferences(
    const std::string& ns, const std::string& name, const OwnerReferencePatch& patch) {
  if (patch.uid.empty()) {
    return Status(Code::kBadRequest, "an ownerReferences patch needs the object's uid as its precondition");
  }
  return GuaranteedUpdate(ns, name, "", [&](const T& stored) -> Result<std::shared_ptr<T>> {
    auto next = std::make_shared<T>(stored);
    // The precondition: the update rules refuse a uid other than the stored one (422).
    next->metadata.uid = patch.uid;
    std::vector<OwnerReference>& refs = next->metadata.owner_references;
    if (!patch.remove_uid.empty()) {
      std::erase_if(refs, [&patch](const OwnerReference& ref) { return ref.uid == patch.remove_uid; });
    }
    if (patch.add) {
      auto same = std::find_if(refs.begin(), refs.end(),
                               [&patch](const OwnerReference& ref) { return ref.uid == patch.add->uid; });
      if (same != refs.end()) {
        *same = *patch.add;
      } else {
        refs.push_back(*patch.add);
      }
    }
    return next;
  });
}

template <typename T>
Result<typename ResourceRegistry<T>::Ptr> ResourceRegistry<T>::Delete(const std::string& ns,
                                                                      const std::string& name,
                                                                      const DeleteOptions& opts) {
  auto r = DeleteReporting(ns, name, opts);
  if (!r.ok()) return r.status();
  return std::move(r->object);
}

template <typename T>
typename ResourceRegistry<T>::DeleteOutcome ResourceRegistry<T>::DeletedOutcome(const KeyValue& kv,
                                                                                int64_t revision) {
  auto obj = FromKv(kv);
  if (obj.ok()) return DeleteOutcome{std::move(*obj), Status::Ok()};
  auto minimal = std::make_shared<T>();
  const std::string_view rest = std::string_view(kv.key).substr(Traits<T>::Prefix("").size());
  const std::size_t slash = Traits<T>::kNamespaced ? rest.find('/') : std::string_view::npos;
  if (!Traits<T>::kNamespaced) {
    minimal->metadata.name = std::string(rest);
  } else {
    minimal->metadata.namespace_ = std::string(rest.substr(0, slash));
    if (slash != std::string_view::npos) minimal->metadata.name = std::string(rest.substr(slash + 1));
  }
  minimal->metadata.resource_version = std::to_string(revision);
  return DeleteOutcome{std::move(minimal), obj.status()};
}

template <typename T>
Result<typename ResourceRegistry<T>::DeleteOutcome> ResourceRegistry<T>::DeleteReporting(
    const std::string& ns, const std::string& name, const DeleteOptions& opts) {
  if ((Traits<T>::kNamespaced && ns.empty()) || name.empty()) return NotFound<T>(name);
  if (Status s = ValidateDeleteOptions(opts); !s.ok()) return s;
  const std::string key = Traits<T>::Prefix(ns) + name;
  for (int attempt = 0; attempt < kUpdateAttempts; ++attempt) {
    auto got = ctx_->store()->Get(key);
    if (!got.ok()) return got.status();
    if (!got->has_value()) return NotFound<T>(name);
    const KeyValue& kv = **got;
    const std::string stored_rv = std::to_string(kv.mod_revision);
    if (!opts.precondition_resource_version.empty() && opts.precondition_resource_version != stored_rv) {
      return Status(Code::kConflict, "Precondition failed: ResourceVersion in precondition: " +
                                         opts.precondition_resource_version +
                                         ", ResourceVersion in object meta: " + stored_rv);
    }
    auto stored = StoredAt(kv);
    if (!stored.ok()) {
      // An undecodable value is deleted at once (no grace period or finalizers can be read from it):
      // that is how an operator gets rid of it.
      if (!opts.precondition_uid.empty()) {
        return Status(Code::kConflict, "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                           ", but the stored object does not decode (" +
                                           stored.status().message() + ")");
      }
      if (opts.dry_run) return DeletedOutcome(kv, kv.mod_revision);
      TxnRequest txn;
      txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, kv.mod_revision));
      DeleteRequest del;
      del.key = key;
      txn.success.push_back(TxnOp::Delete(std::move(del)));
      auto r = ctx_->store()->Txn(txn);
      if (!r.ok()) return r.status();
      if (r->succeeded) return DeletedOutcome(kv, kv.mod_revision);
      continue;
    }
    const ObjectMeta& meta = (*stored)->metadata;
    if (!opts.precondition_uid.empty() && opts.precondition_uid != meta.uid) {
      return Status(Code::kConflict, "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                         ", UID in object meta: " + meta.uid.str());
    }
    // What the deletion makes of the object: finalizers per propagationPolicy, then the deletion
    // fields (kube-apiserver's BeforeDelete): deletionTimestamp is when the grace period ends, and a
    // second request may only shorten it.
    auto next = std::make_shared<T>(**stored);
    ObjectMeta& m = next->metadata;
    bool changed = ApplyPropagationPolicy(m, opts.propagation_policy, Traits<T>::kDefaultPropagation);
    const int64_t grace = Traits<T>::GracePeriod(**stored, opts);
    const TimePoint due = ctx_->Now() + std::chrono::seconds(grace);
    if (!m.deletion_timestamp) {
      m.deletion_timestamp = due;
      m.deletion_grace_period_seconds = grace;
      changed = true;
    } else if (grace < m.deletion_grace_period_seconds.value_or(0)) {
      m.deletion_timestamp = std::min(*m.deletion_timestamp, due);
      m.deletion_grace_period_seconds = grace;
      changed = true;
    }
    const bool remove = ReadyToRemove(m);
    if (opts.dry_run) {  // what the deletion would answer, at the stored revision
      if (remove || !changed)
        return DeleteOutcome{WithRevision(key, *stored, kv.mod_revision, true), Status::Ok()};
      return DeleteOutcome{WithRevision(key, next, kv.mod_revision, /*cache=*/false), Status::Ok()};
    }
    TxnRequest txn;
    txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, kv.mod_revision));
    if (remove) {
      DeleteRequest del;
      del.key = key;
      txn.success.push_back(TxnOp::Delete(std::move(del)));
    } else if (changed) {
      txn.success.push_back(TxnOp::Put(PutOf(key, next)));
    } else {
      // already being deleted
      return DeleteOutcome{WithRevision(key, *stored, kv.mod_revision, true), Status::Ok()};
    }
    auto r = ctx_->store()->Txn(txn);
    if (!r.ok()) return r.status();
    if (!r->succeeded) continue;
    if (remove) return DeleteOutcome{WithRevision(key, *stored, kv.mod_revision, true), Status::Ok()};
    return DeleteOutcome{WithRevision(key, next, r->revision, true), Status::Ok()};
  }
  return Conflict<T>(name);
}

template <typename T>
Result<std::unique_ptr<RegistryWatch>> ResourceRegistry<T>::Watch(const std::string& ns,
                                                                  const ListOptions& opts,
                                                                  const std::string& resource_version,
                                                                  EventCallback on_event) {
  using Impl = RegistryWatchImpl<T>;
  const bool initial = resource_version.empty() || resource_version == "0";
  int64_t requested = 0;
  if (!initial) {
    auto rv = ParseResourceVersion(resource_version);
    if (!rv.ok()) return rv.status();
    requested = *rv;
  }
  int64_t start_revision = 0;
  auto state = std::make_shared<typename Impl::State>();
  state->registry = this;
  if (Status s = CheckFields<T>(opts); !s.ok()) return s;
  state->opts.label_selector = opts.label_selector;
  state->opts.field_name = opts.field_name;
  state->opts.fields = opts.fields;
  state->on_event = std::move(on_event);

  WatchRequest wreq;
  if ((!Traits<T>::kNamespaced || !ns.empty()) && !opts.field_name.empty()) {
    wreq.key = Traits<T>::Prefix(ns) + opts.field_name;
  } else {
    wreq.key = Traits<T>::Prefix(ns);
    wreq.range_end = PrefixEnd(wreq.key);
  }
  wreq.prev_kv = true;

  // Held across the initial list and the watch start, so that store events queue behind the
  // initial ADDED events.
  MutexLock lock(state->mu);
  RangeResponse listed;
  if (initial) {
    RangeRequest req;
    req.key = wreq.key;
    req.range_end = wreq.range_end;
    auto r = ctx_->store()->Range(req);
    if (!r.ok()) return r.status();
    listed = std::move(*r);
    start_revision = listed.revision + 1;
  } else {
    // A resourceVersion no list ever returned (forged, or from before etcd was restored) would wait
    // for a revision that may never come (and INT64_MAX + 1 overflows): the client must re-list.
    RangeRequest now;  // one key, for the store's revision: O(1), unlike counting the prefix
    now.key = wreq.key;
    now.keys_only = true;
    auto r = ctx_->store()->Range(now);
    if (!r.ok()) return r.status();
    if (requested > r->revision) {
      return Status(Code::kGone, "too large resource version: " + resource_version +
                                     ", current: " + std::to_string(r->revision));
    }
    start_revision = requested + 1;
  }
  wreq.start_revision = start_revision;
  auto impl = std::make_unique<Impl>(state);
  impl->store_watch_ =
      ctx_->store()->StartWatch(wreq, [state](const WatchResponse& resp) { state->OnResponse(resp); });
  if (!impl->store_watch_) return Status(Code::kUnavailable, "store is shut down");
  for (const KeyValue& kv : listed.kvs) {
    auto stored = StoredAt(kv);
    if (!stored.ok()) {
      ctx_->ReportMalformed(kv.key, stored.status());
      continue;
    }
    if (!MatchesOptions(**stored, state->opts)) continue;
    state->Emit(ApiWatchEvent<T>::Type::kAdded, WithRevision(kv.key, *stored, kv.mod_revision, true));
  }
  return std::unique_ptr<RegistryWatch>(std::move(impl));
}

template <typename T>
bool ResourceRegistry<T>::Matches(const T& obj, const ListOptions& opts) {
  return MatchesOptions(obj, opts);
}

template <typename T>
Status ResourceRegistry<T>::CheckFieldSelector(const ListOptions& opts) {
  return CheckFields<T>(opts);
}

template <typename T>
std::optional<std::string> ResourceRegistry<T>::Field(const T& obj, std::string_view field) {
  return Traits<T>::Field(obj, field);
}

template class ResourceRegistry<Pod>;
template class ResourceRegistry<ReplicationController>;
template class ResourceRegistry<Node>;

// --- Registry ---

Registry::Registry(Store* store, Clock* clock, Rng* rng)
    : ctx_(store, clock, rng),
      pods_(&ctx_),
      controllers_(&ctx_),
      nodes_(&ctx_),
      pod_cache_(std::make_unique<WatchCache<Pod>>(&pods_, store, PodPrefix(""))),
      controller_cache_(
          std::make_unique<WatchCache<ReplicationController>>(&controllers_, store, ControllerPrefix(""))) {}

Registry::~Registry() = default;

Status Registry::StartWatchCaches() {
  if (Status s = pod_cache_->Start(); !s.ok()) return s;
  return controller_cache_->Start();
}

Result<PodPtr> Registry::BindPod(const std::string& ns, const Binding& binding) {
  if (Status s = ValidateBinding(binding); !s.ok()) return s;
  const std::string& name = binding.metadata.name;
  const TimePoint now = ctx_.Now();
  return pods_.GuaranteedUpdate(ns, name, "", [&](const Pod& stored) -> Result<std::shared_ptr<Pod>> {
    if (!binding.metadata.uid.empty() && binding.metadata.uid != stored.metadata.uid) {
      return Status(Code::kConflict,
                    "Precondition failed: UID in precondition: " + binding.metadata.uid.str() +
                        ", UID in object meta: " + stored.metadata.uid.str());
    }
    if (stored.metadata.deletion_timestamp) {
      return Status(Code::kConflict,
                    "pod " + Quote(name) + " is being deleted, cannot be assigned to a host");
    }
    if (!stored.spec.node_name.empty()) {
      return Status(Code::kConflict,
                    "pod " + name + " is already assigned to node " + Quote(stored.spec.node_name));
    }
    auto next = std::make_shared<Pod>(stored);
    next->spec.node_name = binding.target_name;
    PodCondition* scheduled = nullptr;
    for (PodCondition& c : next->status.conditions) {
      if (c.type == "PodScheduled") scheduled = &c;
    }
    if (scheduled == nullptr) {
      next->status.conditions.emplace_back();
      scheduled = &next->status.conditions.back();
      scheduled->type = "PodScheduled";
    }
    if (scheduled->status != "True") scheduled->last_transition_time = now;
    scheduled->status = "True";
    scheduled->reason.clear();
    scheduled->message.clear();
    return next;
  });
}

namespace {

Scale ScaleOf(const ReplicationController& rc) {
  Scale s;
  s.metadata.name = rc.metadata.name;
  s.metadata.namespace_ = rc.metadata.namespace_;
  s.metadata.uid = rc.metadata.uid;
  s.metadata.resource_version = rc.metadata.resource_version;
  s.metadata.creation_timestamp = rc.metadata.creation_timestamp;
  s.spec_replicas = rc.spec.replicas;
  s.status_replicas = rc.status.replicas;
  s.status_selector = FormatSelectorMap(rc.spec.selector);
  return s;
}

}  // namespace

Result<Scale> Registry::GetScale(const std::string& ns, const std::string& name) {
  auto rc = controllers_.Get(ns, name);
  if (!rc.ok()) return rc.status();
  return ScaleOf(**rc);
}

Result<Scale> Registry::UpdateScale(const std::string& ns, const std::string& name, const Scale& scale,
                                    bool dry_run) {
  if (scale.spec_replicas < 0) {
    FieldErrors errs;
    errs.Invalid("spec.replicas", std::to_string(scale.spec_replicas), "must be greater than or equal to 0");
    return errs.ToStatus("Scale.autoscaling", name);
  }
  const int32_t replicas = scale.spec_replicas;
  auto rc = controllers_.GuaranteedUpdate(
      ns, name, scale.metadata.resource_version,
      [replicas](const ReplicationController& stored) -> Result<std::shared_ptr<ReplicationController>> {
        auto next = std::make_shared<ReplicationController>(stored);
        next->spec.replicas = replicas;
        return next;
      },
      dry_run);
  if (!rc.ok()) return rc.status();
  return ScaleOf(**rc);
}

}  // namespace rcsim
