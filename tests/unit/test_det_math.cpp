// det_math's shortcuts for floor, ldexp and frexp give the library calls'
// values bit for bit: the functions are compared with their earlier form,
// which used the calls, over random bit patterns of the whole double range
// and over the edges where a shortcut hands over to the library (subnormal
// inputs and results, overflow). A differing bit would move every shipped
// calibration and every native and wasm result.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/det_math.hpp"

using namespace sightline;

namespace {

// det_log and det_exp as they were written with the library calls.
double library_form_log(double x) {
  if (!(x > 0)) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  double m = std::frexp(x, &e);
  m *= 2.0;
  e -= 1;
  if (m > 1.41421356237309514547e+00) {
    m *= 0.5;
    e += 1;
  }
  const double f = (m - 1.0) / (m + 1.0);
  const double s = f * f;
  double p = 1.0 / 23.0;
  for (double d : {21.0, 19.0, 17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0}) p = p * s + 1.0 / d;
  const double log_m = 2.0 * f + 2.0 * f * (p * s);
  const double k = static_cast<double>(e);
  return k * 6.93147180369123816490e-01 + (log_m + k * 1.90821492927058770002e-10);
}

double library_form_exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::max();
  if (x < -745.1332191019412) return 0.0;
  const double kd = std::floor(x * 1.44269504088896338700e+00 + 0.5);
  const double r = (x - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
  double p = 1.0 / 1307674368000.0;
  for (double d : {87178291200.0, 6227020800.0, 479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0,
                   720.0, 120.0, 24.0, 6.0})
    p = p * r + 1.0 / d;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return std::ldexp(p, static_cast<int>(kd));
}

uint64_t bits_of_double(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double double_of_bits(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// A fixed 64-bit generator (splitmix64): the same cases on every machine.
uint64_t splitmix_next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("det_math: the shortcuts give the library calls' bits over the whole range") {
  std::vector<double> xs = {0.0, -0.0, 1.0, 2.0, 0.5, std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                            709.782712893384, 709.78, -708.39, -708.4, -744.0, -745.1332191019412, -745.2,
                            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  uint64_t state = 20261129;
  for (int i = 0; i < 400000; ++i) xs.push_back(double_of_bits(splitmix_next(state)));  // every exponent, sign and mantissa
  for (int i = 0; i < 400000; ++i) {
    // exp's whole working range, evenly, with the handover to ldexp at both ends.
    const double u = static_cast<double>(splitmix_next(state) >> 11) / 9007199254740992.0;
    xs.push_back(-746.0 + u * (711.0 + 746.0));
  }
  for (int i = 0; i < 100000; ++i) xs.push_back(double_of_bits(splitmix_next(state) & 0x000fffffffffffffULL));  // subnormals
  int log_diff = 0, exp_diff = 0;
  for (double x : xs) {
    if (x != x) continue;
    if (bits_of_double(det_log(x)) != bits_of_double(library_form_log(x))) ++log_diff;
    if (bits_of_double(det_exp(x)) != bits_of_double(library_form_exp(x))) ++exp_diff;
  }
  CHECK(log_diff == 0);
  CHECK(exp_diff == 0);
  CHECK(std::isnan(det_exp(std::nan(""))));
}
