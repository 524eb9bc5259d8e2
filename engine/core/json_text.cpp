#include "core/json_text.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "core/error.hpp"

namespace sightline {

namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 if invalid
// (RFC 3629: no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF).
std::size_t utf8_sequence_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 == 0xE0) n = 3, lo = 0xA0;
  else if (b0 >= 0xE1 && b0 <= 0xEC) n = 3;
  else if (b0 == 0xED) n = 3, hi = 0x9F;  // excludes encoded surrogates
  else if (b0 >= 0xEE && b0 <= 0xEF) n = 3;
  else if (b0 == 0xF0) n = 4, lo = 0x90;
  else if (b0 >= 0xF1 && b0 <= 0xF3) n = 4;
  else if (b0 == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

// Line and column (both from 1) of byte `offset`.
std::string where(const std::string& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') line += 1, column = 1;
    else column += 1;
  }
  return "byte " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")";
}

// Builds the document like nlohmann's own DOM parser, and on the way keeps the
// JSON pointer of the value being read, so that every rejection is located.
class StrictSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<json>;

  explicit StrictSax(json& root) : dom_(root, false) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& s) { return value() && dom_.number_float(v, s); }
  bool string(std::string& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }

  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }

  bool key(std::string& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      f.key = k;
      return reject(error_code::kDuplicateKey, path(),
                    "duplicate key '" + printable(k) + "': each key may appear once in an object");
    }
    f.key = k;
    return dom_.key(k);
  }

  bool parse_error(std::size_t position, const std::string& /*token*/, const nlohmann::detail::exception& ex) {
    if (failed_) return false;  // our own rejection already stopped the parser
    const bool overflow = ex.id == 406;
    std::string what = ex.what();
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, column 6: ".
    const std::size_t colon = what.find(": ");
    if (colon != std::string::npos && what.find("parse error") < colon) what = what.substr(colon + 2);
    else if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
      what = what.substr(what.find("] ") + 2);
    offset_ = position > 0 ? position - 1 : 0;  // nlohmann counts the offending byte as read
    return reject(overflow ? error_code::kRange : error_code::kParse, path(),
                  overflow ? "number too large for a double (" + printable(what, 80) + ")" : printable(what));
  }

  bool failed() const { return failed_; }
  const std::string& code() const { return code_; }
  const std::string& error_path() const { return path_; }
  const std::string& message() const { return message_; }
  std::size_t offset() const { return offset_; }
  void set_offset(std::size_t o) { offset_ = o; }

  // JSON pointer of the value being read (or of the key just read).
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.is_array) p += "/" + std::to_string(f.index);
      else if (f.key) {
        p += "/";
        for (char c : *f.key) p += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
      }
    }
    return p;
  }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t index = 0;
    std::set<std::string> keys;
    std::optional<std::string> key;
  };

  bool value() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return true;
  }
  bool open(bool is_array) {
    if (frames_.size() >= kMaxJsonDepth)
      return reject(error_code::kParse, path(),
                    "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels of arrays and objects");
    // The container is element `index` of a parent array: close() counts it.
    frames_.push_back(Frame{});
    frames_.back().is_array = is_array;
    return true;
  }
  bool close() {
    frames_.pop_back();
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return true;
  }
  bool reject(const char* code, std::string p, std::string message) {
    failed_ = true;
    code_ = code;
    path_ = std::move(p);
    message_ = std::move(message);
    return false;
  }

  Dom dom_;
  std::vector<Frame> frames_;
  bool failed_ = false;
  std::string code_, path_, message_;
  std::size_t offset_ = std::string::npos;
};

// The byte of the first '[' or '{' (outside strings) that opens a container
// deeper than kMaxJsonDepth: the SAX callback that refuses it has no position.
std::size_t too_deep_offset(const std::string& text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

}  // namespace

std::size_t first_invalid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string::npos;
}

std::string printable(const std::string& text, std::size_t max_bytes) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      const auto b = static_cast<unsigned char>(text[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      i += 1;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

std::string safe_dump(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

json without_nulls(json value) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end();) {
      if (it->is_null()) {
        it = value.erase(it);
      } else {
        *it = without_nulls(std::move(*it));
        ++it;
      }
    }
  } else if (value.is_array()) {
    for (auto& item : value) item = without_nulls(std::move(item));
  }
  return value;
}

namespace {

bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// `text` with every bare Infinity, -Infinity and NaN outside strings written as
// a string ("Infinity"): Python's json module writes these literals, and some
// published config.json files carry them. Empty when there is none.
std::string quote_nonstandard_literals(const std::string& text) {
  std::string out;
  bool in_string = false, found = false;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    const bool boundary = i == 0 || !word_char(text[i - 1]);
    for (const char* lit : {"-Infinity", "Infinity", "NaN"}) {
      const std::size_t n = std::char_traits<char>::length(lit);
      if (boundary && text.compare(i, n, lit) == 0 && (i + n == text.size() || !word_char(text[i + n]))) {
        out += '"';
        out += lit;
        out += '"';
        i += n - 1;
        found = true;
        goto next;
      }
    }
    out += c;
  next:;
  }
  return found ? out : std::string();
}

}  // namespace

bool is_nonstandard_literal(const json& value) {
  if (!value.is_string()) return false;
  const std::string& s = value.get_ref<const std::string&>();
  return s == "Infinity" || s == "-Infinity" || s == "NaN";
}

json parse_json_text(const std::string& text) {
  // A NUL byte is valid UTF-8 but never JSON text (a string writes it as
  // \u0000), and nlohmann's lexer takes it for the end of the input: without
  // this check "{...}\0anything" read as the part before the NUL.
  const std::size_t utf8_bad = first_invalid_utf8(text);
  const std::size_t nul = text.find('\0');
  const std::size_t bad = std::min(utf8_bad, nul);
  if (bad != std::string::npos) {
    // Locate the bad byte: read the valid prefix and take the pointer where it stops.
    json prefix;
    StrictSax sax(prefix);
    json::sax_parse(text.substr(0, bad), &sax, json::input_format_t::json, true, false);
    const auto b = static_cast<unsigned char>(text[bad]);
    static const char* kHex = "0123456789ABCDEF";
    fail(error_code::kParse, sax.path(),
         std::string("invalid JSON text at ") + where(text, bad) + ": " +
             (bad == nul ? std::string("a NUL byte (0x00), which JSON text never holds (a string writes it as \\u0000)")
                         : std::string("byte 0x") + kHex[b >> 4] + kHex[b & 15] +
                               " is not valid UTF-8 (the text must be UTF-8, without encoded surrogates)"));
  }
  json root;
  StrictSax sax(root);
  const bool ok = json::sax_parse(text, &sax, json::input_format_t::json, true, false);
  if ((!ok || sax.failed()) && sax.code() == error_code::kParse) {
    // Retry with the non-standard literals quoted; readers then see strings
    // and reject them where a number is needed (a located type error).
    const std::string quoted = quote_nonstandard_literals(text);
    if (!quoted.empty()) {
      json retry;
      StrictSax retry_sax(retry);
      if (json::sax_parse(quoted, &retry_sax, json::input_format_t::json, true, false) && !retry_sax.failed())
        return retry;
    }
  }
  if (!ok || sax.failed()) {
    if (sax.failed() && sax.offset() == std::string::npos && sax.message().rfind("nesting deeper", 0) == 0)
      sax.set_offset(too_deep_offset(text));  // located by its byte too, not by its pointer alone
    const std::string at = sax.offset() != std::string::npos ? " at " + where(text, sax.offset()) : "";
    fail(sax.failed() ? sax.code().c_str() : error_code::kParse, sax.error_path(),
         std::string("invalid JSON") + at + ": " + (sax.failed() ? sax.message() : "unreadable document"));
  }
  return root;
}

json parse_json_document(const std::string& text, const std::string& source) {
  try {
    return parse_json_text(text);
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), e.path(), printable(source) + ": " + e.what());
  }
}

json read_engine_envelope(const std::string& text) {
  try {
    return parse_json_text(text);
  } catch (const SightlineError& e) {
    fail(error_code::kInternal, e.path(), std::string("the engine's own output did not read back: ") + e.what());
  }
}

json merge_patch_between(const json& from, const json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  json p = json::object();
  for (auto it = from.begin(); it != from.end(); ++it)
    if (!to.contains(it.key())) p[it.key()] = nullptr;
  for (auto it = to.begin(); it != to.end(); ++it) {
    if (!from.contains(it.key())) p[it.key()] = it.value();
    else if (from.at(it.key()) != it.value()) p[it.key()] = merge_patch_between(from.at(it.key()), it.value());
  }
  return p;
}

}  // namespace sightline
