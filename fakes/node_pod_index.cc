#include "fakes/node_pod_index.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>

namespace rcsim {
namespace {

int64_t RevisionOf(const std::string& rv) {
  int64_t out = 0;
  std::from_chars(rv.data(), rv.data() + rv.size(), out);
  return out;
}

std::string KeyOfPod(const Pod& pod) { return pod.metadata.namespace_ + "/" + pod.metadata.name; }

// The node of a "pods on node X" request, or "" when the index does not serve it.
std::string NodeOf(const std::string& ns, const ListOptions& opts) {
  if (!ns.empty() || !opts.label_selector.Empty() || !opts.field_name.empty() || opts.limit != 0 ||
      !opts.continue_token.empty() || opts.fields.size() != 1) {
    return "";
  }
  const FieldRequirement& f = opts.fields[0];
  if (f.field != "spec.nodeName" || !f.equal) return "";
  return f.value;
}

}  // namespace

// Serves "pods on node X" lists and watches from the index; every other call goes to the API.
class NodePodIndex::PodsOnNodes final : public ForwardingResourceClient<Pod> {
 public:
  PodsOnNodes(NodePodIndex* index, ResourceClient<Pod>* inner)
      : ForwardingResourceClient(inner), index_(index) {}

  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<Pod>>> done) override {
    const std::string node = NodeOf(ns, opts);
    if (node.empty()) {
      inner()->List(ns, opts, std::move(done));
      return;
    }
    index_->List(node, std::move(done));
  }
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts, const std::string& rv,
                                  std::function<void(const ApiWatchEvent<Pod>&)> on_event) override {
    const std::string node = NodeOf(ns, opts);
    if (node.empty()) return inner()->Watch(ns, opts, rv, std::move(on_event));
    return index_->Watch(node, rv, std::move(on_event));
  }

 private:
  NodePodIndex* const index_;
};

NodePodIndex::Client::Client(NodePodIndex* index, ApiClient* api, ClusterApi* cluster)
    : api_(api), cluster_(cluster), pods_(std::make_unique<PodsOnNodes>(index, &api->pods())) {}
NodePodIndex::Client::~Client() = default;
ResourceClient<Pod>& NodePodIndex::Client::pods() { return *pods_; }

NodePodIndex::NodePodIndex(ApiClient* api, ClusterApi* cluster, Executor* executor, std::size_t log_limit)
    : api_(api), executor_(executor), log_limit_(log_limit) {
  client_ = std::make_unique<Client>(this, api, cluster);
  Relist();
}

NodePodIndex::~NodePodIndex() {
  *alive_ = false;
  watch_.reset();
  for (auto& [node, subs] : subscribers_) {
    for (auto& s : subs) s->open = false;
  }
}

std::size_t NodePodIndex::pods_on(const std::string& node) const {
  auto it = by_node_.find(node);
  return it == by_node_.end() ? 0 : it->second.size();
}

void NodePodIndex::Relist() {
  watch_.reset();
  api_->pods().List("", ListOptions{}, [this, alive = alive_](Result<ObjectList<Pod>> r) {
    if (!*alive) return;
    if (!r.ok()) {
      executor_->Schedule(std::chrono::seconds(1), [this, alive] {
        if (*alive) Relist();
      });
      return;
    }
    // A fresh start: every watcher re-lists from this state.
    EndAll();
    by_node_.clear();
    node_of_.clear();
    log_.clear();
    revision_ = RevisionOf(r->resource_version);
    log_floor_ = revision_;
    for (const PodPtr& pod : r->items) {
      if (pod->spec.node_name.empty()) continue;
      Place(KeyOfPod(*pod), pod);
    }
    synced_ = true;
    watch_ = api_->pods().Watch("", ListOptions{}, r->resource_version,
                                [this](const ApiWatchEvent<Pod>& ev) { OnEvent(ev); });
    std::vector<std::function<void()>> waiting = std::move(waiting_lists_);
    waiting_lists_.clear();
    for (auto& w : waiting) w();
  });
}

void NodePodIndex::OnEvent(const ApiWatchEvent<Pod>& ev) {
  using Type = ApiWatchEvent<Pod>::Type;
  switch (ev.type) {
    case Type::kAdded:
    case Type::kModified:
    case Type::kDeleted:
      Apply(ev.object, ev.type == Type::kDeleted, RevisionOf(ev.object->metadata.resource_version));
      return;
    case Type::kBookmark: return;
    case Type::kError:
      ++relists_;
      synced_ = false;
      // Not from inside the watch's own callback: Relist destroys it.
      executor_->Post([this, alive = alive_] {
        if (*alive) Relist();
      });
      return;
  }
}

void NodePodIndex::Apply(const PodPtr& pod, bool deleted, int64_t revision) {
  using Type = ApiWatchEvent<Pod>::Type;
  if (revision > revision_) revision_ = revision;
  const std::string key = KeyOfPod(*pod);
  auto known = node_of_.find(key);
  if (deleted) {
    if (known == node_of_.end()) return;
    const std::string node = Unplace(known);
    Emit(node, Type::kDeleted, pod, revision);
    return;
  }
  const std::string& node = pod->spec.node_name;
  if (known != node_of_.end() && known->second.node != node) {
    // Bindings are one-way; a pod seen on another node (or unbound again) left the old one.
    const PodPtr last = *known->second.slot;
    const std::string old = Unplace(known);
    Emit(old, Type::kDeleted, last, revision);
    known = node_of_.end();
  }
  if (node.empty()) return;
  const bool added = known == node_of_.end();
  if (added) {
    Place(key, pod);
  } else {
    *known->second.slot = pod;  // still on its node: replaced where it is
  }
  Emit(node, added ? Type::kAdded : Type::kModified, pod, revision);
}

void NodePodIndex::Place(const std::string& key, const PodPtr& pod) {
  PodPtr& slot = by_node_[pod->spec.node_name][key];
  slot = pod;
  node_of_.insert_or_assign(key, Placement{pod->spec.node_name, &slot});
}

std::string NodePodIndex::Unplace(PlacementMap::iterator known) {
  std::string node = std::move(known->second.node);
  auto bucket = by_node_.find(node);
  bucket->second.erase(known->first);
  if (bucket->second.empty()) by_node_.erase(bucket);
  node_of_.erase(known);
  return node;
}

void NodePodIndex::Emit(const std::string& node, typename ApiWatchEvent<Pod>::Type type, const PodPtr& pod,
                        int64_t revision) {
  ApiWatchEvent<Pod> ev;
  ev.type = type;
  ev.object = pod;
  if (auto subs = subscribers_.find(node); subs != subscribers_.end()) {
    for (const SubscriberPtr& s : subs->second) Deliver(s, ev);
  }
  log_.push_back(Entry{revision, node, std::move(ev)});
  while (log_.size() > log_limit_) {
    log_floor_ = log_.front().revision;
    log_.pop_front();
  }
}

void NodePodIndex::Deliver(const SubscriberPtr& s, const ApiWatchEvent<Pod>& ev) {
  if (!s->open) return;
  s->queue.push_back(ev);
  if (s->drain_posted) return;
  s->drain_posted = true;
  executor_->Post([s] {
    s->drain_posted = false;
    while (s->open && !s->queue.empty()) {
      ApiWatchEvent<Pod> next = std::move(s->queue.front());
      s->queue.pop_front();
      s->on_event(next);
    }
  });
}

void NodePodIndex::EndAll() {
  auto subs = std::move(subscribers_);
  subscribers_.clear();
  std::vector<std::string> nodes;
  nodes.reserve(subs.size());
  for (const auto& [node, of_node] : subs) nodes.push_back(node);
  std::sort(nodes.begin(), nodes.end());  // deliveries are posted: their order is the trace's
  for (const std::string& node : nodes) {
    for (const SubscriberPtr& s : subs[node]) {
      ApiWatchEvent<Pod> ev;
      ev.type = ApiWatchEvent<Pod>::Type::kError;
      ev.error = Status(Code::kGone, "the node pod index re-listed");
      Deliver(s, ev);
    }
  }
}

void NodePodIndex::List(const std::string& node, Callback<Result<ObjectList<Pod>>> done) {
  auto reply = [this, node, done = std::move(done)] {
    ObjectList<Pod> out;
    out.resource_version = std::to_string(revision_);
    if (auto it = by_node_.find(node); it != by_node_.end()) {
      std::vector<std::pair<std::string_view, PodPtr>> pods(it->second.begin(), it->second.end());
      std::sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out.items.reserve(pods.size());
      for (auto& [key, pod] : pods) out.items.push_back(std::move(pod));
    }
    executor_->Post([done, out = std::move(out)]() mutable { done(std::move(out)); });
  };
  if (!synced_) {
    waiting_lists_.emplace_back(std::move(reply));
    return;
  }
  reply();
}

namespace {

class SubscriberHandle final : public ApiWatch {
 public:
  explicit SubscriberHandle(std::function<void()> close) : close_(std::move(close)) {}
  ~SubscriberHandle() override { close_(); }

 private:
  std::function<void()> close_;
};

}  // namespace

std::unique_ptr<ApiWatch> NodePodIndex::Watch(const std::string& node, const std::string& resource_version,
                                              std::function<void(const ApiWatchEvent<Pod>&)> on_event) {
  auto s = std::make_shared<Subscriber>();
  s->node = node;
  s->on_event = std::move(on_event);
  const int64_t from = RevisionOf(resource_version);
  if (!synced_ || from < log_floor_ || from > revision_) {
    ApiWatchEvent<Pod> ev;
    ev.type = ApiWatchEvent<Pod>::Type::kError;
    ev.error =
        Status(Code::kGone, "resourceVersion " + resource_version + " is not served by the node index");
    Deliver(s, ev);
    return std::make_unique<SubscriberHandle>([s] { s->open = false; });
  }
  // What happened on the node after `from` and before now, then every later event.
  auto first = std::upper_bound(log_.begin(), log_.end(), from,
                                [](int64_t rev, const Entry& e) { return rev < e.revision; });
  for (auto e = first; e != log_.end(); ++e) {
    if (e->node == node) Deliver(s, e->event);
  }
  subscribers_[node].push_back(s);
  return std::make_unique<SubscriberHandle>([this, alive = alive_, s] {
    s->open = false;
    if (!*alive) return;
    auto subs = subscribers_.find(s->node);
    if (subs == subscribers_.end()) return;
    std::erase(subs->second, s);
    if (subs->second.empty()) subscribers_.erase(subs);
  });
}

}  // namespace rcsim
