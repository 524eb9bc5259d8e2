// sightline batch: runs one scenario per line of a JSON Lines file and writes
// one result envelope per line, keyed by the input line number and id, in
// input order. A bad line gets its error in its own output line and the batch
// goes on. `--shard i/N` takes the i-th of N contiguous blocks of lines, so
// the shards' outputs concatenated in shard order are byte for byte the
// unsharded output (what cluster job arrays rely on). `--jobs N` runs lines on
// N threads; the output does not depend on it. `--central-only` skips the
// interval runs (a third of the work; key metrics without low/high).
// `--max-work-units N` is the batch's one budget: the sum of its lines'
// estimates (run's, cli/command_budget) must fit in it, or the batch is
// refused before any line runs; each line also runs within N (without the
// flag, within run's own default, as `run` would run it).
//
// sightline merge: concatenates shard outputs, ordered by line number, and
// checks that no line is missing or repeated.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"
#include "api/api.hpp"
#include "jobs/budgeted_job.hpp"
#include "core/error_boundary.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

namespace {

struct Shard {
  int64_t index = 0, count = 1;
};

bool parse_shard(const std::string& text, Shard& s) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return false;
  if (!Flags::parse_integer(text.substr(0, slash), s.index) || !Flags::parse_integer(text.substr(slash + 1), s.count))
    return false;
  // Bounded so that total * (index + 1) below cannot overflow.
  return s.count >= 1 && s.count <= (int64_t{1} << 30) && s.index >= 0 && s.index < s.count;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }

// A line's work as `run` estimates it; a line that is not a JSON document
// counts 1 (it fails on its own parse error at once).
double line_work_units(const std::string& line, bool central_only) {
  try {
    return run_work_units(parse_json_text(line), central_only);
  } catch (const SightlineError&) {
    return 1;
  }
}

// `{"line":N,"id":...,` + the engine's envelope without its opening brace: the
// envelope's bytes are kept exactly as the API returned them.
struct ResultLine {
  std::string text;
  bool ok = false;
};

ResultLine result_line(int64_t line_number, const std::string& input, bool central_only, int64_t max_work_units) {
  json id = nullptr;
  try {
    const json doc = parse_json_text(input);
    if (doc.is_object() && doc.contains("id") && doc["id"].is_string()) id = doc["id"];
  } catch (const SightlineError&) {
    // Not JSON: the engine reports where (its own parse error).
  }
  const std::string envelope = api::run_scenario_with_budget(input, central_only, max_work_units, RunLimits::kNativeCeiling);
  ResultLine r;
  r.ok = read_engine_envelope(envelope).value("ok", false);
  r.text = "{\"line\":" + std::to_string(line_number) + ",\"id\":" + safe_dump(id) + "," + envelope.substr(1);
  return r;
}

class Progress {
 public:
  explicit Progress(int64_t total) : total_(total), tty_(isatty(STDERR_FILENO) == 1) {}
  void tick(int64_t done) {
    if (!tty_) return;
    const int width = 30;
    const int filled = total_ > 0 ? static_cast<int>(width * done / total_) : width;
    std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(width - filled), ' ')
              << "] " << done << "/" << total_ << std::flush;
    if (done == total_) std::cerr << "\n";
  }

 private:
  int64_t total_;
  bool tty_;
};

}  // namespace

int cmd_batch(const Args& args) {
  std::string in, out;
  Shard shard;
  int64_t jobs = 1;
  bool central_only = false;
  std::string shard_text;
  std::vector<std::string> files;
  std::string problem;
  Flags flags("batch");
  CommandBudget budget("batch");
  budget.flag(flags).boolean("--central-only", &central_only).integer("--jobs", &jobs, 1, 1024).text("--shard", &shard_text)
      .text("--out", &out).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (!shard_text.empty() && !parse_shard(shard_text, shard))
    return usage_error("batch: --shard takes i/N with 0 <= i < N (got '" + shard_text + "')");
  if (!files.empty()) in = files[0];
  if (in.empty()) return usage_error("batch needs an input file of JSON Lines (or '-')");
  std::string text;
  if (!read_file(in, text)) {
    std::cerr << "error [io_error] at '': cannot read " << in << "\n";
    return 1;
  }
  const std::vector<std::string> lines = split_lines(text);
  const int64_t total = static_cast<int64_t>(lines.size());
  const int64_t first = total * shard.index / shard.count, last = total * (shard.index + 1) / shard.count;
  std::vector<int64_t> todo;  // line indices with a scenario; blank lines are skipped
  for (int64_t i = first; i < last; ++i)
    if (!blank(lines[static_cast<size_t>(i)])) todo.push_back(i);
  // One budget for the whole batch (this shard's lines), estimated before any line runs.
  try {
    for (const int64_t i : todo) budget.add(line_work_units(lines[static_cast<size_t>(i)], central_only),
                                            "line " + std::to_string(i + 1) + " of " + in);
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  const int64_t max_work_units = budget.given() ? budget.max_work_units() : RunLimits::kDefaultMaxWorkUnits;

  std::vector<ResultLine> results(todo.size());
  std::vector<char> ready(todo.size(), 0);
  std::atomic<size_t> next{0};
  std::mutex m;
  std::condition_variable cv;
  const auto worker = [&] {
    for (;;) {
      const size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      ResultLine r;
      // An exception on this worker thread would end the process: the one
      // error boundary turns it into this line's error, and the batch goes on.
      const std::optional<CaughtError> error = catch_all(
          [&] {
            test_throw_point("cli:batch-line");
            r = result_line(todo[k] + 1, lines[static_cast<size_t>(todo[k])], central_only, max_work_units); },
          "batch line " + std::to_string(todo[k] + 1) + " of " + in);
      if (error)
        r.text = "{\"line\":" + std::to_string(todo[k] + 1) + ",\"id\":null," +
                 safe_dump(json{{"ok", false}, {"error", {{"code", error->code}, {"path", error->path}, {"message", error->message}}}})
                     .substr(1);
      {
        std::lock_guard<std::mutex> lock(m);
        results[k] = std::move(r);
        ready[k] = 1;
      }
      cv.notify_one();
    }
  };
  std::ofstream file;
  std::ostream* const output = open_output_stream(out, file);
  if (!output) return 1;
  std::ostream& os = *output;
  std::vector<std::thread> pool;
  const int64_t threads = std::min<int64_t>(jobs, std::max<int64_t>(1, static_cast<int64_t>(todo.size())));
  for (int64_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  // Write in input order as results come in.
  Progress progress(static_cast<int64_t>(todo.size()));
  int64_t failed = 0;
  for (size_t k = 0; k < todo.size(); ++k) {
    ResultLine line;
    {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return ready[k] != 0; });
      line = std::move(results[k]);
    }
    if (!line.ok) ++failed;
    os << line.text << "\n";
    progress.tick(static_cast<int64_t>(k + 1));
  }
  for (auto& t : pool) t.join();
  os.flush();
  if (!os) {
    std::cerr << "error [io_error] at '': writing the results failed\n";
    return 1;
  }
  std::cerr << "batch: " << todo.size() << " scenarios (lines " << first + 1 << "-" << last << " of " << total << "), "
            << failed << " with errors\n";
  return 0;
}

int cmd_merge(const Args& args) {
  std::string out;
  std::vector<std::string> files;
  std::string problem;
  Flags flags("merge");
  flags.text("--out", &out).positional(&files, 1 << 20);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.empty()) return usage_error("merge needs the shard output files");
  std::vector<std::pair<int64_t, std::string>> rows;
  for (const std::string& f : files) {
    std::string text;
    if (!read_file(f, text)) {
      std::cerr << "error [io_error] at '': cannot read " << f << "\n";
      return 1;
    }
    const std::vector<std::string> lines = split_lines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (blank(lines[i])) continue;
      int64_t n = -1;
      try {
        const json j = parse_json_text(lines[i]);
        if (j.is_object() && j.contains("line") && j["line"].is_number_integer()) n = j["line"].get<int64_t>();
      } catch (const SightlineError&) {
      }
      if (n < 1) {
        std::cerr << "error [invalid_value] at '/line': " << f << " line " << i + 1 << " is not a batch result line\n";
        return 1;
      }
      rows.emplace_back(n, lines[i]);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i].first == rows[i - 1].first) {
      std::cerr << "error [constraint] at '/line': input line " << rows[i].first << " appears in more than one result\n";
      return 1;
    }
  std::string text;
  for (const auto& r : rows) text += r.second + "\n";
  try {
    write_output(out, text);
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  std::cerr << "merge: " << rows.size() << " result lines from " << files.size() << " files\n";
  return 0;
}

}  // namespace sightline::cli
