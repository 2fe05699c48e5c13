// apiserver --etcd_servers=URLS [--address 127.0.0.1] [--port 8080] [--token-file F]
//           [--tls-cert-file F --tls-private-key-file F [--client-ca-file F]]
//
// Serves pods and replication controllers (Kubernetes core/v1 subset) over HTTP, or HTTPS with a
// certificate, stored in etcd under
// /registry/. Prints "listening on ADDRESS:PORT" on stdout once it accepts connections (with --port 0
// the port is chosen by the kernel). Stops on SIGINT/SIGTERM. Compacts etcd history periodically, as
// the Kubernetes API server does, so watchers far behind get 410 Gone and re-list.
#include <signal.h>

#include <boost/asio/ip/address.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "apps/apiserver/apiserver_metrics.h"
#include "backends/etcd/etcd_store.h"
#include "backends/http/http_server.h"
#include "backends/http/thread_executor.h"
#include "backends/http/token_auth.h"
#include "engine/mutex.h"
#include "engine/rng.h"
#include "registry/lease_registry.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

namespace po = boost::program_options;

struct Flags {
  std::string etcd_servers;
  std::string address = "127.0.0.1";
  int port = 8080;
  std::string token_file;
  std::string token_auth_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  int io_threads = 2;
  int worker_threads = HttpServerOptions{}.worker_threads;
  std::size_t max_body_bytes = 3 << 20;
  int max_connections = 4096;
  int max_watches = 2048;
  int compaction_interval_seconds = 300;
};

// Returns false (after printing why) when the command line is unusable; sets *exit_now for --help.
bool ParseFlags(int argc, char** argv, Flags* f, bool* exit_now) {
  po::options_description desc("apiserver options");
  desc.add_options()("help,h", "show this help")(
      "etcd_servers,etcd-servers", po::value(&f->etcd_servers),
      "comma-separated etcd client URLs, e.g. http://127.0.0.1:2379 (required)")(
      "address", po::value(&f->address)->default_value(f->address), "address to listen on")(
      "port", po::value(&f->port)->default_value(f->port), "port to listen on (0: any free port)")(
      "token-file,token_file", po::value(&f->token_file),
      "file holding a bearer token; when set, requests without it get 401")(
      "token-auth-file", po::value(&f->token_auth_file),
      "kube-apiserver's CSV of bearer tokens: token,user,uid[,\"group1,group2\"] per line")(
      "tls-cert-file", po::value(&f->tls_cert_file),
      "PEM certificate (then intermediates) to serve HTTPS with; without it, plain HTTP")(
      "tls-private-key-file", po::value(&f->tls_key_file), "PEM private key of --tls-cert-file")(
      "client-ca-file", po::value(&f->client_ca_file),
      "PEM CA bundle: a client certificate signed by it authenticates (CN: user, O: groups); HTTPS only")(
      "io-threads", po::value(&f->io_threads)->default_value(f->io_threads), "socket threads")(
      "worker-threads", po::value(&f->worker_threads)->default_value(f->worker_threads),
      "threads running registry (etcd) calls: requests served at once")(
      "max-body-bytes", po::value(&f->max_body_bytes)->default_value(f->max_body_bytes),
      "larger request bodies get 413")(
      "max-connections", po::value(&f->max_connections)->default_value(f->max_connections),
      "open connections served at once; beyond, a connection is answered 429 and closed")(
      "max-watches", po::value(&f->max_watches)->default_value(f->max_watches),
      "watch streams served at once; beyond, a watch request is answered 429")(
      "compaction-interval-seconds",
      po::value(&f->compaction_interval_seconds)->default_value(f->compaction_interval_seconds),
      "compact etcd history older than this, every this often (0: never)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {  // the parse boundary
    std::cerr << "apiserver: " << e.what() << "\n" << desc;
    return false;
  }
  if (vm.count("help")) {
    std::cout << desc;
    *exit_now = true;
    return true;
  }
  if (f->etcd_servers.empty()) {
    std::cerr << "apiserver: --etcd_servers is required\n" << desc;
    return false;
  }
  if (f->tls_cert_file.empty() != f->tls_key_file.empty()) {
    std::cerr << "apiserver: --tls-cert-file and --tls-private-key-file go together\n";
    return false;
  }
  if (!f->client_ca_file.empty() && f->tls_cert_file.empty()) {
    std::cerr << "apiserver: --client-ca-file needs HTTPS (--tls-cert-file and --tls-private-key-file)\n";
    return false;
  }
  if (f->max_connections < 1 || f->max_watches < 1) {
    std::cerr << "apiserver: --max-connections and --max-watches must be positive\n";
    return false;
  }
  if (f->port < 0 || f->port > 65535) {
    std::cerr << "apiserver: --port must be in [0, 65535]\n";
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

// Waits for etcd to answer (it may still be starting), up to `deadline`.
Status WaitForEtcd(Store* store, Duration deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    Result<RangeResponse> r = store->GetPrefix("/registry/", /*limit=*/1);
    if (r.ok() || std::chrono::steady_clock::now() >= until) return r.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Every interval, compacts to the revision observed one interval earlier (Kubernetes' scheme).
class Compactor {
 public:
  Compactor(Store* store, std::chrono::seconds interval) : store_(store), interval_(interval) {
    if (interval_.count() > 0) thread_ = std::thread([this] { Run(); });
  }
  ~Compactor() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    int64_t previous = 0;
    MutexLock lock(mu_);
    while (!cv_.WaitFor(mu_, interval_, [this]() REQUIRES(mu_) { return stop_; })) {
      lock.Unlock();
      Result<RangeResponse> r = store_->GetPrefix("/registry/", /*limit=*/1);
      if (r.ok()) {
        if (previous > 0) {
          Result<int64_t> c = store_->Compact(previous);
          if (!c.ok() && c.status().code() != Code::kCompacted) {
            std::cerr << "apiserver: compaction failed: " << c.status().ToString() << "\n";
          }
        }
        previous = r->revision;
      }
      lock.Lock();
    }
  }

  Store* const store_;
  const std::chrono::seconds interval_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

int Main(int argc, char** argv) {
  Flags flags;
  bool exit_now = false;
  if (!ParseFlags(argc, argv, &flags, &exit_now)) return 2;
  if (exit_now) return 0;

  // Block the stop signals in every thread; the main thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  HttpServerOptions options;
  options.address = flags.address;
  options.port = static_cast<uint16_t>(flags.port);
  options.io_threads = flags.io_threads;
  options.worker_threads = flags.worker_threads;
  options.max_body_bytes = flags.max_body_bytes;
  options.tls_cert_file = flags.tls_cert_file;
  options.tls_key_file = flags.tls_key_file;
  options.client_ca_file = flags.client_ca_file;
  options.max_connections = flags.max_connections;
  options.max_watches = flags.max_watches;
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadToken(flags.token_file);
    if (!token.ok()) {
      std::cerr << "apiserver: " << token.status().message() << "\n";
      return 2;
    }
    options.bearer_token = *token;
  }
  std::optional<TokenAuthenticator> token_auth;
  if (!flags.token_auth_file.empty()) {
    Result<TokenAuthenticator> loaded = TokenAuthenticator::FromCsvFile(flags.token_auth_file);
    if (!loaded.ok()) {
      std::cerr << "apiserver: --token-auth-file: " << loaded.status().message() << "\n";
      return 2;
    }
    token_auth = std::move(loaded).value();
    options.authenticator = &*token_auth;
  }
  {
    boost::system::error_code ec;
    const auto bind = boost::asio::ip::make_address(flags.address, ec);
    if (!ec && !bind.is_loopback() && flags.token_file.empty() && flags.token_auth_file.empty() &&
        flags.client_ca_file.empty()) {
      std::cerr << "apiserver: warning: serving on " << flags.address
                << " without authentication: anyone who can reach this port can read and change "
                   "everything (use --token-file, --token-auth-file or --client-ca-file)\n";
    }
  }

  EtcdStoreOptions etcd_options;
  etcd_options.endpoints = SplitEtcdEndpoints(flags.etcd_servers);
  Result<std::unique_ptr<EtcdStore>> store = EtcdStore::Create(etcd_options);
  if (!store.ok()) {
    std::cerr << "apiserver: " << store.status().ToString() << "\n";
    return 2;
  }
  if (Status s = WaitForEtcd(store->get(), std::chrono::seconds(30)); !s.ok()) {
    std::cerr << "apiserver: etcd at " << flags.etcd_servers << " does not answer: " << s.ToString() << "\n";
    return 1;
  }

  SystemClock clock;
  // /metrics: requests as the HTTP server answers them, etcd calls at the store seam.
  ApiServerMetrics metrics;
  options.observer = &metrics;
  std::unique_ptr<Store> timed_store = NewInstrumentedStore(store->get(), &metrics);
  // Not the simulation: uids and generated names only need to differ between runs.
  Mt19937Rng rng(std::random_device{}());
  Registry registry(timed_store.get(), &clock, &rng);
  Mt19937Rng lease_rng(std::random_device{}());  // a context guards its own Rng
  RegistryContext lease_context(timed_store.get(), &clock, &lease_rng);
  LeaseRegistry leases(&lease_context);
  options.leases = &leases;
  // /readyz is honest: not ready while etcd does not answer a read.
  Store* etcd = store->get();
  options.readiness = [etcd]() -> Status {
    RangeRequest probe;
    probe.key = "/registry/";
    probe.range_end = PrefixEnd("/registry/");
    probe.count_only = true;
    Result<RangeResponse> r = etcd->Range(probe);
    return r.ok() ? Status::Ok() : Status(Code::kUnavailable, r.status().message());
  };
  // kube-apiserver's request, watch and etcd metrics, the object counts, and what an operator alerts
  // on: stored values that do not decode (skipped by lists and watches). Needs a token like any path
  // but the health ones.
  options.metrics = [&metrics, &registry, etcd]() -> std::string {
    return metrics.Scrape(etcd, registry.malformed_values());
  };
  Mutex log_mu;
  registry.set_log([&log_mu](std::string_view line) {
    MutexLock lock(log_mu);
    std::cerr << "apiserver: " << line << "\n";
  });
  // The watch caches start now, as kube-apiserver's do, so that every client watch is served by them.
  if (Status s = registry.StartWatchCaches(); !s.ok()) {
    std::cerr << "apiserver: watch caches start on first use: " << s.ToString() << "\n";
  }
  Compactor compactor(timed_store.get(), std::chrono::seconds(flags.compaction_interval_seconds));
  HttpServer server(&registry, &clock, options);
  if (Status s = server.Start(); !s.ok()) {
    std::cerr << "apiserver: " << s.ToString() << "\n";
    return 1;
  }
  if (!flags.tls_cert_file.empty()) {
    std::cerr << "apiserver: serving HTTPS"
              << (flags.client_ca_file.empty() ? ""
                                               : " (client certificates from " + flags.client_ca_file + ")")
              << "\n";
  }
  std::cout << "listening on " << flags.address << ":" << server.port() << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "apiserver: signal " << sig << ", stopping\n";
  server.Stop();
  return 0;
}

}  // namespace
}  // namespace rcsim

int main(int argc, char** argv) { return rcsim::Main(argc, argv); }
