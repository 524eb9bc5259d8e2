// Runs fuzz cases through the engine's public API, natively, in one process:
// the fuzzers (tests/fuzz/fuzz.mjs, tests/fuzz/surfaces.mjs) write cases to
// stdin and read one envelope per line back. A case is a header line
// "<op> <bytes>\n" followed by exactly <bytes> bytes of input; op is
//   validate | run          the scenario API
//   sliced                  start, step in slices of 97 units until done, result
//   registries              input ignored: the parameter schema the bounds fuzzer
//                           draws from, so a sanitizer build needs no native CLI
//   inspect                 a pasted HF config (api::inspect_model)
//   bench[:FORMAT]          a benchmark result file (api::import_bench_file),
//                           the format detected or forced
//   fit                     {"base": scenario, "file": name, "text": file text,
//                           "max_work_units": n, "prompt_tokens": n?}: the
//                           import and the calibration fit `sightline fit` makes
// The envelopes are the API's own bytes, so they compare byte for byte with
// the wasm module's (fit has no wasm entry: native only).
// With an argument N (ms), a case that takes more than N ms of this process's
// CPU time is reported on stderr as "slow <case index> <ms>": hangs are
// judged per case on CPU time, never on the wall clock.
#include <ctime>
#include <iostream>
#include <string>

#include "api/api.hpp"
#include "fit/calibration_fit.hpp"
#include "core/error_boundary.hpp"
#include "core/json_text.hpp"

namespace {

std::string error_reply(const sightline::CaughtError& e) {
  sightline::json j = {{"ok", false}, {"error", {{"code", e.code}, {"path", e.path}, {"message", e.message}}}};
  return sightline::safe_dump(j);
}

// What `sightline fit FILE --base BASE` does after reading its files, as an envelope.
std::string fit_case(const std::string& input) {
  using namespace sightline;
  std::string out;
  const auto error = catch_all(
      [&] {
        const json req = read_engine_envelope(input);  // the fuzzer's own request, always valid JSON
        const std::string name = req.at("file").get<std::string>();
        std::vector<fit::BenchRun> runs = fit::read_bench_file(name, req.at("text").get<std::string>(), "");
        if (req.contains("prompt_tokens")) {
          for (fit::BenchRun& r : runs)
            if (!r.prompt_tokens_mean) {
              r.prompt_tokens_mean = req["prompt_tokens"].get<double>();
              r.prompt_source = "--prompt-tokens";
            }
        }
        fit::FitBase base;
        base.name = "base.json";
        base.doc = req.at("base");
        fit::FitOptions options;
        options.max_work_units = req.at("max_work_units").get<int64_t>();
        const json cal = fit::fit_cluster_calibration(base, runs, "fuzz", "fuzz", options);
        out = safe_dump(json{{"ok", true}, {"result", cal}, {"warnings", json::array()}});
      },
      "fit");
  return error ? error_reply(*error) : out;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const double slow_ms = argc > 1 ? std::stod(argv[1]) : 0;
  std::string op;
  std::size_t size = 0;
  sightline::api::Engine engine;
  for (long index = 0; std::cin >> op >> size; ++index) {
    std::cin.get();  // the newline after the header
    std::string input(size, '\0');
    std::cin.read(&input[0], static_cast<std::streamsize>(size));
    const std::clock_t cpu0 = std::clock();
    std::string reply;
    if (op == "validate") {
      reply = sightline::api::validate_scenario(input);
    } else if (op == "run") {
      reply = sightline::api::run_scenario(input);
    } else if (op == "registries") {
      reply = sightline::api::list_registries();
    } else if (op == "inspect") {
      reply = sightline::api::inspect_model(input);
    } else if (op == "bench" || op.rfind("bench:", 0) == 0) {
      reply = sightline::api::import_bench_file("fuzzed-bench-file", input, op.size() > 6 ? op.substr(6) : "");
    } else if (op == "fit") {
      reply = fit_case(input);
    } else if (op == "sliced") {
      reply = engine.start(input);
      const std::string prefix = "{\"ok\":true,\"result\":{\"handle\":";
      if (reply.rfind(prefix, 0) == 0) {
        const int handle = static_cast<int>(
            sightline::read_engine_envelope(reply)["result"]["handle"].get<int64_t>());
        std::string step = engine.step(handle, 97);
        while (step.rfind("{\"ok\":true", 0) == 0 && step.find("\"done\":true") == std::string::npos)
          step = engine.step(handle, 97);
        reply = step.rfind("{\"ok\":true", 0) == 0 ? engine.result(handle) : step;
      }
    } else {
      std::cerr << "fuzz_driver: unknown op '" << op << "'\n";
      return 2;
    }
    const double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    if (slow_ms > 0 && cpu_ms > slow_ms) std::cerr << "slow " << index << " " << cpu_ms << "\n";
    std::cout << reply << '\n';
  }
  return 0;
}
