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

}  // namespace nbr::simulator
