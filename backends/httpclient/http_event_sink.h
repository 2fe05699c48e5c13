// HttpEventSink: an EventRecorder's sink over the API server's events resource, as client-go's
// broadcaster posts them: POST /api/v1/namespaces/{ns}/events for a new event, PUT .../events/{name}
// for a repeat (POST again if that event is gone). Fire-and-forget: a failed write is counted and
// dropped, never retried; Write never blocks.
//
// Thread-safety: Write may be called from any thread; replies arrive on the client's threads.
#ifndef RCSIM_BACKENDS_HTTPCLIENT_HTTP_EVENT_SINK_H_
#define RCSIM_BACKENDS_HTTPCLIENT_HTTP_EVENT_SINK_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "backends/httpclient/http_api_client.h"
#include "engine/event_recorder.h"

namespace rcsim {

class HttpEventSink final : public EventSink {
 public:
  // `client` is not owned and must outlive every reply (it does while it is alive).
  explicit HttpEventSink(HttpApiClient* client) : client_(client) {}
  void Write(const Event& ev, bool update) override;
  // Writes answered with an error or not answered at all, since start.
  uint64_t failed() const { return failed_->load(std::memory_order_relaxed); }

 private:
  HttpApiClient* const client_;
  // Shared with the replies in flight, which may complete after the sink is gone.
  std::shared_ptr<std::atomic<uint64_t>> failed_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_HTTP_EVENT_SINK_H_
