// controller-manager [--apiserver=http://127.0.0.1:8080] [--etcd_servers=URLS] [--workers 5] [--resync 30]
//                    [--token-file F] [--controllers=*] [--node-monitor-grace-period=40s]
//                    [--pod-eviction-timeout=5m0s] [--terminated-pod-gc-threshold=12500]
//                    [--bind-address=127.0.0.1] [--secure-port=10257] [--port=10252]
//                    [--tls-cert-file F --tls-private-key-file F]
//
// Runs the ReplicationManager (engine/replication_manager.h) in production: replication controllers
// listed and watched through the API server (or, with --etcd_servers, from etcd: the 2014-style watch
// on /registry/controllers/), pods and every write through the API server over HTTP. Beside it, as
// --controllers selects, the cluster controllers of cluster/: garbage collector, node lifecycle, pod GC
// and the scheduler, all through the API server. Everything runs on one executor thread
// (ThreadExecutor), only while this process holds the leader lease; the HTTP client and the etcd
// watches call back on their own threads and hop to the executor (cluster/executor_api.h). Prints
// "controller-manager running" once started. Stops on SIGINT/SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "apps/controller-manager/controller_selection.h"
#include "apps/controller-manager/manager_metrics.h"
#include "backends/etcd/etcd_store.h"
#include "backends/http/status_server.h"
#include "backends/http/thread_executor.h"
#include "backends/httpclient/client_flags.h"
#include "backends/httpclient/http_api_client.h"
#include "backends/httpclient/http_event_sink.h"
#include "backends/httpclient/kubeconfig.h"
#include "backends/httpclient/lease_lock.h"
#include "backends/tls/self_signed.h"
#include "backends/tls/tls_context.h"
#include "cluster/executor_api.h"
#include "cluster/garbage_collector.h"
#include "cluster/node_lifecycle_controller.h"
#include "cluster/pod_gc.h"
#include "cluster/scheduler.h"
#include "cluster/shared_caches.h"
#include "engine/event_recorder.h"
#include "engine/go_duration.h"
#include "engine/leader_elector.h"
#include "engine/log.h"
#include "engine/mutex.h"
#include "engine/replication_manager.h"
#include "engine/rng.h"
#include "engine/trace.h"

namespace rcsim {
namespace {

namespace po = boost::program_options;

struct Flags {
  std::string etcd_servers;
  std::string apiserver = "http://127.0.0.1:8080";
  std::string token_file;
  std::string master;         // overrides --apiserver (kube-controller-manager's name)
  bool server_given = false;  // --apiserver or --master on the command line
  std::string kubeconfig;
  std::string context;
  int workers = 5;
  int resync_seconds = 30;
  int api_connections = 32;
  double kube_api_qps = 20;  // kube-controller-manager's defaults (client-go's own are 5 / 10)
  int kube_api_burst = 30;
  int verbosity = 0;
  bool leader_elect = true;
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  std::string lease_name = "kube-controller-manager";
  std::string lease_namespace = "kube-system";
  std::string resource_lock = "leases";
  std::string bind_address = "127.0.0.1";
  int port = 10252;
  int secure_port = 10257;  // kube-controller-manager's
  std::string tls_cert_file;
  std::string tls_key_file;
  LeaderElectorOptions election;  // from the flags above
  // Which controllers run, and the options of the cluster controllers (kube-controller-manager's).
  std::string controllers = "*";
  std::string node_monitor_period = "5s";
  std::string node_monitor_grace_period = "40s";
  std::string pod_eviction_timeout = "5m0s";
  int64_t terminated_pod_gc_threshold = 12500;
  std::set<std::string> enabled;  // from --controllers
  NodeLifecycleOptions node_lifecycle;
  PodGcOptions pod_gc;
};

bool ParseFlags(int argc, char** argv, Flags* f, bool* exit_now) {
  po::options_description desc("controller-manager options");
  desc.add_options()("help,h", "show this help")(
      "etcd_servers,etcd-servers", po::value(&f->etcd_servers),
      "comma-separated etcd client URLs, e.g. http://127.0.0.1:2379: read replication controllers "
      "straight from etcd (the 2014 mode); without it they are listed and watched through the API")(
      "apiserver", po::value(&f->apiserver)->default_value(f->apiserver), "API server base URL")(
      "master", po::value(&f->master),
      "the API server's address; overrides --apiserver and the kubeconfig's")(
      "kubeconfig", po::value(&f->kubeconfig),
      "kubeconfig file with the API server's address and credentials (else in-cluster config when "
      "KUBERNETES_SERVICE_HOST is set, else --apiserver)")(
      "context", po::value(&f->context), "kubeconfig context to use instead of current-context")(
      "token-file,token_file", po::value(&f->token_file), "file holding the API server's bearer token")(
      "concurrent-rc-syncs,workers", po::value(&f->workers)->default_value(f->workers),
      "replication controllers synced at once (--workers is the old name)")(
      "resync", po::value(&f->resync_seconds)->default_value(f->resync_seconds),
      "seconds between full resyncs of every controller")(
      "api-connections", po::value(&f->api_connections)->default_value(f->api_connections),
      "keep-alive connections to the API server")(
      "kube-api-qps", po::value(&f->kube_api_qps)->default_value(f->kube_api_qps, "20"),
      "requests per second to the API server, on average (negative: no limit)")(
      "kube-api-burst", po::value(&f->kube_api_burst)->default_value(f->kube_api_burst),
      "requests let through at once above --kube-api-qps")(
      "v", po::value(&f->verbosity)->default_value(f->verbosity),
      "log verbosity: 0 actions and problems, 4 detail")(
      "leader-elect", po::value(&f->leader_elect)->default_value(true)->implicit_value(true),
      "run only while holding the leader lease (several managers may run; one acts)")(
      "leader-elect-lease-duration", po::value(&f->lease_duration)->default_value(f->lease_duration),
      "how long a standby waits after the last renewal it saw before taking over")(
      "leader-elect-renew-deadline", po::value(&f->renew_deadline)->default_value(f->renew_deadline),
      "a leader that could not renew for this long stops (and exits)")(
      "leader-elect-retry-period", po::value(&f->retry_period)->default_value(f->retry_period),
      "how often to try to acquire or renew the lease")(
      "leader-elect-resource-name", po::value(&f->lease_name)->default_value(f->lease_name),
      "name of the Lease")("leader-elect-resource-namespace",
                           po::value(&f->lease_namespace)->default_value(f->lease_namespace),
                           "namespace of the Lease")(
      "leader-elect-resource-lock", po::value(&f->resource_lock)->default_value(f->resource_lock),
      "lock type (only leases)")("bind-address", po::value(&f->bind_address)->default_value(f->bind_address),
                                 "address of /healthz, /livez, /readyz and /metrics")(
      "port", po::value(&f->port)->default_value(f->port),
      "plain-HTTP port of /healthz, /livez, /readyz and /metrics (0: any free port, -1: off)")(
      "secure-port", po::value(&f->secure_port)->default_value(f->secure_port),
      "HTTPS port for the same, with --tls-cert-file or else a self-signed certificate made at start "
      "(0: any free port, -1: off)")(
      "tls-cert-file", po::value(&f->tls_cert_file),
      "PEM certificate (then intermediates) for --secure-port; without it, a self-signed one")(
      "tls-private-key-file", po::value(&f->tls_key_file), "PEM private key of --tls-cert-file")(
      "controllers", po::value(&f->controllers)->default_value(f->controllers),
      "controllers to run, comma-separated: '*' all, 'name' on, '-name' off (names: replicationcontroller, "
      "garbagecollector, nodelifecycle, podgc, scheduler)")(
      "node-monitor-period", po::value(&f->node_monitor_period)->default_value(f->node_monitor_period),
      "how often the node lifecycle controller checks node heartbeats")(
      "node-monitor-grace-period",
      po::value(&f->node_monitor_grace_period)->default_value(f->node_monitor_grace_period),
      "a node whose heartbeat is older than this is marked Ready=Unknown and tainted unreachable")(
      "pod-eviction-timeout", po::value(&f->pod_eviction_timeout)->default_value(f->pod_eviction_timeout),
      "how long a node stays unreachable before its pods are deleted")(
      "terminated-pod-gc-threshold",
      po::value(&f->terminated_pod_gc_threshold)->default_value(f->terminated_pod_gc_threshold),
      "terminated pods kept before the pod GC deletes the oldest (<= 0: none deleted for this reason)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {  // the parse boundary
    std::cerr << "controller-manager: " << e.what() << "\n" << desc;
    return false;
  }
  if (vm.count("help")) {
    std::cout << desc;
    *exit_now = true;
    return true;
  }
  if (f->kube_api_qps == 0 || f->kube_api_burst < 1) {
    std::cerr << "controller-manager: --kube-api-qps must not be 0 (negative: no limit) and --kube-api-burst "
                 "must be positive\n";
    return false;
  }
  if (f->workers < 1 || f->resync_seconds < 1 || f->api_connections < 1) {
    std::cerr
        << "controller-manager: --concurrent-rc-syncs, --resync and --api-connections must be positive\n";
    return false;
  }
  f->server_given = !f->master.empty() || (vm.count("apiserver") && !vm["apiserver"].defaulted());
  if (!f->master.empty()) f->apiserver = f->master;
  if (f->port < -1 || f->port > 65535 || f->secure_port < -1 || f->secure_port > 65535) {
    std::cerr << "controller-manager: --port and --secure-port must be -1 (off), 0 (any) or a port number\n";
    return false;
  }
  if (f->tls_cert_file.empty() != f->tls_key_file.empty()) {
    std::cerr << "controller-manager: --tls-cert-file and --tls-private-key-file go together\n";
    return false;
  }
  if (f->resource_lock != "leases") {
    std::cerr << "controller-manager: --leader-elect-resource-lock: only \"leases\" is supported\n";
    return false;
  }
  const std::pair<const char*, std::string*> durations[] = {{"lease-duration", &f->lease_duration},
                                                            {"renew-deadline", &f->renew_deadline},
                                                            {"retry-period", &f->retry_period}};
  Duration* outs[] = {&f->election.lease_duration, &f->election.renew_deadline, &f->election.retry_period};
  for (int i = 0; i < 3; ++i) {
    std::optional<Duration> d = ParseGoDuration(*durations[i].second);
    if (!d) {
      std::cerr << "controller-manager: --leader-elect-" << durations[i].first << ": not a duration: \""
                << *durations[i].second << "\" (e.g. 15s, 500ms)\n";
      return false;
    }
    *outs[i] = *d;
  }
  Result<std::set<std::string>> enabled = SelectControllers(f->controllers);
  if (!enabled.ok()) {
    std::cerr << "controller-manager: " << enabled.status().message() << "\n";
    return false;
  }
  f->enabled = std::move(enabled).value();
  const std::pair<const char*, std::string*> cluster_durations[] = {
      {"node-monitor-period", &f->node_monitor_period},
      {"node-monitor-grace-period", &f->node_monitor_grace_period},
      {"pod-eviction-timeout", &f->pod_eviction_timeout}};
  Duration* cluster_outs[] = {&f->node_lifecycle.monitor_period, &f->node_lifecycle.grace_period,
                              &f->node_lifecycle.eviction_timeout};
  for (int i = 0; i < 3; ++i) {
    std::optional<Duration> d = ParseGoDuration(*cluster_durations[i].second);
    if (!d || (i == 0 && *d <= Duration::zero())) {
      std::cerr << "controller-manager: --" << cluster_durations[i].first << ": not a"
                << (i == 0 ? " positive" : "") << " duration: \"" << *cluster_durations[i].second
                << "\" (e.g. 40s, 5m0s)\n";
      return false;
    }
    *cluster_outs[i] = *d;
  }
  f->pod_gc.terminated_threshold = f->terminated_pod_gc_threshold;
  return true;
}

// Log lines to stderr with the UTC time of day: info and above, debug too at --v >= 4. Thread-safe.
class StderrLogger final : public Logger {
 public:
  explicit StderrLogger(int verbosity) : verbosity_(verbosity) {}
  void Log(LogLevel level, std::string_view message) override {
    if (level == LogLevel::kDebug && verbosity_ < 4) return;
    const std::string now = FormatTimeOfDay(SystemClock().Now());
    MutexLock lock(mu_);
    std::cerr << "controller-manager: " << now << " "
              << (level == LogLevel::kError     ? "error: "
                  : level == LogLevel::kWarning ? "warning: "
                                                : "")
              << message << std::endl;
  }

 private:
  const int verbosity_;
  Mutex mu_;
};

// hostname_<random hex>, as kube-controller-manager's identity (hostname plus a uuid).
std::string Identity() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  std::random_device rd;
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", rd(), rd());
  return std::string(host) + "_" + suffix;
}

// The TLS context of --secure-port: --tls-cert-file and its key, else a self-signed certificate made
// now for the host and --bind-address (kube-controller-manager keeps one in memory the same way).
Result<std::shared_ptr<boost::asio::ssl::context>> ServingTls(const Flags& flags) {
  if (!flags.tls_cert_file.empty()) {
    return NewTlsServerContext(TlsServerFiles{flags.tls_cert_file, flags.tls_key_file, ""});
  }
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  Result<PemCertificate> cert = NewSelfSignedCertificate(host, {host, flags.bind_address});
  if (!cert.ok()) return cert.status();
  return NewTlsServerContextFromPem(*cert);
}

// Runs fn on the executor and waits for it.
void RunOn(Executor& executor, std::function<void()> fn) {
  std::promise<void> done;
  executor.Post([&] {
    fn();
    done.set_value();
  });
  done.get_future().wait();
}

int Main(int argc, char** argv) {
  Flags flags;
  bool exit_now = false;
  if (!ParseFlags(argc, argv, &flags, &exit_now)) return 2;
  if (exit_now) return 0;

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Where the API server is, as kube-controller-manager decides: --kubeconfig (with --master
  // overriding its server), else --master/--apiserver, else the in-cluster service account.
  ApiServerFlags server_flags;
  server_flags.apiserver = flags.apiserver;
  server_flags.master = flags.master;
  server_flags.server_given = flags.server_given;
  server_flags.kubeconfig = flags.kubeconfig;
  server_flags.context = flags.context;
  server_flags.token_file = flags.token_file;
  Result<ClientConfig> resolved = ResolveClientConfig(server_flags);
  if (!resolved.ok()) {
    std::cerr << "controller-manager: " << resolved.status().message() << "\n";
    return 2;
  }
  const ClientConfig client_config = std::move(resolved).value();
  flags.apiserver = client_config.server;
  HttpApiClientOptions api_options = ClientOptionsFor(client_config);
  api_options.max_connections = flags.api_connections;
  api_options.qps = flags.kube_api_qps;
  api_options.burst = flags.kube_api_burst;

  // The 2014 mode when --etcd_servers is given: controllers from etcd. Otherwise (the default) through
  // the API, like pods.
  EtcdStoreOptions etcd_options;
  etcd_options.endpoints = SplitEtcdEndpoints(flags.etcd_servers);
  const bool etcd_mode = !flags.etcd_servers.empty();
  // Watch outages and recoveries, from the watch threads.
  StderrLogger logger(flags.verbosity);
  etcd_options.log = [&logger](LogLevel level, const std::string& message) { logger.Log(level, message); };
  std::unique_ptr<EtcdStore> store;
  if (etcd_mode) {
    Result<std::unique_ptr<EtcdStore>> created = EtcdStore::Create(etcd_options);
    if (!created.ok()) {
      std::cerr << "controller-manager: " << created.status().ToString() << "\n";
      return 2;
    }
    store = std::move(created).value();
  }
  Result<std::unique_ptr<HttpApiClient>> api = HttpApiClient::Create(api_options);
  if (!api.ok()) {
    std::cerr << "controller-manager: " << api.status().ToString() << "\n";
    return 2;
  }
  // Leader election has its own client, hence its own rate limiter, as kube-controller-manager's
  // "leader-election" client: a renewal never queues behind a burst of pod creations.
  HttpApiClientOptions election_options = api_options;
  election_options.max_connections = 2;
  Result<std::unique_ptr<HttpApiClient>> election_api = HttpApiClient::Create(election_options);
  if (!election_api.ok()) {
    std::cerr << "controller-manager: " << election_api.status().ToString() << "\n";
    return 2;
  }

  SystemClock clock;
  // Not the simulation: randomness only spreads retries and need not repeat between runs.
  Mt19937Rng rng(std::random_device{}());
  NullTraceSink trace;
  ManagerOptions options;
  options.workers = flags.workers;
  options.resync_period = std::chrono::seconds(flags.resync_seconds);

  ManagerMetricsExporter exporter(flags.lease_name);
  std::unique_ptr<ApiClient> instrumented = NewInstrumentedApiClient(api->get(), &exporter, &logger);
  HttpLeaseLock lease_lock(election_api->get(), flags.lease_namespace, flags.lease_name);
  // SuccessfulCreate / FailedCreate / SuccessfulDelete events on the controllers, for kubectl describe.
  HttpEventSink event_sink(api->get());
  flags.election.identity = Identity();
  if (flags.leader_elect) {
    if (Status s = LeaderElector::Validate(flags.election); !s.ok()) {
      std::cerr << "controller-manager: " << s.message() << "\n";
      return 2;
    }
  }
  {
    // Declared after the store and the client, so it is gone before they are; created, started, stopped
    // and destroyed on the executor, as the engine's single-thread contract requires.
    ThreadExecutor executor;
    std::unique_ptr<EventRecorder> recorder;
    // The cluster controllers are single-threaded by contract: their callbacks hop onto the executor.
    ExecutorApi cluster_api(instrumented.get(), api->get(), &executor);
    std::unique_ptr<ReplicationManager> manager;
    // The GC, the node lifecycle controller and the pod GC read pods and nodes from one cache per
    // resource, as kube-controller-manager's shared informers (created when this process leads).
    std::unique_ptr<SharedCaches> caches;
    std::unique_ptr<GarbageCollector> garbage_collector;
    std::unique_ptr<NodeLifecycleController> node_lifecycle;
    std::unique_ptr<PodGc> pod_gc;
    std::unique_ptr<Scheduler> scheduler;
    std::unique_ptr<LeaderElector> elector;
    // Every enabled controller starts when this process leads (or at once without leader election).
    auto start_manager = [&] {
      const auto on = [&](const char* name) { return flags.enabled.count(name) > 0; };
      if (on(kReplicationControllerName)) {
        recorder = std::make_unique<EventRecorder>(EventRecorderOptions{}, &clock, &event_sink);
        manager = std::make_unique<ReplicationManager>(options, store.get(), instrumented.get(), &clock,
                                                       &executor, &rng, &trace, &logger);
        manager->set_event_recorder(recorder.get());
        manager->Start();
        logger.Log(LogLevel::kInfo,
                   "replication manager started (" + std::to_string(flags.workers) + " concurrent syncs)");
      }
      // Every controller adds its handlers to the shared caches before any of them starts them.
      caches = std::make_unique<SharedCaches>(&cluster_api, &cluster_api, &executor);
      if (on(kGarbageCollectorName)) {
        garbage_collector = std::make_unique<GarbageCollector>(GarbageCollectorOptions{}, &cluster_api,
                                                               &cluster_api, &executor, &trace, caches.get());
      }
      if (on(kNodeLifecycleName)) {
        node_lifecycle = std::make_unique<NodeLifecycleController>(
            flags.node_lifecycle, &cluster_api, &cluster_api, &clock, &executor, &trace, caches.get());
      }
      if (on(kPodGcName)) {
        pod_gc = std::make_unique<PodGc>(flags.pod_gc, &cluster_api, &cluster_api, &clock, &executor, &trace,
                                         caches.get());
      }
      if (garbage_collector) garbage_collector->Start();
      if (node_lifecycle) node_lifecycle->Start();
      if (pod_gc) pod_gc->Start();
      if (on(kSchedulerName)) {
        scheduler = std::make_unique<Scheduler>(SchedulerOptions{}, &cluster_api, &cluster_api, &clock,
                                                &executor, &trace);
        scheduler->Start();
      }
      std::string started;
      for (const std::string& name : KnownControllers()) {
        if (on(name.c_str())) started += (started.empty() ? "" : ",") + name;
      }
      logger.Log(LogLevel::kInfo,
                 "controllers started: " + (started.empty() ? std::string("none") : started));
    };
    auto stop_controllers = [&] {
      scheduler.reset();
      pod_gc.reset();
      node_lifecycle.reset();
      garbage_collector.reset();
      caches.reset();
      manager.reset();
    };
    RunOn(executor, [&] {
      if (!flags.leader_elect) {
        start_manager();
        return;
      }
      elector = std::make_unique<LeaderElector>(
          flags.election, &lease_lock, &clock, &executor, &logger,
          LeaderElector::Callbacks{start_manager,
                                   [&] {
                                     // Stop every write at once: nothing of this process may act once
                                     // another manager could hold the lease (kube-controller-manager
                                     // exits the same way).
                                     logger.Log(LogLevel::kError, "leaderelection lost; exiting");
                                     std::_Exit(1);
                                   },
                                   nullptr});
      elector->Start();
    });
    // What /readyz and /metrics report, read on the executor (bounded wait: a scrape never hangs).
    auto snapshot = [&]() -> std::optional<ManagerSnapshot> {
      auto out = std::make_shared<std::promise<ManagerSnapshot>>();
      std::future<ManagerSnapshot> got = out->get_future();
      executor.Post([&, out] {
        ManagerSnapshot s;
        s.leader = !flags.leader_elect || (elector != nullptr && elector->IsLeader());
        s.standby_healthy = !s.leader && elector != nullptr && !elector->observed_holder().empty();
        s.synced = s.leader && manager == nullptr;  // nothing to sync without the replication manager
        if (manager != nullptr) {
          s.counters = manager->metrics();
          s.queue_depth = manager->queue_depth();
          const WorkQueue::Unfinished unfinished = manager->unfinished_work();
          s.unfinished_work_seconds = unfinished.total_seconds;
          s.longest_running_seconds = unfinished.longest_seconds;
          s.synced = manager->HasSynced();
          for (const std::string& key : manager->controllers().Keys()) {
            s.expectations_pending += manager->expectations().PendingAdds(key);
            s.expectations_pending += static_cast<int64_t>(manager->expectations().PendingDeletes(key));
          }
        }
        out->set_value(s);
      });
      if (got.wait_for(std::chrono::seconds(2)) != std::future_status::ready) return std::nullopt;
      return got.get();
    };
    StatusServerOptions status_options;
    status_options.address = flags.bind_address;
    status_options.port = static_cast<uint16_t>(std::max(flags.port, 0));
    status_options.ready = [&]() -> Status {
      std::optional<ManagerSnapshot> s = snapshot();
      if (!s) return Status(Code::kUnavailable, "the manager's event loop did not answer within 2 s");
      if (s->leader) {
        return s->synced ? Status::Ok() : Status(Code::kUnavailable, "informers have not synced yet");
      }
      return s->standby_healthy ? Status::Ok()
                                : Status(Code::kUnavailable, "standby: the leader lease cannot be read yet");
    };
    status_options.metrics = [&]() -> std::string {
      std::optional<ManagerSnapshot> s = snapshot();
      return exporter.Scrape(s.value_or(ManagerSnapshot{}));
    };
    StatusServerOptions secure_options = status_options;
    StatusServer status_server(std::move(status_options));
    std::unique_ptr<StatusServer> secure_server;
    Status serving = Status::Ok();
    if (flags.port >= 0) {
      serving = status_server.Start();
      if (serving.ok()) {
        std::cerr << "controller-manager: serving /healthz /livez /readyz /metrics on http://"
                  << flags.bind_address << ":" << status_server.port() << "\n";
      }
    }
    if (serving.ok() && flags.secure_port >= 0) {
      Result<std::shared_ptr<boost::asio::ssl::context>> tls = ServingTls(flags);
      serving = tls.status();
      if (tls.ok()) {
        secure_options.tls = std::move(tls).value();
        secure_options.port = static_cast<uint16_t>(flags.secure_port);
        secure_server = std::make_unique<StatusServer>(std::move(secure_options));
        serving = secure_server->Start();
      }
      if (serving.ok()) {
        std::cerr << "controller-manager: HTTPS with "
                  << (flags.tls_cert_file.empty() ? "a self-signed certificate made at start"
                                                  : "the certificate " + flags.tls_cert_file)
                  << "\ncontroller-manager: serving /healthz /livez /readyz /metrics on https://"
                  << flags.bind_address << ":" << secure_server->port() << "\n";
      }
    }
    if (!serving.ok()) {
      std::cerr << "controller-manager: " << serving.ToString() << "\n";
      status_server.Stop();
      RunOn(executor, [&] {
        stop_controllers();
        elector.reset();
      });
      api->reset();
      election_api->reset();
      return 1;
    }
    std::cout << "controller-manager running" << std::endl;
    std::cerr << "controller-manager: replication controllers from "
              << (etcd_mode ? "etcd " + flags.etcd_servers : "the API server " + flags.apiserver)
              << ", pods through the API server; leader election "
              << (flags.leader_elect ? "on as " + flags.election.identity : std::string("off")) << "\n";

    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "controller-manager: signal " << sig << ", stopping\n";
    if (secure_server != nullptr) secure_server->Stop();
    status_server.Stop();
    RunOn(executor, [&] {
      stop_controllers();
      elector.reset();
    });
    // The clients' pending callbacks (now no-ops) complete before the executor goes.
    api->reset();
    election_api->reset();
  }
  return 0;
}

}  // namespace
}  // namespace rcsim

int main(int argc, char** argv) { return rcsim::Main(argc, argv); }
