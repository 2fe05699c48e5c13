#include "harness/event_injector.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/labels.h"
#include "engine/node_types.h"
#include "fakes/faulty_store.h"
#include "harness/duration.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

constexpr Verb kAllVerbs[] = {Verb::kGet,    Verb::kList,  Verb::kWatch, Verb::kCreate,
                              Verb::kUpdate, Verb::kPatch, Verb::kDelete};

// Picks k of n indices with the scenario's Rng (partial Fisher-Yates), returned in ascending order so
// that the actions and their trace lines come in key order.
std::vector<std::size_t> Choose(std::size_t n, std::size_t k, Rng& rng) {
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  k = std::min(k, n);
  for (std::size_t i = 0; i < k; ++i) {
    std::size_t j = i + static_cast<std::size_t>(rng.Below(n - i));
    std::swap(idx[i], idx[j]);
  }
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

ReplicationController ControllerFromConfig(const ControllerConfig& config) {
  ReplicationController rc;
  rc.metadata.name = config.name;
  rc.metadata.namespace_ = config.namespace_;
  rc.spec.replicas = config.replicas;
  rc.spec.min_ready_seconds = config.min_ready_seconds;
  rc.spec.selector = config.selector;
  rc.spec.template_ = config.template_;
  return rc;
}

void AddMetrics(ManagerMetrics* a, const ManagerMetrics& b) {
  a->syncs += b.syncs;
  a->sync_errors += b.sync_errors;
  a->creates += b.creates;
  a->create_errors += b.create_errors;
  a->deletes += b.deletes;
  a->delete_errors += b.delete_errors;
  a->adoptions += b.adoptions;
  a->releases += b.releases;
  a->status_updates += b.status_updates;
  a->relists += b.relists;
  a->malformed_objects += b.malformed_objects;
  a->requeues += b.requeues;
  a->invalid_controllers += b.invalid_controllers;
  a->claim_errors += b.claim_errors;
}

EventInjector::EventInjector(SimWorld* world, const ClusterConfig& cluster, ManagerMetrics* retired_metrics)
    : world_(world), cluster_(cluster), retired_metrics_(retired_metrics) {}

void EventInjector::Trace(const std::string& event) { world_->trace().Record("scenario", event); }

Status EventInjector::CreateController(const ControllerConfig& config) {
  Result<ControllerPtr> r =
      world_->registry().controllers().Create(config.namespace_, ControllerFromConfig(config));
  Trace("create_controller " + config.namespace_ + "/" + config.name +
        " replicas=" + std::to_string(config.replicas) + (r.ok() ? "" : " failed: " + r.status().ToString()));
  return r.status();
}

Status EventInjector::Fire(const ScenarioEvent& event) {
  Trace("event " + event.text);
  const EventAction& a = event.action;
  if (const auto* k = std::get_if<KillPodsAction>(&a)) return FireKill(k->target, false);
  if (const auto* d = std::get_if<DeletePodsAction>(&a)) return FireKill(d->target, true);
  if (const auto* l = std::get_if<LabelPodsAction>(&a)) return FireLabel(*l);
  if (const auto* s = std::get_if<ScaleAction>(&a)) {
    UpdateControllerAction u;
    u.controller = s->controller;
    u.namespace_ = s->namespace_;
    u.replicas = s->replicas;
    return FireUpdate(u);
  }
  if (const auto* u = std::get_if<UpdateControllerAction>(&a)) return FireUpdate(*u);
  if (const auto* c = std::get_if<CreateControllerAction>(&a)) return CreateController(c->controller);
  if (const auto* d = std::get_if<DeleteControllerAction>(&a)) return FireDeleteController(*d);
  if (const auto* f = std::get_if<FailNodeAction>(&a)) return FireFailNode(*f);
  if (const auto* c = std::get_if<CrashLoopAction>(&a)) return FireCrashLoop(*c);
  if (const auto* n = std::get_if<StopNodeAgentAction>(&a)) return FireStopNodeAgent(*n);
  if (const auto* r = std::get_if<SetReadyAction>(&a)) return FireSetReady(*r);
  if (const auto* f = std::get_if<FlapReadinessAction>(&a)) return FireFlapReadiness(*f);
  if (const auto* n = std::get_if<NodeCapacityAction>(&a)) return FireNodeCapacity(*n);
  if (const auto* n = std::get_if<StartNodeAgentAction>(&a)) {
    Trace("start_node_agent " + n->node);
    return world_->cluster().StartAgent(n->node);
  }
  if (const auto* f = std::get_if<ApiFaultsAction>(&a)) {
    FireApiFaults(*f);
  } else if (const auto* w = std::get_if<WatchFaultsAction>(&a)) {
    FireWatchFaults(*w);
  } else if (const auto* s = std::get_if<StaleReadsAction>(&a)) {
    FireStaleReads(*s);
  } else if (const auto* r = std::get_if<RestartManagerAction>(&a)) {
    FireRestart(*r);
  } else if (const auto* p = std::get_if<PartitionManagerAction>(&a)) {
    FirePartition(*p);
  } else if (const auto* e = std::get_if<RestartEtcdAction>(&a)) {
    FireEtcdDown(e->down, "restart_etcd");
  } else if (std::holds_alternative<KillEtcdLeaderAction>(a)) {
    FireEtcdDown(kEtcdElection, "kill_etcd_leader");  // the other members elect a new leader
  }
  return Status::Ok();
}

Result<std::vector<PodPtr>> EventInjector::ChooseTargets(const PodTarget& target) {
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap(target.selector);
  Result<ObjectList<Pod>> list = world_->registry().pods().List(target.namespace_, opts);
  if (!list.ok()) return list.status();
  std::vector<PodPtr> active;
  for (const PodPtr& p : list->items) {
    if (IsActive(*p)) active.push_back(p);
  }
  std::size_t k = 0;
  switch (target.mode) {
    case PodTarget::Mode::kCount: k = static_cast<std::size_t>(target.count); break;
    case PodTarget::Mode::kFraction:
      k = static_cast<std::size_t>(std::llround(target.fraction * static_cast<double>(active.size())));
      break;
    case PodTarget::Mode::kAll: k = active.size(); break;
  }
  std::vector<PodPtr> chosen;
  for (std::size_t i : Choose(active.size(), k, world_->rng())) chosen.push_back(active[i]);
  return chosen;
}

Status EventInjector::FireLabel(const LabelPodsAction& a) {
  Result<std::vector<PodPtr>> chosen = ChooseTargets(a.target);
  if (!chosen.ok()) return chosen.status();
  Status first_error;
  for (const PodPtr& p : *chosen) {
    Trace("label_pod " + KeyOf(p->metadata));
    Result<PodPtr> r = world_->registry().pods().GuaranteedUpdate(
        p->metadata.namespace_, p->metadata.name, "", [&](const Pod& stored) -> Result<std::shared_ptr<Pod>> {
          auto pod = std::make_shared<Pod>(stored);
          for (const auto& [k, v] : a.labels) pod->metadata.labels[k] = v;
          return pod;
        });
    if (!r.ok() && r.status().code() != Code::kNotFound && first_error.ok()) first_error = r.status();
  }
  return first_error;
}

Status EventInjector::FireKill(const PodTarget& target, bool delete_pods) {
  Result<std::vector<PodPtr>> chosen = ChooseTargets(target);
  if (!chosen.ok()) return chosen.status();
  const char* verb = delete_pods ? "delete_pod " : "kill_pod ";
  Status first_error;
  for (const PodPtr& chosen_pod : *chosen) {
    const Pod& pod = *chosen_pod;
    Trace(verb + KeyOf(pod.metadata));
    if (delete_pods) {
      Result<PodPtr> r = world_->registry().pods().Delete(pod.metadata.namespace_, pod.metadata.name, {});
      if (!r.ok() && r.status().code() != Code::kNotFound && first_error.ok()) first_error = r.status();
    } else {
      world_->cluster().KillPod(pod);
    }
  }
  return first_error;
}

Status EventInjector::FireCrashLoop(const CrashLoopAction& a) {
  Result<std::vector<PodPtr>> chosen = ChooseTargets(a.target);
  if (!chosen.ok()) return chosen.status();
  for (const PodPtr& p : *chosen) {
    Trace("crash_loop " + KeyOf(p->metadata));
    world_->cluster().CrashLoop(*p, true);
    world_->loop().Schedule(a.for_, [this, pod = p] {
      Trace("crash_loop_end " + KeyOf(pod->metadata));
      world_->cluster().CrashLoop(*pod, false);
    });
  }
  return Status::Ok();
}

Status EventInjector::FireSetReady(const SetReadyAction& a) {
  Result<std::vector<PodPtr>> chosen = ChooseTargets(a.target);
  if (!chosen.ok()) return chosen.status();
  for (const PodPtr& p : *chosen) {
    Trace(std::string(a.ready ? "set_ready " : "set_not_ready ") + KeyOf(p->metadata));
    world_->cluster().SetReady(*p, a.ready);
  }
  return Status::Ok();
}

Status EventInjector::FireFlapReadiness(const FlapReadinessAction& a) {
  Result<std::vector<PodPtr>> chosen = ChooseTargets(a.target);
  if (!chosen.ok()) return chosen.status();
  for (const PodPtr& p : *chosen) {
    Trace("flap_readiness " + KeyOf(p->metadata));
    world_->cluster().SetReady(*p, false);
    // Toggles at every whole period inside the window (not ready first), then ready at its end.
    bool ready = true;
    for (Duration t = a.period; t < a.for_; t += a.period, ready = !ready) {
      world_->loop().Schedule(t, [this, pod = p, ready] { world_->cluster().SetReady(*pod, ready); });
    }
    world_->loop().Schedule(a.for_, [this, pod = p] {
      Trace("flap_readiness_end " + KeyOf(pod->metadata));
      world_->cluster().SetReady(*pod, true);
    });
  }
  return Status::Ok();
}

Status EventInjector::FireUpdate(const UpdateControllerAction& a) {
  Result<ControllerPtr> r = world_->registry().controllers().GuaranteedUpdate(
      a.namespace_, a.controller, "",
      [&](const ReplicationController& stored) -> Result<std::shared_ptr<ReplicationController>> {
        auto rc = std::make_shared<ReplicationController>(stored);
        if (a.replicas) rc->spec.replicas = *a.replicas;
        if (a.selector) rc->spec.selector = *a.selector;
        if (a.template_) rc->spec.template_ = *a.template_;
        return rc;
      });
  if (!r.ok()) Trace("update_controller " + a.controller + " failed: " + r.status().ToString());
  return r.status();
}

Status EventInjector::FireDeleteController(const DeleteControllerAction& a) {
  const std::string& ns = a.namespace_;
  auto& controllers = world_->registry().controllers();
  Result<ControllerPtr> rc = controllers.Get(ns, a.controller);
  if (!rc.ok()) return rc.status();
  const std::string uid = (*rc)->metadata.uid;
  Result<ObjectList<Pod>> list = world_->registry().pods().List(ns, ListOptions{});
  if (!list.ok()) return list.status();
  std::size_t dependents = 0;
  for (const PodPtr& p : list->items) {
    const OwnerReference* ref = p->metadata.ControllerRef();
    if (ref != nullptr && ref->uid == uid) ++dependents;
  }
  // As kubectl does: Background (cascade) or Orphan; the garbage collector does the rest.
  DeleteOptions opts{uid, ""};
  opts.propagation_policy = a.cascade ? kPropagationBackground : kPropagationOrphan;
  Result<ControllerPtr> del = controllers.Delete(ns, a.controller, opts);
  if (!del.ok()) return del.status();
  Trace("delete_controller " + ns + "/" + a.controller + " dependents=" + std::to_string(dependents) +
        (a.cascade ? " deleted" : " orphaned"));
  return Status::Ok();
}

std::vector<std::string> EventInjector::ChooseNodes(const std::optional<std::string>& node, int32_t count) {
  std::vector<std::string> targets;
  if (node) {
    targets.push_back(*node);
    return targets;
  }
  std::vector<std::string> ready;
  for (const std::string& n : world_->cluster().node_names()) {
    if (world_->cluster().node_ready(n)) ready.push_back(n);
  }
  for (std::size_t i : Choose(ready.size(), static_cast<std::size_t>(count), world_->rng())) {
    targets.push_back(ready[i]);
  }
  return targets;
}

Status EventInjector::FireFailNode(const FailNodeAction& a) {
  Status first_error;
  for (const std::string& node : ChooseNodes(a.node, a.count)) {
    Trace("fail_node " + node);
    Status s = world_->cluster().FailNode(node);
    if (!s.ok() && first_error.ok()) first_error = s;
    if (a.for_) {
      world_->loop().Schedule(*a.for_, [this, node] {
        Trace("recover_node " + node);
        world_->cluster().RecoverNode(node).IgnoreError();
      });
    }
  }
  return first_error;
}

Status EventInjector::FireStopNodeAgent(const StopNodeAgentAction& a) {
  Status first_error;
  for (const std::string& node : ChooseNodes(a.node, a.count)) {
    Trace("stop_node_agent " + node);
    Status s = world_->cluster().StopAgent(node);
    if (!s.ok() && first_error.ok()) first_error = s;
    if (a.for_) {
      world_->loop().Schedule(*a.for_, [this, node] {
        Trace("start_node_agent " + node);
        world_->cluster().StartAgent(node).IgnoreError();
      });
    }
  }
  return first_error;
}

Status EventInjector::FireNodeCapacity(const NodeCapacityAction& a) {
  std::vector<std::string> targets;
  const std::vector<std::string> all = world_->cluster().node_names();
  if (a.node) {
    targets.push_back(*a.node);
  } else if (a.count) {
    for (std::size_t i : Choose(all.size(), static_cast<std::size_t>(*a.count), world_->rng())) {
      targets.push_back(all[i]);
    }
  } else {
    targets = all;
  }
  Status first_error;
  for (const std::string& node : targets) {
    Trace("node_capacity " + node + " pods=" + std::to_string(a.pods));
    Status s = world_->cluster().SetNodeCapacity(node, a.pods);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

void EventInjector::FireApiFaults(const ApiFaultsAction& a) {
  FaultyApiClient& api = world_->manager_api();
  TimePoint until = world_->loop().Now() + a.for_;
  std::vector<Verb> verbs = a.verbs;
  if (verbs.empty()) verbs.assign(std::begin(kAllVerbs), std::end(kAllVerbs));
  for (Verb v : verbs) {
    if (a.error_rate > 0) {
      api.SetErrorRate(v, a.error_rate, until);
      api.SetErrorStatus(v, a.error_code, a.message, until);
    }
    if (a.timeout_rate > 0) api.SetTimeoutRate(v, a.timeout_rate, until);
    if (a.latency) {
      api.SetLatency(v, a.latency->min, a.latency->max);
      // Back to the cluster's baseline (not zero) when the window ends, unless a later window set it.
      int gen = ++latency_gen_[static_cast<int>(v)];
      world_->loop().Schedule(a.for_, [this, v, gen] {
        if (latency_gen_[static_cast<int>(v)] != gen) return;
        world_->manager_api().SetLatency(v, cluster_.api_latency.min, cluster_.api_latency.max);
      });
    }
  }
}

void EventInjector::FireWatchFaults(const WatchFaultsAction& a) {
  FaultyApiClient& api = world_->manager_api();
  FaultyStore& store = world_->manager_store();
  if (a.compact) {
    Result<int64_t> rev = store.ForceCompaction();
    Trace("compact " + (rev.ok() ? std::to_string(*rev) : rev.status().ToString()));
  }
  if (a.drop) {
    api.DropWatches();
    store.DropWatches();
    store.set_reject_new_watches(true);
    int gen = ++reject_gen_;
    world_->loop().Schedule(a.for_, [this, gen] {
      if (reject_gen_ == gen) world_->manager_store().set_reject_new_watches(false);
    });
    // The API connection flaps: watches re-established during the window break again every second.
    for (Duration t = std::chrono::seconds(1); t < a.for_; t += std::chrono::seconds(1)) {
      world_->loop().Schedule(t, [this] { world_->manager_api().DropWatches(); });
    }
  }
  if (a.stall) {
    const TimePoint until = world_->loop().Now() + a.for_;
    api.StallWatches(until);
    store.stall_watches_until(until);
  }
  if (a.delay) {
    api.SetWatchDelay(*a.delay, *a.delay);
    store.set_watch_delay(*a.delay);
    int gen = ++watch_delay_gen_;
    world_->loop().Schedule(a.for_, [this, gen] {
      if (watch_delay_gen_ != gen) return;
      world_->manager_api().SetWatchDelay(cluster_.watch_latency.min, cluster_.watch_latency.max);
      world_->manager_store().set_watch_delay(Duration::zero());
    });
  }
}

void EventInjector::FireStaleReads(const StaleReadsAction& a) {
  world_->manager_api().SetStaleLag(a.lag, world_->loop().Now() + a.for_);
  world_->manager_store().set_stale_read_lag(a.lag);
  int gen = ++stale_gen_;
  world_->loop().Schedule(a.for_, [this, gen] {
    if (stale_gen_ == gen) world_->manager_store().set_stale_read_lag(Duration::zero());
  });
}

void EventInjector::FireRestart(const RestartManagerAction& a) {
  if (const ManagerMetrics* m = world_->manager_metrics()) AddMetrics(retired_metrics_, *m);
  world_->StopManager();
  world_->loop().Schedule(a.down, [this] {
    Trace("start_manager");
    world_->StartManager();
  });
}

void EventInjector::FireEtcdDown(Duration down, const std::string& what) {
  FaultyApiClient& api = world_->manager_api();
  FaultyStore& store = world_->manager_store();
  // The manager's calls on their way to the API server meet a dead etcd: not applied, and a write's
  // outcome is unknown to the manager (the API server answers 504), as real mode shows after SIGKILL.
  api.FailInFlight("injected: etcd crashed under the call (" + what + ")");
  if (down > Duration::zero()) {
    const TimePoint until = world_->loop().Now() + down;
    for (Verb v : kAllVerbs) {
      api.SetErrorRate(v, 1.0, until);
      api.SetErrorStatus(v, Code::kUnavailable, "etcd unavailable (" + what + ")", until);
    }
    store.set_error_rate(1.0);
    store.set_reject_new_watches(true);
    const int gen = ++partition_gen_;
    const int reject_gen = ++reject_gen_;
    world_->loop().Schedule(down, [this, gen, reject_gen] {
      if (partition_gen_ == gen) world_->manager_store().set_error_rate(0.0);
      if (reject_gen_ == reject_gen) world_->manager_store().set_reject_new_watches(false);
    });
  }
  // Every watch ends (the API server's etcd watches broke), also for a restart with no down time.
  api.DropWatches();
  store.DropWatches();
}

void EventInjector::FirePartition(const PartitionManagerAction& a) {
  world_->manager_api().SetPartitioned(true, world_->loop().Now() + a.for_);
  FaultyStore& store = world_->manager_store();
  store.set_error_rate(1.0);
  store.set_reject_new_watches(true);
  store.DropWatches();
  int gen = ++partition_gen_;
  ++reject_gen_;
  int reject_gen = reject_gen_;
  world_->loop().Schedule(a.for_, [this, gen, reject_gen] {
    if (partition_gen_ == gen) world_->manager_store().set_error_rate(0.0);
    if (reject_gen_ == reject_gen) world_->manager_store().set_reject_new_watches(false);
  });
}

}  // namespace rcsim
