// Rank 0's decision for a new topology communicator, as text and back (agreement.hpp).
#include "agreement.hpp"

#include <charconv>

namespace nbr::interpose {

namespace {

void put_field(std::string& text, const std::string& field) {
    text += std::to_string(field.size());
    text += ':';
    text += field;
}

/// The field at `at` (advanced past it), or std::nullopt when the text does not hold one.
std::optional<std::string> get_field(const std::string& text, std::size_t& at) {
    const auto colon = text.find(':', at);
    if (colon == std::string::npos || colon == at) return std::nullopt;
    std::size_t length = 0;
    const char* first = text.data() + at;
    const char* last = text.data() + colon;
    const auto [end, error] = std::from_chars(first, last, length);
    if (error != std::errc() || end != last || length > text.size() - colon - 1) return std::nullopt;
    at = colon + 1 + length;
    return text.substr(colon + 1, length);
}

}  // namespace

std::string encode_agreed(const Agreed& agreed) {
    std::string text;
    put_field(text, agreed.id);
    put_field(text, agreed.cache);
    for (const auto& option : agreed.options) put_field(text, option);
    put_field(text, agreed.dir);
    return text;
}

std::optional<Agreed> decode_agreed(const std::string& text) {
    Agreed agreed;
    std::size_t at = 0;
    const auto read = [&text, &at](std::string& field) {
        auto value = get_field(text, at);
        if (value) field = std::move(*value);
        return value.has_value();
    };
    if (!read(agreed.id) || !read(agreed.cache)) return std::nullopt;
    for (auto& option : agreed.options) {
        if (!read(option)) return std::nullopt;
    }
    if (!read(agreed.dir) || at != text.size()) return std::nullopt;
    return agreed;
}

}  // namespace nbr::interpose
