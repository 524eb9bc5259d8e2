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

namespace {
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm split: kLn2Hi * k is exact for |k| < 2^11
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrt2 = 1.41421356237309514547e+00;
}  // namespace

double det_log(double x) {
  if (!(x > 0)) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1): exact
  m *= 2.0;
  e -= 1;  // m in [1, 2)
  if (m > kSqrt2) {
    m *= 0.5;
    e += 1;
  }
  const double f = (m - 1.0) / (m + 1.0);
  const double s = f * f;
  // log(m) = 2 f (1 + s/3 + s^2/5 + ...), |f| <= 0.1716.
  double p = 1.0 / 23.0;
  p = p * s + 1.0 / 21.0;
  p = p * s + 1.0 / 19.0;
  p = p * s + 1.0 / 17.0;
  p = p * s + 1.0 / 15.0;
  p = p * s + 1.0 / 13.0;
  p = p * s + 1.0 / 11.0;
  p = p * s + 1.0 / 9.0;
  p = p * s + 1.0 / 7.0;
  p = p * s + 1.0 / 5.0;
  p = p * s + 1.0 / 3.0;
  const double log_m = 2.0 * f + 2.0 * f * (p * s);
  const double k = static_cast<double>(e);
  return k * kLn2Hi + (log_m + k * kLn2Lo);
}

double det_exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::max();
  if (x < -745.1332191019412) return 0.0;
  const double kd = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;  // |r| <= ~0.347
  // Taylor series of e^r to r^15/15!.
  double p = 1.0 / 1307674368000.0;
  p = p * r + 1.0 / 87178291200.0;
  p = p * r + 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return std::ldexp(p, static_cast<int>(kd));  // exact scaling by 2^k
}

double det_pow(double base, double exponent) {
  if (exponent == 0) return 1.0;
  if (base == 1.0) return 1.0;
  return det_exp(exponent * det_log(base));
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
