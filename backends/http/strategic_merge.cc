#include "backends/http/strategic_merge.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "backends/http/core_v1_schema.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

// The type context of a value: a schema type name, or "" when unknown (merged as plain JSON maps and
// replaced lists, which is what a merge patch does).
struct Merger {
  Status error;

  bool Fail(const std::string& msg) {
    if (error.ok()) error = Status(Code::kBadRequest, msg);
    return false;
  }

  // Removes every directive from a value taken whole from the patch (a list or map replacing one that
  // is not in the original is still a patch: `$patch: delete` elements make no sense there and go).
  static void Strip(json& v) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end();) {
        if (!it.key().empty() && it.key().front() == '$') {
          it = v.erase(it);
        } else {
          Strip(*it);
          ++it;
        }
      }
    } else if (v.is_array()) {
      json out = json::array();
      for (json& e : v) {
        // A directive element ({"$patch": "replace"} alone, or an element marked for deletion).
        if (e.is_object() && e.contains(kPatch) && (e.size() == 1 || e[kPatch] == "delete")) continue;
        Strip(e);
        out.push_back(std::move(e));
      }
      v = std::move(out);
    }
  }

  // Merges patch map `p` into `orig` (both objects), whose type is `type`. Sets *deleted when the patch
  // says `$patch: delete`.
  bool MergeMap(json& orig, const json& p, const std::string& type, bool* deleted) {
    *deleted = false;
    if (auto d = p.find(kPatch); d != p.end()) {
      if (!d->is_string()) return Fail("$patch must be a string");
      const std::string& v = d->get_ref<const std::string&>();
      if (v == "delete") {
        *deleted = true;
        return true;
      }
      if (v == "replace") {
        orig = p;
        Strip(orig);
        return true;
      }
      if (v != "merge") return Fail("unknown patch type: " + v + " in map: " + p.dump());
    }
    if (auto r = p.find(kRetainKeys); r != p.end()) {
      if (!r->is_array()) return Fail("$retainKeys must be a list of strings");
      for (const json& k : *r) {
        if (!k.is_string()) return Fail("$retainKeys must be a list of strings");
      }
      for (auto it = orig.begin(); it != orig.end();) {
        if (std::find(r->begin(), r->end(), json(it.key())) == r->end()) {
          it = orig.erase(it);
        } else {
          ++it;
        }
      }
    }
    // $deleteFromPrimitiveList first, so a value deleted and re-added ends up present.
    for (const auto& [k, v] : p.items()) {
      if (!std::string_view(k).starts_with(kDeleteFromPrimitiveList)) continue;
      const std::string field = k.substr(kDeleteFromPrimitiveList.size());
      if (!v.is_array()) return Fail(k + " must be a list");
      auto o = orig.find(field);
      if (o == orig.end() || !o->is_array()) continue;
      json kept = json::array();
      for (json& e : *o) {
        if (std::find(v.begin(), v.end(), e) == v.end()) kept.push_back(std::move(e));
      }
      *o = std::move(kept);
    }
    for (const auto& [k, v] : p.items()) {
      if (!k.empty() && k.front() == '$') continue;
      const SchemaField* f = type.empty() ? nullptr : FindSchemaField(type, k);
      if (v.is_null()) {
        orig.erase(k);
        continue;
      }
      auto o = orig.find(k);
      if (v.is_object()) {
        const std::string child = ChildType(f, type);
        if (f != nullptr && f->kind == SchemaField::Kind::kMap) {
          if (o == orig.end() || !o->is_object()) orig[k] = json::object();
          if (!MergeMapOfValues(orig[k], v, f->elem)) return false;
          continue;
        }
        if (o == orig.end() || !o->is_object()) orig[k] = json::object();
        bool gone = false;
        if (!MergeMap(orig[k], v, child, &gone)) return false;
        if (gone) orig.erase(k);
        continue;
      }
      if (v.is_array()) {
        json base = (o != orig.end() && o->is_array()) ? *o : json::array();
        if (!MergeList(base, v, f)) return false;
        orig[k] = std::move(base);
        continue;
      }
      orig[k] = v;
    }
    // $setElementOrder last: it orders the merged lists.
    for (const auto& [k, v] : p.items()) {
      if (!std::string_view(k).starts_with(kSetElementOrder)) continue;
      const std::string field = k.substr(kSetElementOrder.size());
      if (!v.is_array()) return Fail(k + " must be a list");
      auto o = orig.find(field);
      if (o == orig.end() || !o->is_array()) continue;
      const SchemaField* f = type.empty() ? nullptr : FindSchemaField(type, field);
      Order(*o, v, f != nullptr ? f->merge_key : std::string());
    }
    return true;
  }

  // A map whose values have type `elem` (e.g. resources.limits, or a map of objects).
  bool MergeMapOfValues(json& orig, const json& p, const std::string& elem) {
    for (const auto& [k, v] : p.items()) {
      if (!k.empty() && k.front() == '$') continue;
      if (v.is_null()) {
        orig.erase(k);
      } else if (v.is_object() && orig.contains(k) && orig[k].is_object()) {
        bool gone = false;
        if (!MergeMap(orig[k], v, IsSchemaType(elem) ? elem : std::string(), &gone)) return false;
        if (gone) orig.erase(k);
      } else {
        json copy = v;
        Strip(copy);
        orig[k] = std::move(copy);
      }
    }
    return true;
  }

  static std::string ChildType(const SchemaField* f, const std::string& /*parent*/) {
    if (f == nullptr || f->kind != SchemaField::Kind::kObject) return std::string();
    return IsSchemaType(f->elem) ? f->elem : std::string();
  }

  bool MergeList(json& orig, const json& p, const SchemaField* f) {
    // A {"$patch": "replace"} element replaces the whole list with the other elements.
    for (const json& e : p) {
      if (e.is_object() && e.size() == 1 && e.contains(kPatch) && e[kPatch] == "replace") {
        orig = p;
        Strip(orig);
        return true;
      }
    }
    if (f == nullptr || !f->merge) {
      orig = p;
      Strip(orig);
      return true;
    }
    if (f->merge_key.empty()) {
      // A set of primitives: add what is new, in the patch's order.
      for (const json& e : p) {
        if (e.is_object()) {
          if (e.size() == 1 && e.contains(kPatch)) continue;
          return Fail("a list of primitives may not contain a map: " + e.dump());
        }
        if (std::find(orig.begin(), orig.end(), e) == orig.end()) orig.push_back(e);
      }
      return true;
    }
    const std::string& key = f->merge_key;
    const std::string elem = IsSchemaType(f->elem) ? f->elem : std::string();
    for (const json& e : p) {
      if (!e.is_object())
        return Fail("the list merged by \"" + key + "\" has a non-map element: " + e.dump());
      auto kv = e.find(key);
      if (kv == e.end()) return Fail("map: " + e.dump() + " does not contain declared merge key: " + key);
      auto match = std::find_if(orig.begin(), orig.end(), [&](const json& o) {
        return o.is_object() && o.contains(key) && o[key] == *kv;
      });
      if (e.contains(kPatch) && e[kPatch] == "delete") {
        if (match != orig.end()) orig.erase(match);
        continue;
      }
      bool gone = false;
      if (match == orig.end()) {
        json added = json::object();
        if (!MergeMap(added, e, elem, &gone)) return false;
        if (!gone) orig.push_back(std::move(added));
      } else {
        if (!MergeMap(*match, e, elem, &gone)) return false;
        if (gone) orig.erase(match);
      }
    }
    return true;
  }

  // Reorders `list` as `order` says (merge-key maps or primitives); elements it does not name keep
  // their relative order after the named ones.
  static void Order(json& list, const json& order, const std::string& key) {
    auto rank = [&](const json& e) -> std::size_t {
      for (std::size_t i = 0; i < order.size(); ++i) {
        const json& o = order[i];
        if (key.empty() ? o == e
                        : (o.is_object() && e.is_object() && o.contains(key) && e.contains(key) &&
                           o[key] == e[key])) {
          return i;
        }
      }
      return order.size();
    };
    std::vector<std::pair<std::size_t, json>> ranked;
    for (json& e : list) ranked.emplace_back(rank(e), std::move(e));
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    json out = json::array();
    for (auto& [r, e] : ranked) out.push_back(std::move(e));
    list = std::move(out);
  }
};

}  // namespace

Result<json> StrategicMergePatch(const json& original, const json& patch, std::string_view type) {
  if (!patch.is_object()) return Status(Code::kBadRequest, "a strategic merge patch must be a JSON object");
  Merger m;
  json out = original.is_object() ? original : json::object();
  bool deleted = false;
  if (!m.MergeMap(out, patch, std::string(type), &deleted)) return m.error;
  if (deleted) return Status(Code::kBadRequest, "a strategic merge patch may not delete the whole object");
  return out;
}

}  // namespace rcsim
