#pragma once
// The one reader of numbers written as text, and of CSV tables: CSV text given
// inside a JSON document, CSV files (calibration measurements, Vidur
// profiles), command-line flags and `key : value` lines all parse their
// numbers here. A number is the whole token, in plain decimal syntax, finite
// and in range, or a located error naming the file, line and column. Every
// other std::stod / strtod / stoi in the engine is refused by
// tests/layering/one_parser.test.mjs. The column meaning stays with the reader
// of each format.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

// A field in plain decimal syntax ([-]digits[.digits][e[+-]digits]) that
// parses to a finite double; hexadecimal, "inf", "nan" and blanks are refused
// (strtod alone would take them).
bool csv_parse_decimal(const std::string& field, double& out);

// A whole token that is an integer ([+-]digits) fitting in 64 bits; no blanks,
// no fraction, no hexadecimal.
bool parse_integer_token(const std::string& token, int64_t& out);

// Where a token sits in text the user gave: the file (or the JSON pointer of a
// string), and its 1-based line and column. `describe()` is "source:line:column",
// the path of an error about it.
struct TextPosition {
  std::string source;
  int64_t line = 0;
  int64_t column = 0;
  std::string describe() const;
};

// The number `token` (surrounding blanks ignored) stands for, between min and
// max; otherwise a located type_error (not a plain decimal number: "many",
// "42abc", "inf", "0x10") or out_of_range error at `at`, naming `what`.
double read_decimal_token(const std::string& token, const TextPosition& at, const std::string& what, double min_value,
                          double max_value);
int64_t read_integer_token(const std::string& token, const TextPosition& at, const std::string& what, int64_t min_value,
                           int64_t max_value);

// One cell of a CSV line and the 1-based column where it starts.
struct CsvCell {
  std::string text;
  int64_t column = 1;
};

// The cells of one line split at commas outside double quotes (quotes dropped,
// '\r' dropped), not trimmed.
std::vector<CsvCell> csv_split_cells(const std::string& line);

// A CSV table from a file the user gave: the first line that is neither empty
// nor a '#' comment is the header; each later such line is a row. Cells are
// read by column name, so a missing column is a located missing_key error
// (never std::map::at).
class CsvTable {
 public:
  struct Row {
    int64_t line = 0;
    std::vector<CsvCell> cells;
  };
  // `skip_comments`: '#' lines and empty lines are not rows (measurement CSVs).
  CsvTable(const std::string& text, std::string source, bool skip_comments = true);

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::string& source() const { return source_; }
  bool has_column(const std::string& name) const;
  // The cell of `column` in `row`, or nullptr when the header lacks the column
  // or the row stops before it.
  const CsvCell* find(const Row& row, const std::string& column) const;
  // The cell, or a located missing_key error (the header's line for a column
  // it lacks, the row's line for a row that stops short).
  const CsvCell& required(const Row& row, const std::string& column) const;
  // The cell's text, "" when absent.
  std::string text(const Row& row, const std::string& column) const;
  // The required cell read as a number between the bounds (located errors).
  double number(const Row& row, const std::string& column, double min_value, double max_value) const;
  int64_t integer(const Row& row, const std::string& column, int64_t min_value, int64_t max_value) const;
  // Where a cell (or, when absent, the row's start) is.
  TextPosition position(const Row& row, const std::string& column) const;
  TextPosition row_position(const Row& row) const { return TextPosition{source_, row.line, 1}; }

 private:
  std::string source_;
  std::vector<std::string> header_;
  int64_t header_line_ = 0;
  std::vector<Row> rows_;
};

// `s` without leading and trailing white space.
std::string csv_trim(const std::string& s);

// The fields of one line split at `sep`, each trimmed.
std::vector<std::string> csv_split_fields(const std::string& line, char sep);

// CSV given as one string (split at '\n', '\r' dropped; each line named by the
// string's pointer) or as an array of line strings (each named by its own
// pointer). Any other JSON type fails, located at `path`.
std::vector<std::pair<std::string, std::string>> csv_lines(const json& v, const std::string& path);

}  // namespace sightline
