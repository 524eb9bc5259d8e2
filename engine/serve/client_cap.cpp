#include "serve/client_cap.hpp"

namespace sightline::serve {

ClientCap::ClientCap(int64_t max_in_flight, size_t requests) : max_in_flight_(max_in_flight) {
  if (active()) waited_.assign(requests, 0);
}

bool ClientCap::on_arrival_time(int32_t id) {
  if (!active()) return true;
  if (in_flight_ < max_in_flight_) {
    ++in_flight_;
    return true;
  }
  waiting_.push_back(id);
  waited_[static_cast<size_t>(id)] = 1;
  ++requests_that_waited_;
  return false;
}

int32_t ClientCap::on_request_end() {
  if (!active()) return -1;
  --in_flight_;
  if (waiting_.empty()) return -1;
  const int32_t next = waiting_.front();
  waiting_.pop_front();
  ++in_flight_;
  return next;
}

}  // namespace sightline::serve
