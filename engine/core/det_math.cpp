#include "core/det_math.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace sightline {

namespace {
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm split: kLn2Hi * k is exact for |k| < 2^11
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrt2 = 1.41421356237309514547e+00;

// Exact shortcuts for the library calls below, bit for bit the same values
// (tests/unit/test_det_math.cpp compares them with the calls over the whole
// double range). On x86-64 without SSE4.1, std::floor, std::ldexp and
// std::frexp are calls into libm (about 7% of a calibration fit's samples;
// the fit took 0.89x the CPU without them).
constexpr int kExponentBias = 1023;
constexpr uint64_t kExponentMask = 0x7ffULL << 52;

uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double from_bits(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// floor(y) for |y| < 2^62: truncation rounds towards zero, one down for a
// negative non-integer.
double floor_small(double y) {
  const double t = static_cast<double>(static_cast<int64_t>(y));
  return t > y ? t - 1.0 : t;
}

// p * 2^k, exact (as std::ldexp) when the product is a normal double: 2^k for
// -1022 <= k <= 1023 is itself a normal double, and scaling by a power of two
// only moves the exponent. `p` here is in [0.5, 2), so -1021 <= k <= 1022
// keeps the product normal; other k go to the library.
double scale_by_power_of_two(double p, int k) {
  if (k < -1021 || k > 1022) return std::ldexp(p, k);
  return p * from_bits(static_cast<uint64_t>(k + kExponentBias) << 52);
}
}  // namespace

double det_log(double x) {
  if (!(x > 0)) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  double m = 0;
  const uint64_t b = bits_of(x);
  if ((b & kExponentMask) != 0) {
    // A normal x = m * 2^e, m in [1, 2): its mantissa under the exponent 0.
    e = static_cast<int>((b & kExponentMask) >> 52) - kExponentBias;
    m = from_bits((b & ~kExponentMask) | (static_cast<uint64_t>(kExponentBias) << 52));
  } else {
    m = std::frexp(x, &e);  // a subnormal: x = m * 2^e, m in [0.5, 1), exact
    m *= 2.0;
    e -= 1;  // m in [1, 2)
  }
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
  const double kd = floor_small(x * kInvLn2 + 0.5);  // |x| < 746 here
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
  return scale_by_power_of_two(p, static_cast<int>(kd));  // exact scaling by 2^k
}

double det_pow(double base, double exponent) {
  if (exponent == 0) return 1.0;
  if (base == 1.0) return 1.0;
  return det_exp(exponent * det_log(base));
}

double det_log2(double x) {
  if (!(x > 0)) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1): exact
  // log2(x) = e - 1 + log2(2m): exact for every power of two.
  return static_cast<double>(e - 1) + det_log(2.0 * m) * kInvLn2;
}

}  // namespace sightline
