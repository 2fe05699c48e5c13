#include "backends/http/server_side_apply.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "backends/http/core_v1_schema.h"
#include "backends/http/strategic_merge.h"

namespace rcsim {
namespace {

using json = nlohmann::json;
using Path = std::vector<std::string>;  // FieldsV1 tokens: "f:spec", "k:{...}", "v:...", "."
using Leaves = std::map<Path, json>;    // every owned field and its value

bool ServerManagedMeta(const std::string& k) {
  return k == "name" || k == "namespace" || k == "uid" || k == "resourceVersion" ||
         k == "creationTimestamp" || k == "generation" || k == "managedFields" || k == "selfLink" ||
         k == "deletionTimestamp" || k == "deletionGracePeriodSeconds";
}

void Collect(const json& v, const std::string& type, Path& prefix, Leaves* out);

void CollectValue(const std::string& k, const json& child, const SchemaField* f, Path& prefix, Leaves* out) {
  prefix.push_back("f:" + k);
  if (child.is_object()) {
    if (f != nullptr && f->kind == SchemaField::Kind::kMap) {
      if (child.empty()) (*out)[prefix] = child;
      for (const auto& [mk, mv] : child.items()) {
        prefix.push_back("f:" + mk);
        if (mv.is_object() && IsSchemaType(f->elem) && !mv.empty()) {
          Collect(mv, f->elem, prefix, out);
        } else {
          (*out)[prefix] = mv;
        }
        prefix.pop_back();
      }
    } else if (child.empty()) {
      (*out)[prefix] = child;
    } else {
      const std::string t = (f != nullptr && f->kind == SchemaField::Kind::kObject && IsSchemaType(f->elem))
                                ? f->elem
                                : std::string();
      Collect(child, t, prefix, out);
    }
  } else if (child.is_array() && f != nullptr && f->kind == SchemaField::Kind::kList && f->merge) {
    if (f->merge_key.empty()) {
      for (const json& e : child) {
        prefix.push_back("v:" + e.dump());
        (*out)[prefix] = e;
        prefix.pop_back();
      }
    } else {
      const std::string elem = IsSchemaType(f->elem) ? f->elem : std::string();
      for (const json& e : child) {
        if (!e.is_object() || !e.contains(f->merge_key)) continue;
        prefix.push_back("k:" + json{{f->merge_key, e[f->merge_key]}}.dump());
        prefix.push_back(".");
        (*out)[prefix] = e[f->merge_key];
        prefix.pop_back();
        Collect(e, elem, prefix, out);
        prefix.pop_back();
      }
    }
  } else {
    (*out)[prefix] = child;  // a scalar or an atomic list
  }
  prefix.pop_back();
}

void Collect(const json& v, const std::string& type, Path& prefix, Leaves* out) {
  if (!v.is_object()) return;
  const bool top = prefix.empty();
  const bool meta = prefix.size() == 1 && prefix[0] == "f:metadata";
  for (const auto& [k, child] : v.items()) {
    if (top && (k == "apiVersion" || k == "kind" || k == "status")) continue;
    if (meta && ServerManagedMeta(k)) continue;
    if (child.is_null()) continue;
    const SchemaField* f = type.empty() ? nullptr : FindSchemaField(type, k);
    CollectValue(k, child, f, prefix, out);
  }
}

Leaves LeavesOf(const json& obj, const std::string& type) {
  Leaves out;
  Path prefix;
  Collect(obj, type, prefix, &out);
  return out;
}

// --- FieldsV1 <-> paths ---

void ToFieldsV1(const std::set<Path>& paths, json* out) {
  *out = json::object();
  for (const Path& p : paths) {
    json* node = out;
    for (const std::string& t : p) {
      if (!node->contains(t)) (*node)[t] = json::object();
      node = &(*node)[t];
    }
  }
}

void FromFieldsV1(const json& node, Path& prefix, std::set<Path>* out) {
  if (!node.is_object()) return;
  for (const auto& [k, v] : node.items()) {
    prefix.push_back(k);
    if (!v.is_object() || v.empty()) {
      out->insert(prefix);
    } else {
      FromFieldsV1(v, prefix, out);
    }
    prefix.pop_back();
  }
}

struct Manager {
  std::string name;
  std::string operation;  // "Apply" or "Update"
  json entry;             // the managedFields entry as stored
  std::set<Path> fields;
};

std::vector<Manager> ManagersOf(const json& obj) {
  std::vector<Manager> out;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return out;
  auto mf = m->find("managedFields");
  if (mf == m->end() || !mf->is_array()) return out;
  for (const json& e : *mf) {
    if (!e.is_object()) continue;
    Manager mgr;
    mgr.name = e.value("manager", "");
    mgr.operation = e.value("operation", "");
    mgr.entry = e;
    Path prefix;
    if (auto f = e.find("fieldsV1"); f != e.end()) FromFieldsV1(*f, prefix, &mgr.fields);
    out.push_back(std::move(mgr));
  }
  return out;
}

void StoreManagers(json& obj, const std::vector<Manager>& managers) {
  json arr = json::array();
  for (const Manager& m : managers) {
    if (m.fields.empty()) continue;
    json e = m.entry;
    e["manager"] = m.name;
    e["operation"] = m.operation;
    e["apiVersion"] = "v1";
    e["fieldsType"] = "FieldsV1";
    ToFieldsV1(m.fields, &e["fieldsV1"]);
    arr.push_back(std::move(e));
  }
  if (arr.empty()) {
    obj["metadata"].erase("managedFields");
  } else {
    obj["metadata"]["managedFields"] = std::move(arr);
  }
}

Manager& Entry(std::vector<Manager>& managers, const std::string& name, const char* operation) {
  for (Manager& m : managers) {
    if (m.name == name && m.operation == operation) return m;
  }
  Manager m;
  m.name = name;
  m.operation = operation;
  m.entry = json::object();
  managers.push_back(std::move(m));
  return managers.back();
}

// ".spec.template.spec.containers[name=\"web\"].image", as kube-apiserver names a field.
std::string FieldName(const Path& p) {
  std::string out;
  for (const std::string& t : p) {
    if (t.rfind("f:", 0) == 0) {
      out += "." + t.substr(2);
    } else if (t.rfind("k:", 0) == 0) {
      json k = json::parse(t.substr(2), nullptr, false);
      std::string inner;
      if (k.is_object()) {
        for (const auto& [kk, kv] : k.items()) {
          if (!inner.empty()) inner += ",";
          inner += kk + "=" + kv.dump();
        }
      }
      out += "[" + inner + "]";
    } else if (t.rfind("v:", 0) == 0) {
      out += "[=" + t.substr(2) + "]";
    }
  }
  return out;
}

// Removes the field at `p` from `obj` (a "." path removes the list element itself).
void RemovePath(json& obj, const Path& p) {
  json* node = &obj;
  json* parent_list = nullptr;
  std::size_t element = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const std::string& t = p[i];
    const bool last = i + 1 == p.size();
    if (t == ".") {
      if (last && parent_list != nullptr) parent_list->erase(element);
      return;
    }
    if (t.rfind("f:", 0) == 0) {
      if (!node->is_object()) return;
      const std::string k = t.substr(2);
      auto it = node->find(k);
      if (it == node->end()) return;
      if (last) {
        node->erase(it);
        return;
      }
      node = &*it;
      continue;
    }
    if (!node->is_array()) return;
    json want;
    const bool keyed = t.rfind("k:", 0) == 0;
    want = json::parse(t.substr(2), nullptr, false);
    std::size_t idx = node->size();
    for (std::size_t j = 0; j < node->size(); ++j) {
      const json& e = (*node)[j];
      bool match = keyed ? e.is_object() : e == want;
      if (keyed && want.is_object()) {
        for (const auto& [kk, kv] : want.items()) match = match && e.contains(kk) && e[kk] == kv;
      }
      if (match) {
        idx = j;
        break;
      }
    }
    if (idx == node->size()) return;
    if (last) {
      node->erase(idx);
      return;
    }
    parent_list = node;
    element = idx;
    node = &(*node)[idx];
  }
}

}  // namespace

Result<json> ServerSideApply(const json& live, const json& applied, const ApplyOptions& opts) {
  if (!applied.is_object()) return Status(Code::kBadRequest, "the applied configuration must be an object");
  if (opts.manager.empty()) {
    return Status(Code::kBadRequest, "PATCH requests with apply content types must set fieldManager");
  }
  json cfg = applied;
  cfg.erase("status");
  if (cfg.contains("metadata") && cfg["metadata"].is_object()) {
    cfg["metadata"].erase("managedFields");
    cfg["metadata"].erase("resourceVersion");
  }
  const Leaves want = LeavesOf(cfg, opts.schema_type);
  json base = live.is_object() ? live : json::object();
  std::vector<Manager> managers = ManagersOf(base);
  const Leaves have = LeavesOf(base, opts.schema_type);

  // Conflicts: a value this apply changes on a field someone else owns.
  std::vector<std::pair<std::string, Path>> conflicts;
  for (Manager& m : managers) {
    if (m.name == opts.manager && m.operation == "Apply") continue;
    for (const auto& [p, v] : want) {
      if (!m.fields.count(p)) continue;
      auto h = have.find(p);
      if (h != have.end() && h->second == v) continue;  // shared ownership of an agreed value
      conflicts.emplace_back(m.name, p);
    }
  }
  if (!conflicts.empty() && !opts.force) {
    std::string msg = "Apply failed with " + std::to_string(conflicts.size()) + " conflict" +
                      (conflicts.size() == 1 ? "" : "s") + ": ";
    std::vector<StatusCause> causes;
    for (std::size_t i = 0; i < conflicts.size(); ++i) {
      const std::string field = FieldName(conflicts[i].second);
      const std::string what = "conflict with \"" + conflicts[i].first + "\" using v1";
      msg += (i ? ", " : "") + what + ": " + field;
      causes.push_back({field, "FieldManagerConflict", what});
    }
    return Status(Code::kConflict, msg, std::move(causes));
  }
  for (const auto& [name, p] : conflicts) {
    for (Manager& m : managers) {
      if (m.name == name && !(m.name == opts.manager && m.operation == "Apply")) m.fields.erase(p);
    }
  }

  // Fields this manager applied before and no longer applies go, unless someone else owns them.
  Manager& mine = Entry(managers, opts.manager, "Apply");
  std::vector<Path> dropped;
  for (const Path& p : mine.fields) {
    if (want.count(p)) continue;
    bool shared = false;
    for (const Manager& m : managers) {
      if (&m != &mine && m.fields.count(p)) shared = true;
    }
    if (!shared) dropped.push_back(p);
  }
  // Deepest first, so an element's own fields go before the element.
  std::sort(dropped.begin(), dropped.end(), [](const Path& a, const Path& b) { return a.size() > b.size(); });
  for (const Path& p : dropped) RemovePath(base, p);

  Result<json> merged = StrategicMergePatch(base, cfg, opts.schema_type);
  if (!merged.ok()) return merged.status();
  Manager& m2 = Entry(managers, opts.manager, "Apply");
  m2.fields.clear();
  for (const auto& [p, v] : want) m2.fields.insert(p);
  m2.entry["time"] = FormatRfc3339(opts.now);
  StoreManagers(*merged, managers);
  return merged;
}

void RecordUpdate(const json& old, json& next, const std::string& manager, std::string_view schema_type,
                  TimePoint now, bool force_track) {
  std::vector<Manager> managers = ManagersOf(old.is_object() ? old : json::object());
  if (managers.empty() && !force_track) {
    if (next.contains("metadata") && next["metadata"].is_object()) next["metadata"].erase("managedFields");
    return;
  }
  const std::string type(schema_type);
  const Leaves before = old.is_object() ? LeavesOf(old, type) : Leaves();
  const Leaves after = LeavesOf(next, type);
  std::set<Path> changed, removed;
  for (const auto& [p, v] : after) {
    auto b = before.find(p);
    if (b == before.end() || b->second != v) changed.insert(p);
  }
  for (const auto& [p, v] : before) {
    if (!after.count(p)) removed.insert(p);
  }
  if (changed.empty() && removed.empty()) {
    StoreManagers(next, managers);
    return;
  }
  const std::string name = manager.empty() ? "unknown" : manager;
  for (Manager& m : managers) {
    if (m.name == name && m.operation == "Update") continue;
    for (const Path& p : changed) m.fields.erase(p);
    for (const Path& p : removed) m.fields.erase(p);
  }
  Manager& mine = Entry(managers, name, "Update");
  for (const Path& p : removed) mine.fields.erase(p);
  for (const Path& p : changed) mine.fields.insert(p);
  mine.entry["time"] = FormatRfc3339(now);
  StoreManagers(next, managers);
}

}  // namespace rcsim
