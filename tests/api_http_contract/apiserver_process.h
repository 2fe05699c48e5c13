// A real apps/apiserver process on a free loopback port, over the etcd endpoints it is given, for tests
// that talk to the API over HTTP.
//
// Start() launches `binary --etcd_servers=... --address 127.0.0.1 --port 0` (plus --token-file when a
// token is given) with stdout/stderr in a temp log, reads the port the server bound from its
// "listening on" line, then polls GET /version until it answers 200 or the deadline passes (failing
// early, with the log's tail, if the process exits). Kill() is a crash
// (SIGKILL); Restart() brings the server back on the same port. The destructor sends
// SIGTERM, then SIGKILL after a grace period, and removes the temp dir. The child gets
// PR_SET_PDEATHSIG(SIGKILL), tied to the starting thread: start it from the test's main thread.
//
// Thread-safety: not thread-safe; use one ApiServerProcess from one thread.
#ifndef RCSIM_TESTS_API_HTTP_CONTRACT_APISERVER_PROCESS_H_
#define RCSIM_TESTS_API_HTTP_CONTRACT_APISERVER_PROCESS_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

struct ApiServerProcessOptions {
  std::string binary;        // path of the apiserver executable
  std::string etcd_servers;  // "http://127.0.0.1:2379[,...]"
  std::string bearer_token;  // non-empty: written to a token file passed as --token-file
  Duration start_timeout = std::chrono::seconds(30);
  Duration stop_timeout = std::chrono::seconds(10);
  std::vector<std::string> extra_args;  // appended to the command line, e.g. "--max-connections=600"
  // Non-empty: a folder made by scripts/make-certs; the server serves HTTPS with its server
  // certificate, client certificates from its CA and the tokens of its tokens.csv.
  std::string certs_dir;
};

class ApiServerProcess {
 public:
  static Result<std::unique_ptr<ApiServerProcess>> Start(ApiServerProcessOptions options);

  ApiServerProcess(const ApiServerProcess&) = delete;
  ApiServerProcess& operator=(const ApiServerProcess&) = delete;
  ~ApiServerProcess();

  // SIGTERM, then SIGKILL after stop_timeout. Idempotent.
  void Stop();
  // SIGKILL (a crash or an OOM kill) and reap. Idempotent.
  void Kill();
  // Starts the server again on the same port (stopping it first if it runs) and waits until it answers.
  Status Restart();
  bool running() const { return pid_ > 0; }

  // "http://127.0.0.1:<port>" ("https://" with certs_dir)
  std::string url() const;
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string LogTail() const;

 private:
  explicit ApiServerProcess(ApiServerProcessOptions options) : options_(std::move(options)) {}
  Status Launch();
  Status WaitReady();
  // Reads the port from the "listening on 127.0.0.1:PORT" line the server logs after log_offset.
  Status WaitListening(std::size_t log_offset);

  ApiServerProcessOptions options_;
  std::string temp_dir_;
  std::string log_path_;
  int port_ = 0;                       // 0 until the first start has bound one; then kept across restarts
  std::size_t launch_log_offset_ = 0;  // the log's size when the last Launch() started the server
  pid_t pid_ = -1;
};

}  // namespace rcsim

#endif  // RCSIM_TESTS_API_HTTP_CONTRACT_APISERVER_PROCESS_H_
