#pragma once

namespace sightline {

#ifndef SIGHTLINE_VERSION
#define SIGHTLINE_VERSION "0.0.0"
#endif
inline constexpr const char* kEngineVersion = SIGHTLINE_VERSION;
inline constexpr int kResultSchemaVersion = 1;

}  // namespace sightline
