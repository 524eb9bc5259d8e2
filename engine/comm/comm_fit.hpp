#pragma once
// Fits a CommCalibration for one interconnect from single-level collective
// measurements (all members inside one node, or one GPU per node on a network).
#include <vector>

#include "comm/comm_calibration.hpp"
#include "hw/hardware.hpp"

namespace sightline {

// Which algorithm a measured call used: forced ones as labelled; "auto"
// all-reduces on a SHARP switch from 2 MiB up run NVLS (NCCL's switch point,
// measurements.md 2b), everything else the ring; send/recv and all-to-all p2p.
// All-reduces labelled "ll" fit NCCL's LL protocol (comm_calibration.hpp).
std::string sample_algorithm(const CollectiveSample& s, const InterconnectSpec& link);

// With `ring_shape`, the ring's latencies, chunk and efficiency-by-group-size
// shape come from that calibration (a link of the same kind measured at more
// group sizes) and only the efficiency level is fitted to this link's rows.
CommCalibration fit_comm_calibration(const InterconnectSpec& link, const std::vector<CollectiveSample>& samples,
                                     const CommCalibration& base, const std::string& source,
                                     const CommCalibration* ring_shape = nullptr);

// The 80% band (10th / 90th percentile, never excluding 0) and median |error| of log(measured / predicted) residuals.
CommBand residual_band(std::vector<double> log_residuals);

// log(measured / predicted) of `target`'s single-level rows when `target` is
// priced as a link without measurements, from calibration `from`.
std::vector<double> transfer_log_residuals(const std::vector<CollectiveSample>& samples, const InterconnectSpec& target,
                                           const CommCalibration& from);

// Relative error of the calibrated model on each sample (hierarchical groups included).
std::vector<double> comm_errors(const std::vector<CollectiveSample>& samples, const InterconnectSpec& intra,
                                const InterconnectSpec* inter);

}  // namespace sightline
