// node-agent --node-name N --root-dir DIR [--kubeconfig FILE [--context C] | --apiserver URL]
//            [--token-file F] [--max-pods 110] [--node-status-update-frequency 10s]
//            [--node-status-report-frequency 5m0s] [--node-lease-duration-seconds 40] [--node-ip IP]
//
// The kubelet of rcsim: the node agent core (cluster/node_agent.h) over the process runtime
// (backends/process/process_runtime.h), talking to the API server over HTTP. It registers Node N, renews
// its heartbeat (the Lease kube-node-lease/N, and the Node status when it changes), runs the containers of
// the pods bound to N as child processes under DIR and reports their status. Images are recorded, never
// pulled: a container runs its `command` + `args` on this host.
//
// Restarts: on start it re-adopts the processes an earlier agent started under DIR (pid and /proc start
// time), keeps those whose pods are still bound to N, and stops the others (pods evicted or deleted
// while it was down). SIGTERM or SIGINT stops the agent and leaves every container running, like a
// kubelet restart. Prints "node-agent running" once started.
#include <signal.h>
#include <unistd.h>

#include <boost/asio/ip/address_v4.hpp>
#include <boost/program_options.hpp>
#include <future>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include "apps/node-agent/log_server.h"
#include "backends/http/thread_executor.h"
#include "backends/httpclient/client_flags.h"
#include "backends/httpclient/http_api_client.h"
#include "backends/process/process_runtime.h"
#include "cluster/executor_api.h"
#include "cluster/node_agent.h"
#include "engine/go_duration.h"
#include "engine/mutex.h"
#include "engine/trace.h"

namespace rcsim {
namespace {

namespace po = boost::program_options;

struct Flags {
  ApiServerFlags server;
  std::string node_name;
  std::string root_dir;
  int64_t max_pods = 110;
  std::string status_frequency = "10s";
  std::string report_frequency = "5m0s";
  int32_t lease_duration_seconds = 40;
  std::string orphan_grace = "30s";
  std::string node_ip = "127.0.0.1";
  int port = 10250;  // the kubelet's
  std::string pod_cidr;
  int verbosity = 1;
  Duration heartbeat_interval{};
  Duration status_report_interval{};
  Duration orphan_grace_duration{};
};

// "a.b.c." for "a.b.c.0/24"; "" if `cidr` is not an IPv4 /24 network.
std::string PodIpPrefix(const std::string& cidr) {
  const std::size_t slash = cidr.find('/');
  if (slash == std::string::npos || cidr.substr(slash) != "/24") return "";
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address_v4(cidr.substr(0, slash), ec);
  if (ec || (ip.to_uint() & 0xffU) != 0) return "";
  const std::string text = ip.to_string();
  return text.substr(0, text.rfind('.') + 1);
}

bool ParseFlags(int argc, char** argv, Flags* f, bool* exit_now) {
  f->server.apiserver = "http://127.0.0.1:8080";
  po::options_description desc("node-agent options");
  desc.add_options()("help,h", "show this help")("node-name", po::value(&f->node_name),
                                                 "name of this node (required)")(
      "root-dir", po::value(&f->root_dir),
      "directory for the containers' state, logs and working directories (required; kept across "
      "restarts: an agent restarted on it re-adopts its processes)")(
      "kubeconfig", po::value(&f->server.kubeconfig),
      "kubeconfig file with the API server's address and credentials")(
      "context", po::value(&f->server.context), "kubeconfig context to use instead of current-context")(
      "apiserver", po::value(&f->server.apiserver)->default_value(f->server.apiserver),
      "API server base URL (without --kubeconfig)")(
      "master", po::value(&f->server.master),
      "the API server's address; overrides --apiserver and the kubeconfig's")(
      "token-file", po::value(&f->server.token_file), "file holding the API server's bearer token")(
      "max-pods", po::value(&f->max_pods)->default_value(f->max_pods),
      "pods this node runs at most (its status.capacity.pods)")(
      "node-status-update-frequency", po::value(&f->status_frequency)->default_value(f->status_frequency),
      "heartbeat interval (Go duration): the node Lease is renewed, and the Node status checked, this "
      "often; keep it well below the controller-manager's --node-monitor-grace-period")(
      "node-status-report-frequency", po::value(&f->report_frequency)->default_value(f->report_frequency),
      "an unchanged Node status is posted this often (Go duration; a changed one at once), as the "
      "kubelet's nodeStatusReportFrequency")(
      "node-lease-duration-seconds",
      po::value(&f->lease_duration_seconds)->default_value(f->lease_duration_seconds),
      "the node Lease's spec.leaseDurationSeconds")(
      "orphan-grace", po::value(&f->orphan_grace)->default_value(f->orphan_grace),
      "grace period (SIGTERM to SIGKILL) for re-adopted processes whose pods "
      "are gone")("node-ip", po::value(&f->node_ip)->default_value(f->node_ip),
                  "the node's InternalIP (status.hostIP)")(
      "port", po::value(&f->port)->default_value(f->port),
      "port of the kubelet endpoint on --node-ip (GET /containerLogs/..., for the API server's pods/log), "
      "registered in the Node's status.daemonEndpoints (0: any free port, -1: off)")(
      "pod-cidr", po::value(&f->pod_cidr),
      "this node's pod addresses, a /24 such as 10.244.1.0/24 (pods get .2, .3, ...); give each node its "
      "own so pod IPs differ across nodes (default 10.244.0.0/24)")(
      "v", po::value(&f->verbosity)->default_value(f->verbosity),
      "log verbosity: 0 problems only, 1 pod and container events");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {  // the parse boundary
    std::cerr << "node-agent: " << e.what() << "\n" << desc;
    return false;
  }
  if (vm.count("help")) {
    std::cout << desc;
    *exit_now = true;
    return true;
  }
  f->server.server_given = !f->server.master.empty() || !vm["apiserver"].defaulted();
  if (f->node_name.empty() || f->root_dir.empty()) {
    std::cerr << "node-agent: --node-name and --root-dir are required\n";
    return false;
  }
  if (f->max_pods < 1) {
    std::cerr << "node-agent: --max-pods must be positive\n";
    return false;
  }
  std::optional<Duration> freq = ParseGoDuration(f->status_frequency);
  if (!freq || *freq <= Duration::zero()) {
    std::cerr << "node-agent: --node-status-update-frequency: not a positive duration: \""
              << f->status_frequency << "\" (e.g. 10s, 500ms)\n";
    return false;
  }
  f->heartbeat_interval = *freq;
  std::optional<Duration> report = ParseGoDuration(f->report_frequency);
  if (!report || *report <= Duration::zero()) {
    std::cerr << "node-agent: --node-status-report-frequency: not a positive duration: \""
              << f->report_frequency << "\" (e.g. 5m0s, 1m)\n";
    return false;
  }
  f->status_report_interval = *report;
  if (f->lease_duration_seconds < 1) {
    std::cerr << "node-agent: --node-lease-duration-seconds must be positive\n";
    return false;
  }
  std::optional<Duration> grace = ParseGoDuration(f->orphan_grace);
  if (!grace) {
    std::cerr << "node-agent: --orphan-grace: not a duration: \"" << f->orphan_grace << "\"\n";
    return false;
  }
  f->orphan_grace_duration = *grace;
  if (f->port < -1 || f->port > 65535) {
    std::cerr << "node-agent: --port must be -1 (off), 0 (any) or a port number\n";
    return false;
  }
  if (!f->pod_cidr.empty() && PodIpPrefix(f->pod_cidr).empty()) {
    std::cerr << "node-agent: --pod-cidr: \"" << f->pod_cidr
              << "\" is not an IPv4 /24 (e.g. 10.244.1.0/24)\n";
    return false;
  }
  return true;
}

// Pod and container events to stderr, one line each, with the UTC time of day. Thread-safe.
class StderrTraceSink final : public TraceSink {
 public:
  explicit StderrTraceSink(bool enabled) : enabled_(enabled) {}
  bool enabled() const override { return enabled_; }
  void Record(std::string_view actor, std::string_view event) override {
    const std::string now = FormatTimeOfDay(SystemClock().Now());
    MutexLock lock(mu_);
    std::cerr << "node-agent: " << now << " " << actor << ": " << event << std::endl;
  }

 private:
  const bool enabled_;
  Mutex mu_;
};

void RunOn(Executor& executor, std::function<void()> fn) {
  std::promise<void> done;
  executor.Post([&] {
    fn();
    done.set_value();
  });
  done.get_future().wait();
}

// Stops re-adopted processes whose pods no longer run here: lists the pods bound to the node and keeps
// those neither terminated nor being deleted (the agent core claims their processes). Repeats while
// unclaimed processes remain, so a pod deleted while its process waited to be claimed is stopped too.
class OrphanSweeper {
 public:
  OrphanSweeper(std::string node, ApiClient* api, ProcessRuntime* runtime, Executor* executor, Duration grace)
      : node_(std::move(node)), api_(api), runtime_(runtime), executor_(executor), grace_(grace) {}
  ~OrphanSweeper() { *alive_ = false; }

  void Sweep() {
    if (runtime_->unclaimed_count() == 0) return;
    ListOptions mine;
    mine.fields.push_back({"spec.nodeName", true, node_});
    api_->pods().List("", mine, [this, alive = alive_](Result<ObjectList<Pod>> r) {
      if (!*alive) return;
      if (!r.ok()) {
        std::cerr << "node-agent: listing this node's pods: " << r.status().ToString() << "\n";
        Again(std::chrono::seconds(2));
        return;
      }
      std::set<std::string> keep;
      for (const auto& pod : r->items) {
        if (!pod->metadata.deletion_timestamp && !IsTerminated(*pod)) keep.insert(pod->metadata.uid);
      }
      const int stopped = runtime_->StopUnclaimed(keep, grace_);
      if (stopped > 0) {
        std::cerr << "node-agent: stopping " << stopped
                  << " re-adopted container(s) whose pods are gone from this node\n";
      }
      Again(std::chrono::seconds(5));
    });
  }

 private:
  void Again(Duration delay) {
    executor_->Schedule(delay, [this, alive = alive_] {
      if (*alive) Sweep();
    });
  }

  const std::string node_;
  ApiClient* const api_;
  ProcessRuntime* const runtime_;
  Executor* const executor_;
  const Duration grace_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

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

  Result<ClientConfig> config = ResolveClientConfig(flags.server);
  if (!config.ok()) {
    std::cerr << "node-agent: " << config.status().message() << "\n";
    return 2;
  }
  HttpApiClientOptions api_options = ClientOptionsFor(*config);
  api_options.max_connections = 8;
  Result<std::unique_ptr<HttpApiClient>> http = HttpApiClient::Create(api_options);
  if (!http.ok()) {
    std::cerr << "node-agent: " << http.status().ToString() << "\n";
    return 2;
  }

  SystemClock clock;
  StderrTraceSink trace(flags.verbosity >= 1);
  {
    ThreadExecutor executor;
    ProcessRuntimeOptions runtime_options;
    runtime_options.root_dir = flags.root_dir;
    runtime_options.executor = &executor;
    Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Open(runtime_options);
    if (!runtime.ok()) {
      std::cerr << "node-agent: " << runtime.status().ToString() << "\n";
      return 2;
    }
    ExecutorApi api(http->get(), http->get(), &executor);
    const std::size_t adopted = (*runtime)->unclaimed_count();

    // The kubelet endpoint the API server's pods/log proxies to (started before the Node registers it).
    std::unique_ptr<LogServer> log_server;
    if (flags.port >= 0) {
      log_server =
          std::make_unique<LogServer>(flags.root_dir, flags.node_ip, static_cast<uint16_t>(flags.port));
      if (Status s = log_server->Start(); !s.ok()) {
        std::cerr << "node-agent: kubelet endpoint: " << s.ToString() << "\n";
        return 1;
      }
      std::cerr << "node-agent: serving /containerLogs on http://" << flags.node_ip << ":"
                << log_server->port() << "\n";
    }
    NodeAgentOptions options;
    options.node_name = flags.node_name;
    options.kubelet_port = log_server != nullptr ? log_server->port() : 0;
    if (!flags.pod_cidr.empty()) options.pod_ip_prefix = PodIpPrefix(flags.pod_cidr);
    options.max_pods = flags.max_pods;
    options.host_ip = flags.node_ip;
    options.heartbeat_interval = flags.heartbeat_interval;
    options.status_report_interval = flags.status_report_interval;
    options.lease_duration_seconds = flags.lease_duration_seconds;
    std::unique_ptr<NodeAgent> agent;
    std::unique_ptr<OrphanSweeper> sweeper;
    RunOn(executor, [&] {
      agent = std::make_unique<NodeAgent>(options, &api, &api, runtime->get(), &clock, &executor, &trace);
      agent->Start();
      sweeper = std::make_unique<OrphanSweeper>(flags.node_name, &api, runtime->get(), &executor,
                                                flags.orphan_grace_duration);
      sweeper->Sweep();
    });
    std::cout << "node-agent running" << std::endl;
    std::cerr << "node-agent: node " << flags.node_name << ", API server " << config->server << ", root dir "
              << flags.root_dir << ", " << adopted << " running container(s) re-adopted\n";

    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "node-agent: signal " << sig << ", stopping (containers keep running)\n";
    RunOn(executor, [&] {
      sweeper.reset();
      agent->Stop();
      agent.reset();
    });
    if (log_server != nullptr) log_server->Stop();
    runtime->reset();  // leaves the containers running
    http->reset();     // its pending callbacks post to the executor, which is still here
  }
  return 0;
}

}  // namespace
}  // namespace rcsim

int main(int argc, char** argv) { return rcsim::Main(argc, argv); }
