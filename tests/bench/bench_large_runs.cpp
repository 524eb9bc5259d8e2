// The large-run benchmark of issues 20 (point 5) and 41 (acceptance), through
// the public JSON API as the native CLI runs it:
//   - the head-to-head scenario (examples/head-to-head-llama2-7b-a100-10k.json:
//     Llama-2-7B on one A100, Poisson 10 req/s, 512 in / 128 out) at 1k, 10k,
//     100k and 1M requests (request and simulated-time limits raised), each
//     at the central cost only (`run --central-only`) and in the default mode
//     (with its 80% interval), at a raised budget of 10^9 units;
//   - a 200,000-request offline batch with its 80% interval: I2.3 with every
//     request arriving at once, at the default budget of 10^7 units;
//   - a bare binary-heap event loop (the simulator's Event and comparator,
//     nothing else), built here, as the floor events/s is compared against.
// Each run is a child process (fork), so its CPU time and peak resident
// memory are its own (wait4's rusage), not the largest run's so far.
// Goal (issue 41): 1M central under 5 s of CPU and 250 MiB, the default mode
// within 1.2x of central. Fails (exit 2) only when a run does not complete or
// past a generous sanity bound (the 1M central run over 5x its goal, 25 s).
// Usage: bench_large_runs [repo-root] [largest-request-count]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"
#include "serve/event_queue.hpp"

namespace {

using nlohmann::json;

bool read_json(const std::string& path, json& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = json::parse(ss.str());
  return true;
}

double seconds_of(const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); }
double cpu_of(const rusage& u) { return seconds_of(u.ru_utime) + seconds_of(u.ru_stime); }

struct Figure {
  bool ok = false;
  double cpu_s = 0, peak_MiB = 0, events = 0, completed = 0;
  // The system's share of cpu_s: mostly the kernel zeroing the pages a run
  // touches first (on this project's VMs up to 1.5 s at 1M requests in a
  // fresh process, 0.02-0.06 s in most: docs/speed.md), so printed apart.
  double system_s = 0;
  std::string note;
  double events_per_s() const { return cpu_s > 0 ? events / cpu_s : 0; }
};

// Runs one scenario in a child process; the child sends back its events,
// completed requests and an error line through a pipe.
Figure measure(const json& scenario, bool central_only, int64_t budget_units) {
  Figure f;
  int fds[2];
  if (pipe(fds) != 0) return f;
  const std::string text = scenario.dump();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const json r = json::parse(sightline::api::run_scenario_with_budget(text, central_only, budget_units, 10'000'000'000LL));
    std::string line;
    if (!r["ok"].get<bool>()) line = "error " + r["error"].dump();
    else
      line = std::to_string(r["result"]["limits"]["events"].get<double>()) + " " +
             std::to_string(r["result"]["metrics"]["requests"]["completed"].get<double>());
    const ssize_t w = write(fds[1], line.data(), line.size());
    _exit(w == static_cast<ssize_t>(line.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage u{};
  if (wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    f.note = "child failed";
    return f;
  }
  f.cpu_s = cpu_of(u);
  f.system_s = seconds_of(u.ru_stime);
  f.peak_MiB = static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
  if (got.rfind("error", 0) == 0) {
    f.note = got;
    return f;
  }
  std::istringstream in(got);
  in >> f.events >> f.completed;
  f.ok = true;
  return f;
}

// The floor: a binary heap of `in_flight` events, each pop pushing one event
// a random delay later, for `events` pops. Returns events per CPU second.
double bare_heap_events_per_s(int in_flight, int64_t events) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int64_t> delay(1, 1'000'000);
  sightline::serve::EventQueue q;
  for (int i = 0; i < in_flight; ++i) q.push(delay(rng), i % 4, i % 4, i);
  rusage u0{}, u1{};
  getrusage(RUSAGE_SELF, &u0);
  int64_t sink = 0;
  for (int64_t n = 0; n < events; ++n) {
    const sightline::serve::Event e = q.pop();
    sink += e.a;
    q.push(e.time + delay(rng), e.priority, e.kind, e.a);
  }
  getrusage(RUSAGE_SELF, &u1);
  if (sink == -1) std::printf("unreachable\n");  // keeps the loop's work observable
  return static_cast<double>(events) / std::max(1e-9, cpu_of(u1) - cpu_of(u0));
}

void print(const std::string& what, const Figure& f, double total, double floor_eps) {
  if (!f.ok) {
    std::printf("  %-46s FAILED: %s\n", what.c_str(), f.note.c_str());
    return;
  }
  std::printf("  %-46s cpu %7.2f s (system %5.2f s)  peak %6.0f MiB  %10.0f events  %8.3g events/s (1/%.0f of the bare heap)  %.0f of %.0f done\n",
              what.c_str(), f.cpu_s, f.system_s, f.peak_MiB, f.events, f.events_per_s(), floor_eps / std::max(1.0, f.events_per_s()),
              f.completed, total);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : std::string(SIGHTLINE_SOURCE_DIR);
  const double largest = argc > 2 ? std::atof(argv[2]) : 1e6;
  json h2h, i23;
  if (!read_json(root + "/examples/head-to-head-llama2-7b-a100-10k.json", h2h) ||
      !read_json(root + "/presets/scenarios/I2.3.json", i23)) {
    std::fprintf(stderr, "cannot read the scenarios under %s\n", root.c_str());
    return 1;
  }
  const double floor_eps = bare_heap_events_per_s(1024, 20'000'000);
  std::printf("large-run benchmark (run_scenario_with_budget, JSON in and out, one child process per run)\n");
  std::printf("  %-46s %8.3g events/s (1,024 events in flight)\n", "bare binary-heap event loop", floor_eps);

  bool all_ok = true;
  double cpu_million = 0, system_million = 0;
  for (const int64_t n : {1'000LL, 10'000LL, 100'000LL, 1'000'000LL}) {
    if (static_cast<double>(n) > largest) break;
    // 1M requests at 10 req/s span ~100,000 simulated seconds: past the default 86,400 s limit.
    json s = h2h;
    s["serving"]["workload"]["num_requests"] = n;
    s["serving"]["limits"] = {{"max_requests", n}, {"max_sim_time_s", 1000000}};
    const Figure c = measure(s, true, 1'000'000'000);
    const Figure d = measure(s, false, 1'000'000'000);
    const std::string label = "head-to-head, " + std::to_string(n) + " requests";
    print(label + ", central", c, static_cast<double>(n), floor_eps);
    print(label + ", default", d, static_cast<double>(n), floor_eps);
    if (c.ok && d.ok) std::printf("  %-46s default / central CPU %.2fx (goal <= 1.2x)\n", "", d.cpu_s / c.cpu_s);
    all_ok = all_ok && c.ok && d.ok && c.completed == static_cast<double>(n) && d.completed == static_cast<double>(n);
    if (n == 1'000'000) {
      cpu_million = c.cpu_s;
      system_million = c.system_s;
    }
  }
  // The 200,000-request offline batch: I2.3's workload, all at once, its search and steady-state
  // check (both judge arrivals at a rate) left out.
  json offline = i23;
  offline["serving"]["workload"]["arrival"] = {{"process", "all_at_once"}};
  offline["serving"]["workload"]["num_requests"] = 200000;
  offline["serving"].erase("max_qps_search");
  offline["serving"].erase("steady_state");
  const Figure o = measure(offline, false, 10'000'000);
  print("200,000-request offline batch (I2.3), default", o, 200000, floor_eps);
  all_ok = all_ok && o.ok && o.completed == 200000;
  if (cpu_million > 0)
    std::printf("  1M central: %.2f s of CPU (%.2f s of it system) against the goal of 5 s (%.2fx)\n", cpu_million,
                system_million, cpu_million / 5.0);
  if (!all_ok) return 2;
  return cpu_million > 25.0 ? 2 : 0;
}
