#include "engine/labels.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace rcsim {
namespace {

bool ValidLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ValidToken(std::string_view s, bool allow_empty) {
  if (s.empty()) return allow_empty;
  return std::all_of(s.begin(), s.end(), ValidLabelChar);
}

// Splits on commas that are not inside parentheses.
Result<std::vector<std::string_view>> SplitTerms(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      if (++depth > 1) return Status(Code::kBadRequest, "nested parentheses in label selector");
    } else if (text[i] == ')') {
      if (--depth < 0) return Status(Code::kBadRequest, "unbalanced ')' in label selector");
    }
  }
  if (depth != 0) return Status(Code::kBadRequest, "unbalanced '(' in label selector");
  return out;
}

Status BadTerm(std::string_view term, const char* why) {
  return Status(Code::kBadRequest, "invalid label selector term \"" + std::string(term) + "\": " + why);
}

}  // namespace

LabelSelector LabelSelector::FromMap(const Labels& map) {
  LabelSelector s;
  for (const auto& [k, v] : map) s.requirements_.push_back({k, Op::kEquals, {v}});
  return s;
}

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector s;
  text = Trim(text);
  if (text.empty()) return s;
  auto terms = SplitTerms(text);
  if (!terms.ok()) return terms.status();
  for (std::string_view term : *terms) {
    if (term.empty()) return BadTerm(term, "empty term");
    Requirement r;
    std::size_t paren = term.find('(');
    if (paren != std::string_view::npos) {
      // key in (a,b) | key notin (a,b)
      if (term.back() != ')') return BadTerm(term, "expected ')' at the end");
      std::string_view head = Trim(term.substr(0, paren));
      std::size_t sp = head.find_last_of(" \t");
      if (sp == std::string_view::npos) return BadTerm(term, "expected 'in' or 'notin'");
      std::string_view op = Trim(head.substr(sp + 1));
      r.key = std::string(Trim(head.substr(0, sp)));
      if (op == "in") {
        r.op = Op::kIn;
      } else if (op == "notin") {
        r.op = Op::kNotIn;
      } else {
        return BadTerm(term, "expected 'in' or 'notin'");
      }
      std::string_view inner = term.substr(paren + 1, term.size() - paren - 2);
      std::size_t start = 0;
      for (std::size_t i = 0; i <= inner.size(); ++i) {
        if (i == inner.size() || inner[i] == ',') {
          std::string_view v = Trim(inner.substr(start, i - start));
          if (!ValidToken(v, true)) return BadTerm(term, "invalid value");
          r.values.emplace_back(v);
          start = i + 1;
        }
      }
      // `in ()` and `in ( )` alike: Kubernetes refuses an empty set for in/notin.
      if (r.values.empty() || (r.values.size() == 1 && r.values[0].empty())) {
        return BadTerm(term, "empty value set");
      }
    } else if (std::size_t ne = term.find("!="); ne != std::string_view::npos) {
      r.key = std::string(Trim(term.substr(0, ne)));
      r.op = Op::kNotEquals;
      r.values.emplace_back(Trim(term.substr(ne + 2)));
    } else if (std::size_t eq = term.find('='); eq != std::string_view::npos) {
      std::size_t vstart = eq + 1;
      if (vstart < term.size() && term[vstart] == '=') ++vstart;
      r.key = std::string(Trim(term.substr(0, eq)));
      r.op = Op::kEquals;
      r.values.emplace_back(Trim(term.substr(vstart)));
    } else if (term.front() == '!') {
      r.key = std::string(Trim(term.substr(1)));
      r.op = Op::kDoesNotExist;
    } else {
      r.key = std::string(term);
      r.op = Op::kExists;
    }
    if (!ValidToken(r.key, false)) return BadTerm(term, "invalid key");
    for (const auto& v : r.values) {
      if (!ValidToken(v, true)) return BadTerm(term, "invalid value");
    }
    std::sort(r.values.begin(), r.values.end());
    s.requirements_.push_back(std::move(r));
  }
  // Sorted by the whole requirement, so that requirements on the same key and operator ("a=1,a=2") print in
  // one order whatever the input's: ToString is canonical (found by the label selector fuzzer).
  std::sort(s.requirements_.begin(), s.requirements_.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key, a.op, a.values) < std::tie(b.key, b.op, b.values);
  });
  return s;
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const auto& r : requirements_) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    switch (r.op) {
      case Op::kEquals:
        if (!has || it->second != r.values[0]) return false;
        break;
      case Op::kNotEquals:
        if (has && it->second == r.values[0]) return false;
        break;
      case Op::kIn:
        if (!has || !std::binary_search(r.values.begin(), r.values.end(), it->second)) return false;
        break;
      case Op::kNotIn:
        if (has && std::binary_search(r.values.begin(), r.values.end(), it->second)) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty()) out += ',';
    switch (r.op) {
      case Op::kEquals: out += r.key + "=" + r.values[0]; break;
      case Op::kNotEquals: out += r.key + "!=" + r.values[0]; break;
      case Op::kExists: out += r.key; break;
      case Op::kDoesNotExist: out += "!" + r.key; break;
      case Op::kIn:
      case Op::kNotIn: {
        out += r.key + (r.op == Op::kIn ? " in (" : " notin (");
        for (std::size_t i = 0; i < r.values.size(); ++i) {
          if (i) out += ',';
          out += r.values[i];
        }
        out += ')';
        break;
      }
    }
  }
  return out;
}

bool SelectorMapMatches(const Labels& selector, const Labels& labels) {
  if (selector.empty()) return false;
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

std::string FormatSelectorMap(const Labels& selector) { return LabelSelector::FromMap(selector).ToString(); }

}  // namespace rcsim
