#include "backends/httpclient/http_event_sink.h"

#include <string>
#include <utility>

namespace rcsim {
namespace {

// Namespaces and event names are DNS-1123 (no character needs escaping in a path).
std::string EventsPath(const std::string& ns) { return "/api/v1/namespaces/" + ns + "/events"; }

bool Ok(const Result<HttpReply>& r) { return r.ok() && r->status >= 200 && r->status < 300; }

}  // namespace

void HttpEventSink::Write(const Event& ev, bool update) {
  const std::string ns = ev.metadata.namespace_;
  std::string body = EventToJson(ev).dump();
  auto failed = failed_;
  if (!update) {
    client_->Send("POST", EventsPath(ns), std::move(body), [failed](Result<HttpReply> r) {
      if (!Ok(r)) failed->fetch_add(1, std::memory_order_relaxed);
    });
    return;
  }
  HttpApiClient* client = client_;
  client_->Send("PUT", EventsPath(ns) + "/" + ev.metadata.name, body,
                [client, failed, ns, body](Result<HttpReply> r) {
                  if (Ok(r)) return;
                  if (r.ok() && r->status == 404) {  // deleted meanwhile (or never created): create it
                    client->Send("POST", EventsPath(ns), body, [failed](Result<HttpReply> again) {
                      if (!Ok(again)) failed->fetch_add(1, std::memory_order_relaxed);
                    });
                    return;
                  }
                  failed->fetch_add(1, std::memory_order_relaxed);
                });
}

}  // namespace rcsim
