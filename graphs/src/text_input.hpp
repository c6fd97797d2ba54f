#pragma once
// Line-oriented text input shared by the topology and placement readers.

#include <cctype>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "nbr/graphs/topology.hpp"
#include "nbr/schema/file_io.hpp"

namespace nbr::internal {

/// @brief Reads a whole file. @throws InputError naming the file.
inline std::string load(const std::string& path) {
    try {
        return read_regular_file(path);
    } catch (const FileError& error) {
        throw InputError(error.what());
    }
}

/// @brief Splits a buffer into lines, tracking 1-based line numbers.
class LineReader {
public:
    explicit LineReader(std::string_view text) : text_(text) {}
    bool next(std::string_view& line) {
        if (pos_ >= text_.size()) return false;
        const auto end = text_.find('\n', pos_);
        const auto stop = end == std::string_view::npos ? text_.size() : end;
        line = text_.substr(pos_, stop - pos_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ends_with_newline_ = end != std::string_view::npos;
        pos_ = stop + 1;
        ++number_;
        return true;
    }
    [[nodiscard]] std::size_t number() const { return number_; }
    [[nodiscard]] bool ends_with_newline() const { return ends_with_newline_; }
    /// @brief Bytes after the current line.
    [[nodiscard]] std::size_t remaining() const { return pos_ >= text_.size() ? 0 : text_.size() - pos_; }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t number_ = 0;
    bool ends_with_newline_ = true;
};

/// @brief Splits a line into whitespace-separated fields.
inline std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        const std::size_t start = i;
        while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        if (i > start) fields.push_back(line.substr(start, i - start));
    }
    return fields;
}

template <class T>
bool parse_unsigned(std::string_view field, T& value) {
    const auto* first = field.data();
    const auto* last = field.data() + field.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    return ec == std::errc() && ptr == last;
}

/// @brief "path:line: " prefix of an error message.
inline std::string where(const std::string& path, std::size_t line) {
    return path + ":" + std::to_string(line) + ": ";
}

}  // namespace nbr::internal
