// Order statistics the calibration shares (measure.cpp's repetitions, calibrate.cpp's fits).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace nbr::simulator::internal {

/// @brief The upper median of `values` (the element at index n / 2 once sorted; 0 if empty):
/// always one of the values, never an average of two.
inline double median(std::vector<double> values) {
    if (values.empty()) return 0;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

}  // namespace nbr::simulator::internal
