#include "fit/bench_import_keys.hpp"

#include <cctype>

#include "fit/bench_import_fields.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

namespace {

// One segment against one pattern segment: '*' any characters, '#' one or more digits or dots.
bool segment_matches(const char* p, const char* s) {
  if (*p == '\0') return *s == '\0';
  if (*p == '*') {
    for (const char* t = s;; ++t) {
      if (segment_matches(p + 1, t)) return true;
      if (*t == '\0') return false;
    }
  }
  if (*p == '#') {
    const char* t = s;
    while (std::isdigit(static_cast<unsigned char>(*t)) || *t == '.') ++t;
    for (const char* u = t; u > s; --u)
      if (segment_matches(p + 1, u)) return true;
    return false;
  }
  return *p == *s && segment_matches(p + 1, s + 1);
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out(1);
  for (char c : path) {
    if (c == '/') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

bool path_matches(const std::string& pattern, const std::vector<std::string>& segments) {
  const std::vector<std::string> p = split_path(pattern);
  if (p.size() != segments.size()) return false;
  for (size_t i = 0; i < p.size(); ++i)
    if (!segment_matches(p[i].c_str(), segments[i].c_str())) return false;
  return true;
}

std::string join(const std::vector<std::string>& segments) {
  std::string out;
  for (const std::string& s : segments) out += (out.empty() ? "" : "/") + s;
  return out;
}

[[noreturn]] void refuse_unread(const std::vector<std::string>& names, const std::string& first_at,
                                const std::string& format, const std::string& file) {
  std::string listed;
  const size_t shown = std::min<size_t>(names.size(), 8);
  for (size_t i = 0; i < shown; ++i) listed += (listed.empty() ? "'" : ", '") + printable(names[i], 120) + "'";
  if (names.size() > shown) listed += " and " + std::to_string(names.size() - shown) + " more";
  refuse(error_code::kNotImplemented, file, first_at,
         "keys this " + format + " reader does not know: " + listed +
             "; a key that may change what the figures mean is refused, not passed over (the keys it reads and "
             "the ones it lists as not changing them: docs/calibrate-from-benchmarks.md, \"Keys not read\")");
}

struct KeyWalk {
  const std::set<std::string>& used;
  const IgnoredKeyList& list;
  std::vector<std::string> unread_names;
  std::string first_at;

  bool holds_used(const std::string& at) const {
    const std::string below = at + "/";
    const auto it = used.lower_bound(below);
    return it != used.end() && it->compare(0, below.size(), below) == 0;
  }

  void visit(const json& node, const std::string& at, std::vector<std::string>& segments) {
    if (node.is_null() || used.count(at) || (!segments.empty() && is_ignored(list, join(segments)))) return;
    const bool container = (node.is_object() || node.is_array()) && !node.empty();
    if (container && (segments.empty() || holds_used(at))) {
      if (node.is_object()) {
        for (const auto& [key, value] : node.items()) {
          segments.push_back(key);
          visit(value, pointer_append(at, key), segments);
          segments.pop_back();
        }
      } else {
        for (size_t i = 0; i < node.size(); ++i) {
          segments.push_back(std::to_string(i));
          visit(node[i], pointer_append(at, i), segments);
          segments.pop_back();
        }
      }
      return;
    }
    if (unread_names.empty()) first_at = at;
    unread_names.push_back(join(segments));
  }
};

}  // namespace

bool is_ignored(const IgnoredKeyList& list, const std::string& path) {
  const std::vector<std::string> segments = split_path(path);
  for (const IgnoredKey& k : list)
    if (path_matches(k.path, segments)) return true;
  return false;
}

void refuse_unread_keys(const json& document, const std::string& root, const std::vector<BenchRun>& runs,
                        const std::string& format, const std::string& file) {
  std::set<std::string> used;
  for (const BenchRun& r : runs) used.insert(r.used.begin(), r.used.end());
  KeyWalk walk{used, ignored_keys(format), {}, {}};
  std::vector<std::string> segments;
  walk.visit(document, root, segments);
  if (!walk.unread_names.empty()) refuse_unread(walk.unread_names, walk.first_at, format, file);
}

void refuse_unread_lines(const std::vector<SummaryLine>& lines, const std::set<int>& used_lines,
                         const std::string& format, const std::string& file) {
  const IgnoredKeyList& list = ignored_keys(format);
  std::vector<std::string> names;
  std::string first_at;
  for (const SummaryLine& l : lines) {
    if (l.name.empty() || used_lines.count(l.line) || is_ignored(list, l.name)) continue;
    if (names.empty()) first_at = "/line/" + std::to_string(l.line);
    names.push_back(l.name + " (line " + std::to_string(l.line) + ")");
  }
  if (!names.empty()) refuse_unread(names, first_at, format, file);
}

}  // namespace sightline::fit::bench
