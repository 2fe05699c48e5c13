#include "harness/real/real_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <variant>

#include "backends/etcd/etcd_store.h"
#include "backends/http/thread_executor.h"
#include "backends/httpclient/http_api_client.h"
#include "backends/httpclient/kubeconfig.h"
#include "engine/labels.h"
#include "engine/mutex.h"
#include "fakes/revision_timeline.h"
#include "harness/checkers.h"
#include "harness/duration.h"
#include "harness/event_injector.h"
#include "harness/real/hollow_nodes.h"
#include "harness/real/real_monitor.h"
#include "harness/real/real_stack.h"

namespace rcsim {
namespace {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr Verb kAllVerbs[] = {Verb::kGet,    Verb::kList,  Verb::kWatch, Verb::kCreate,
                              Verb::kUpdate, Verb::kPatch, Verb::kDelete};

std::string Seconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3fs", ToSeconds(d));
  return buf;
}

double RoundedSeconds(Duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) / 1e6;
}

std::string WindowText(Duration after, std::optional<Duration> until) {
  return " from " + FormatScenarioDuration(after) + " to " +
         (until ? FormatScenarioDuration(*until) : "the end");
}

TimePoint WallNow() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

// A synchronous call on an ApiClient (bounded by the client's request timeout).
template <typename T>
T Call(const std::function<void(Callback<T>)>& call) {
  auto p = std::make_shared<std::promise<T>>();
  std::future<T> f = p->get_future();
  call([p](T v) { p->set_value(std::move(v)); });
  return f.get();
}

// One change the watches saw, queued by the client's threads for the runner's thread.
struct Observed {
  Duration t{0};
  bool pod = true;
  ApiWatchEvent<Pod>::Type type = ApiWatchEvent<Pod>::Type::kAdded;
  PodPtr pod_object;
  ControllerPtr rc_object;
  bool broken = false;  // the watch ended (kError): re-list and watch again
};

class Observer {
 public:
  Observer(ApiClient* api, SteadyClock::time_point origin) : api_(api), origin_(origin) {}
  ~Observer() { Stop(); }
  void Start() {
    StartPods();
    StartControllers();
  }
  void StartPods() {
    pods_watch_ = api_->pods().Watch("", ListOptions{}, "", [this](const ApiWatchEvent<Pod>& e) {
      Observed o;
      o.t = Now();
      o.pod = true;
      o.type = e.type;
      o.pod_object = e.object;
      o.broken = e.type == ApiWatchEvent<Pod>::Type::kError;
      Push(std::move(o));
    });
  }
  void StartControllers() {
    rcs_watch_ = api_->controllers().Watch(
        "", ListOptions{}, "", [this](const ApiWatchEvent<ReplicationController>& e) {
          Observed o;
          o.t = Now();
          o.pod = false;
          o.type = static_cast<ApiWatchEvent<Pod>::Type>(static_cast<int>(e.type));
          o.rc_object = e.object;
          o.broken = e.type == ApiWatchEvent<ReplicationController>::Type::kError;
          Push(std::move(o));
        });
  }
  void Stop() {
    pods_watch_.reset();
    rcs_watch_.reset();
  }
  Duration Now() const { return std::chrono::duration_cast<Duration>(SteadyClock::now() - origin_); }
  // Waits until something was observed or `until` passes; returns what was observed.
  std::deque<Observed> Take(SteadyClock::time_point until) {
    MutexLock lock(mu_);
    cv_.WaitUntil(mu_, until, [&]() REQUIRES(mu_) { return !queue_.empty(); });
    std::deque<Observed> out;
    out.swap(queue_);
    return out;
  }

 private:
  void Push(Observed o) {
    MutexLock lock(mu_);
    queue_.push_back(std::move(o));
    cv_.NotifyAll();
  }
  ApiClient* api_;
  SteadyClock::time_point origin_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Observed> queue_ GUARDED_BY(mu_);
  std::unique_ptr<ApiWatch> pods_watch_, rcs_watch_;
};

int HttpCodeOf(Code c) {
  switch (c) {
    case Code::kForbidden: return 403;
    case Code::kInternal: return 500;
    default: return 503;
  }
}
std::string ReasonOf(Code c) {
  switch (c) {
    case Code::kForbidden: return "Forbidden";
    case Code::kInternal: return "InternalError";
    default: return "ServiceUnavailable";
  }
}

// How long after a fail_node its pods are evicted at the latest (3 s grace, 1 s eviction timeout, two
// 500 ms monitor periods, and room for a loaded machine).
constexpr Duration kEvictionAfterFailure = std::chrono::seconds(7);

// How long, and how often, the harness retries its own writes that the API server answered with 503.
constexpr Duration kActionRetryFor = std::chrono::seconds(15);
constexpr auto kActionRetryEvery = std::chrono::milliseconds(100);

// crash_loop in real mode: a container started while its pod's marker file `<dir>/<pod uid>` exists
// exits 1 at once, else it runs its own command (`$0` is the marker dir, the pod's uid comes from the
// downward API).
constexpr const char* kCrashLoopWrapper = "[ -e \"$0/$RCSIM_POD_UID\" ] && exit 1; exec \"$@\"";

// set_ready and flap_readiness in real mode: a container's exec readinessProbe fails while its pod's
// marker file `<dir>/<pod uid>` exists (`$0` is the marker dir), else it runs the template's own exec
// probe, if any (its arguments follow), or succeeds.
constexpr const char* kReadinessGate = "[ -e \"$0/$RCSIM_POD_UID\" ] && exit 1; [ $# -eq 0 ] || exec \"$@\"";

// Node agents run a container's command: one with neither command nor args (images are not pulled)
// runs the default template's `sleep 3600`. With a `crash_loop_dir` (the scenario has crash_loop
// events) every container runs behind kCrashLoopWrapper: command `sh -c <wrapper> <dir> <command...>`,
// its args unchanged. With a `readiness_dir` (set_ready or flap_readiness events) every container's
// exec readinessProbe runs behind kReadinessGate: `sh -c <gate> <dir> <its own command...>`, probed
// every second (periodSeconds 1, failureThreshold and successThreshold 1) unless the template says
// otherwise. Either gives the container the env RCSIM_POD_UID (fieldRef metadata.uid).
void GiveContainersACommand(std::optional<PodTemplateSpec>* t, const std::string& crash_loop_dir,
                            const std::string& readiness_dir) {
  if (!t->has_value()) return;
  for (Container& c : (*t)->spec.containers) {
    if (c.command.empty() && c.args.empty()) c.command = {"sleep", "3600"};
    if (crash_loop_dir.empty() && readiness_dir.empty()) continue;
    if (!crash_loop_dir.empty()) {
      std::vector<std::string> wrapped = {"sh", "-c", kCrashLoopWrapper, crash_loop_dir};
      wrapped.insert(wrapped.end(), c.command.begin(), c.command.end());
      c.command = std::move(wrapped);
    }
    nlohmann::json rest = c.unknown_fields.empty() ? nlohmann::json::object() : *c.unknown_fields.get();
    if (!readiness_dir.empty()) {
      nlohmann::json& probe = rest["readinessProbe"];
      if (!probe.is_object()) probe = nlohmann::json::object();
      nlohmann::json gated = {"sh", "-c", kReadinessGate, readiness_dir};
      const nlohmann::json* own = probe.contains("exec") ? &probe["exec"] : nullptr;
      if (own != nullptr && own->is_object() && own->contains("command") && (*own)["command"].is_array()) {
        for (const nlohmann::json& arg : (*own)["command"]) gated.push_back(arg);
      }
      probe.erase("httpGet");  // the node agents run exec probes only; one handler per probe
      probe.erase("tcpSocket");
      probe.erase("grpc");
      probe["exec"] = {{"command", gated}};
      for (const char* key : {"periodSeconds", "failureThreshold", "successThreshold"}) {
        if (!probe.contains(key)) probe[key] = 1;
      }
    }
    nlohmann::json& env = rest["env"];
    if (!env.is_array()) env = nlohmann::json::array();
    env.push_back(
        {{"name", "RCSIM_POD_UID"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}});
    c.unknown_fields = UnknownFields(std::move(rest));
  }
}

// What the runner does at a moment: a scenario event or a follow-up of one.
struct Action {
  Duration at{0};
  uint64_t order = 0;
  std::function<void()> fn;
};

class RealRun {
 public:
  RealRun(const Scenario& s, uint64_t seed, const RealRunOptions& o)
      : s_(s), seed_(seed), o_(o), rng_(seed) {}
  RunResult Run();

 private:
  void Fail(const std::string& why) {
    if (r_.error.empty()) r_.error = why;
  }
  void Log(const std::string& line) {
    if (o_.log) o_.log(line);
  }
  void Schedule(Duration at, std::function<void()> fn) {
    actions_.push_back(Action{at, next_order_++, std::move(fn)});
  }
  // Runs the due actions, in time order (ties in scheduling order); they may schedule more.
  void RunDueActions();
  // Waits `d`, then runs the actions that fell due meanwhile: an action that waits for the API
  // (etcd restarting, a leader to be elected) lets the restart it may wait for, or any other due
  // action, happen meanwhile, as it would in a real cluster.
  void Pause(std::chrono::milliseconds d);
  // call() (a Result) again while the API server answers 503, every kActionRetryEvery for up to
  // kActionRetryFor, pausing between attempts. For calls that may be repeated: reads, and writes
  // whose repeat after an applied 503 the caller takes for what it is (a delete's NotFound, an
  // update's Conflict).
  template <typename R, typename F>
  R Retrying(F call);
  Status EnsureNamespace(const std::string& ns);
  Status CreateController(const ControllerConfig& c);
  Status Fire(const ScenarioEvent& e, Duration at);
  Status UpdateController(const UpdateControllerAction& a);
  Status DeleteController(const DeleteControllerAction& a);
  Result<std::vector<PodPtr>> ChooseTargets(const PodTarget& target);
  Status DeleteOrLabelPods(const PodTarget& target, const Labels* labels);
  Status KillPods(const PodTarget& target);
  // SIGKILL of the pods' container processes. One not started yet is killed once it has, within 10 s,
  // without holding up the run's other actions: its agent may be down until one of them starts it.
  void KillContainersOf(const std::vector<PodPtr>& pods, const std::string& what);
  void KillOnceStarted(const PodPtr& pod, const std::string& what, Duration deadline);
  Status CrashLoop(const CrashLoopAction& a, Duration at);
  Result<std::vector<std::string>> BoundTargets(const PodTarget& target, const std::string& what,
                                                const std::string& suffix);
  Status SetReady(const PodTarget& target, bool ready);
  Status FlapReadiness(const FlapReadinessAction& a, Duration at);
  void MarkReady(const std::vector<std::string>& uids, bool ready);
  Status FailNode(const FailNodeAction& a, Duration at);
  Status StopNodeAgents(const StopNodeAgentAction& a, Duration at);
  Status SetNodeCapacity(const NodeCapacityAction& a);
  // The agents a node event acts on: `node` ("node-<i>"), or `count` drawn among the agents up.
  std::vector<int> ChooseNodes(const std::optional<std::string>& node, int32_t count);
  Status RestartEtcd(int member, Duration down, Duration at, const std::string& what);
  StaleListPinner StalePinner(Duration lag, Duration at, Duration for_);
  bool agents() const { return stack_ && stack_->node_agents() > 0; }
  void Absorb(const std::deque<Observed>& observed);
  void RewatchIfDue();
  void Relist(bool pods);
  ExpectationOutcome Check(const Expectation& e, std::size_t probe, Duration end);

  const Scenario& s_;
  uint64_t seed_;
  const RealRunOptions& o_;
  std::mt19937_64 rng_;
  RunResult r_;
  std::unique_ptr<RealStack> stack_;
  // With crash_loop events and node agents: the marker dir of kCrashLoopWrapper, in the stack's
  // temporary dir; else empty (containers run as written).
  std::string crash_loop_dir_;
  std::string readiness_dir_;  // set_ready, flap_readiness: a marker per not-ready pod
  std::unique_ptr<HttpApiClient> api_;
  std::unique_ptr<Observer> observer_;
  RealMonitor monitor_;
  std::vector<Action> actions_;
  uint64_t next_order_ = 0;
  // When the harness's actions of each instant were done (the state "at the end of" an instant the
  // scenario names is the one after them): `at` -> the time the last action at `at` completed.
  std::map<Duration, Duration> done_at_;
  // A broken watch is watched again (and a list folded in) at these times: at once, but at most every
  // kRewatchEvery while it keeps breaking (etcd down: every new watch fails at once).
  std::optional<Duration> rewatch_pods_at_, rewatch_rcs_at_;
  Duration last_rewatch_pods_ = -std::chrono::hours(1), last_rewatch_rcs_ = -std::chrono::hours(1);
  // stale_reads: when etcd's revisions became current, as the simulation's FaultyApiClient records
  // them (its etcd client and timeline are shared with the proxy's pinner, which may outlive the run).
  struct StaleView {
    SystemClock clock;
    std::unique_ptr<EtcdStore> etcd;
    std::unique_ptr<RevisionTimeline> timeline;  // over `etcd`: destroyed first
  };
  std::shared_ptr<StaleView> stale_view_;
  Duration stale_until_{};  // the end of the last stale window
};

constexpr Duration kRewatchEvery = std::chrono::milliseconds(200);

// Whether `stored`, found by a retried create that answered AlreadyExists, is the controller this run
// sent (an earlier attempt applied though its answer was lost) rather than another one of that name:
// the API server adds defaults and metadata, so the fields the scenario set are compared.
bool IsTheControllerSent(const ReplicationController& stored, const ReplicationController& sent) {
  // Empty labels and selector are defaulted from the template's labels, as upstream.
  return !stored.metadata.deletion_timestamp &&
         (sent.metadata.labels.empty() || stored.metadata.labels == sent.metadata.labels) &&
         stored.spec.replicas == sent.spec.replicas &&
         (sent.spec.selector.empty() || stored.spec.selector == sent.spec.selector) &&
         stored.spec.template_.has_value() == sent.spec.template_.has_value() &&
         (!sent.spec.template_ ||
          (stored.spec.template_->metadata.labels == sent.spec.template_->metadata.labels &&
           stored.spec.template_->spec.containers.size() == sent.spec.template_->spec.containers.size()));
}

Status RealRun::EnsureNamespace(const std::string& ns) {
  json body = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  Result<HttpReply> reply = Call<Result<HttpReply>>([&](const Callback<Result<HttpReply>>& cb) {
    api_->Send("POST", "/api/v1/namespaces", body.dump(), cb);
  });
  if (!reply.ok()) return reply.status();
  if (reply->status >= 300 && reply->status != 409) {
    return Status(Code::kInternal,
                  "creating namespace " + ns + ": HTTP " + std::to_string(reply->status) + " " + reply->body);
  }
  return Status::Ok();
}

void RealRun::RunDueActions() {
  while (true) {
    auto next = std::min_element(actions_.begin(), actions_.end(), [](const Action& a, const Action& b) {
      return a.at != b.at ? a.at < b.at : a.order < b.order;
    });
    if (next == actions_.end() || next->at > observer_->Now()) return;
    std::function<void()> fn = std::move(next->fn);
    actions_.erase(next);
    fn();  // may pause, and so run later actions, itself
  }
}

void RealRun::Pause(std::chrono::milliseconds d) {
  std::this_thread::sleep_for(d);
  RunDueActions();
}

template <typename R, typename F>
R RealRun::Retrying(F call) {
  const auto deadline = SteadyClock::now() + kActionRetryFor;
  while (true) {
    R r = call();
    if (r.status().code() != Code::kUnavailable || SteadyClock::now() >= deadline) return r;
    Pause(kActionRetryEvery);
  }
}

Status RealRun::CreateController(const ControllerConfig& c) {
  ReplicationController want = ControllerFromConfig(c);
  if (agents()) GiveContainersACommand(&want.spec.template_, crash_loop_dir_, readiness_dir_);
  const auto deadline = SteadyClock::now() + kActionRetryFor;
  Result<ControllerPtr> rc = Status(Code::kUnavailable, "not sent");
  bool maybe_applied = false;  // an earlier attempt's outcome is unknown
  while (true) {
    rc = Call<Result<ControllerPtr>>([&](const Callback<Result<ControllerPtr>>& cb) {
      api_->controllers().Create(c.namespace_, want, cb);
    });
    const Code code = rc.status().code();
    if ((code != Code::kUnavailable && code != Code::kTimeout) || SteadyClock::now() >= deadline) break;
    // A 503 or a timed-out request (the API server's etcd write timed out, or the answer was lost on a
    // loaded machine) may have been applied: ask again, and take an AlreadyExists below as our own.
    maybe_applied = true;
    Pause(kActionRetryEvery);
  }
  if (rc.status().code() == Code::kAlreadyExists && maybe_applied) {
    Result<ControllerPtr> got = Call<Result<ControllerPtr>>([&](const Callback<Result<ControllerPtr>>& cb) {
      api_->controllers().Get(c.namespace_, want.metadata.name, cb);
    });
    if (got.ok() && IsTheControllerSent(**got, want)) rc = got;
  }
  if (rc.ok()) monitor_.OnController(observer_->Now(), *rc, false);
  return rc.status();
}

Status RealRun::UpdateController(const UpdateControllerAction& a) {
  const std::string& ns = a.namespace_;
  const std::string& name = a.controller;
  Status last;
  // The scenario's own writes reach the API, as in the simulation: a conflict is retried at once, an
  // API server that answers 503 (etcd restarting, its leader changing) as Retrying does. An update a
  // 503 had applied is a Conflict when repeated: read again and set again, as any conflict.
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto got = Retrying<Result<ControllerPtr>>([&] {
      return Call<Result<ControllerPtr>>(
          [&](const Callback<Result<ControllerPtr>>& cb) { api_->controllers().Get(ns, name, cb); });
    });
    if (!got.ok()) return got.status();
    ReplicationController rc = **got;
    if (a.replicas) rc.spec.replicas = *a.replicas;
    if (a.selector) rc.spec.selector = *a.selector;
    if (a.template_) {
      rc.spec.template_ = *a.template_;
      if (agents()) GiveContainersACommand(&rc.spec.template_, crash_loop_dir_, readiness_dir_);
    }
    auto up = Retrying<Result<ControllerPtr>>([&] {
      return Call<Result<ControllerPtr>>(
          [&](const Callback<Result<ControllerPtr>>& cb) { api_->controllers().Update(rc, cb); });
    });
    if (up.ok()) monitor_.OnController(observer_->Now(), *up, false);
    last = up.status();
    if (last.code() != Code::kConflict) return last;
  }
  return last;
}

Status RealRun::DeleteController(const DeleteControllerAction& a) {
  const std::string& ns = a.namespace_;
  auto rc = Retrying<Result<ControllerPtr>>([&] {
    return Call<Result<ControllerPtr>>(
        [&](const Callback<Result<ControllerPtr>>& cb) { api_->controllers().Get(ns, a.controller, cb); });
  });
  if (!rc.ok()) return rc.status();
  const std::string uid = (*rc)->metadata.uid;
  auto list = Retrying<Result<ObjectList<Pod>>>([&] {
    return Call<Result<ObjectList<Pod>>>(
        [&](const Callback<Result<ObjectList<Pod>>>& cb) { api_->pods().List(ns, ListOptions{}, cb); });
  });
  if (!list.ok()) return list.status();
  std::vector<PodPtr> dependents;
  for (const PodPtr& p : list->items) {
    const OwnerReference* ref = p->metadata.ControllerRef();
    if (ref != nullptr && ref->uid == uid) dependents.push_back(p);
  }
  // The controller's delete; a 503 may have been applied, so NotFound after one is the controller
  // gone by an earlier attempt: null then.
  auto delete_controller = [&](const DeleteOptions& opts) -> Result<ControllerPtr> {
    int attempts = 0;
    auto del = Retrying<Result<ControllerPtr>>([&] {
      ++attempts;
      return Call<Result<ControllerPtr>>([&](const Callback<Result<ControllerPtr>>& cb) {
        api_->controllers().Delete(ns, a.controller, opts, cb);
      });
    });
    if (!del.ok() && attempts > 1 && del.status().code() == Code::kNotFound) return ControllerPtr();
    return del;
  };
  if (!a.cascade) {
    // As kubectl --cascade=orphan: the controller gets the orphan finalizer (the manager no longer acts
    // for it), the garbage collector removes the pods' ownerReferences, then the controller goes; the
    // watch shows each step.
    DeleteOptions orphan{uid, ""};
    orphan.propagation_policy = kPropagationOrphan;
    return delete_controller(orphan).status();
  }
  // Background: the controller goes at once; its dependents are deleted below (the garbage collector
  // would delete them too, later).
  DeleteOptions background{uid, ""};
  background.propagation_policy = kPropagationBackground;
  Result<ControllerPtr> del = delete_controller(background);
  if (!del.ok()) return del.status();
  if (*del != nullptr) monitor_.OnController(observer_->Now(), *del, true);
  if (a.cascade) {
    for (const PodPtr& p : dependents) {
      auto gone = Retrying<Result<PodPtr>>([&] {
        return Call<Result<PodPtr>>([&](const Callback<Result<PodPtr>>& cb) {
          api_->pods().Delete(ns, p->metadata.name, DeleteOptions{p->metadata.uid, ""}, cb);
        });
      });
      if (gone.ok()) monitor_.OnPod(observer_->Now(), *gone, true);
      Status st = gone.status();
      if (!st.ok() && st.code() != Code::kNotFound && st.code() != Code::kConflict) return st;
    }
  }
  return Status::Ok();
}

Result<std::vector<PodPtr>> RealRun::ChooseTargets(const PodTarget& target) {
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap(target.selector);
  auto list = Retrying<Result<ObjectList<Pod>>>([&] {
    return Call<Result<ObjectList<Pod>>>(
        [&](const Callback<Result<ObjectList<Pod>>>& cb) { api_->pods().List(target.namespace_, opts, cb); });
  });
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
  k = std::min(k, active.size());
  for (std::size_t i = 0; i < k; ++i) {
    std::size_t j = i + static_cast<std::size_t>(rng_() % (active.size() - i));
    std::swap(active[i], active[j]);
  }
  active.resize(k);
  return active;
}

Status RealRun::DeleteOrLabelPods(const PodTarget& target, const Labels* labels) {
  Result<std::vector<PodPtr>> chosen = ChooseTargets(target);
  if (!chosen.ok()) return chosen.status();
  Status first;
  for (const PodPtr& p : *chosen) {
    Status st;
    if (labels == nullptr) {
      auto gone = Retrying<Result<PodPtr>>([&] {  // a repeat of an applied one is NotFound, let go below
        return Call<Result<PodPtr>>([&](const Callback<Result<PodPtr>>& cb) {
          api_->pods().Delete(p->metadata.namespace_, p->metadata.name, {}, cb);
        });
      });
      if (gone.ok()) monitor_.OnPod(observer_->Now(), *gone, true);
      st = gone.status();
    } else {
      PodPtr cur = p;
      for (int attempt = 0; attempt < 10; ++attempt) {
        Pod pod = *cur;
        for (const auto& [k, v] : *labels) pod.metadata.labels[k] = v;
        // A repeat of an applied update is a Conflict: the labels are set again on what is there.
        auto up = Retrying<Result<PodPtr>>([&] {
          return Call<Result<PodPtr>>(
              [&](const Callback<Result<PodPtr>>& cb) { api_->pods().Update(pod, cb); });
        });
        if (up.ok()) monitor_.OnPod(observer_->Now(), *up, false);
        st = up.status();
        if (st.code() != Code::kConflict) break;
        auto again = Retrying<Result<PodPtr>>([&] {
          return Call<Result<PodPtr>>([&](const Callback<Result<PodPtr>>& cb) {
            api_->pods().Get(p->metadata.namespace_, p->metadata.name, cb);
          });
        });
        if (!again.ok()) {
          st = again.status();
          break;
        }
        cur = *again;
      }
    }
    if (!st.ok() && st.code() != Code::kNotFound && first.ok()) first = st;
  }
  return first;
}

Status RealRun::KillPods(const PodTarget& target) {
  if (!agents()) return Status(Code::kInvalid, "kill_pods needs node agents");
  Result<std::vector<PodPtr>> chosen = ChooseTargets(target);
  if (!chosen.ok()) return chosen.status();
  KillContainersOf(*chosen, "kill_pods");
  return Status::Ok();
}

// The chosen pods' markers are created, then their running containers SIGKILLed (exit 137, where the
// simulation's exit with 1): the agents restart them per restartPolicy, and every start while the
// marker exists exits 1 at once, so the kubelet's crash-loop backoff applies as in the simulation.
// After `for` the markers go; the next start (after the backoff) runs the container's command.
Status RealRun::CrashLoop(const CrashLoopAction& a, Duration at) {
  if (!agents() || crash_loop_dir_.empty()) return Status(Code::kInvalid, "crash_loop needs node agents");
  Result<std::vector<PodPtr>> chosen = ChooseTargets(a.target);
  if (!chosen.ok()) return chosen.status();
  std::vector<std::string> markers;
  for (const PodPtr& p : *chosen) {
    markers.push_back(crash_loop_dir_ + "/" + p->metadata.uid.str());
    std::ofstream(markers.back()) << KeyOf(p->metadata) << "\n";
    Log("crash_loop: " + KeyOf(p->metadata) + " exits at every start for " + Seconds(a.for_));
  }
  Schedule(at + a.for_, [this, markers] {
    std::error_code ec;
    for (const std::string& m : markers) std::filesystem::remove(m, ec);
    Log("crash_loop: over for " + std::to_string(markers.size()) + " pod(s)");
  });
  KillContainersOf(*chosen, "crash_loop");
  return Status::Ok();
}

// The uids of the chosen pods that are bound to a node (readiness events leave the others alone, as in
// the simulation), each logged as "<what>: <ns>/<name><suffix>".
Result<std::vector<std::string>> RealRun::BoundTargets(const PodTarget& target, const std::string& what,
                                                       const std::string& suffix) {
  if (!agents() || readiness_dir_.empty()) return Status(Code::kInvalid, what + " needs node agents");
  Result<std::vector<PodPtr>> chosen = ChooseTargets(target);
  if (!chosen.ok()) return chosen.status();
  std::vector<std::string> uids;
  for (const PodPtr& p : *chosen) {
    if (p->spec.node_name.empty()) continue;
    uids.push_back(p->metadata.uid);
    Log(what + ": " + KeyOf(p->metadata) + suffix);
  }
  return uids;
}

// set_ready: the chosen pods' markers are created (not ready) or removed (ready); their containers'
// readinessProbes (kReadinessGate, every second) fail or pass from the next probe on, restarts
// included, and the node agents write the pods' Ready condition.
Status RealRun::SetReady(const PodTarget& target, bool ready) {
  Result<std::vector<std::string>> uids = BoundTargets(target, ready ? "set_ready" : "set_not_ready", "");
  if (!uids.ok()) return uids.status();
  MarkReady(*uids, ready);
  return Status::Ok();
}

// flap_readiness: not ready at `at`, ready at `at + period`, not ready at `at + 2 period`, ...; ready
// at `at + for`.
Status RealRun::FlapReadiness(const FlapReadinessAction& a, Duration at) {
  Result<std::vector<std::string>> chosen =
      BoundTargets(a.target, "flap_readiness", " every " + Seconds(a.period) + " for " + Seconds(a.for_));
  if (!chosen.ok()) return chosen.status();
  const std::vector<std::string> uids = std::move(chosen).value();
  MarkReady(uids, false);
  bool ready = true;
  for (Duration t = a.period; t < a.for_; t += a.period, ready = !ready) {
    Schedule(at + t, [this, uids, ready] { MarkReady(uids, ready); });
  }
  Schedule(at + a.for_, [this, uids] { MarkReady(uids, true); });
  return Status::Ok();
}

void RealRun::MarkReady(const std::vector<std::string>& uids, bool ready) {
  for (const std::string& uid : uids) {
    const std::string marker = readiness_dir_ + "/" + uid;
    if (ready) {
      std::error_code ec;
      std::filesystem::remove(marker, ec);
    } else {
      std::ofstream(marker) << uid << "\n";
    }
  }
}

void RealRun::KillContainersOf(const std::vector<PodPtr>& pods, const std::string& what) {
  const Duration deadline = observer_->Now() + std::chrono::seconds(10);
  for (const PodPtr& p : pods) KillOnceStarted(p, what, deadline);
}

// Tried again every 20 ms as a scheduled action, so that a restart of the pod's stopped agent (due
// meanwhile) runs. A pod deleted by then is let go: nothing will start its container.
void RealRun::KillOnceStarted(const PodPtr& pod, const std::string& what, Duration deadline) {
  if (stack_->KillPodContainers(pod->metadata.uid) > 0) {
    Log(what + ": " + KeyOf(pod->metadata) + "'s container SIGKILLed");
    return;
  }
  const Duration now = observer_->Now();
  if (now < deadline) {
    Schedule(now + std::chrono::milliseconds(20),
             [this, pod, what, deadline] { KillOnceStarted(pod, what, deadline); });
    return;
  }
  Result<PodPtr> cur = Call<Result<PodPtr>>([&](const Callback<Result<PodPtr>>& cb) {
    api_->pods().Get(pod->metadata.namespace_, pod->metadata.name, cb);
  });
  if (!cur.ok() && cur.status().code() != Code::kNotFound) {
    Fail(what + ": pod " + KeyOf(pod->metadata) +
         " has no running container process after 10s, and reading it: " + cur.status().ToString());
    return;
  }
  if (!cur.ok() || (*cur)->metadata.uid != pod->metadata.uid || (*cur)->metadata.deletion_timestamp ||
      !IsActive(**cur)) {
    Log(what + ": " + KeyOf(pod->metadata) + " went away before its container started");
    return;
  }
  Fail(what + ": pod " + KeyOf(pod->metadata) + " has no running container process to kill after 10s");
}

std::vector<int> RealRun::ChooseNodes(const std::optional<std::string>& node, int32_t count) {
  if (node) return {std::stoi(node->substr(5))};  // "node-<i>", checked by the parser
  std::vector<int> up;
  for (int i = 0; i < stack_->node_agents(); ++i) {
    if (stack_->NodeAgentUp(i)) up.push_back(i);
  }
  const std::size_t k = std::min(up.size(), static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < k; ++i) {
    std::size_t j = i + static_cast<std::size_t>(rng_() % (up.size() - i));
    std::swap(up[i], up[j]);
  }
  up.resize(k);
  return up;
}

Status RealRun::FailNode(const FailNodeAction& a, Duration at) {
  if (!agents()) return Status(Code::kInvalid, "fail_node needs node agents");
  const std::vector<int> targets = ChooseNodes(a.node, a.count);
  for (int node : targets) {
    if (a.for_) {
      stack_->PauseNodeAgent(node);
      Log("fail_node: " + RealStack::NodeName(node) + " stopped (SIGSTOP) for " + Seconds(*a.for_));
      Schedule(at + *a.for_, [this, node] {
        if (Status st = stack_->ResumeNodeAgent(node); !st.ok()) {
          Fail("fail_node: resuming " + RealStack::NodeName(node) + ": " + st.ToString());
          return;
        }
        Log("fail_node: " + RealStack::NodeName(node) + " continued (SIGCONT)");
      });
    } else {
      stack_->KillNodeAgent(node);
      Log("fail_node: " + RealStack::NodeName(node) + " killed (SIGKILL of its agent and containers)");
    }
  }
  return Status::Ok();
}

Status RealRun::StopNodeAgents(const StopNodeAgentAction& a, Duration at) {
  if (!agents()) return Status(Code::kInvalid, "stop_node_agent needs node agents");
  for (int node : ChooseNodes(a.node, a.count)) {
    if (!stack_->NodeAgentUp(node)) continue;  // failed, frozen or stopped: it stays so
    stack_->StopNodeAgent(node);
    Log("stop_node_agent: " + RealStack::NodeName(node) + " stopped (SIGTERM; its containers run on)" +
        (a.for_ ? ", back after " + Seconds(*a.for_) : std::string()));
    if (a.for_) {
      Schedule(at + *a.for_, [this, node] {
        if (Status st = stack_->StartNodeAgent(node); !st.ok()) {
          Fail("stop_node_agent: restarting " + RealStack::NodeName(node) + ": " + st.ToString());
          return;
        }
        Log("stop_node_agent: " + RealStack::NodeName(node) + " started again");
      });
    }
  }
  return Status::Ok();
}

Status RealRun::SetNodeCapacity(const NodeCapacityAction& a) {
  if (!agents()) return Status(Code::kInvalid, "node_capacity needs node agents");
  // As the simulation: one node, `count` of all the nodes (up or not), or every node.
  std::vector<int> targets;
  if (a.node) {
    targets = ChooseNodes(a.node, 0);
  } else {
    for (int i = 0; i < stack_->node_agents(); ++i) targets.push_back(i);
    if (a.count) {
      const std::size_t k = std::min(targets.size(), static_cast<std::size_t>(*a.count));
      for (std::size_t i = 0; i < k; ++i) {
        std::size_t j = i + static_cast<std::size_t>(rng_() % (targets.size() - i));
        std::swap(targets[i], targets[j]);
      }
      targets.resize(k);
      std::sort(targets.begin(), targets.end());
    }
  }
  for (int node : targets) {
    const bool up = stack_->NodeAgentUp(node);
    if (Status st = stack_->SetNodeAgentMaxPods(node, a.pods); !st.ok()) return st;
    Log("node_capacity: " + RealStack::NodeName(node) + " --max-pods=" + std::to_string(a.pods) +
        (up ? " (agent restarted)" : " (from its next start)"));
  }
  return Status::Ok();
}

Status RealRun::RestartEtcd(int member, Duration down, Duration at, const std::string& what) {
  stack_->KillEtcd(member);
  Log(what + ": etcd member " + std::to_string(member) + " killed (SIGKILL), back after " + Seconds(down));
  auto restart = [this, member, what] {
    if (Status st = stack_->StartEtcd(member); !st.ok()) {
      Fail(what + ": restarting etcd member " + std::to_string(member) + ": " + st.ToString());
    }
  };
  if (down <= Duration::zero()) {
    restart();
  } else {
    Schedule(at + down, restart);
  }
  return Status::Ok();
}

Status RealRun::Fire(const ScenarioEvent& e, Duration at) {
  const EventAction& a = e.action;
  if (const auto* r = std::get_if<RestartEtcdAction>(&a)) return RestartEtcd(r->member, r->down, at, e.kind);
  if (const auto* k = std::get_if<KillEtcdLeaderAction>(&a)) {
    // A leader is there within an election (bounded wait: the previous event may have cost one).
    const auto deadline = SteadyClock::now() + std::chrono::seconds(10);
    int leader = stack_->EtcdLeader();
    while (leader < 0 && SteadyClock::now() < deadline) {
      Pause(std::chrono::milliseconds(20));
      leader = stack_->EtcdLeader();
    }
    if (leader < 0) return Status(Code::kUnavailable, "no etcd member leads within 10s");
    return RestartEtcd(leader, k->down, at, e.kind);
  }
  if (const auto* k = std::get_if<KillPodsAction>(&a)) return KillPods(k->target);
  if (const auto* c = std::get_if<CrashLoopAction>(&a)) return CrashLoop(*c, at);
  if (const auto* r = std::get_if<SetReadyAction>(&a)) return SetReady(r->target, r->ready);
  if (const auto* f = std::get_if<FlapReadinessAction>(&a)) return FlapReadiness(*f, at);
  if (const auto* f = std::get_if<FailNodeAction>(&a)) return FailNode(*f, at);
  if (const auto* n = std::get_if<StopNodeAgentAction>(&a)) return StopNodeAgents(*n, at);
  if (const auto* n = std::get_if<NodeCapacityAction>(&a)) return SetNodeCapacity(*n);
  if (const auto* n = std::get_if<StartNodeAgentAction>(&a)) {
    if (!agents()) return Status(Code::kInvalid, "start_node_agent needs node agents");
    const int node = ChooseNodes(n->node, 0).front();
    if (stack_->NodeAgentUp(node)) return Status::Ok();
    if (Status st = stack_->StartNodeAgent(node); !st.ok()) return st;
    if (stack_->NodeAgentUp(node)) Log("start_node_agent: " + RealStack::NodeName(node) + " started");
    return Status::Ok();
  }
  if (const auto* d = std::get_if<DeletePodsAction>(&a)) return DeleteOrLabelPods(d->target, nullptr);
  if (const auto* l = std::get_if<LabelPodsAction>(&a)) return DeleteOrLabelPods(l->target, &l->labels);
  if (const auto* sc = std::get_if<ScaleAction>(&a)) {
    UpdateControllerAction u;
    u.controller = sc->controller;
    u.namespace_ = sc->namespace_;
    u.replicas = sc->replicas;
    return UpdateController(u);
  }
  if (const auto* u = std::get_if<UpdateControllerAction>(&a)) return UpdateController(*u);
  if (const auto* c = std::get_if<CreateControllerAction>(&a)) return CreateController(c->controller);
  if (const auto* d = std::get_if<DeleteControllerAction>(&a)) return DeleteController(*d);
  if (const auto* f = std::get_if<ApiFaultsAction>(&a)) {
    std::vector<Verb> verbs = f->verbs;
    if (verbs.empty()) verbs.assign(std::begin(kAllVerbs), std::end(kAllVerbs));
    FaultProxy& proxy = stack_->proxy();
    if (f->error_rate > 0) {
      proxy.SetErrors(verbs, f->error_rate, HttpCodeOf(f->error_code), ReasonOf(f->error_code), f->message,
                      f->for_);
    }
    if (f->timeout_rate > 0) proxy.SetTimeouts(verbs, f->timeout_rate, f->for_);
    if (f->latency) proxy.SetLatency(verbs, f->latency->min, f->latency->max, f->for_);
    return Status::Ok();
  }
  if (const auto* w = std::get_if<WatchFaultsAction>(&a)) {
    FaultProxy& proxy = stack_->proxy();
    if (w->compact) {
      Result<int64_t> rev = stack_->CompactEtcd();
      if (!rev.ok()) return rev.status();
    }
    if (w->drop) {
      proxy.DropWatches();
      // The connection flaps: watches re-established during the window break again every second.
      for (Duration t = std::chrono::seconds(1); t < w->for_; t += std::chrono::seconds(1)) {
        Schedule(at + t, [this] { stack_->proxy().DropWatches(); });
      }
    }
    if (w->delay) proxy.SetWatchDelay(*w->delay, w->for_);
    if (w->stall) proxy.StallWatches(w->for_);
    return Status::Ok();
  }
  if (const auto* st = std::get_if<StaleReadsAction>(&a)) {
    stack_->proxy().SetReadLag(st->lag, st->for_, StalePinner(st->lag, at, st->for_));
    return Status::Ok();
  }
  if (const auto* rm = std::get_if<RestartManagerAction>(&a)) {
    stack_->KillManager();
    Schedule(at + rm->down, [this] {
      if (Status st = stack_->StartManager(); !st.ok())
        Fail("restarting the controller-manager: " + st.ToString());
      ++r_.manager_starts;
    });
    return Status::Ok();
  }
  if (const auto* p = std::get_if<PartitionManagerAction>(&a)) {
    stack_->proxy().Partition(p->for_);
    return Status::Ok();
  }
  return Status(Code::kInvalid, e.kind + " is not supported in real mode");
}

// The manager's lists that a cache may serve are pinned to etcd's revision of `lag` ago (never before
// the window opened), as the simulation pins them (fakes/revision_timeline.h); GETs and consistent
// lists stay fresh. A window that opens while none is open forgets what came before it. nullptr (the
// proxy then delivers get and list answers `lag` late) if etcd's revision cannot be read.
StaleListPinner RealRun::StalePinner(Duration lag, Duration at, Duration for_) {
  if (!stale_view_) {
    EtcdStoreOptions eo;
    eo.endpoints = stack_->etcd_urls();
    Result<std::unique_ptr<EtcdStore>> etcd = EtcdStore::Create(eo);
    if (!etcd.ok()) return nullptr;
    auto view = std::make_shared<StaleView>();
    view->etcd = std::move(etcd).value();
    view->timeline = std::make_unique<RevisionTimeline>(view->etcd.get(), &view->clock);
    stale_view_ = std::move(view);
  }
  RevisionTimeline& timeline = *stale_view_->timeline;
  const bool open = at >= stale_until_ || !timeline.recording();
  timeline.set_lag(lag);
  if (open && !timeline.OpenWindow()) return nullptr;
  stale_until_ = std::max(stale_until_, at + for_);
  return [view = stale_view_](ListOptions* opts) { return PinStaleList(*view->timeline, opts); };
}

void RealRun::Relist(bool pods) {
  const Duration t = observer_->Now();
  if (pods) {
    Result<ObjectList<Pod>> list = Call<Result<ObjectList<Pod>>>(
        [&](const Callback<Result<ObjectList<Pod>>>& cb) { api_->pods().List("", ListOptions{}, cb); });
    if (list.ok()) monitor_.ResyncPods(t, list->items);
  } else {
    Result<ObjectList<ReplicationController>> list = Call<Result<ObjectList<ReplicationController>>>(
        [&](const Callback<Result<ObjectList<ReplicationController>>>& cb) {
          api_->controllers().List("", ListOptions{}, cb);
        });
    if (list.ok()) monitor_.ResyncControllers(t, list->items);
  }
}

void RealRun::Absorb(const std::deque<Observed>& observed) {
  bool pods_broken = false, rcs_broken = false;
  for (const Observed& o : observed) {
    if (o.broken) {
      (o.pod ? pods_broken : rcs_broken) = true;
      continue;
    }
    const bool deleted = o.type == ApiWatchEvent<Pod>::Type::kDeleted;
    if (o.type == ApiWatchEvent<Pod>::Type::kBookmark) continue;
    if (o.pod && o.pod_object) monitor_.OnPod(o.t, o.pod_object, deleted);
    if (!o.pod && o.rc_object) monitor_.OnController(o.t, o.rc_object, deleted);
  }
  // A broken watch (etcd restarted, the history compacted): watch again from now and fold in a list.
  const Duration now = observer_->Now();
  if (pods_broken && !rewatch_pods_at_) rewatch_pods_at_ = std::max(now, last_rewatch_pods_ + kRewatchEvery);
  if (rcs_broken && !rewatch_rcs_at_) rewatch_rcs_at_ = std::max(now, last_rewatch_rcs_ + kRewatchEvery);
  RewatchIfDue();
}

void RealRun::RewatchIfDue() {
  const Duration now = observer_->Now();
  if (rewatch_pods_at_ && *rewatch_pods_at_ <= now) {
    rewatch_pods_at_.reset();
    last_rewatch_pods_ = now;
    observer_->StartPods();
    Relist(true);
  }
  if (rewatch_rcs_at_ && *rewatch_rcs_at_ <= now) {
    rewatch_rcs_at_.reset();
    last_rewatch_rcs_ = now;
    observer_->StartControllers();
    Relist(false);
  }
}

ExpectationOutcome RealRun::Check(const Expectation& e, std::size_t probe, Duration end) {
  ExpectationOutcome o;
  // Every expectation that names a controller carries its resolved namespace (scenario.h).
  auto find = [&](const auto& x) { return monitor_.Find(x.namespace_, x.controller); };
  auto rc_of = [&](const auto& x) -> ControllerPtr {
    auto it = monitor_.controllers().find(x.namespace_ + "/" + x.controller);
    return it == monitor_.controllers().end() ? nullptr : it->second;
  };
  if (const auto* c = std::get_if<ConvergedExpect>(&e.spec)) {
    const RealMonitor::Tracked* t = find(*c);
    // Searched and measured from the moment the actions at `after` were done (the state at the end
    // of that instant): the simulation's own writes take no time, so both modes measure from when the
    // scenario's change was in the API, not from when the harness began sending it (its GET and PUT
    // of a scale, its deletes one by one, took 6-220 ms on a loaded machine).
    Duration from = c->after;
    if (auto it = done_at_.find(c->after); it != done_at_.end()) from = std::max(from, it->second);
    std::optional<Duration> at = t ? FirstConvergedAt(t->series, from, c->count) : std::nullopt;
    if (!at) {
      o.passed = false;
      o.measured = nullptr;
      o.detail = "never converged after " + FormatScenarioDuration(c->after) + " (run ended at " +
                 Seconds(end) + ", limit " + FormatScenarioDuration(c->within) + ")";
    } else {
      Duration took = *at - from;
      o.passed = took <= c->within;
      o.measured = RoundedSeconds(took);
      o.detail = "converged " + Seconds(took) + " after " + FormatScenarioDuration(c->after);
      if (from > c->after) o.detail += " (its events' writes done at " + Seconds(from) + ")";
      o.detail += " (limit " + FormatScenarioDuration(c->within) + ")";
    }
  } else if (const auto* n = std::get_if<NeverAboveExpect>(&e.spec)) {
    int32_t peak = 0;
    std::string at;
    if (probe != kNoProbe) {
      RealMonitor::Window w = monitor_.GetWindow(probe, end);
      peak = w.any ? w.max_active : 0;
      if (w.any) at = " at " + Seconds(w.max_active_at);
      at += WindowText(n->after, n->until);
    } else if (const RealMonitor::Tracked* t = find(*n)) {
      peak = t->peak_active;
      if (peak > 0) at = " at " + Seconds(t->peak_at);
    }
    o.passed = peak <= n->active;
    o.measured = peak;
    o.detail = "peak " + std::to_string(peak) + " active" + at + " (bound " + std::to_string(n->active) + ")";
  } else if (const auto* b = std::get_if<NeverBelowExpect>(&e.spec)) {
    RealMonitor::Window w = monitor_.GetWindow(probe, end);
    if (!w.any) {
      o.passed = false;
      o.measured = nullptr;
      o.detail = "the run ended before the window" + WindowText(b->after, b->until);
    } else {
      o.passed = w.min_ready >= b->ready;
      o.measured = w.min_ready;
      o.detail = "lowest " + std::to_string(w.min_ready) + " ready at " + Seconds(w.min_ready_at) +
                 WindowText(b->after, b->until) + " (floor " + std::to_string(b->ready) + ")";
    }
  } else if (const auto* pm = std::get_if<PodsMatchingExpect>(&e.spec)) {
    const RealMonitor::Matcher& m = monitor_.GetMatcher(probe);
    o.passed = true;
    o.measured = json{{"peak_active", m.peak_active}, {"running", m.running}};
    o.detail = "peak " + std::to_string(m.peak_active) + " active";
    if (m.peak_active > 0) o.detail += " at " + Seconds(m.peak_at);
    if (pm->never_above) {
      o.passed = o.passed && m.peak_active <= *pm->never_above;
      o.detail += " (bound " + std::to_string(*pm->never_above) + ")";
    }
    o.detail += ", " + std::to_string(m.running) + " running at the end";
    if (pm->final_running) {
      o.passed = o.passed && m.running == *pm->final_running;
      o.detail += " (want " + std::to_string(*pm->final_running) + ")";
    }
  } else if (const auto* cd = std::get_if<ConditionExpect>(&e.spec)) {
    const RealMonitor::Tracked* t = find(*cd);
    bool seen = false;
    std::string reasons;
    if (t != nullptr) {
      if (auto it = t->conditions_seen.find(cd->type); it != t->conditions_seen.end()) {
        for (const std::string& r : it->second) {
          seen = seen || cd->reason.empty() || r == cd->reason;
          reasons += (reasons.empty() ? "" : ", ") + r;
        }
        if (!cd->reason.empty() && !seen) reasons += " (not " + cd->reason + ")";
      }
    }
    bool at_end = false;
    if (ControllerPtr rc = rc_of(*cd)) {
      for (const ReplicationControllerCondition& cond : rc->status.conditions) {
        at_end = at_end || (cond.type == cd->type && cond.status == "True");
      }
    }
    o.passed = seen == cd->seen && (!cd->final || *cd->final == at_end);
    o.measured = json{{"seen", seen}, {"at_end", at_end}};
    o.detail = cd->type + (seen ? " seen (" + reasons + ")" : " never seen") +
               (at_end ? ", present at the end" : ", absent at the end");
  } else if (const auto* f = std::get_if<FinalExpect>(&e.spec)) {
    ControllerPtr rc = rc_of(*f);
    RealMonitor::Counts c = rc ? monitor_.CountsOf(*rc) : RealMonitor::Counts{};
    const int32_t status_replicas = rc ? rc->status.replicas : 0;
    o.measured = json{{"running", c.running}, {"replicas_status", status_replicas}, {"desired", c.desired}};
    const int32_t want = f->running.value_or(c.desired);
    const bool check_running = f->running.has_value() || !f->replicas_status.has_value();
    o.passed = true;
    o.detail = "running " + std::to_string(c.running);
    if (check_running) {
      o.passed = o.passed && c.running == want;
      o.detail += " (want " + std::to_string(want) + ")";
    }
    if (f->replicas_status) {
      o.passed = o.passed && status_replicas == *f->replicas_status;
      o.detail += ", status.replicas " + std::to_string(status_replicas) + " (want " +
                  std::to_string(*f->replicas_status) + ")";
    }
  } else if (const auto* a = std::get_if<ApiCallsExpect>(&e.spec)) {
    const uint64_t calls = a->verb ? r_.api_calls[VerbKey(*a->verb)] : r_.api_calls_total;
    o.passed = calls <= static_cast<uint64_t>(a->at_most);
    o.measured = calls;
    o.detail = std::to_string(calls) + " " + (a->verb ? std::string(VerbKey(*a->verb)) + " " : "") +
               "calls (at most " + std::to_string(a->at_most) + ")";
  } else if (const auto* sm = std::get_if<StatusMatchesExpect>(&e.spec)) {
    ControllerPtr rc = rc_of(*sm);
    if (!rc) {
      o.passed = false;
      o.measured = nullptr;
      o.detail = "controller " + sm->namespace_ + "/" + sm->controller + " does not exist at the end";
    } else {
      const ReplicationController& ctl = *rc;
      ReplicationControllerStatus want;
      const Labels* tl = ctl.spec.template_ ? &ctl.spec.template_->metadata.labels : nullptr;
      const TimePoint now = WallNow();
      for (const PodPtr& pod : monitor_.PodsOf(ctl)) {
        if (!IsActive(*pod)) continue;
        ++want.replicas;
        if (tl && SelectorMapMatches(*tl, pod->metadata.labels)) ++want.fully_labeled_replicas;
        if (IsReady(*pod)) ++want.ready_replicas;
        if (IsAvailable(*pod, ctl.spec.min_ready_seconds, now)) ++want.available_replicas;
      }
      want.observed_generation = ctl.metadata.generation;
      ReplicationControllerStatus got = ctl.status;
      got.conditions.clear();
      want.conditions.clear();
      auto to_json = [](const ReplicationControllerStatus& st) {
        return json{{"replicas", st.replicas},
                    {"fullyLabeledReplicas", st.fully_labeled_replicas},
                    {"readyReplicas", st.ready_replicas},
                    {"availableReplicas", st.available_replicas},
                    {"observedGeneration", st.observed_generation}};
      };
      o.passed = to_json(got) == to_json(want);
      o.measured = json{{"status", to_json(got)}, {"observed", to_json(want)}};
      o.detail = o.passed ? "status matches (replicas " + std::to_string(got.replicas) + ", ready " +
                                std::to_string(got.ready_replicas) + ", generation " +
                                std::to_string(got.observed_generation) + ")"
                          : "status " + to_json(got).dump() + " but observed " + to_json(want).dump();
    }
  }
  o.kind = e.kind;
  o.text = e.text;
  return o;
}

RunResult RealRun::Run() {
  const auto wall_start = SteadyClock::now();
  r_.scenario = s_.name;
  r_.file = s_.file;
  r_.seed = seed_;
  r_.tier = s_.tier;
  r_.mode = "real";
  auto finish = [&]() -> RunResult {
    r_.passed = r_.passed && r_.error.empty();
    r_.wall_seconds = std::chrono::duration<double>(SteadyClock::now() - wall_start).count();
    return r_;
  };
  const bool existing = !o_.kubeconfig.empty();
  HttpApiClientOptions api_options;
  api_options.request_timeout = std::chrono::seconds(10);
  api_options.connect_timeout = std::chrono::seconds(2);
  if (existing) {
    Result<ClientConfig> cfg = LoadKubeconfig(o_.kubeconfig, o_.context);
    if (!cfg.ok()) {
      Fail("--kubeconfig: " + cfg.status().ToString());
      return finish();
    }
    api_options.base_url = cfg->server;
    api_options.bearer_token = cfg->token;
    api_options.tls.ca_file = cfg->ca_file;
    api_options.tls.ca_data = cfg->ca_data;
    api_options.tls.cert_file = cfg->client_cert_file;
    api_options.tls.cert_data = cfg->client_cert_data;
    api_options.tls.key_file = cfg->client_key_file;
    api_options.tls.key_data = cfg->client_key_data;
    api_options.tls.insecure_skip_verify = cfg->insecure_skip_tls_verify;
  } else {
    RealStackOptions so;
    so.etcd_binary = o_.etcd_binary;
    so.apiserver_binary = o_.apiserver_binary;
    so.controller_manager_binary = o_.controller_manager_binary;
    so.node_agent_binary = o_.node_agent_binary;
    so.node_agents = o_.hollow_nodes ? 0 : s_.cluster.nodes;
    so.max_pods = s_.cluster.max_pods;
    so.etcd_members = o_.etcd_members;
    so.manager_flags = ManagerFlags(s_.manager);
    so.seed = seed_;
    Result<std::unique_ptr<RealStack>> stack = RealStack::Start(so);
    if (!stack.ok()) {
      Fail("starting the real stack: " + stack.status().ToString());
      return finish();
    }
    stack_ = std::move(stack).value();
    Log("real stack: " + stack_->Describe());
    // Marker dirs in the stack's temporary dir, for the events that need them on node agents.
    auto marker_dir = [&](const std::string& name, auto has_event) {
      if (!agents() || std::none_of(s_.events.begin(), s_.events.end(), has_event)) return std::string();
      std::string dir = stack_->temp_dir() + "/" + name;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) Fail("creating " + dir + ": " + ec.message());
      return dir;
    };
    crash_loop_dir_ = marker_dir("crash-loop", [](const ScenarioEvent& e) {
      return std::holds_alternative<CrashLoopAction>(e.action);
    });
    readiness_dir_ = marker_dir("readiness", [](const ScenarioEvent& e) {
      return std::holds_alternative<SetReadyAction>(e.action) ||
             std::holds_alternative<FlapReadinessAction>(e.action);
    });
    api_options.base_url = stack_->api_url();
  }
  Result<std::unique_ptr<HttpApiClient>> api = HttpApiClient::Create(api_options);
  if (!api.ok()) {
    Fail("API client: " + api.status().ToString());
    return finish();
  }
  api_ = std::move(api).value();
  std::set<std::string> namespaces;
  for (const ControllerConfig& c : s_.controllers) namespaces.insert(c.namespace_);
  for (const ScenarioEvent& e : s_.events) {
    if (const auto* c = std::get_if<CreateControllerAction>(&e.action))
      namespaces.insert(c->controller.namespace_);
  }
  for (const std::string& ns : namespaces) {
    if (Status st = EnsureNamespace(ns); !st.ok()) Fail(st.ToString());
  }
  std::unique_ptr<HollowNodes> nodes;
  if (!existing && o_.hollow_nodes) {
    nodes = std::make_unique<HollowNodes>(api_.get(), s_.cluster.pod_start_latency.min,
                                          s_.cluster.pod_start_latency.max, seed_);
    nodes->Start();
  }
  std::vector<std::size_t> probes;
  for (const Expectation& e : s_.expect) {
    std::size_t probe = kNoProbe;
    if (const auto* n = std::get_if<NeverAboveExpect>(&e.spec);
        n && (n->after > Duration::zero() || n->until)) {
      probe = monitor_.AddWindow(n->namespace_, n->controller, n->after, n->until);
    } else if (const auto* b = std::get_if<NeverBelowExpect>(&e.spec)) {
      probe = monitor_.AddWindow(b->namespace_, b->controller, b->after, b->until);
    } else if (const auto* m = std::get_if<PodsMatchingExpect>(&e.spec)) {
      probe = monitor_.AddMatcher(m->namespace_, m->selector);
    }
    probes.push_back(probe);
  }
  r_.manager_starts = existing ? 0 : 1;

  const auto origin = SteadyClock::now();
  observer_ = std::make_unique<Observer>(api_.get(), origin);
  observer_->Start();
  for (std::size_t i = 0; i < s_.controllers.size(); ++i) {
    if (Status st = CreateController(s_.controllers[i]); !st.ok()) {
      Fail("/controllers/" + std::to_string(i) + ": the API refused it: " + st.ToString());
    }
  }
  done_at_[Duration::zero()] = observer_->Now();
  for (std::size_t i = 0; i < s_.events.size(); ++i) {
    const ScenarioEvent& e = s_.events[i];
    Schedule(e.at, [this, i] {
      const ScenarioEvent& ev = s_.events[i];
      const Duration now = observer_->Now();
      r_.events.push_back(EventMark{now, ev.kind, ev.text});
      Status st = Fire(ev, ev.at);
      if (!st.ok()) Fail("/events/" + std::to_string(i) + " (" + ev.kind + ") failed: " + st.ToString());
      Duration& done = done_at_[ev.at];
      done = std::max(done, observer_->Now());
    });
  }

  Duration settle = s_.SettleTime();
  // The evictions a fail_node brings are work the watch cannot see coming: the node lifecycle
  // controller acts about 4 s after the failure (kNodeLifecycleFlags); the run does not end before.
  for (const ScenarioEvent& e : s_.events) {
    if (std::holds_alternative<FailNodeAction>(e.action))
      settle = std::max(settle, e.at + kEvictionAfterFailure);
  }
  const Duration quiet = s_.QuietPeriod();
  Duration end{0};
  while (true) {
    Absorb(observer_->Take(SteadyClock::now()));
    RewatchIfDue();
    const Duration now = observer_->Now();
    RunDueActions();
    const Duration quiet_end = std::max(settle, monitor_.last_change()) + quiet;
    const Duration limit = std::min(quiet_end, s_.duration);
    Duration next_action = Duration::max();
    for (const Action& a : actions_) next_action = std::min(next_action, a.at);
    if (now >= limit && next_action > limit) {
      r_.end_reason = limit < s_.duration ? "quiet" : "duration";
      end = limit;
      break;
    }
    if (o_.wall_timeout_seconds > 0 &&
        std::chrono::duration<double>(SteadyClock::now() - wall_start).count() > o_.wall_timeout_seconds) {
      Fail("wall-clock timeout: still running after " + std::to_string(o_.wall_timeout_seconds) +
           " s (--timeout)");
      r_.end_reason = "timeout";
      end = now;
      break;
    }
    if (o_.interrupted && o_.interrupted()) {
      Fail("interrupted");
      r_.end_reason = "interrupted";
      end = now;
      break;
    }
    const Duration wake = std::min({next_action, limit, now + std::chrono::milliseconds(100)});
    Absorb(observer_->Take(origin + std::max(wake, now)));
  }
  // The end state: whatever the watch has not delivered yet is folded in from fresh lists.
  Relist(false);
  Relist(true);
  r_.virtual_time = std::max(end, observer_->Now());
  if (stack_) {
    FaultProxyCounters c = stack_->proxy().counters();
    for (int v = 0; v < 7; ++v) r_.api_calls[VerbKey(static_cast<Verb>(v))] = c.calls[v];
    r_.api_calls_total = c.calls_total();
  }
  r_.passed = true;
  for (std::size_t i = 0; i < s_.expect.size(); ++i) {
    ExpectationOutcome o = Check(s_.expect[i], probes[i], end);
    r_.passed = r_.passed && o.passed;
    if (std::holds_alternative<ConvergedExpect>(s_.expect[i].spec)) {
      if (o.measured.is_number()) {
        Duration d =
            std::chrono::duration_cast<Duration>(std::chrono::duration<double>(o.measured.get<double>()));
        r_.convergence = r_.convergence ? std::max(*r_.convergence, d) : d;
      } else {
        r_.any_not_converged = true;
      }
    }
    r_.expectations.push_back(std::move(o));
  }
  r_.controllers = monitor_.Outcomes();
  r_.totals = monitor_.totals();
  r_.peak_active = monitor_.peak_total_active();
  r_.changes = monitor_.changes();
  observer_->Stop();
  if (nodes) nodes->Stop();
  api_.reset();
  if (stack_ && !o_.logs_dir.empty() && !(r_.passed && r_.error.empty())) {
    std::error_code ec;
    const std::filesystem::path to = std::filesystem::path(o_.logs_dir) / (s_.name + ".logs");
    std::filesystem::create_directories(to, ec);
    std::vector<std::string> logs = {"etcd.log", "apiserver.log", "controller-manager.log",
                                     "cluster-controllers.log"};
    for (int i = 0; i < stack_->node_agents(); ++i) logs.push_back(RealStack::NodeName(i) + ".log");
    for (int m = 1; m < stack_->etcd_members(); ++m) logs.push_back("etcd-" + std::to_string(m) + ".log");
    for (const std::string& log : logs) {
      std::filesystem::copy_file(std::filesystem::path(stack_->temp_dir()) / log, to / log,
                                 std::filesystem::copy_options::overwrite_existing, ec);
    }
    Log("logs of the failed run in " + to.string());
  }
  if (stack_) stack_->Stop();
  return finish();
}

}  // namespace

std::vector<std::string> RealModeProblems(const Scenario& s, bool existing_cluster, bool hollow_nodes,
                                          int etcd_members) {
  std::vector<std::string> out;
  auto add = [&](const std::string& pointer, const std::string& why) {
    out.push_back(s.file + ": " + pointer + ": " + why);
  };
  if (s.manager.burst_replicas != ManagerConfig{}.burst_replicas && !existing_cluster) {
    add("/manager/burst_replicas",
        "real mode cannot set it (the controller-manager has no flag for it; it uses " +
            std::to_string(ManagerConfig{}.burst_replicas) + ")");
  }
  if (!existing_cluster && !hollow_nodes && s.cluster.nodes > kMaxNodeAgents) {
    add("/cluster/nodes", "real mode runs one node-agent process per node, at most " +
                              std::to_string(kMaxNodeAgents) + ", got " + std::to_string(s.cluster.nodes) +
                              " (--hollow-nodes runs any number of hollow nodes, without kill_pods and "
                              "fail_node)");
  }
  if (s.manager.kind != "modern") {
    add("/manager/kind", "the " + s.manager.kind + " manager runs only in the simulation");
  }
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const ScenarioEvent& e = s.events[i];
    const std::string pointer = "/events/" + std::to_string(i) + "/" + e.kind;
    if (std::holds_alternative<KillPodsAction>(e.action) ||
        std::holds_alternative<CrashLoopAction>(e.action) ||
        std::holds_alternative<FailNodeAction>(e.action) ||
        std::holds_alternative<StopNodeAgentAction>(e.action) ||
        std::holds_alternative<StartNodeAgentAction>(e.action) ||
        std::holds_alternative<NodeCapacityAction>(e.action) ||
        std::holds_alternative<SetReadyAction>(e.action) ||
        std::holds_alternative<FlapReadinessAction>(e.action)) {
      if (existing_cluster) {
        add(pointer,
            "needs the node agents rcsim starts itself (it signals their processes); not with "
            "--kubeconfig");
      } else if (hollow_nodes) {
        add(pointer, "needs node agents running the pods as processes; not with --hollow-nodes");
      }
      continue;
    }
    if (const auto* r = std::get_if<RestartEtcdAction>(&e.action);
        r && !existing_cluster && r->member >= etcd_members) {
      add(pointer + "/member", "no such etcd member: this run has " + std::to_string(etcd_members) +
                                   " (members 0 .. " + std::to_string(etcd_members - 1) +
                                   "; --etcd-members 3 for more)");
    }
    if (std::holds_alternative<KillEtcdLeaderAction>(e.action) && !existing_cluster && etcd_members < 3) {
      add(pointer,
          "needs a multi-member etcd that survives its leader's loss (--etcd-members 3); this run has " +
              std::to_string(etcd_members));
    }
    const bool needs_stack = std::holds_alternative<RestartManagerAction>(e.action) ||
                             std::holds_alternative<RestartEtcdAction>(e.action) ||
                             std::holds_alternative<KillEtcdLeaderAction>(e.action) ||
                             std::holds_alternative<PartitionManagerAction>(e.action) ||
                             std::holds_alternative<ApiFaultsAction>(e.action) ||
                             std::holds_alternative<WatchFaultsAction>(e.action) ||
                             std::holds_alternative<StaleReadsAction>(e.action);
    if (needs_stack && existing_cluster) {
      add(pointer,
          "needs the processes rcsim starts itself (the manager, the fault proxy, etcd); not with "
          "--kubeconfig");
    }
  }
  if (existing_cluster) {
    for (std::size_t i = 0; i < s.expect.size(); ++i) {
      if (std::holds_alternative<ApiCallsExpect>(s.expect[i].spec)) {
        add("/expect/" + std::to_string(i) + "/api_calls",
            "the manager's API calls are counted by rcsim's fault proxy; not with --kubeconfig");
      }
    }
  }
  return out;
}

std::vector<std::string> ManagerFlags(const ManagerConfig& m) {
  const auto resync = std::chrono::duration_cast<std::chrono::milliseconds>(m.resync).count();
  const long long seconds = std::max<long long>(1, (resync + 999) / 1000);
  return {"--concurrent-rc-syncs=" + std::to_string(m.workers), "--resync=" + std::to_string(seconds)};
}

RunResult RunScenarioReal(const Scenario& scenario, uint64_t seed, const RealRunOptions& options) {
  RealRun run(scenario, seed, options);
  return run.Run();
}

}  // namespace rcsim
