#include "cli/flags.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/csv.hpp"

namespace sightline::cli {

namespace {

std::string show(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "|" : "") + v[i];
  return s;
}

}  // namespace

Flags::Spec Flags::make(const char* name, Kind kind, void* out) {
  Spec s;
  s.name = name;
  s.kind = kind;
  s.out = out;
  return s;
}

Flags& Flags::text(const char* name, std::string* out, std::vector<std::string> choices) {
  Spec s = make(name, Kind::Text, out);
  s.choices = std::move(choices);
  specs_.push_back(std::move(s));
  return *this;
}

Flags& Flags::texts(const char* name, std::vector<std::string>* out) {
  specs_.push_back(make(name, Kind::Texts, out));
  return *this;
}

Flags& Flags::integer(const char* name, int64_t* out, int64_t min_value, int64_t max_value) {
  Spec s = make(name, Kind::Integer, out);
  s.imin = min_value;
  s.imax = max_value;
  specs_.push_back(std::move(s));
  return *this;
}

Flags& Flags::number(const char* name, double* out, double min_value, double max_value) {
  Spec s = make(name, Kind::Number, out);
  s.dmin = min_value;
  s.dmax = max_value;
  specs_.push_back(std::move(s));
  return *this;
}

Flags& Flags::boolean(const char* name, bool* out) {
  specs_.push_back(make(name, Kind::Boolean, out));
  return *this;
}

Flags& Flags::positional(std::vector<std::string>* out, size_t max_count) {
  positional_ = out;
  positional_max_ = max_count;
  return *this;
}

const Flags::Spec* Flags::find(const std::string& name) const {
  for (const Spec& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

// Flags parse their numbers with the engine's one number parser (core/csv):
// the whole token, plain decimal, finite.
bool Flags::parse_integer(const std::string& text, int64_t& out) { return parse_integer_token(text, out); }

bool Flags::parse_number(const std::string& text, double& out) { return csv_parse_decimal(text, out); }

bool Flags::parse(const std::vector<std::string>& args, std::string& problem) {
  const std::string who = command_ + ": ";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool is_flag = a.size() > 2 && a.compare(0, 2, "--") == 0;
    if (!is_flag) {
      if (positional_ == nullptr || positional_->size() >= positional_max_) {
        problem = who + "unexpected argument '" + a + "'";
        return false;
      }
      positional_->push_back(a);
      continue;
    }
    const Spec* s = find(a);
    if (s == nullptr) {
      std::string known;
      for (const Spec& k : specs_) known += (known.empty() ? "" : ", ") + k.name;
      problem = who + "unknown option '" + a + "'" + (known.empty() ? "" : " (options: " + known + ")");
      return false;
    }
    if (s->kind == Kind::Boolean) {
      *static_cast<bool*>(s->out) = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      problem = who + a + " needs a value";
      return false;
    }
    const std::string& v = args[++i];
    switch (s->kind) {
      case Kind::Text: {
        if (!s->choices.empty()) {
          bool known = false;
          for (const auto& c : s->choices) known = known || c == v;
          if (!known) {
            problem = who + a + " takes one of " + join(s->choices) + " (got '" + v + "')";
            return false;
          }
        }
        *static_cast<std::string*>(s->out) = v;
        break;
      }
      case Kind::Texts:
        static_cast<std::vector<std::string>*>(s->out)->push_back(v);
        break;
      case Kind::Integer: {
        int64_t n = 0;
        if (!parse_integer(v, n) || n < s->imin || n > s->imax) {
          problem = who + a + " takes a whole number from " + std::to_string(s->imin) + " to " + std::to_string(s->imax) +
                    " (got '" + v + "')";
          return false;
        }
        *static_cast<int64_t*>(s->out) = n;
        break;
      }
      case Kind::Number: {
        double x = 0;
        if (!parse_number(v, x) || x < s->dmin || x > s->dmax) {
          problem = who + a + " takes a finite number from " + show(s->dmin) + " to " + show(s->dmax) + " (got '" + v + "')";
          return false;
        }
        *static_cast<double*>(s->out) = x;
        break;
      }
      case Kind::Boolean:
        break;
    }
  }
  return true;
}

}  // namespace sightline::cli
