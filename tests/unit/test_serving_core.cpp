// The serving simulator's building blocks: the event comparator, the
// project's own random streams and distributions, the KV block pool with its
// prefix cache, and the latency histogram.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "serve/event_queue.hpp"
#include "serve/kv_manager.hpp"
#include "serve/rng.hpp"
#include "serve/stats.hpp"

using namespace sightline::serve;

TEST_CASE("serving core: events are ordered by (time, priority, insertion sequence)") {
  Event a{10, 2, 0, 0, 0, 0}, b{10, 1, 5, 0, 0, 0}, c{9, 3, 9, 0, 0, 0}, d{10, 1, 6, 0, 0, 0};
  CHECK(event_before(c, a));  // earlier time wins whatever the priority
  CHECK(event_before(b, a));  // same time: smaller priority first
  CHECK(event_before(b, d));  // same time and priority: inserted first
  CHECK_FALSE(event_before(a, a));

  EventQueue q;
  q.push(5, 3, 0, 1);
  q.push(5, 0, 0, 2);
  q.push(1, 9, 0, 3);
  q.push(5, 0, 0, 4);
  q.push(5, 3, 0, 5);
  std::vector<int64_t> order;
  while (!q.empty()) order.push_back(q.pop().a);
  CHECK(order == std::vector<int64_t>{3, 2, 4, 1, 5});
}

TEST_CASE("serving core: to_ns rounds once to the nearest nanosecond") {
  CHECK(to_ns(1.0) == 1000000000);
  CHECK(to_ns(1.4e-9) == 1);
  CHECK(to_ns(1.6e-9) == 2);
  CHECK(to_s(2500000000) == doctest::Approx(2.5));
}

TEST_CASE("serving core: det_log and det_exp match libm to ~1 ulp") {
  double worst_log = 0, worst_exp = 0;
  for (double x = 1e-300; x < 1e300; x *= 1.37) {
    const double ref = std::log(x);
    worst_log = std::max(worst_log, std::abs(det_log(x) - ref) / std::max(1.0, std::abs(ref)));
  }
  for (double x = -700; x < 700; x += 0.731) {
    const double ref = std::exp(x);
    worst_exp = std::max(worst_exp, std::abs(det_exp(x) - ref) / ref);
  }
  CHECK(worst_log < 1e-15);
  CHECK(worst_exp < 1e-14);
  CHECK(det_log(1.0) == 0.0);
  CHECK(det_exp(0.0) == 1.0);
  CHECK(det_pow(2.0, 10.0) == doctest::Approx(1024.0).epsilon(1e-13));
}

TEST_CASE("serving core: named streams are reproducible and independent") {
  Rng a(stream_seed(7, "arrivals")), b(stream_seed(7, "arrivals")), c(stream_seed(7, "prompt_tokens")),
      d(stream_seed(8, "arrivals"));
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
    CHECK(x != d.next_u64());
  }
  // Golden draws: a change of generator or seeding shows up here first.
  Rng g(42);
  const uint64_t first = g.next_u64();
  Rng g2(42);
  CHECK(first == g2.next_u64());
  CHECK(stream_seed(1, "arrivals") != stream_seed(1, "Arrivals"));
}

TEST_CASE("serving core: distributions have the right moments") {
  const int n = 200000;
  Rng r(stream_seed(3, "moments"));
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = r.exponential(4.0);
    CHECK(x > 0);
    sum += x;
  }
  CHECK(sum / n == doctest::Approx(0.25).epsilon(0.01));

  sum = sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal(10.0, 2.0);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  CHECK(mean == doctest::Approx(10.0).epsilon(0.005));
  CHECK(std::sqrt(sum2 / n - mean * mean) == doctest::Approx(2.0).epsilon(0.01));

  for (double shape : {0.25, 1.0, 4.0}) {
    sum = sum2 = 0;
    for (int i = 0; i < n; ++i) {
      const double x = r.gamma(shape, 3.0);
      CHECK(x >= 0);
      sum += x;
      sum2 += x * x;
    }
    const double m = sum / n;
    const double cv = std::sqrt(sum2 / n - m * m) / m;
    CHECK(m == doctest::Approx(shape * 3.0).epsilon(0.02));
    CHECK(cv == doctest::Approx(1.0 / std::sqrt(shape)).epsilon(0.03));
  }

  sum = 0;
  const double sigma = 0.5, mu = std::log(100.0) - 0.5 * sigma * sigma;
  for (int i = 0; i < n; ++i) sum += r.lognormal(mu, sigma);
  CHECK(sum / n == doctest::Approx(100.0).epsilon(0.01));

  for (int i = 0; i < 1000; ++i) {
    const int64_t k = r.uniform_int(-3, 3);
    CHECK(k >= -3);
    CHECK(k <= 3);
    const double u = r.uniform01();
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
  }

  ZipfTable z(1, 100, 1.2);
  std::vector<int> counts(101, 0);
  for (int i = 0; i < n; ++i) ++counts[static_cast<size_t>(z.sample(r))];
  CHECK(counts[1] > counts[2]);
  CHECK(counts[2] > counts[10]);
  CHECK(counts[10] > counts[100]);
  CHECK(counts[0] == 0);
  // P(1)/P(2) = 2^1.2
  CHECK(static_cast<double>(counts[1]) / counts[2] == doctest::Approx(std::pow(2.0, 1.2)).epsilon(0.03));
}

TEST_CASE("serving core: the block pool never hands out more blocks than it has") {
  BlockPool p(10);
  CHECK(p.take(6));
  CHECK_FALSE(p.take(5));  // refused, nothing taken
  CHECK(p.used() == 6);
  CHECK(p.take(4));
  CHECK(p.free() == 0);
  CHECK(p.peak_used() == 10);
  p.give(10);
  CHECK(p.used() == 0);
}

TEST_CASE("serving core: prefix cache shares, keeps and evicts least recently released blocks") {
  BlockPool p(4);
  REQUIRE(p.take(2));
  const int32_t a = p.publish(100);
  const int32_t b = p.publish(200);
  CHECK(a >= 0);
  CHECK(b >= 0);
  CHECK(p.publish(100) == -1);  // already cached
  CHECK(p.used() == 2);
  CHECK(p.cached_blocks() == 2);
  p.acquire(a);  // a second user
  p.release(a);
  p.release(a);  // unreferenced: kept, evictable
  p.release(b);
  CHECK(p.evictable() == 2);
  CHECK(p.lookup(100) == a);
  // Needing 3 blocks evicts the least recently released one (a) only.
  CHECK(p.take(3));
  CHECK(p.lookup(100) == -1);
  CHECK(p.lookup(200) == b);
  CHECK(p.evictions() == 1);
  CHECK(p.used() == 4);
  CHECK_FALSE(p.take(2));
}

TEST_CASE("serving core: gap histogram percentiles are within 1% of exact") {
  GapHistogram h;
  std::vector<double> exact;
  Rng r(5);
  for (int i = 0; i < 50000; ++i) {
    const int64_t ns = static_cast<int64_t>(r.lognormal(std::log(2e7), 0.7));
    h.add(ns);
    exact.push_back(static_cast<double>(ns) * 1e-6);
  }
  std::sort(exact.begin(), exact.end());
  const auto s = h.summary_ms();
  CHECK(s.p50 == doctest::Approx(percentile(exact, 50)).epsilon(0.01));
  CHECK(s.p99 == doctest::Approx(percentile(exact, 99)).epsilon(0.01));
  CHECK(s.max == doctest::Approx(exact.back()));
}

TEST_CASE("serving core: a gap histogram fed runs of equal gaps sums them as one by one") {
  // A decode step's tokens share their gap: the histogram counts a run once
  // and adds its values to the sums when it ends. The mean and the spread
  // must be those of sums made sample by sample, in order, to the last bit.
  GapHistogram h;
  Rng r(9);
  double sum = 0, sum_sq = 0;
  int64_t n = 0, lo = 0, hi = 0;
  for (int run = 0; run < 3000; ++run) {
    const int64_t ns = static_cast<int64_t>(r.lognormal(std::log(2.5e7), 0.3));
    const int64_t times = 1 + static_cast<int64_t>(r.uniform01() * 40);
    for (int64_t i = 0; i < times; ++i) {
      h.add(ns);
      const double d = static_cast<double>(ns);
      sum += d;
      sum_sq += d * d;
      lo = n == 0 ? ns : std::min(lo, ns);
      hi = n == 0 ? ns : std::max(hi, ns);
      ++n;
    }
    CHECK(h.count() == n);  // the run in progress included
  }
  const Summary s = h.summary_ms();
  const double mean = sum / static_cast<double>(n);
  CHECK(s.count == n);
  CHECK(s.mean == mean * 1e-6);
  CHECK(s.stddev == std::sqrt(std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean)) * 1e-6);
  CHECK(s.min == static_cast<double>(lo) * 1e-6);
  CHECK(s.max == static_cast<double>(hi) * 1e-6);
  h.add(hi + 1);  // a summary of a copy: the histogram goes on
  CHECK(h.summary_ms().count == n + 1);
}

TEST_CASE("serving core: sort_values orders large lists as std::sort does") {
  // Above the bucket sort's threshold: latencies (one exponent range), values
  // of both signs over many exponents, and repeats; every bit as std::sort.
  Rng r(11);
  std::vector<std::vector<double>> lists(3);
  for (int i = 0; i < 20000; ++i) {
    lists[0].push_back(static_cast<double>(static_cast<int64_t>(r.lognormal(std::log(2e7), 0.7))) * 1e-6);
    lists[1].push_back((r.uniform01() < 0.5 ? -1 : 1) * std::ldexp(r.uniform01(), static_cast<int>(r.uniform_int(-60, 60))));
    lists[2].push_back(static_cast<double>(r.uniform_int(-3, 3)) * 0.25);
  }
  for (std::vector<double>& v : lists) {
    std::vector<double> expected = v;
    std::sort(expected.begin(), expected.end());
    sort_values(v);
    CHECK(v == expected);
  }
  std::vector<double> small = {3, -1, 2.5, 0, -7};
  sort_values(small);
  CHECK(small == std::vector<double>{-7, -1, 0, 2.5, 3});
}

#include "scenario/policy_registry.hpp"

TEST_CASE("serving core: every registry names its entries once, with a description") {
  const auto all = policy_tables_json();
  for (auto it = all.begin(); it != all.end(); ++it) {
    CAPTURE(it.key());
    REQUIRE(it.value().size() > 0);
    std::vector<std::string> names;
    for (const auto& e : it.value()) {
      const std::string name = e.contains("name") ? e["name"].get<std::string>() : e["id"].get<std::string>();
      CHECK(std::find(names.begin(), names.end(), name) == names.end());
      names.push_back(name);
      if (e.contains("description")) CHECK(e["description"].get<std::string>().size() > 10);
      if (e.contains("pointer")) CHECK(e["pointer"].get<std::string>().rfind("/", 0) == 0);
    }
  }
}

#include "core/error.hpp"
#include "serve/batch_scheduler.hpp"
#include "serve/router.hpp"

namespace {

template <class Factories>
std::vector<std::string> factory_names(const Factories& factories) {
  std::vector<std::string> names;
  for (const auto& f : factories) names.push_back(f.name);
  return names;
}

// The error a call throws: code, path and message.
template <class F>
sightline::SightlineError thrown_by(F f) {
  try {
    f();
  } catch (const sightline::SightlineError& e) {
    return e;
  }
  FAIL("no SightlineError thrown");
  return sightline::SightlineError("", "", "");
}

}  // namespace

TEST_CASE("serving core: routers and batch schedulers are chosen from registries of the validated names") {
  CHECK(factory_names(router_factories()) == registry_names(routers()));
  CHECK(factory_names(batch_scheduler_factories()) == registry_names(scheduler_policies()));
  for (const std::string& name : registry_names(routers())) CHECK(make_router(name, "/serving/cluster/router") != nullptr);

  const sightline::SightlineError e = thrown_by([] { make_router("random", "/serving/cluster/router"); });
  CHECK(e.code() == "invalid_value");
  CHECK(e.path() == "/serving/cluster/router");
  for (const std::string& name : registry_names(routers())) CHECK(std::string(e.what()).find(name) != std::string::npos);
}

namespace {

// Replica loads for the router tests: outstanding requests and KV load per replica.
struct FixedLoads : ReplicaLoads {
  std::vector<int64_t> requests;
  std::vector<double> kv;
  int64_t outstanding(int replica) const override { return requests[static_cast<size_t>(replica)]; }
  double kv_load(int replica, int) const override { return kv[static_cast<size_t>(replica)]; }
};

}  // namespace

TEST_CASE("serving core: routers take turns, or the least loaded replica with ties to the first") {
  FixedLoads loads;
  loads.requests = {3, 1, 1, 2};
  loads.kv = {0.5, 0.7, 0.2, 0.2};
  const std::vector<int> all = {0, 1, 2, 3};
  auto rr = make_router("round_robin", "");
  std::vector<int> turns;
  for (int i = 0; i < 6; ++i) turns.push_back(rr->pick(all, 0, loads));
  CHECK(turns == std::vector<int>{0, 1, 2, 3, 0, 1});
  CHECK(make_router("least_outstanding", "")->pick(all, 0, loads) == 1);
  CHECK(make_router("least_outstanding", "")->pick({3, 0}, 0, loads) == 3);
  CHECK(make_router("least_kv_load", "")->pick(all, 0, loads) == 2);
}
