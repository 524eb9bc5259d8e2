#include "serve/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sightline::serve {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t stream_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  uint64_t state = seed ^ h;
  return splitmix64(state);
}

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (auto& w : s_) w = splitmix64(state);
}

uint64_t Rng::next_u64() {
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform_open01() { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
  if (range == 0) return static_cast<int64_t>(next_u64());
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
  uint64_t v;
  do {
    v = next_u64();
  } while (v >= limit);
  return lo + static_cast<int64_t>(v % range);
}

double Rng::exponential(double rate) { return -det_log(uniform_open01()) / rate; }

double Rng::normal(double mean, double stddev) {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return mean + stddev * spare_normal_;
  }
  double u, v, s;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double mul = std::sqrt(-2.0 * det_log(s) / s);
  spare_normal_ = v * mul;
  has_spare_normal_ = true;
  return mean + stddev * (u * mul);
}

double Rng::lognormal(double mu, double sigma) { return det_exp(normal(mu, sigma)); }

double Rng::gamma(double shape, double scale) {
  if (shape < 1.0) {
    const double g = gamma(shape + 1.0, 1.0);
    return g * det_exp(det_log(uniform_open01()) / shape) * scale;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal(0.0, 1.0);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open01();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v * scale;
    if (det_log(u) < 0.5 * x2 + d * (1.0 - v + det_log(v))) return d * v * scale;
  }
}

bool Rng::bernoulli(double p) { return uniform01() < p; }

ZipfTable::ZipfTable(int64_t lo, int64_t hi, double theta) : lo_(lo) {
  const int64_t n = hi - lo + 1;
  cdf_.reserve(static_cast<size_t>(n));
  double total = 0;
  for (int64_t k = 1; k <= n; ++k) {
    total += det_exp(-theta * det_log(static_cast<double>(k)));
    cdf_.push_back(total);
  }
}

int64_t ZipfTable::sample(Rng& rng) const {
  const double u = rng.uniform01() * cdf_.back();
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  const auto idx = std::min<std::ptrdiff_t>(it - cdf_.begin(), static_cast<std::ptrdiff_t>(cdf_.size()) - 1);
  return lo_ + idx;
}

}  // namespace sightline::serve
