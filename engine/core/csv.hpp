#pragma once
// Reading CSV text given inside a JSON document: plain decimal numbers,
// trimmed comma-separated fields, and the lines with the JSON pointer that
// names each (for located errors). The column meaning stays with the reader
// of each format.
#include <string>
#include <utility>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

// A field in plain decimal syntax ([-]digits[.digits][e[+-]digits]) that
// parses to a finite double; hexadecimal, "inf", "nan" and blanks are refused
// (strtod alone would take them).
bool csv_parse_decimal(const std::string& field, double& out);

// `s` without leading and trailing white space.
std::string csv_trim(const std::string& s);

// The fields of one line split at `sep`, each trimmed.
std::vector<std::string> csv_split_fields(const std::string& line, char sep);

// CSV given as one string (split at '\n', '\r' dropped; each line named by the
// string's pointer) or as an array of line strings (each named by its own
// pointer). Any other JSON type fails, located at `path`.
std::vector<std::pair<std::string, std::string>> csv_lines(const json& v, const std::string& path);

}  // namespace sightline
