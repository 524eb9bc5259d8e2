#pragma once
// The boundary between untrusted text and JSON values, in both directions.
// Reading: the text must be valid UTF-8 (no overlong forms, no encoded
// surrogates), objects may not repeat a key, nesting is bounded and every
// number must fit a double; each rejection is a located parse_error with the
// byte offset. Writing: `safe_dump` never throws on a string that is not valid
// UTF-8 (it writes U+FFFD instead), so an error about bad bytes can always be
// reported.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace sightline {

using json = nlohmann::json;

// The deepest nesting of arrays and objects a document may have. Scenarios
// need fewer than 10 levels; the bound keeps every recursive walk (dump,
// readers, destructors) far from the stack limit, natively and in wasm.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Byte offset of the first byte that is not part of valid UTF-8, or npos.
std::size_t first_invalid_utf8(const std::string& text);

// `text` with every byte that is not valid UTF-8 written as "\xNN", and cut to
// at most `max_bytes` (on a character boundary, with "..." appended).
std::string printable(const std::string& text, std::size_t max_bytes = 200);

// dump() that cannot throw on bad UTF-8 (invalid bytes become U+FFFD).
std::string safe_dump(const json& value, int indent = -1);

// `value` with every null object member removed, at any depth: how the engine
// writes a document that it, or a user, will read back (null is not a value
// in a scenario; an absent key is).
json without_nulls(json value);
// The RFC 7386 merge patch that turns `from` into `to` (a removed key is null):
// how a resolved scenario writes a comparison variant so that it reads back.
json merge_patch_between(const json& from, const json& to);

// Parses untrusted JSON text with the rules above. Throws SightlineError
// (parse_error) whose path is the JSON pointer where reading stopped and whose
// message names the byte offset, line and column.
// The non-standard literals Infinity, -Infinity and NaN (written by Python's
// json module, found in some published config.json files) are accepted: they
// are read as the strings "Infinity", "-Infinity" and "NaN", so a reader that
// needs a number rejects them with a located type error, and the Hugging Face
// importer warns about them.
json parse_json_text(const std::string& text);

// A JSON document the user gave as a file or a line of one (a --calibration
// file, a batch line, a sweep base): parse_json_text's rules, and a rejection
// keeps its pointer inside that document and names `source` (the file the
// user gave) at the start of its message, so the error is located in the
// user's own document.
json parse_json_document(const std::string& text, const std::string& source);

// The engine's own envelope or result text, read back by a front end (the CLI
// prints it as a table): the same reader, so no second parser exists. A
// rejection here is an engine defect and surfaces as one.
json read_engine_envelope(const std::string& text);

// True for a value that parse_json_text read from a non-standard literal.
bool is_nonstandard_literal(const json& value);

}  // namespace sightline
