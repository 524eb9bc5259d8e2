#pragma once
// Natural log, exp, pow and log2 from IEEE-exact +, -, *, / (and frexp/ldexp,
// which are exact): about 1 ulp, and the same bits natively and in wasm. The
// C library's versions are not: glibc picks FMA variants of exp/log/pow at
// run time on CPUs that have FMA, which differ from its own plain versions
// (and from Emscripten's musl) in the last bit now and then, and a last bit
// that differs in one step's price makes native and wasm results differ.
// Every cost, interval and sampler of the engine uses these
// (tests/layering/one_parser.test.mjs fails on a libm call elsewhere).
namespace sightline {

double det_log(double x);   // x > 0 (-inf otherwise)
double det_exp(double x);   // clamps to 0 / +huge outside the double range
double det_pow(double base, double exponent);  // base > 0
double det_log2(double x);  // exact for powers of two

}  // namespace sightline
