#pragma once
// The one rule every benchmark-file reader answers to (fit/bench_import*.cpp):
// each key of the user's file (each line of a text summary) is read, or on its
// format's documented list of keys that do not change what the figures read
// mean, or refused at its own place in the file. A wrong answer that looks
// right is worse than a refusal, so a key a newer tool version adds is never
// passed over. The lists, each entry with its reason, are in
// bench_import_ignored.cpp and docs/calibrate-from-benchmarks.md ("Keys not read").
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "fit/bench_import.hpp"

namespace sightline::fit::bench {

// One entry of a format's list: a path relative to the document (a JSON
// pointer without its leading '/', or a text summary's key or line) whose
// whole value is not read, and why that does not change the figures.
// In `path`, '*' matches any characters inside one segment and '#' one or
// more digits or dots ("p#_ttft_ms": p99_ttft_ms, p99.9_ttft_ms).
struct IgnoredKey {
  const char* path;
  const char* why;
};

// A format's list: constant arrays, not vectors, so that they need no static
// constructor: one would link them (and their reasons) into every binary that
// links the API, the page's wasm module included, which never reads a
// benchmark file (the readers are sightline-calibrate's, wasm/CMakeLists.txt).
struct IgnoredKeyList {
  const IgnoredKey* keys = nullptr;
  size_t count = 0;
  const IgnoredKey* begin() const { return keys; }
  const IgnoredKey* end() const { return keys + count; }
};

// The list of `format` (vllm, sglang, guidellm, genai-perf, aiperf, mlperf):
// every format has one (an empty one ignores nothing).
const IgnoredKeyList& ignored_keys(const std::string& format);

// Whether `path` (relative, segments joined by '/') is on the list.
bool is_ignored(const IgnoredKeyList& list, const std::string& path);

// A JSON document (or one object of a JSON-lines file at `root`): every member
// the readers did not take (`runs[].used`), that is not null (a feature that
// was off) and not on `format`'s list is refused, all named, at the first. An
// object or array is descended into when the readers took something inside
// it, and refused whole when they took nothing and the list does not name it.
void refuse_unread_keys(const json& document, const std::string& root, const std::vector<BenchRun>& runs,
                        const std::string& format, const std::string& file);

// One line of a text summary: its number (from 1) and what the list matches
// against (the key of a "key : value" line, else the trimmed line).
struct SummaryLine {
  int line = 0;
  std::string name;
};
// Every non-blank line that the reader did not take (`used_lines`) and the
// list does not name is refused, all named, at the first one's /line/N.
void refuse_unread_lines(const std::vector<SummaryLine>& lines, const std::set<int>& used_lines,
                         const std::string& format, const std::string& file);

}  // namespace sightline::fit::bench
