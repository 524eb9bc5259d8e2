#include "core/csv.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace sightline {

namespace {

bool is_decimal_number(const std::string& f) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') ++i;
    return i > start;
  };
  if (i < f.size() && f[i] == '-') ++i;
  const bool int_part = digits();
  bool frac_part = false;
  if (i < f.size() && f[i] == '.') {
    ++i;
    frac_part = digits();
  }
  if (!int_part && !frac_part) return false;
  if (i < f.size() && (f[i] == 'e' || f[i] == 'E')) {
    ++i;
    if (i < f.size() && (f[i] == '+' || f[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == f.size();
}

}  // namespace

bool csv_parse_decimal(const std::string& field, double& out) {
  if (!is_decimal_number(field)) return false;
  const char* begin = field.c_str();
  char* end = nullptr;
  out = std::strtod(begin, &end);
  return end == begin + field.size() && std::isfinite(out);
}

std::string csv_trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> csv_split_fields(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(csv_trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(csv_trim(cur));
  return out;
}

std::vector<std::pair<std::string, std::string>> csv_lines(const json& v, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (v.is_string()) {
    std::string cur;
    for (char c : v.get<std::string>()) {
      if (c == '\n') {
        lines.emplace_back(path, cur);
        cur.clear();
      } else if (c != '\r') {
        cur += c;
      }
    }
    lines.emplace_back(path, cur);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(error_code::kType, pointer_append(path, i), "expected a CSV line (string)");
      lines.emplace_back(pointer_append(path, i), v[i].get<std::string>());
    }
  } else {
    fail(error_code::kType, path, "expected CSV text (a string) or an array of CSV lines, got " + json_type_name(v));
  }
  return lines;
}

}  // namespace sightline
