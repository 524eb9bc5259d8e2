#include "core/csv.hpp"

#include <cctype>
#include <cmath>
#include <charconv>
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

bool parse_integer_token(const std::string& token, int64_t& out) {
  if (token.empty()) return false;
  const char* first = token.data();
  const char* last = first + token.size();
  if (*first == '+') ++first;  // std::from_chars takes no '+'
  if (first == last || *first == '+') return false;
  const auto r = std::from_chars(first, last, out);
  return r.ec == std::errc() && r.ptr == last;
}

std::string TextPosition::describe() const {
  return printable(source) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {

std::string number_bound(double v) {
  std::string s = std::to_string(v);
  // std::to_string writes six decimals; drop the trailing zeros.
  while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
    const bool dot = s.back() == '.';
    s.pop_back();
    if (dot) break;
  }
  return s;
}

}  // namespace

double read_decimal_token(const std::string& token, const TextPosition& at, const std::string& what, double min_value,
                          double max_value) {
  const std::string t = csv_trim(token);
  double v = 0;
  if (!csv_parse_decimal(t, v))
    fail(error_code::kType, at.describe(),
         at.describe() + ": " + what + ": '" + printable(t, 80) +
             "' is not a plain decimal number (the whole token must be digits with an optional sign, fraction and "
             "exponent; no units, hexadecimal, inf or nan)");
  if (v < min_value || v > max_value)
    fail(error_code::kRange, at.describe(),
         at.describe() + ": " + what + ": must be between " + number_bound(min_value) + " and " +
             number_bound(max_value) + ", got " + printable(t, 80));
  return v;
}

int64_t read_integer_token(const std::string& token, const TextPosition& at, const std::string& what, int64_t min_value,
                           int64_t max_value) {
  const std::string t = csv_trim(token);
  int64_t v = 0;
  if (!parse_integer_token(t, v))
    fail(error_code::kType, at.describe(),
         at.describe() + ": " + what + ": '" + printable(t, 80) + "' is not an integer (or does not fit in 64 bits)");
  if (v < min_value || v > max_value)
    fail(error_code::kRange, at.describe(),
         at.describe() + ": " + what + ": must be between " + std::to_string(min_value) + " and " +
             std::to_string(max_value) + ", got " + t);
  return v;
}

std::vector<CsvCell> csv_split_cells(const std::string& line) {
  std::vector<CsvCell> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(CsvCell{"", static_cast<int64_t>(i) + 2});
    } else if (c != '\r') {
      out.back().text += c;
    }
  }
  return out;
}

CsvTable::CsvTable(const std::string& text, std::string source, bool skip_comments) : source_(std::move(source)) {
  int64_t line_no = 0;
  std::size_t start = 0;
  bool have_header = false;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    const bool last = end == text.size();
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() && last) break;  // the text's final newline
    if (skip_comments && (line.empty() || line[0] == '#')) continue;
    std::vector<CsvCell> cells = csv_split_cells(line);
    if (!have_header) {
      have_header = true;
      header_line_ = line_no;
      for (const CsvCell& c : cells) header_.push_back(c.text);
      continue;
    }
    rows_.push_back(Row{line_no, std::move(cells)});
  }
}

bool CsvTable::has_column(const std::string& name) const {
  for (const std::string& h : header_)
    if (h == name) return true;
  return false;
}

const CsvCell* CsvTable::find(const Row& row, const std::string& column) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == column) return i < row.cells.size() ? &row.cells[i] : nullptr;
  return nullptr;
}

const CsvCell& CsvTable::required(const Row& row, const std::string& column) const {
  if (!has_column(column)) {
    const TextPosition at{source_, header_line_, 1};
    fail(error_code::kMissingKey, at.describe(),
         at.describe() + ": missing column '" + printable(column, 80) + "' in the header");
  }
  const CsvCell* c = find(row, column);
  if (c == nullptr) {
    const TextPosition at = row_position(row);
    fail(error_code::kMissingKey, at.describe(),
         at.describe() + ": the row stops before column '" + printable(column, 80) + "'");
  }
  return *c;
}

std::string CsvTable::text(const Row& row, const std::string& column) const {
  const CsvCell* c = find(row, column);
  return c ? c->text : std::string();
}

TextPosition CsvTable::position(const Row& row, const std::string& column) const {
  const CsvCell* c = find(row, column);
  return TextPosition{source_, row.line, c ? c->column : 1};
}

double CsvTable::number(const Row& row, const std::string& column, double min_value, double max_value) const {
  return read_decimal_token(required(row, column).text, position(row, column), "column '" + column + "'", min_value,
                            max_value);
}

int64_t CsvTable::integer(const Row& row, const std::string& column, int64_t min_value, int64_t max_value) const {
  return read_integer_token(required(row, column).text, position(row, column), "column '" + column + "'", min_value,
                            max_value);
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
