#include "harness/world_monitor.h"

#include <algorithm>

#include "engine/labels.h"
#include "engine/replication_manager.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

// Appends `p` to a change-only series: a point at the same instant replaces the last one, a point
// equal in value to the last one is dropped.
void AppendPoint(std::vector<SeriesPoint>* series, SeriesPoint p) {
  auto same_values = [](const SeriesPoint& a, const SeriesPoint& b) {
    return a.desired == b.desired && a.active == b.active && a.running == b.running;
  };
  if (!series->empty() && series->back().t == p.t) {
    series->back() = p;
    if (series->size() >= 2 && same_values((*series)[series->size() - 2], p)) series->pop_back();
    return;
  }
  if (!series->empty() && same_values(series->back(), p)) return;
  series->push_back(p);
}

// Folds one state of a controller, holding from `at`, into a window.
void Fold(WorldMonitor::Window* w, const WorldMonitor::Counts& c, Duration at) {
  if (!w->any || c.active > w->max_active) {
    w->max_active = c.active;
    w->max_active_at = at;
  }
  if (!w->any || c.ready < w->min_ready) {
    w->min_ready = c.ready;
    w->min_ready_at = at;
  }
  w->any = true;
}

// A controller's counts changed at `now` from `before` (held since the previous change) to `after`.
void Advance(WorldMonitor::Window* w, const WorldMonitor::Counts& before, const WorldMonitor::Counts& after,
             Duration now) {
  if (now < w->from) return;
  if (!w->opened) {
    w->opened = true;
    if (now > w->from) Fold(w, before, w->from);  // `before` held at `from`
  }
  if (now <= w->until) Fold(w, after, now);
}

}  // namespace

std::size_t WorldMonitor::AddWindow(const std::string& ns, const std::string& name, Duration from,
                                    std::optional<Duration> until) {
  Window w;
  w.key = ns + "/" + name;
  w.from = from;
  if (until) w.until = *until;
  windows_.push_back(std::move(w));
  return windows_.size() - 1;
}

WorldMonitor::Window WorldMonitor::GetWindow(std::size_t index) const {
  Window w = windows_[index];
  auto it = controllers_.find(w.key);
  Counts now = it == controllers_.end() ? Counts{} : it->second.recorded;
  if (!w.opened && Elapsed() >= w.from) Fold(&w, now, w.from);  // no change since `from`
  return w;
}

std::size_t WorldMonitor::AddMatcher(const std::string& ns, Labels selector) {
  matchers_.push_back(Matcher{ns, std::move(selector)});
  return matchers_.size() - 1;
}

WorldMonitor::WorldMonitor(SimWorld* world) : world_(world), origin_(world->loop().Now()) {
  world_->OnChange([this] { OnChange(); });
}

Duration WorldMonitor::Elapsed() const { return world_->loop().Now() - origin_; }

const WorldMonitor::Tracked* WorldMonitor::Find(const std::string& ns, const std::string& name) const {
  auto it = controllers_.find(ns + "/" + name);
  return it == controllers_.end() ? nullptr : &it->second;
}

void WorldMonitor::OnChange() {
  const WorldChange& c = world_->last_change();
  ++changes_;
  last_change_ = Elapsed();
  touched_.clear();
  if (c.kind == WorldChange::Kind::kPod) {
    OnPodChange(c);
  } else {
    OnControllerChange(c);
  }
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  for (Tracked* t : touched_) Record(t);
  RecordTotals();
  for (Matcher& m : matchers_) {
    if (m.active > m.peak_active) {
      m.peak_active = m.active;
      m.peak_at = Elapsed();
    }
  }
}

template <typename Fn>
void WorldMonitor::ForEachCounter(const Pod& pod, Fn&& fn) {
  const std::string& ns = pod.metadata.namespace_;
  if (const OwnerReference* ref = pod.metadata.ControllerRef()) {
    // By uid, as SimWorld::View: a same-name successor does not count its predecessor's pods.
    auto it = controllers_.find(ns + "/" + ref->name);
    if (it != controllers_.end() && it->second.exists && it->second.uid == ref->uid &&
        SelectorMapMatches(it->second.selector, pod.metadata.labels)) {
      fn(&it->second);
    }
    return;
  }
  // An orphan counts for every controller of its namespace that selects it.
  std::string lo = ns + "/", hi = ns + "0";  // '0' follows '/'
  for (auto it = controllers_.lower_bound(lo); it != controllers_.end() && it->first < hi; ++it) {
    if (it->second.exists && SelectorMapMatches(it->second.selector, pod.metadata.labels)) fn(&it->second);
  }
}

bool WorldMonitor::Late(const PodSeen& seen, const Tracked& t) {
  return seen.creator_uid != t.uid && t.first_own_pod_at && seen.free_since > *t.first_own_pod_at;
}

void WorldMonitor::Apply(const PodSeen& seen, int sign) {
  const Pod& pod = *seen.pod;
  if (!IsActive(pod)) return;
  int32_t running = pod.status.phase == phase::kRunning ? sign : 0;
  int32_t ready = IsReady(pod) ? sign : 0;
  for (Matcher& m : matchers_) {
    if (m.ns == pod.metadata.namespace_ && SelectorMapMatches(m.selector, pod.metadata.labels)) {
      m.active += sign;
      m.running += running;
    }
  }
  ForEachCounter(pod, [&](Tracked* t) {
    t->counts.active += sign;
    t->counts.running += running;
    t->counts.ready += ready;
    if (Late(seen, *t)) t->late_active += sign;
    totals_now_.active += sign;
    totals_now_.running += running;
    touched_.push_back(t);
  });
}

void WorldMonitor::OnPodChange(const WorldChange& change) {
  std::string key = change.ns + "/" + change.name;
  const PodPtr& now = change.pod;
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    Apply(it->second, -1);
    if (!now) {
      pods_.erase(it);
      return;
    }
    const Pod& before = *it->second.pod;
    if ((before.metadata.ControllerRef() != nullptr && now->metadata.ControllerRef() == nullptr) ||
        before.metadata.labels != now->metadata.labels) {
      it->second.free_since = Elapsed();
    }
    it->second.pod = now;
  } else {
    if (!now) return;
    PodSeen seen{now, "", Elapsed()};
    if (const OwnerReference* ref = now->metadata.ControllerRef()) {
      seen.creator_uid = ref->uid;
      auto owner = controllers_.find(change.ns + "/" + ref->name);
      if (owner != controllers_.end() && owner->second.exists && owner->second.uid == ref->uid &&
          !owner->second.first_own_pod_at) {
        owner->second.first_own_pod_at = Elapsed();
      }
    }
    it = pods_.emplace(std::move(key), std::move(seen)).first;
  }
  Apply(it->second, +1);
}

void WorldMonitor::Recount(Tracked* t) {
  SimWorld::ControllerView v = world_->View(t->ns, t->name);
  totals_now_.desired += v.desired - t->counts.desired;
  totals_now_.active += v.active - t->counts.active;
  totals_now_.running += v.running - t->counts.running;
  t->counts = Counts{v.desired, v.active, v.running, v.ready};
  t->late_active = 0;
  if (t->first_own_pod_at) {
    for (const std::string& key : world_->PodsOf(t->ns, t->name)) {
      auto it = pods_.find(key);
      if (it != pods_.end() && IsActive(*it->second.pod) && Late(it->second, *t)) ++t->late_active;
    }
  }
  touched_.push_back(t);
}

void WorldMonitor::OnControllerChange(const WorldChange& change) {
  std::string key = change.ns + "/" + change.name;
  auto [it, inserted] = controllers_.try_emplace(key);
  Tracked* t = &it->second;
  if (inserted) {
    t->ns = change.ns;
    t->name = change.name;
  }
  if (change.deleted) {
    if (!t->exists) return;
    t->exists = false;
    totals_now_.desired -= t->counts.desired;
    totals_now_.active -= t->counts.active;
    totals_now_.running -= t->counts.running;
    t->counts = Counts{};
    t->late_active = 0;
    touched_.push_back(t);
    return;
  }
  // The selector and desired count come from the registry (the mirror exposes counts, not specs); a
  // controller already deleted there gets its DELETED change next.
  Result<ControllerPtr> rc = world_->registry().controllers().Get(change.ns, change.name);
  if (!rc.ok()) return;
  for (const ReplicationControllerCondition& c : (*rc)->status.conditions) {
    if (c.status != "True") continue;
    std::vector<std::string>& reasons = t->conditions_seen[c.type];
    if (std::find(reasons.begin(), reasons.end(), c.reason) == reasons.end()) reasons.push_back(c.reason);
  }
  const Labels& selector = EffectiveSelector(**rc);
  if (!t->exists || selector != t->selector || (*rc)->metadata.uid != t->uid) {
    if (!t->exists || (*rc)->metadata.uid != t->uid) t->first_own_pod_at.reset();  // a new incarnation
    t->exists = true;
    t->selector = selector;
    t->uid = (*rc)->metadata.uid;
    Recount(t);
    return;
  }
  int32_t desired = (*rc)->spec.replicas;
  if (desired != t->counts.desired) {
    totals_now_.desired += desired - t->counts.desired;
    t->counts.desired = desired;
    touched_.push_back(t);
  }
}

void WorldMonitor::Record(Tracked* t) {
  Duration now = Elapsed();
  if (!windows_.empty()) {
    const std::string key = t->ns + "/" + t->name;
    for (Window& w : windows_) {
      if (w.key == key) Advance(&w, t->recorded, t->counts, now);
    }
  }
  t->recorded = t->counts;
  if (t->counts.active > t->peak_active) {
    t->peak_active = t->counts.active;
    t->peak_at = now;
  }
  if (t->counts.active - t->late_active > t->peak_own) {
    t->peak_own = t->counts.active - t->late_active;
    t->peak_own_at = now;
  }
  AppendPoint(&t->series, SeriesPoint{now, t->counts.desired, t->counts.active, t->counts.running});
}

void WorldMonitor::RecordTotals() {
  peak_total_active_ = std::max(peak_total_active_, totals_now_.active);
  AppendPoint(&totals_, SeriesPoint{Elapsed(), totals_now_.desired, totals_now_.active, totals_now_.running});
}

std::vector<ControllerOutcome> WorldMonitor::Outcomes() const {
  std::vector<ControllerOutcome> out;
  for (const auto& [key, t] : controllers_) {
    SimWorld::ControllerView v = world_->View(t.ns, t.name);
    ControllerOutcome o;
    o.ns = t.ns;
    o.name = t.name;
    o.peak_active = t.peak_active;
    o.exists = v.exists;
    o.desired = v.desired;
    o.active = v.active;
    o.running = v.running;
    o.ready = v.ready;
    o.status_replicas = v.status.replicas;
    o.series = t.series;
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<std::string> WorldMonitor::CountMismatches() const {
  std::vector<std::string> out;
  for (const auto& [key, t] : controllers_) {
    SimWorld::ControllerView v = world_->View(t.ns, t.name);
    Counts truth{v.desired, v.active, v.running, v.ready};
    if (truth != t.counts || v.exists != t.exists) {
      out.push_back(key + ": monitor desired/active/running/ready " + std::to_string(t.counts.desired) + "/" +
                    std::to_string(t.counts.active) + "/" + std::to_string(t.counts.running) + "/" +
                    std::to_string(t.counts.ready) + ", world " + std::to_string(v.desired) + "/" +
                    std::to_string(v.active) + "/" + std::to_string(v.running) + "/" +
                    std::to_string(v.ready));
    }
  }
  return out;
}

}  // namespace rcsim
