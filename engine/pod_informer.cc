#include "engine/pod_informer.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

namespace rcsim {

std::optional<int64_t> ResourceVersionNumber(const std::string& rv) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec != std::errc() || ptr != rv.data() + rv.size() || rv.empty()) return std::nullopt;
  return v;
}

ListOptions InformerListOptions(int64_t last_synced_revision, bool last_synced_gone) {
  ListOptions opts;
  if (last_synced_gone || last_synced_revision <= 0) return opts;
  opts.resource_version = std::to_string(last_synced_revision);
  return opts;
}

PodInformer::PodInformer(Options options, ApiClient* api, Executor* executor, Logger* logger,
                         ManagerMetrics* metrics, Handlers handlers)
    : options_(options),
      api_(api),
      executor_(executor),
      logger_(logger),
      metrics_(metrics),
      handlers_(std::move(handlers)),
      backoff_(options_.clock, options_.min_backoff, options_.max_backoff, options_.backoff_reset) {}

PodInformer::~PodInformer() { Stop(); }

void PodInformer::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  std::weak_ptr<int> alive = alive_;
  executor_->Post([this, alive] {
    if (alive.expired()) return;
    List();
  });
}

void PodInformer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  alive_.reset();
  ++generation_;
  watch_.reset();
  if (relist_timer_ != 0) executor_->Cancel(relist_timer_);
  relist_timer_ = 0;
}

PodPtr PodInformer::Get(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : it->second.pod;
}

const PodInformer::PodMap* PodInformer::OwnedBy(const std::string& uid) const {
  auto it = by_owner_.find(uid);
  return it == by_owner_.end() ? nullptr : &it->second.pods;
}

const PodInformer::PodMap* PodInformer::OrphansIn(const std::string& ns) const {
  auto it = orphans_.find(ns);
  return it == orphans_.end() ? nullptr : &it->second.pods;
}

void PodInformer::List() {
  relist_timer_ = 0;
  if (stopped_ || listing_) return;
  listing_ = true;
  uint64_t generation = ++generation_;
  watch_.reset();
  std::weak_ptr<int> alive = alive_;
  Executor* executor = executor_;
  api_->pods().List("", InformerListOptions(synced_revision_, synced_revision_gone_),
                    [this, alive, executor, generation](Result<ObjectList<Pod>> r) {
                      executor->Post([this, alive, generation, r = std::move(r)]() mutable {
                        if (alive.expired() || generation != generation_) return;
                        listing_ = false;
                        OnList(std::move(r));
                      });
                    });
}

void PodInformer::OnList(Result<ObjectList<Pod>> result) {
  if (!result.ok()) {
    logger_->Log(LogLevel::kWarning, "pod informer: list failed: " + result.status().ToString());
    if (result.status().code() == Code::kGone) synced_revision_gone_ = true;
    ScheduleRelist(/*failure=*/true);
    return;
  }
  if (lists_++ > 0) ++metrics_->relists;
  ObjectList<Pod>& list = *result;
  std::optional<int64_t> list_rv = ResourceVersionNumber(list.resource_version);
  synced_revision_gone_ = false;
  if (list_rv) synced_revision_ = std::max(synced_revision_, *list_rv);
  std::unordered_set<std::string> listed;
  listed.reserve(list.items.size());
  for (const PodPtr& pod : list.items) {
    if (pod == nullptr) continue;
    listed.insert(KeyOf(pod->metadata));
    Upsert(pod);
  }
  std::vector<std::string> gone;
  for (const auto& [key, cached] : pods_) {
    if (listed.count(key) != 0) continue;
    std::optional<int64_t> rv = ResourceVersionNumber(cached.pod->metadata.resource_version);
    // A pod changed after the list was served is newer than the list: keep it.
    if (rv && list_rv && *rv > *list_rv) continue;
    gone.push_back(key);
  }
  std::sort(gone.begin(), gone.end());
  for (const auto& key : gone) Remove(key);
  synced_ = true;
  StartWatch(list.resource_version);
  if (handlers_.on_synced) handlers_.on_synced();
}

void PodInformer::StartWatch(const std::string& resource_version) {
  uint64_t generation = ++generation_;
  std::weak_ptr<int> alive = alive_;
  Executor* executor = executor_;
  watch_ = api_->pods().Watch("", ListOptions{}, resource_version,
                              [this, alive, executor, generation](const ApiWatchEvent<Pod>& ev) {
                                executor->Post([this, alive, generation, ev] {
                                  if (alive.expired() || generation != generation_) return;
                                  OnWatchEvent(ev);
                                });
                              });
  if (watch_ == nullptr) ScheduleRelist(/*failure=*/true);
}

void PodInformer::OnWatchEvent(const ApiWatchEvent<Pod>& ev) {
  if (ev.object != nullptr && ev.type != ApiWatchEvent<Pod>::Type::kError) {
    if (std::optional<int64_t> rv = ResourceVersionNumber(ev.object->metadata.resource_version)) {
      synced_revision_ = std::max(synced_revision_, *rv);
    }
  }
  switch (ev.type) {
    case ApiWatchEvent<Pod>::Type::kAdded:
    case ApiWatchEvent<Pod>::Type::kModified:
      backoff_.Reset();
      if (ev.object != nullptr) Upsert(ev.object);
      return;
    case ApiWatchEvent<Pod>::Type::kDeleted:
      backoff_.Reset();
      if (ev.object != nullptr) Remove(KeyOf(ev.object->metadata));
      return;
    case ApiWatchEvent<Pod>::Type::kBookmark: return;
    case ApiWatchEvent<Pod>::Type::kError: break;
  }
  ++generation_;
  watch_.reset();
  if (ev.error.code() == Code::kGone) {
    logger_->Log(LogLevel::kInfo, "pod informer: watch expired (410), re-listing");
    ScheduleRelist(/*failure=*/false);
  } else {
    logger_->Log(LogLevel::kWarning, "pod informer: watch ended: " + ev.error.ToString());
    ScheduleRelist(/*failure=*/true);
  }
}

void PodInformer::ScheduleRelist(bool failure) {
  if (stopped_ || relist_timer_ != 0) return;
  Duration delay = Duration::zero();
  if (failure) {
    delay = backoff_.Failure();
  }
  std::weak_ptr<int> alive = alive_;
  relist_timer_ = executor_->Schedule(delay, [this, alive] {
    if (alive.expired()) return;
    List();
  });
}

void PodInformer::Upsert(const PodPtr& pod) {
  auto [it, inserted] = pods_.try_emplace(KeyOf(pod->metadata));
  Cached& cached = it->second;
  if (inserted) {
    cached.pod = pod;
    Index(it->first, cached);
    if (handlers_.on_add) handlers_.on_add(pod);
    return;
  }
  PodPtr old = cached.pod;
  if (old == pod) return;
  std::optional<int64_t> old_rv = ResourceVersionNumber(old->metadata.resource_version);
  std::optional<int64_t> new_rv = ResourceVersionNumber(pod->metadata.resource_version);
  if (old_rv && new_rv && *new_rv < *old_rv) return;  // stale
  cached.pod = pod;
  if (!Reindex(cached, old)) {
    Unindex(Cached{old, cached.bucket, cached.slot});
    Index(it->first, cached);
  }
  if (handlers_.on_update) handlers_.on_update(old, pod);
}

bool PodInformer::Reindex(Cached& cached, const PodPtr& old) {
  // Most updates (binding, status) keep the controller ref: the pod stays in its bucket, in place, and
  // only the tally moves (what Unindex then Index would do, without the erase and insert).
  const OwnerReference* old_ref = old->metadata.ControllerRef();
  const OwnerReference* ref = cached.pod->metadata.ControllerRef();
  if ((old_ref == nullptr) != (ref == nullptr)) return false;
  if (ref != nullptr && old_ref->uid != ref->uid) return false;
  cached.slot->second = cached.pod;
  if (std::optional<Tracked>& t = cached.bucket->tracked) {
    Count(*old, t->spec, -1, t->tally);
    Count(*cached.pod, t->spec, +1, t->tally);
  }
  return true;
}

void PodInformer::Remove(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const Cached cached = std::move(it->second);
  Unindex(cached);  // first: the bucket's entry views the key erased next
  pods_.erase(it);
  if (handlers_.on_delete) handlers_.on_delete(cached.pod);
}

void PodInformer::Count(const Pod& pod, const ClaimSpec& spec, int64_t sign, Tally& tally) {
  if (pod.metadata.namespace_ != spec.namespace_) return;
  if (!spec.selector.empty() && !SelectorMapMatches(spec.selector, pod.metadata.labels)) {
    if (!pod.metadata.deletion_timestamp) tally.unclaimed += sign;
    return;
  }
  if (!IsActive(pod)) return;
  tally.active += sign;
  if (IsReady(pod)) tally.ready += sign;
  if (spec.template_labels && SelectorMapMatches(*spec.template_labels, pod.metadata.labels)) {
    tally.fully_labeled += sign;
  }
}

PodInformer::Tally PodInformer::TallyOf(const std::string& uid, const ClaimSpec& spec) {
  auto owned = by_owner_.find(uid);
  if (owned == by_owner_.end()) return Tally{};
  std::optional<Tracked>& tracked = owned->second.tracked;
  if (tracked && tracked->spec == spec) return tracked->tally;
  tracked = Tracked{spec, Tally{}};
  for (const auto& [key, pod] : owned->second.pods) Count(*pod, spec, +1, tracked->tally);
  return tracked->tally;
}

void PodInformer::Index(const std::string& key, Cached& cached) {
  const OwnerReference* ref = cached.pod->metadata.ControllerRef();
  Bucket& bucket = ref != nullptr ? by_owner_[ref->uid] : orphans_[cached.pod->metadata.namespace_];
  cached.bucket = &bucket;
  cached.slot = bucket.pods.emplace(std::string_view(key), cached.pod).first;
  if (bucket.tracked) Count(*cached.pod, bucket.tracked->spec, +1, bucket.tracked->tally);
}

void PodInformer::Unindex(const Cached& cached) {
  Bucket& bucket = *cached.bucket;
  bucket.pods.erase(cached.slot);
  if (bucket.tracked) Count(*cached.pod, bucket.tracked->spec, -1, bucket.tracked->tally);
  if (!bucket.pods.empty()) return;
  // The last pod of its bucket: the bucket (and an owner's Tally) goes.
  if (const OwnerReference* ref = cached.pod->metadata.ControllerRef()) {
    by_owner_.erase(ref->uid);
  } else {
    orphans_.erase(cached.pod->metadata.namespace_);
  }
}

}  // namespace rcsim
