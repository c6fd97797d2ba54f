#pragma once
// Line-oriented text input shared by the topology and placement readers.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
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

/// @brief The line of `text` that starts at `pos` (without its "\n" or "\r\n"), moving `pos`
/// past it; false at the end of the text.
inline bool cut_line(std::string_view text, std::size_t& pos, std::string_view& line, bool& ends_with_newline) {
    if (pos >= text.size()) return false;
    const auto end = text.find('\n', pos);
    const auto stop = end == std::string_view::npos ? text.size() : end;
    line = text.substr(pos, stop - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ends_with_newline = end != std::string_view::npos;
    pos = stop + 1;
    return true;
}

/// @brief Splits a buffer into lines, tracking 1-based line numbers.
class LineReader {
public:
    explicit LineReader(std::string_view text) : text_(text) {}
    bool next(std::string_view& line) {
        if (!cut_line(text_, pos_, line, ends_with_newline_)) return false;
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

/// @brief The lines of a file read in blocks, with LineReader's interface: the file is never
/// held whole (a line longer than a block grows the buffer to hold it).
class FileLineReader {
public:
    explicit FileLineReader(const std::string& path) : file_(open(path)) {}
    bool next(std::string_view& line) {
        while (buffer_.find('\n', pos_) == std::string::npos && offset_ < file_.size()) refill();
        if (!cut_line(buffer_, pos_, line, ends_with_newline_)) return false;
        ++number_;
        return true;
    }
    [[nodiscard]] std::size_t number() const { return number_; }
    [[nodiscard]] bool ends_with_newline() const { return ends_with_newline_; }
    /// @brief Bytes after the current line.
    [[nodiscard]] std::uint64_t remaining() const {
        return (pos_ >= buffer_.size() ? 0 : buffer_.size() - pos_) + (file_.size() - offset_);
    }

private:
    static constexpr std::uint64_t kBlock = std::uint64_t{1} << 22;

    static RegularFile open(const std::string& path) {
        try {
            return RegularFile(path);
        } catch (const FileError& error) {
            throw InputError(error.what());
        }
    }
    /// Drops the consumed lines and appends the next block.
    void refill() {
        buffer_.erase(0, std::min(pos_, buffer_.size()));
        pos_ = 0;
        try {
            const auto block = file_.read_at(offset_, kBlock);
            if (block.empty()) {
                offset_ = file_.size();  // the file shrank: end here
                return;
            }
            offset_ += block.size();
            buffer_ += block;
        } catch (const FileError& error) {
            throw InputError(error.what());
        }
    }

    RegularFile file_;
    std::string buffer_;
    std::size_t pos_ = 0;
    std::uint64_t offset_ = 0;
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
