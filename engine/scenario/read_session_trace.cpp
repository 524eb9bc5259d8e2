// serving.workload.sessions.csv: a multi-turn trace, one row per turn:
// session_id,arrival_s,input_tokens,output_tokens. A session's first turn
// arrives at its time; a later turn keeps its recorded gap after the previous
// turn's arrival, but never before that turn's last token (the simulator's
// ArrivalFeed::next_turn): a replay on a slower deployment delays the rest of the
// session instead of sending a turn before its answer.
#include <algorithm>
#include <map>
#include <sstream>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

namespace {

const char* const kSessionColumns = "session_id,arrival_s,input_tokens,output_tokens";

// A length spec spanning [lo, hi] (the run estimate's bounds of a trace's lengths).
LengthSpec span(int64_t lo, int64_t hi) {
  LengthSpec l;
  l.dist = LengthDist::Uniform;
  l.min = lo;
  l.max = hi;
  return l;
}

SessionTraceRow read_row(const std::vector<std::string>& f, const std::string& lpath, const std::string& where,
                         int64_t max_len) {
  static const char* const kNames[] = {"session_id", "arrival_s", "input_tokens", "output_tokens"};
  if (f.size() != 4)
    fail(error_code::kInvalidValue, lpath,
         where + "expected 4 fields (" + kSessionColumns + "), got " + std::to_string(f.size()));
  double v[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < 4; ++i) {
    if (!csv_parse_decimal(f[i], v[i]))
      fail(error_code::kType, lpath, where + "field " + kNames[i] + " is not a number: '" + printable(f[i], 40) + "'");
    if (i != 1 && v[i] != static_cast<double>(static_cast<int64_t>(v[i])))
      fail(error_code::kType, lpath, where + kNames[i] + " must be an integer");
  }
  if (v[0] < 0 || v[0] > 1e9) fail(error_code::kRange, lpath, where + "session_id must be in [0, 1e9]");
  if (v[1] < 0 || v[1] > 1e7) fail(error_code::kRange, lpath, where + "arrival_s must be in [0, 1e7]");
  if (v[2] < 1 || v[2] > static_cast<double>(max_len) || v[3] < 1 || v[3] > static_cast<double>(max_len))
    fail(error_code::kRange, lpath,
         where + "input_tokens and output_tokens must be in [1, " + std::to_string(max_len) + "]");
  return SessionTraceRow{static_cast<int64_t>(v[0]), v[1], static_cast<int64_t>(v[2]), static_cast<int64_t>(v[3])};
}

}  // namespace

void read_session_trace(const json& v, const std::string& path, int64_t max_len, SessionSpec& s) {
  const std::vector<std::pair<std::string, std::string>> lines = csv_lines(v, path);
  std::vector<SessionTraceRow> rows;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string line = csv_trim(lines[li].second);
    const std::string where = "line " + std::to_string(li + 1) + ": ";
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = csv_split_fields(line, ',');
    double first = 0;
    if (rows.empty() && !csv_parse_decimal(f[0], first)) {
      if (line != kSessionColumns)
        fail(error_code::kInvalidValue, lines[li].first,
             where + "the header must be " + kSessionColumns + "; got '" + printable(line, 80) + "'");
      continue;
    }
    rows.push_back(read_row(f, lines[li].first, where, max_len));
    if (rows.size() > 2000000) fail(error_code::kConstraint, lines[li].first, where + "more than 2,000,000 turns");
  }
  if (rows.empty()) fail(error_code::kInvalidValue, path, "the sessions trace has no rows");
  // Sessions in order of their first arrival, each one's turns in time order.
  std::map<int64_t, double> start;
  for (const SessionTraceRow& r : rows) {
    auto it = start.find(r.session_id);
    if (it == start.end() || r.arrival_s < it->second) start[r.session_id] = r.arrival_s;
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const SessionTraceRow& a, const SessionTraceRow& b) {
    const double sa = start[a.session_id], sb = start[b.session_id];
    if (sa != sb) return sa < sb;
    if (a.session_id != b.session_id) return a.session_id < b.session_id;
    return a.arrival_s < b.arrival_s;
  });
  int64_t in_lo = max_len, in_hi = 1, out_lo = max_len, out_hi = 1, turns_hi = 1, turns = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    in_lo = std::min(in_lo, rows[i].input_tokens);
    in_hi = std::max(in_hi, rows[i].input_tokens);
    out_lo = std::min(out_lo, rows[i].output_tokens);
    out_hi = std::max(out_hi, rows[i].output_tokens);
    turns = i > 0 && rows[i - 1].session_id == rows[i].session_id ? turns + 1 : 1;
    turns_hi = std::max(turns_hi, turns);
  }
  s.trace = std::move(rows);
  s.first_input = s.input = span(in_lo, in_hi);
  s.output = span(out_lo, out_hi);
  s.turns = span(1, turns_hi);
}

int64_t count_trace_sessions(const std::vector<SessionTraceRow>& rows) {
  int64_t n = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    if (i == 0 || rows[i - 1].session_id != rows[i].session_id) ++n;
  return n;
}

json session_trace_to_json(const SessionSpec& s) {
  json lines = json::array();
  lines.push_back(kSessionColumns);
  for (const SessionTraceRow& r : s.trace) {
    std::ostringstream o;
    o.precision(17);
    o << r.session_id << "," << r.arrival_s << "," << r.input_tokens << "," << r.output_tokens;
    lines.push_back(o.str());
  }
  return {{"csv", lines}, {"system_prompt_tokens", s.system_prompt_tokens}};
}

}  // namespace sightline::serve
