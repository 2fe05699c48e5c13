// controller-manager [--apiserver=http://127.0.0.1:8080] [--etcd_servers=URLS] [--workers 5] [--resync 30]
//                    [--token-file F]
//
// Runs the ReplicationManager (engine/replication_manager.h) in production: replication controllers
// listed and watched through the API server (or, with --etcd_servers, from etcd: the 2014-style watch
// on /registry/controllers/), pods and every write through the API server over HTTP. The engine runs on one
// executor thread (ThreadExecutor); the HTTP client and the etcd watches call back on their own threads and
// the manager hops to the executor. Prints "controller-manager running" once started. Stops on
// SIGINT/SIGTERM.
#include <signal.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>

#include "backends/etcd/etcd_store.h"
#include "backends/http/thread_executor.h"
#include "backends/httpclient/http_api_client.h"
#include "engine/log.h"
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
  int workers = 5;
  int resync_seconds = 30;
  int api_connections = 32;
};

bool ParseFlags(int argc, char** argv, Flags* f, bool* exit_now) {
  po::options_description desc("controller-manager options");
  desc.add_options()("help,h", "show this help")(
      "etcd_servers,etcd-servers", po::value(&f->etcd_servers),
      "comma-separated etcd client URLs, e.g. http://127.0.0.1:2379: read replication controllers "
      "straight from etcd (the 2014 mode); without it they are listed and watched through the API")(
      "apiserver", po::value(&f->apiserver)->default_value(f->apiserver), "API server base URL")(
      "token-file,token_file", po::value(&f->token_file), "file holding the API server's bearer token")(
      "workers", po::value(&f->workers)->default_value(f->workers), "controller syncs in flight at once")(
      "resync", po::value(&f->resync_seconds)->default_value(f->resync_seconds),
      "seconds between full resyncs of every controller")(
      "api-connections", po::value(&f->api_connections)->default_value(f->api_connections),
      "keep-alive connections to the API server");
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
  if (f->workers < 1 || f->resync_seconds < 1 || f->api_connections < 1) {
    std::cerr << "controller-manager: --workers, --resync and --api-connections must be positive\n";
    return false;
  }
  return true;
}

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::kNotFound, "cannot read token file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.empty()) return Status(Code::kInvalid, "token file " + path + " is empty");
  return token;
}

// Warnings and errors to stderr; called only from the executor thread.
class StderrLogger final : public Logger {
 public:
  void Log(LogLevel level, std::string_view message) override {
    if (level < LogLevel::kWarning) return;
    std::cerr << "controller-manager: " << (level == LogLevel::kError ? "error: " : "warning: ") << message
              << "\n";
  }
};

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

  HttpApiClientOptions api_options;
  api_options.base_url = flags.apiserver;
  api_options.max_connections = flags.api_connections;
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadToken(flags.token_file);
    if (!token.ok()) {
      std::cerr << "controller-manager: " << token.status().message() << "\n";
      return 2;
    }
    api_options.bearer_token = *token;
  }

  // The 2014 mode when --etcd_servers is given: controllers from etcd. Otherwise (the default) through
  // the API, like pods.
  EtcdStoreOptions etcd_options;
  etcd_options.endpoints = SplitEtcdEndpoints(flags.etcd_servers);
  const bool etcd_mode = !flags.etcd_servers.empty();
  // Watch outages and recoveries, from the watch threads.
  std::mutex log_mu;
  etcd_options.log = [&log_mu](LogLevel level, const std::string& message) {
    std::lock_guard<std::mutex> lock(log_mu);
    std::cerr << "controller-manager: " << (level >= LogLevel::kWarning ? "warning: " : "") << message
              << "\n";
  };
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

  SystemClock clock;
  // Not the simulation: randomness only spreads retries and need not repeat between runs.
  Mt19937Rng rng(std::random_device{}());
  NullTraceSink trace;
  StderrLogger logger;
  ManagerOptions options;
  options.workers = flags.workers;
  options.resync_period = std::chrono::seconds(flags.resync_seconds);

  {
    // Declared after the store and the client, so it is gone before they are; created, started, stopped
    // and destroyed on the executor, as the engine's single-thread contract requires.
    ThreadExecutor executor;
    std::unique_ptr<ReplicationManager> manager;
    RunOn(executor, [&] {
      manager = std::make_unique<ReplicationManager>(options, store.get(), api->get(), &clock, &executor,
                                                     &rng, &trace, &logger);
      manager->Start();
    });
    std::cout << "controller-manager running" << std::endl;
    std::cerr << "controller-manager: replication controllers from "
              << (etcd_mode ? "etcd " + flags.etcd_servers : "the API server " + flags.apiserver)
              << ", pods through the API server\n";

    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "controller-manager: signal " << sig << ", stopping\n";
    RunOn(executor, [&] { manager.reset(); });
    // The client's pending callbacks (now no-ops) complete before the executor goes.
    api->reset();
  }
  return 0;
}

}  // namespace
}  // namespace rcsim

int main(int argc, char** argv) { return rcsim::Main(argc, argv); }
