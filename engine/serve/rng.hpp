#pragma once
// Portable randomness for the serving simulator: named, seeded streams
// (xoshiro256** seeded through splitmix64) and the project's own samplers.
// Nothing here calls std::*_distribution or libm: log and exp are implemented
// with IEEE-exact +, -, *, / and sqrt only, so native and wasm draw the same
// numbers bit for bit.
#include <cstdint>
#include <string>
#include <vector>

#include "core/det_math.hpp"

namespace sightline::serve {

using sightline::det_exp;
using sightline::det_log;
using sightline::det_pow;

// splitmix64: seeds other generators and hashes.
uint64_t splitmix64(uint64_t& state);

// A seed for stream `name` of a run seeded with `seed` (FNV-1a of the name mixed in).
uint64_t stream_seed(uint64_t seed, const std::string& name);

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t next_u64();
  double uniform01();                          // [0, 1)
  double uniform_open01();                     // (0, 1)
  int64_t uniform_int(int64_t lo, int64_t hi);  // inclusive; lo <= hi
  double exponential(double rate);             // mean 1/rate
  double normal(double mean, double stddev);   // Marsaglia polar method
  double lognormal(double mu, double sigma);
  double gamma(double shape, double scale);    // Marsaglia–Tsang
  bool bernoulli(double p);

 private:
  uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0;
};

// Zipf over the integers [lo, hi] with P(k) ∝ (k - lo + 1)^-theta, by a
// cumulative table and binary search.
class ZipfTable {
 public:
  ZipfTable() = default;
  ZipfTable(int64_t lo, int64_t hi, double theta);
  int64_t sample(Rng& rng) const;
  bool empty() const { return cdf_.empty(); }

 private:
  int64_t lo_ = 0;
  std::vector<double> cdf_;
};

}  // namespace sightline::serve
