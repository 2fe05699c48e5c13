#include "harness/real/real_stack.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <thread>

namespace rcsim {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);

// Binds `n` sockets to 127.0.0.1:0 at once (so the ports differ), releases them, returns the ports.
std::vector<int> FreePorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (static_cast<int>(ports.size()) != n) return {};
  return ports;
}

// One HTTP/1.0 request to 127.0.0.1:port (1 s socket timeouts); the whole response, or "".
std::string HttpRequest(int port, const std::string& method, const std::string& path,
                        const std::string& body = "") {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  timeval tv{};
  tv.tv_sec = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string request = method + " " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n";
    if (!body.empty()) {
      request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    }
    request += "\r\n" + body;
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

// The status code of a raw response ("HTTP/1.x 200 OK"), or 0.
int StatusCodeOf(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.c_str() + 9);
}

std::string Body(const std::string& response) {
  const std::size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

}  // namespace

Result<std::unique_ptr<RealStack>> RealStack::Start(RealStackOptions options) {
  std::unique_ptr<RealStack> s(new RealStack(std::move(options)));
  std::string tmpl = (std::filesystem::temp_directory_path() / "rcsim-real-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr)
    return Status(Code::kInternal, "mkdtemp: " + std::error_code(errno, std::generic_category()).message());
  s->temp_dir_ = tmpl;
  if (Status st = s->StartEtcdCluster(); !st.ok()) return st;
  std::string etcd_servers;
  for (int port : s->etcd_client_ports_) {
    etcd_servers +=
        (etcd_servers.empty() ? "" : ",") + std::string("http://127.0.0.1:") + std::to_string(port);
  }
  // --port 0: the apiserver binds a port the kernel chooses and says which ("listening on ..."), so no
  // other process can take it between our choice and its bind.
  const std::vector<std::string> api_args = {s->options_.apiserver_binary,
                                             "--etcd_servers=" + etcd_servers,
                                             "--address",
                                             "127.0.0.1",
                                             "--port",
                                             "0"};
  if (Status st = s->apiserver_.Spawn(api_args, s->temp_dir_ + "/apiserver.log"); !st.ok()) return st;
  const std::string listening = "listening on 127.0.0.1:";
  if (Status st = s->WaitLog(s->apiserver_, "apiserver", listening, 0); !st.ok()) return st;
  {
    std::ifstream in(s->apiserver_.log_path());
    for (std::string line; s->api_port_ == 0 && std::getline(in, line);) {
      if (const std::size_t at = line.find(listening); at != std::string::npos) {
        s->api_port_ = std::atoi(line.c_str() + at + listening.size());
      }
    }
    if (s->api_port_ <= 0 || s->api_port_ > 65535)
      return Status(Code::kInternal, "apiserver: no port in its log:\n" + s->apiserver_.LogTail());
  }
  if (Status st = s->WaitApiServer(); !st.ok()) return st;
  FaultProxyOptions po;
  po.upstream_port = static_cast<uint16_t>(s->api_port_);
  po.seed = s->options_.seed;
  po.timeout = s->options_.proxy_timeout;
  Result<std::unique_ptr<FaultProxy>> proxy = FaultProxy::Start(po);
  if (!proxy.ok()) return proxy.status();
  s->proxy_ = std::move(proxy).value();
  // The cluster controllers, straight against the API server: the garbage collector and the pod GC;
  // with node agents also the node lifecycle controller (short periods) and the scheduler. (Without
  // nodes a scheduler would only write PodScheduled=False over the hollow nodes' status.)
  const bool nodes = s->options_.node_agents > 0;
  std::vector<std::string> cluster_args = {
      s->options_.controller_manager_binary,
      "--apiserver=" + s->api_url(),
      "--leader-elect=false",
      "--kube-api-qps=-1",
      "--port=-1",
      "--secure-port=-1",
      nodes ? "--controllers=garbagecollector,podgc,nodelifecycle,scheduler"
            : "--controllers=garbagecollector,podgc"};
  if (nodes)
    cluster_args.insert(cluster_args.end(), std::begin(kNodeLifecycleFlags), std::end(kNodeLifecycleFlags));
  if (Status st = s->cluster_.Spawn(cluster_args, s->temp_dir_ + "/cluster-controllers.log"); !st.ok())
    return st;
  if (Status st = s->WaitLog(s->cluster_, "cluster controllers", "controller-manager running", 0); !st.ok()) {
    return st;
  }
  if (nodes) {
    // A killed agent's shims (children of the agent, in sessions of their own) come to rcsim, which
    // reaps them at Stop, rather than to an init that may not.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    for (int i = 0; i < s->options_.node_agents; ++i) {
      s->agents_.push_back(std::make_unique<ChildProcess>());
      s->paused_.push_back(false);
      s->failed_.push_back(false);
      s->max_pods_.push_back(s->options_.max_pods);
      s->running_max_pods_.push_back(s->options_.max_pods);
      if (Status st = s->SpawnNodeAgent(i); !st.ok()) return st;
    }
    for (int i = 0; i < s->options_.node_agents; ++i) {
      if (Status st = s->WaitLog(*s->agents_[i], NodeName(i) + " agent", "node-agent running", 0); !st.ok()) {
        return st;
      }
    }
    if (Status st = s->WaitNodesReady(); !st.ok()) return st;
  }
  if (Status st = s->StartManager(); !st.ok()) return st;
  return s;
}

std::string RealStack::NodeRoot(int i) const { return temp_dir_ + "/nodes/" + NodeName(i); }

std::vector<std::string> RealStack::NodeAgentArgs(int i) const {
  return {options_.node_agent_binary, "--apiserver=" + api_url(), "--node-name=" + NodeName(i),
          "--root-dir=" + NodeRoot(i), std::string("--node-status-update-frequency=") + kNodeHeartbeat,
          "--orphan-grace=1s", "--max-pods=" + std::to_string(max_pods_.at(i)),
          // Side by side on one host: any free kubelet port each,
          // and pod IPs of a /24 of each node's own.
          "--port=0", "--pod-cidr=10.244." + std::to_string(i + 1) + ".0/24"};
}

Status RealStack::SpawnNodeAgent(int i) {
  running_max_pods_.at(i) = max_pods_.at(i);
  return agents_.at(i)->Spawn(NodeAgentArgs(i), temp_dir_ + "/" + NodeName(i) + ".log");
}

Status RealStack::WaitNodesReady() {
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  std::string last;
  while (true) {
    last = Body(HttpRequest(api_port_, "GET", "/api/v1/nodes"));
    nlohmann::json j = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
    int ready = 0;
    if (j.is_object() && j.contains("items") && j["items"].is_array()) {
      for (const nlohmann::json& n : j["items"]) {
        for (const nlohmann::json& c :
             n.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array())) {
          if (c.value("type", "") == "Ready" && c.value("status", "") == "True") ++ready;
        }
      }
    }
    if (ready >= options_.node_agents) return Status::Ok();
    if (SteadyClock::now() >= deadline) {
      return Status(Code::kUnavailable, std::to_string(ready) + " of " +
                                            std::to_string(options_.node_agents) +
                                            " nodes Ready in time; last list: " + last.substr(0, 2000));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

std::vector<AgentContainer> RealStack::Containers(int i) const {
  if (i >= 0) return LiveAgentContainers(NodeRoot(i));
  std::vector<AgentContainer> all;
  for (int n = 0; n < node_agents(); ++n) {
    std::vector<AgentContainer> some = LiveAgentContainers(NodeRoot(n));
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

int RealStack::KillPodContainers(const std::string& pod_uid) {
  std::vector<AgentContainer> of_pod;
  for (const AgentContainer& c : Containers()) {
    if (c.pod_uid == pod_uid) of_pod.push_back(c);
  }
  return SignalContainers(of_pod, SIGKILL);
}

void RealStack::KillNodeAgent(int i) {
  agents_.at(i)->Kill();  // first, so that it restarts nothing
  // Until they are gone (a SIGKILLed process dies at once, but not within the kill() call).
  const auto deadline = SteadyClock::now() + std::chrono::seconds(2);
  while (SignalContainers(Containers(i), SIGKILL) > 0 && SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  paused_.at(i) = false;
  failed_.at(i) = true;
}

void RealStack::PauseNodeAgent(int i) {
  if (!agents_.at(i)->Running() || paused_.at(i)) return;
  kill(agents_[i]->pid(), SIGSTOP);
  SignalContainers(Containers(i), SIGSTOP);
  paused_[i] = true;
}

Status RealStack::ResumeNodeAgent(int i) {
  if (!paused_.at(i)) return Status::Ok();
  SignalContainers(Containers(i), SIGCONT);
  if (agents_[i]->Running()) kill(agents_[i]->pid(), SIGCONT);
  paused_[i] = false;
  if (running_max_pods_.at(i) == max_pods_.at(i) || !agents_[i]->Running()) return Status::Ok();
  StopNodeAgent(i);
  return StartNodeAgent(i);
}

void RealStack::StopNodeAgent(int i) {
  if (failed_.at(i) || paused_.at(i)) return;
  agents_[i]->Terminate();
}

Status RealStack::StartNodeAgent(int i) {
  if (failed_.at(i) || paused_.at(i) || agents_[i]->Running()) return Status::Ok();
  std::error_code ec;
  const std::string& log = agents_[i]->log_path();
  const std::size_t offset = std::filesystem::exists(log, ec) ? std::filesystem::file_size(log, ec) : 0;
  if (Status st = SpawnNodeAgent(i); !st.ok()) return st;
  return WaitLog(*agents_[i], NodeName(i) + " agent", "node-agent running", offset);
}

bool RealStack::NodeAgentUp(int i) { return agents_.at(i)->Running() && !paused_.at(i); }

Status RealStack::SetNodeAgentMaxPods(int i, int64_t pods) {
  max_pods_.at(i) = pods;
  if (!NodeAgentUp(i) || running_max_pods_[i] == pods) return Status::Ok();
  StopNodeAgent(i);
  return StartNodeAgent(i);
}

void RealStack::StopContainers() {
  // The agents first (SIGKILL: on SIGTERM an agent leaves its containers running, as a kubelet
  // restart does, and a live one would restart what is killed next), then every container's group.
  for (auto& a : agents_) a->Kill();
  std::vector<pid_t> shims;
  for (int i = 0; i < node_agents(); ++i) {
    SignalContainers(LiveAgentContainers(NodeRoot(i)), SIGKILL);
    std::vector<pid_t> some = RecordedShimPids(NodeRoot(i));
    shims.insert(shims.end(), some.begin(), some.end());
  }
  // The shims exit once their container is gone; those re-parented to rcsim are reaped here (a
  // shim that is not rcsim's child answers ECHILD).
  const auto deadline = SteadyClock::now() + std::chrono::seconds(5);
  while (!shims.empty() && SteadyClock::now() < deadline) {
    std::vector<pid_t> left;
    for (pid_t p : shims) {
      if (waitpid(p, nullptr, WNOHANG) == 0) left.push_back(p);
    }
    shims.swap(left);
    if (!shims.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

RealStack::~RealStack() { Stop(); }

void RealStack::Stop() {
  if (stopped_) return;
  stopped_ = true;
  manager_.Terminate();
  cluster_.Terminate();
  StopContainers();
  if (proxy_) proxy_->Stop();
  apiserver_.Terminate();
  for (auto& m : etcd_) m->Terminate();
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

std::string RealStack::api_url() const { return "http://127.0.0.1:" + std::to_string(api_port_); }
std::string RealStack::etcd_url() const {
  return "http://127.0.0.1:" + std::to_string(etcd_client_ports_.at(0));
}
std::vector<std::string> RealStack::etcd_urls() const {
  std::vector<std::string> urls;
  urls.reserve(etcd_client_ports_.size());
  for (int port : etcd_client_ports_) urls.push_back("http://127.0.0.1:" + std::to_string(port));
  return urls;
}

// Picks the members' ports, starts every member, then waits for each. A port can be taken between
// the pick and etcd's bind (by another process's server, or as a connection's source port); etcd then
// exits with "address already in use", and the whole cluster starts again on new ports (5 attempts).
Status RealStack::StartEtcdCluster() {
  const int members = std::max(1, options_.etcd_members);
  for (int attempt = 1;; ++attempt) {
    std::vector<int> ports = FreePorts(2 * members);
    if (ports.empty()) return Status(Code::kUnavailable, "no free loopback port");
    etcd_.clear();  // kills what an earlier attempt started
    etcd_client_ports_.clear();
    etcd_peer_ports_.clear();
    for (std::size_t m = 0; m < static_cast<std::size_t>(members); ++m) {
      etcd_client_ports_.push_back(ports[2 * m]);
      etcd_peer_ports_.push_back(ports[2 * m + 1]);
      etcd_.push_back(std::make_unique<ChildProcess>());
    }
    // Every member first: a member of a new cluster serves only once a quorum has started.
    Status st;
    for (int m = 0; m < members && st.ok(); ++m) st = SpawnEtcd(m);
    for (int m = 0; m < members && st.ok(); ++m) st = WaitEtcd(m, /*starting_cluster=*/true);
    // With starting_cluster, a member that exited fails the wait with its log's tail: etcd's last line.
    if (st.ok() || attempt == 5 || st.message().find("address already in use") == std::string::npos)
      return st;
    for (int m = 0; m < members; ++m) {  // the next attempt's members start from empty data dirs
      std::error_code ec;
      std::filesystem::remove_all(temp_dir_ + "/" + EtcdName(m), ec);
      std::filesystem::remove(temp_dir_ + "/" + EtcdName(m) + ".log", ec);
    }
  }
}

// Member 0 keeps the single-member names (etcd, etcd.log); the others are etcd-<m>.
std::string RealStack::EtcdName(int member) const {
  return member == 0 ? "etcd" : "etcd-" + std::to_string(member);
}

Status RealStack::SpawnEtcd(int member) {
  const std::string client = "http://127.0.0.1:" + std::to_string(etcd_client_ports_.at(member));
  const std::string peer = "http://127.0.0.1:" + std::to_string(etcd_peer_ports_.at(member));
  std::string cluster;
  for (int m = 0; m < etcd_members(); ++m) {
    cluster += (m == 0 ? "" : ",") + EtcdName(m) + "=http://127.0.0.1:" + std::to_string(etcd_peer_ports_[m]);
  }
  // On a restart the data dir holds the member's identity and the initial-cluster flags are ignored.
  const std::vector<std::string> args = {options_.etcd_binary,
                                         "--name=" + EtcdName(member),
                                         "--data-dir=" + temp_dir_ + "/" + EtcdName(member),
                                         "--listen-client-urls=" + client,
                                         "--advertise-client-urls=" + client,
                                         "--listen-peer-urls=" + peer,
                                         "--initial-advertise-peer-urls=" + peer,
                                         "--initial-cluster=" + cluster,
                                         "--initial-cluster-token=rcsim",
                                         "--initial-cluster-state=new"};
  return etcd_.at(member)->Spawn(args, temp_dir_ + "/" + EtcdName(member) + ".log");
}

Status RealStack::StartEtcd(int member) {
  if (etcd_.at(member)->Running()) return Status::Ok();
  if (Status st = etcd_[member]->Respawn(); !st.ok()) return st;
  return WaitEtcd(member);
}

void RealStack::KillEtcd(int member) { etcd_.at(member)->Kill(); }

Status RealStack::WaitEtcd(int member, bool starting_cluster) {
  const std::string what = EtcdName(member);
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    // A new cluster's member is healthy only with a quorum: when starting one, any member's exit fails.
    const int first = starting_cluster ? 0 : member;
    const int last = starting_cluster ? etcd_members() - 1 : member;
    for (int m = first; m <= last; ++m) {
      if (!etcd_[m]->Running()) {
        return Status(Code::kUnavailable,
                      EtcdName(m) + " exited during start-up; log tail:\n" + etcd_[m]->LogTail());
      }
    }
    if (HttpRequest(etcd_client_ports_[member], "GET", "/health").find("\"health\":\"true\"") !=
        std::string::npos) {
      return Status::Ok();
    }
    if (SteadyClock::now() >= deadline) {
      return Status(Code::kUnavailable,
                    what + " not healthy in time; log tail:\n" + etcd_[member]->LogTail());
    }
    std::this_thread::sleep_for(kPoll);
  }
}

int RealStack::EtcdLeader() {
  for (int m = 0; m < etcd_members(); ++m) {
    if (!etcd_[m]->Running()) continue;
    nlohmann::json j = nlohmann::json::parse(
        Body(HttpRequest(etcd_client_ports_[m], "POST", "/v3/maintenance/status", "{}")), nullptr,
        /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("leader") || !j.contains("header")) continue;
    const nlohmann::json leader = j["leader"];
    if (leader.is_string() && leader == j["header"].value("member_id", nlohmann::json())) return m;
  }
  return -1;
}

Status RealStack::WaitApiServer() {
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    if (!apiserver_.Running()) {
      return Status(Code::kUnavailable,
                    "apiserver exited during start-up; log tail:\n" + apiserver_.LogTail());
    }
    if (StatusCodeOf(HttpRequest(api_port_, "GET", "/readyz")) == 200) return Status::Ok();
    if (SteadyClock::now() >= deadline) {
      return Status(Code::kUnavailable, "apiserver not ready in time; log tail:\n" + apiserver_.LogTail());
    }
    std::this_thread::sleep_for(kPoll);
  }
}

Status RealStack::StartManager() {
  if (manager_.Running()) return Status::Ok();
  const std::string log = temp_dir_ + "/controller-manager.log";
  std::error_code ec;
  const std::size_t offset = std::filesystem::exists(log, ec) ? std::filesystem::file_size(log, ec) : 0;
  // No scheduler: the hollow nodes start pods that no Node owns (unbound), and a scheduler with no nodes
  // would only write PodScheduled=False over the hollow nodes' status.
  std::vector<std::string> args = {options_.controller_manager_binary,
                                   "--apiserver=" + proxy_->url(),
                                   "--leader-elect=false",
                                   "--kube-api-qps=-1",
                                   "--port=-1",
                                   "--secure-port=-1",
                                   "--controllers=replicationcontroller"};
  args.insert(args.end(), options_.manager_flags.begin(), options_.manager_flags.end());
  if (Status st = manager_.Spawn(args, log); !st.ok()) return st;
  return WaitLog(manager_, "controller-manager", "replication manager started", offset);
}

void RealStack::KillManager() { manager_.Kill(); }

Status RealStack::WaitLog(ChildProcess& p, const std::string& what, const std::string& needle,
                          std::size_t log_offset) {
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    if (!p.Running())
      return Status(Code::kUnavailable, what + " exited during start-up; log tail:\n" + p.LogTail());
    std::ifstream in(p.log_path());
    in.seekg(static_cast<std::streamoff>(log_offset));
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(needle) != std::string::npos) return Status::Ok();
    if (SteadyClock::now() >= deadline) {
      return Status(Code::kUnavailable, what + " did not start in time; log tail:\n" + p.LogTail());
    }
    std::this_thread::sleep_for(kPoll);
  }
}

Result<int64_t> RealStack::CompactEtcd() {
  // Through the leader when one is known, else any running member. Right after an election a member
  // may not know the new leader yet and refuse ("etcdserver: no leader"): retried until the deadline,
  // as etcdctl's retrying client would.
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    int member = EtcdLeader();
    for (int m = 0; member < 0 && m < etcd_members(); ++m) {
      if (etcd_[m]->Running()) member = m;
    }
    const int port = etcd_client_ports_.at(member < 0 ? 0 : member);
    const std::string range = Body(HttpRequest(port, "POST", "/v3/kv/range", R"({"key":"AA=="})"));
    nlohmann::json j = nlohmann::json::parse(range, nullptr, /*allow_exceptions=*/false);
    Status failed;
    if (j.is_discarded() || !j.contains("header") || !j["header"].contains("revision")) {
      failed = Status(Code::kUnavailable, "etcd: cannot read the revision: " + range);
    } else {
      const std::string revision = j["header"]["revision"].get<std::string>();
      const std::string done = HttpRequest(port, "POST", "/v3/kv/compaction",
                                           R"({"revision":")" + revision + R"(","physical":true})");
      if (StatusCodeOf(done) == 200) return std::stoll(revision);
      // Compacted meanwhile (a retry after an applied attempt whose answer was lost): done.
      if (done.find("required revision has been compacted") != std::string::npos) return std::stoll(revision);
      failed = Status(Code::kUnavailable, "etcd: compaction failed: " + done);
    }
    if (SteadyClock::now() >= deadline) return failed;
    std::this_thread::sleep_for(kPoll);
  }
}

std::vector<pid_t> RealStack::pids() {
  std::vector<pid_t> out;
  for (auto& m : etcd_) {
    if (m->Running()) out.push_back(m->pid());
  }
  for (ChildProcess* p : {&apiserver_, &manager_, &cluster_}) {
    if (p->Running()) out.push_back(p->pid());
  }
  for (auto& a : agents_) {
    if (a->Running()) out.push_back(a->pid());
  }
  return out;
}

std::vector<int> RealStack::ports() const {
  std::vector<int> out;
  for (std::size_t m = 0; m < etcd_client_ports_.size(); ++m) {
    out.push_back(etcd_client_ports_[m]);
    out.push_back(etcd_peer_ports_[m]);
  }
  out.push_back(api_port_);
  if (proxy_) out.push_back(proxy_->port());
  return out;
}

std::string RealStack::Describe() {
  auto pid = [](ChildProcess& p) { return p.Running() ? std::to_string(p.pid()) : std::string("-"); };
  std::string agents;
  for (int i = 0; i < node_agents(); ++i) agents += ", " + NodeName(i) + " pid=" + pid(*agents_[i]);
  std::string etcd;
  for (int m = 0; m < etcd_members(); ++m) {
    etcd += (m == 0 ? "" : ", ") + EtcdName(m) + " pid=" + pid(*etcd_[m]) +
            " ports=" + std::to_string(etcd_client_ports_[m]) + "," + std::to_string(etcd_peer_ports_[m]);
  }
  return etcd + ", apiserver pid=" + pid(apiserver_) + " port=" + std::to_string(api_port_) +
         ", proxy port=" + (proxy_ ? std::to_string(proxy_->port()) : std::string("-")) +
         ", controller-manager pid=" + pid(manager_) + ", cluster-controllers pid=" + pid(cluster_) + agents +
         ", dir=" + temp_dir_;
}

}  // namespace rcsim
