#include "nbr/simulator/sizes.hpp"

#include <map>
#include <sstream>
#include <stdexcept>

namespace nbr::simulator {

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
    static const std::map<std::string, unsigned> shifts{{"", 0}, {"K", 10}, {"M", 20}, {"G", 30}};
    std::vector<std::uint64_t> sizes;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        std::size_t used = 0;
        unsigned long long value = 0;
        try {
            value = std::stoull(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        const auto shift = shifts.find(item.substr(used));
        if (used == 0 || item[0] == '-' || shift == shifts.end() || value > (~0ULL >> shift->second)) {
            throw std::invalid_argument("'" + item + "' is not a size (e.g. 4, 1K, 4M)");
        }
        sizes.push_back(value << shift->second);
    }
    if (sizes.empty()) throw std::invalid_argument("no sizes given");
    return sizes;
}

std::vector<std::uint64_t> parse_sizes_up_to(const std::string& text, std::uint64_t max) {
    auto sizes = parse_sizes(text);
    for (const auto b : sizes) {
        if (b == 0 || b > max) {
            const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
            std::size_t unit = 0;
            std::uint64_t shown = max;
            while (shown >= 1024 && shown % 1024 == 0 && unit + 1 < std::size(units)) {
                shown /= 1024;
                ++unit;
            }
            throw std::invalid_argument("sizes must lie in 1 B .. " + std::to_string(shown) + " " + units[unit]);
        }
    }
    return sizes;
}

}  // namespace nbr::simulator
