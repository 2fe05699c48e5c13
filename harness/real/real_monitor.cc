#include "harness/real/real_monitor.h"

#include <algorithm>

#include "engine/labels.h"
#include "engine/replication_manager.h"

namespace rcsim {
namespace {

void AppendPoint(std::vector<SeriesPoint>* series, SeriesPoint p) {
  auto same = [](const SeriesPoint& a, const SeriesPoint& b) {
    return a.desired == b.desired && a.active == b.active && a.running == b.running;
  };
  if (!series->empty() && series->back().t == p.t) {
    series->back() = p;
    if (series->size() >= 2 && same((*series)[series->size() - 2], p)) series->pop_back();
    return;
  }
  if (!series->empty() && same(series->back(), p)) return;
  series->push_back(p);
}

void Fold(RealMonitor::Window* w, const RealMonitor::Counts& c, Duration at) {
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

void Advance(RealMonitor::Window* w, const RealMonitor::Counts& before, const RealMonitor::Counts& after,
             Duration now) {
  if (now < w->from) return;
  if (!w->opened) {
    w->opened = true;
    if (now > w->from) Fold(w, before, w->from);
  }
  if (now <= w->until) Fold(w, after, now);
}

std::string NsPrefix(const std::string& ns) { return ns + "/"; }

}  // namespace

std::size_t RealMonitor::AddWindow(const std::string& ns, const std::string& name, Duration from,
                                   std::optional<Duration> until) {
  Window w;
  w.key = ns + "/" + name;
  w.from = from;
  if (until) w.until = *until;
  windows_.push_back(std::move(w));
  return windows_.size() - 1;
}

RealMonitor::Window RealMonitor::GetWindow(std::size_t index, Duration now) const {
  Window w = windows_[index];
  auto it = tracked_.find(w.key);
  Counts c = it == tracked_.end() ? Counts{} : it->second.counts;
  if (!w.opened && now >= w.from) Fold(&w, c, w.from);
  return w;
}

std::size_t RealMonitor::AddMatcher(const std::string& ns, Labels selector) {
  matchers_.push_back(Matcher{ns, std::move(selector)});
  return matchers_.size() - 1;
}

const RealMonitor::Tracked* RealMonitor::Find(const std::string& ns, const std::string& name) const {
  auto it = tracked_.find(ns + "/" + name);
  return it == tracked_.end() ? nullptr : &it->second;
}

std::vector<PodPtr> RealMonitor::PodsOf(const ReplicationController& rc) const {
  std::vector<PodPtr> out;
  const Labels& selector = EffectiveSelector(rc);
  const std::string prefix = NsPrefix(rc.metadata.namespace_);
  for (auto it = pods_.lower_bound(prefix);
       it != pods_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const Pod& p = *it->second;
    if (!SelectorMapMatches(selector, p.metadata.labels)) continue;
    const OwnerReference* ref = p.metadata.ControllerRef();
    if (ref != nullptr && ref->uid != rc.metadata.uid) continue;
    out.push_back(it->second);
  }
  return out;
}

RealMonitor::Counts RealMonitor::CountsOf(const ReplicationController& rc) const {
  Counts c;
  c.desired = rc.spec.replicas;
  for (const PodPtr& p : PodsOf(rc)) {
    if (!IsActive(*p)) continue;
    ++c.active;
    if (p->status.phase == phase::kRunning) ++c.running;
    if (IsReady(*p)) ++c.ready;
  }
  return c;
}

void RealMonitor::Record(Tracked* t, Duration now, const Counts& before) {
  const std::string key = t->ns + "/" + t->name;
  for (Window& w : windows_) {
    if (w.key == key) Advance(&w, before, t->counts, now);
  }
  if (t->counts.active > t->peak_active) {
    t->peak_active = t->counts.active;
    t->peak_at = now;
  }
  AppendPoint(&t->series, SeriesPoint{now, t->counts.desired, t->counts.active, t->counts.running});
}

void RealMonitor::Refresh(Duration t, const std::string& ns) {
  ++changes_;
  last_change_ = std::max(last_change_, t);
  const std::string prefix = NsPrefix(ns);
  for (auto it = tracked_.lower_bound(prefix);
       it != tracked_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    Tracked& tr = it->second;
    const Counts before = tr.counts;
    auto rc = rcs_.find(it->first);
    tr.exists = rc != rcs_.end();
    tr.counts = tr.exists ? CountsOf(*rc->second) : Counts{};
    if (tr.counts != before || tr.series.empty()) Record(&tr, t, before);
  }
  for (Matcher& m : matchers_) {
    if (m.ns != ns) continue;
    m.active = m.running = 0;
    for (auto it = pods_.lower_bound(prefix);
         it != pods_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const Pod& p = *it->second;
      if (!IsActive(p) || !SelectorMapMatches(m.selector, p.metadata.labels)) continue;
      ++m.active;
      if (p.status.phase == phase::kRunning) ++m.running;
    }
    if (m.active > m.peak_active) {
      m.peak_active = m.active;
      m.peak_at = t;
    }
  }
  Counts total;
  for (const auto& [key, tr] : tracked_) {
    total.desired += tr.counts.desired;
    total.active += tr.counts.active;
    total.running += tr.counts.running;
  }
  peak_total_active_ = std::max(peak_total_active_, total.active);
  AppendPoint(&totals_, SeriesPoint{t, total.desired, total.active, total.running});
}

bool RealMonitor::Fresh(const std::string& key, const std::string& resource_version, bool deleted) {
  int64_t rv = -1;
  try {
    rv = std::stoll(resource_version);
  } catch (...) {
    return true;  // not a number (another server): take every change
  }
  Seen& s = seen_[key];
  if (s.deleted ? rv <= s.rv && !deleted : rv < s.rv) return false;
  if (s.deleted && deleted && rv <= s.rv) return false;
  s.rv = std::max(s.rv, rv);
  s.deleted = deleted;
  return true;
}

void RealMonitor::OnPod(Duration t, const PodPtr& pod, bool deleted) {
  const std::string key = KeyOf(pod->metadata);
  if (!Fresh("pod:" + key, pod->metadata.resource_version, deleted)) return;
  if (deleted) {
    pods_.erase(key);
  } else {
    pods_[key] = pod;
  }
  Refresh(t, pod->metadata.namespace_);
}

void RealMonitor::OnController(Duration t, const ControllerPtr& rc, bool deleted) {
  const std::string key = KeyOf(rc->metadata);
  if (!Fresh("rc:" + key, rc->metadata.resource_version, deleted)) return;
  Tracked& tr = tracked_[key];
  if (tr.name.empty()) {
    tr.ns = rc->metadata.namespace_;
    tr.name = rc->metadata.name;
  }
  if (deleted) {
    rcs_.erase(key);
  } else {
    rcs_[key] = rc;
    for (const ReplicationControllerCondition& c : rc->status.conditions) {
      if (c.status != "True") continue;
      std::vector<std::string>& reasons = tr.conditions_seen[c.type];
      if (std::find(reasons.begin(), reasons.end(), c.reason) == reasons.end()) reasons.push_back(c.reason);
    }
  }
  Refresh(t, rc->metadata.namespace_);
}

void RealMonitor::ResyncPods(Duration t, const std::vector<PodPtr>& pods) {
  std::map<std::string, PodPtr> fresh;
  for (const PodPtr& p : pods) fresh[KeyOf(p->metadata)] = p;
  std::vector<std::string> namespaces;
  for (const auto& [key, p] : pods_) {
    if (!fresh.count(key)) namespaces.push_back(p->metadata.namespace_);
  }
  for (const auto& [key, p] : fresh) {
    auto it = pods_.find(key);
    if (it == pods_.end() || it->second->metadata.resource_version != p->metadata.resource_version) {
      namespaces.push_back(p->metadata.namespace_);
    }
  }
  pods_ = std::move(fresh);
  std::sort(namespaces.begin(), namespaces.end());
  namespaces.erase(std::unique(namespaces.begin(), namespaces.end()), namespaces.end());
  for (const std::string& ns : namespaces) Refresh(t, ns);
}

void RealMonitor::ResyncControllers(Duration t, const std::vector<ControllerPtr>& rcs) {
  std::map<std::string, ControllerPtr> fresh;
  for (const ControllerPtr& rc : rcs) fresh[KeyOf(rc->metadata)] = rc;
  std::vector<ControllerPtr> gone;
  for (const auto& [key, rc] : rcs_) {
    if (!fresh.count(key)) gone.push_back(rc);
  }
  for (const ControllerPtr& rc : gone) OnController(t, rc, true);
  for (const auto& [key, rc] : fresh) {
    auto it = rcs_.find(key);
    if (it == rcs_.end() || it->second->metadata.resource_version != rc->metadata.resource_version) {
      OnController(t, rc, false);
    }
  }
}

std::vector<ControllerOutcome> RealMonitor::Outcomes() const {
  std::vector<ControllerOutcome> out;
  for (const auto& [key, t] : tracked_) {
    ControllerOutcome o;
    o.ns = t.ns;
    o.name = t.name;
    o.peak_active = t.peak_active;
    auto rc = rcs_.find(key);
    o.exists = rc != rcs_.end();
    if (o.exists) {
      Counts c = CountsOf(*rc->second);
      o.desired = c.desired;
      o.active = c.active;
      o.running = c.running;
      o.ready = c.ready;
      o.status_replicas = rc->second->status.replicas;
    }
    o.series = t.series;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace rcsim
