#pragma once
// Helpers shared by the CLI's commands.
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "scenario/metric_catalogue.hpp"

namespace sightline::cli {

using json = nlohmann::json;
using Args = std::vector<std::string>;

extern const char* const kUsage;

int usage_error(const std::string& message);            // prints usage, returns 2
int report_error(const json& envelope);                 // prints "error [code] at 'path': message", returns 1
int report_error(const SightlineError& e);              // the same for an error caught in a command
// The most a file given to the CLI may hold (scenarios, JSON Lines batches,
// calibration files and CSVs): a JSON document takes several times its size
// in memory, and the engine promises 2 GB (docs/limits.md).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;
// The located limit_exceeded error for a file over kMaxInputFileBytes (`name`: its path).
[[noreturn]] void fail_input_file_too_big(const std::string& name);
// Reads `path` ("-": standard input): false when it cannot be opened; a file
// over kMaxInputFileBytes is a located limit_exceeded error (thrown).
bool read_file(const std::string& path, std::string& out);
// The same, with a file that cannot be read an io_error naming it (thrown).
void read_input_file(const std::string& path, std::string& out);
// The scenario a command names: the preset ID when given, else FILE. 0 when read;
// otherwise the error is printed and the exit status is returned.
int read_scenario_text(const std::string& file, const std::string& preset, std::string& out);
void write_output(const std::string& path, const std::string& text);  // "" writes standard output; fails with io_error
// The stream a command streams its output lines to: standard output for "",
// else `file` opened on `path`; nullptr (after printing the io_error) when the
// file cannot be opened.
std::ostream* open_output_stream(const std::string& path, std::ofstream& file);
std::string file_name(const std::string& path);                     // the part after the last '/' 
std::string fixed(double v, int digits);
// A key metric's value with its 80% interval where it has one: "0.419 [0.419, 0.496]".
std::string value_with_interval(const json& metric, int digits);
// The entry of `key_metrics` (an answer's or a row's list) with id `id`; nullptr when none.
const json* find_key_metric(const json& key_metrics, const std::string& id);
// Runs task(k) for k in [0, n) on up to `jobs` threads (search candidates; each task writes its own slot).
void parallel_for(size_t n, int64_t jobs, const std::function<void(size_t)>& task);

// The catalogue entry of a metric a table shows, so that labels and units are the
// engine's (the same as the page's); naming a metric the catalogue lacks throws
// std::logic_error (a programming error, caught by the CLI tests' table runs).
const MetricInfo& catalogued(MetricKind kind, const std::string& id);
// The value at the metric's pointer in `result`; a null json when absent.
const json& catalogued_value(const MetricInfo& m, const json& result);

// The catalogue's label of a part of memory_per_gpu (throws like catalogued()).
const char* memory_label(MetricKind kind, const std::string& id);

// The tables' last section: each figure's 80% interval, and where it comes
// from (the tier; the kind's measured band where it widened the figure).
void print_interval_section(const json& result);

// Human-readable table of a run result, chosen by its "kind". `understood`:
// api::inspect_model's result for a model imported from a config.json, printed
// with the import block (null: none).
void print_result_table(const json& result, const json& understood = json());
// What the engine understood of a model (api::inspect_model's result), as
// `sightline inspect-model` prints it; the ignored keys and warnings only with `notes`.
void print_understood_model(const json& r, const std::string& indent, bool notes);
void print_latency_table(const json& result);
void print_serving_table(const json& result);
void print_training_table(const json& result);

// Commands: each takes the arguments after its name and returns the exit code.
int cmd_run(const Args& args);
int cmd_fit(const Args& args);
int cmd_validate(const Args& args);
int cmd_inspect_model(const Args& args);
int cmd_presets(const Args& args);
int cmd_calibrate(const Args& args);
int cmd_report_accuracy(const Args& args);
int cmd_calibrate_comm(const Args& args);
int cmd_ops(const Args& args);
int cmd_explain_step(const Args& args);
int cmd_explain_train_step(const Args& args);
int cmd_comm(const Args& args);
int cmd_report_training(const Args& args);
int cmd_report_e2e(const Args& args);
int cmd_sweep(const Args& args);
int cmd_batch(const Args& args);
int cmd_merge(const Args& args);
int cmd_search(const Args& args);
int cmd_check_capacity(const Args& args);
// `search` with a {"kind": "training_search"} question (cmd_search_training.cpp); `rows` of the ranked table;
// its configurations are estimated against `budget` before any runs.
class CommandBudget;
int run_training_search(const json& doc, int64_t jobs, const std::string& format, const std::string& out, size_t rows,
                        CommandBudget& budget);

}  // namespace sightline::cli
