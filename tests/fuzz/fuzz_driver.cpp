// Runs fuzz cases through the engine's public API, natively, in one process:
// the fuzzer (tests/fuzz/fuzz.mjs) writes cases to stdin and reads one
// envelope per line back. A case is a header line "<op> <bytes>\n" followed by
// exactly <bytes> bytes of input; op is validate | run | sliced (start, step
// in slices of 97 units until done, result) | registries (input ignored: the
// parameter schema the bounds fuzzer draws from, so a sanitizer build needs
// no native CLI). The envelopes are the API's own bytes, so they compare byte
// for byte with the wasm module's.
#include <iostream>
#include <string>

#include "api/api.hpp"
#include "core/json_text.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  std::string op;
  std::size_t size = 0;
  sightline::api::Engine engine;
  while (std::cin >> op >> size) {
    std::cin.get();  // the newline after the header
    std::string input(size, '\0');
    std::cin.read(&input[0], static_cast<std::streamsize>(size));
    std::string reply;
    if (op == "validate") {
      reply = sightline::api::validate_scenario(input);
    } else if (op == "run") {
      reply = sightline::api::run_scenario(input);
    } else if (op == "registries") {
      reply = sightline::api::list_registries();
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
    std::cout << reply << '\n';
  }
  return 0;
}
