#pragma once
// Small text and JSON formatting helpers shared by inspect and simulate reports.

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

namespace nbr::common::internal {

/// @brief The items of `range` as text (`project` maps an item to a string) joined by
/// `separator`: {"a", "b"} -> "a, b".
template <class Range, class Project = std::identity>
std::string join(const Range& range, const std::string& separator = ", ", Project project = {}) {
    std::string out;
    bool first = true;
    for (const auto& item : range) {
        if (!first) out += separator;
        out += std::invoke(project, item);
        first = false;
    }
    return out;
}

/// @brief A number as JSON: integers without a fraction, others with 6 significant digits;
/// null for infinity and NaN, which JSON cannot write (a segmented copy's size that auto did
/// not simulate, say).
inline std::string number(double value) {
    if (!std::isfinite(value)) return "null";
    char buffer[64];
    if (std::fabs(value) < 9e15 && value == std::trunc(value)) {
        std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(value));
    } else {
        std::snprintf(buffer, sizeof buffer, "%.6g", value);
    }
    return buffer;
}

/// @brief A JSON string literal.
inline std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buffer[8];
                    std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
                    out += buffer;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

}  // namespace nbr::common::internal
