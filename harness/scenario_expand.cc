#include "harness/scenario_expand.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "harness/scenario_document.h"

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kIncludable[] = {"cluster", "manager"};

std::string Describe(const json& j) {
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return j.dump();
}

// Where each top-level block field came from: "/cluster/nodes" -> the included document.
using Origins = std::map<std::string, const ScenarioDocument*>;

// Merges the included files into `doc.value` (removing `include`). `includes` keeps their documents
// alive for error messages.
Status ApplyIncludes(ScenarioDocument& doc, std::vector<std::unique_ptr<ScenarioDocument>>* includes,
                     Origins* origins) {
  json& v = doc.value;
  if (!v.is_object() || !v.contains("include")) return Status::Ok();
  std::vector<std::pair<std::string, std::string>> paths;  // (path, pointer)
  const json& inc = v["include"];
  if (inc.is_string()) {
    paths.emplace_back(inc.get<std::string>(), "/include");
  } else if (inc.is_array() && !inc.empty()) {
    for (std::size_t i = 0; i < inc.size(); ++i) {
      if (!inc[i].is_string()) {
        return Status(Code::kInvalid,
                      doc.Error("/include/" + std::to_string(i), "expected a path, got " + Describe(inc[i])));
      }
      paths.emplace_back(inc[i].get<std::string>(), "/include/" + std::to_string(i));
    }
  } else {
    return Status(Code::kInvalid, doc.Error("/include", "expected a path or a non-empty list of paths, got " +
                                                            Describe(inc)));
  }
  // This file's own fields win over every include.
  std::set<std::string> own;
  for (const char* block : kIncludable) {
    if (v.contains(block) && v[block].is_object()) {
      for (const auto& [key, value] : v[block].items()) own.insert(std::string("/") + block + "/" + key);
    }
  }
  for (const auto& [rel, pointer] : paths) {
    if (rel.empty()) return Status(Code::kInvalid, doc.Error(pointer, "empty path"));
    fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(doc.file).parent_path() / rel;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      return Status(Code::kInvalid, doc.Error(pointer, "cannot read the included file " + p.string()));
    }
    Result<ScenarioDocument> loaded = LoadDocument(p.string());
    if (!loaded.ok()) return loaded.status();
    includes->push_back(std::make_unique<ScenarioDocument>(std::move(loaded).value()));
    const ScenarioDocument& in = *includes->back();
    if (!in.value.is_object()) {
      return Status(Code::kInvalid,
                    in.Error("/", "an included file holds an object with cluster and/or manager"));
    }
    for (const auto& [key, block] : in.value.items()) {
      if (key == "include") return Status(Code::kInvalid, in.Error("/include", "includes do not nest"));
      if (key != "cluster" && key != "manager") {
        return Status(Code::kInvalid,
                      in.Error("/" + EscapePointerToken(key),
                               "unknown key in an included file (expected one of: cluster, manager)"));
      }
      if (!block.is_object()) {
        return Status(Code::kInvalid, in.Error("/" + key, "expected an object, got " + Describe(block)));
      }
      if (!v.contains(key)) v[key] = json::object();
      if (!v[key].is_object()) continue;  // the parser reports the scenario's own bad block
      for (const auto& [field, value] : block.items()) {
        std::string ptr = "/" + key + "/" + EscapePointerToken(field);
        if (own.count(ptr)) continue;
        v[key][field] = value;
        (*origins)[ptr] = &in;
      }
    }
  }
  v.erase("include");
  return Status::Ok();
}

// Strings "${p}" (whole) or containing "${p}".
const std::regex& ParamRef() {
  static const std::regex r(R"(\$\{([A-Za-z_][A-Za-z0-9_]*)\})");
  return r;
}

void CollectRefs(const json& j, const std::string& ptr, std::map<std::string, std::string>* first_use) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), ParamRef()); it != std::sregex_iterator(); ++it) {
      first_use->emplace((*it)[1].str(), ptr);
    }
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) CollectRefs(v, ptr + "/" + EscapePointerToken(k), first_use);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) CollectRefs(j[i], ptr + "/" + std::to_string(i), first_use);
  }
}

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

json Substitute(const json& j, const std::map<std::string, json>& values) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    std::smatch m;
    if (std::regex_match(s, m, ParamRef())) return values.at(m[1].str());
    std::string out;
    auto last = s.cbegin();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), ParamRef()); it != std::sregex_iterator(); ++it) {
      out.append(last, s.cbegin() + it->position());
      out += Text(values.at((*it)[1].str()));
      last = s.cbegin() + it->position() + it->length();
    }
    out.append(last, s.cend());
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) out[k] = Substitute(v, values);
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const json& v : j) out.push_back(Substitute(v, values));
    return out;
  }
  return j;
}

std::string NamePart(const std::string& s) {
  std::string out;
  for (char c : s) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.';
    out += ok ? l : '-';
  }
  return out;
}

}  // namespace

Result<std::vector<Scenario>> LoadScenarioFileRuns(const std::string& path_in) {
  std::string path = path_in, select;
  std::error_code ec;
  if (std::size_t hash = path_in.rfind('#'); hash != std::string::npos && !fs::exists(path_in, ec)) {
    path = path_in.substr(0, hash);
    select = path_in.substr(hash + 1);
  }
  Result<ScenarioDocument> loaded = LoadDocument(path);
  if (!loaded.ok()) return loaded.status();
  ScenarioDocument& doc = *loaded;
  std::vector<std::unique_ptr<ScenarioDocument>> includes;
  Origins origins;
  if (Status st = ApplyIncludes(doc, &includes, &origins); !st.ok()) return st;
  auto error_in = [&](const std::string& suffix) {
    return [&, suffix](const std::string& pointer, const std::string& reason) {
      for (const auto& [prefix, in] : origins) {
        if (pointer == prefix || pointer.rfind(prefix + "/", 0) == 0)
          return in->Error(pointer, reason + suffix);
      }
      return doc.Error(pointer, reason + suffix);
    };
  };

  json& v = doc.value;
  if (!v.is_object() || !v.contains("matrix")) {
    if (!select.empty())
      return Status(Code::kInvalid, doc.Error("/", "has no matrix; cannot select run \"" + select + "\""));
    Result<Scenario> s = ParseScenarioValue(v, path, error_in(""));
    if (!s.ok()) return s.status();
    return std::vector<Scenario>{std::move(s).value()};
  }

  const json matrix = v["matrix"];
  v.erase("matrix");
  if (!matrix.is_object() || matrix.empty()) {
    return Status(Code::kInvalid,
                  doc.Error("/matrix", "expected an object of parameter -> list of values, got " +
                                           (matrix.is_object() ? std::string("{}") : Describe(matrix))));
  }
  static const std::regex kParam("[A-Za-z_][A-Za-z0-9_]*");
  std::size_t total = 1;
  for (const auto& [param, values] : matrix.items()) {
    std::string ptr = "/matrix/" + EscapePointerToken(param);
    if (!std::regex_match(param, kParam)) {
      return Status(Code::kInvalid,
                    doc.Error(ptr, "a parameter name is letters, digits and '_', not starting with a digit"));
    }
    if (!values.is_array() || values.empty()) {
      return Status(Code::kInvalid, doc.Error(ptr, "expected a non-empty list of values"));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].is_structured() || values[i].is_null()) {
        return Status(Code::kInvalid, doc.Error(ptr + "/" + std::to_string(i),
                                                "a matrix value is a string, number or boolean"));
      }
    }
    total *= values.size();
    if (total > kMaxMatrixRuns) {
      return Status(Code::kInvalid,
                    doc.Error("/matrix", "expands to more than " + std::to_string(kMaxMatrixRuns) + " runs"));
    }
  }
  std::map<std::string, std::string> first_use;
  CollectRefs(v, "", &first_use);
  for (const auto& [param, ptr] : first_use) {
    if (!matrix.contains(param)) {
      std::string known;
      for (const auto& [p, unused] : matrix.items()) known += (known.empty() ? "" : ", ") + p;
      return Status(Code::kInvalid, doc.Error(ptr, "unknown matrix parameter \"" + param +
                                                       "\" (the matrix has: " + known + ")"));
    }
  }
  for (const auto& [param, values] : matrix.items()) {
    if (!first_use.count(param)) {
      return Status(Code::kInvalid, doc.Error("/matrix/" + EscapePointerToken(param),
                                              "never used (write \"${" + param + "}\" where it goes)"));
    }
  }

  std::vector<Scenario> runs;
  std::vector<std::size_t> index(matrix.size(), 0);
  std::vector<std::pair<std::string, const json*>> params;
  for (const auto& [param, values] : matrix.items()) params.emplace_back(param, &values);
  std::set<std::string> names;
  for (std::size_t n = 0; n < total; ++n) {
    std::map<std::string, json> values;
    std::string suffix;
    for (std::size_t p = 0; p < params.size(); ++p) {
      const json& value = (*params[p].second)[index[p]];
      values[params[p].first] = value;
      suffix += "-" + NamePart(params[p].first) + "-" + NamePart(Text(value));
    }
    json run = Substitute(v, values);
    if (run.contains("name") && run["name"].is_string())
      run["name"] = run["name"].get<std::string>() + suffix;
    std::string run_name =
        run.contains("name") && run["name"].is_string() ? run["name"].get<std::string>() : suffix;
    if (select.empty() || select == run_name) {
      Result<Scenario> s = ParseScenarioValue(run, path, error_in(" (matrix run " + run_name + ")"));
      if (!s.ok()) return s.status();
      if (!names.insert(s->name).second) {
        return Status(Code::kInvalid, doc.Error("/matrix", "two runs are both named \"" + s->name + "\""));
      }
      s->file = path + "#" + s->name;
      runs.push_back(std::move(s).value());
    }
    // Next combination: the last parameter varies fastest.
    for (std::size_t p = params.size(); p-- > 0;) {
      if (++index[p] < params[p].second->size()) break;
      index[p] = 0;
    }
  }
  if (runs.empty()) {
    return Status(Code::kInvalid, doc.Error("/matrix", "no run named \"" + select + "\""));
  }
  return runs;
}

}  // namespace rcsim
