#pragma once
// The algorithms' engine messages are words (Message::payload). Each message kind is a struct
// whose encode() and decode() stand side by side and use these two classes, so that a field
// is written and read in one place and a list always carries its length first.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace nbr::compiler::internal {

/// Writes a message's words in order.
class WordWriter {
public:
    WordWriter& put(std::uint32_t word) {
        words_.push_back(word);
        return *this;
    }
    /// The list's length, then every item as `put_item(writer, item)` writes it.
    template <class Items, class PutItem>
    WordWriter& put_list(const Items& items, PutItem put_item) {
        put(static_cast<std::uint32_t>(items.size()));
        words_.reserve(words_.size() + items.size());  // at least a word per item
        for (const auto& item : items) put_item(*this, item);
        return *this;
    }
    /// A list of plain words: its length, then the words (one copy, no call per word).
    WordWriter& put_words(std::span<const std::uint32_t> words) {
        put(static_cast<std::uint32_t>(words.size()));
        words_.insert(words_.end(), words.begin(), words.end());
        return *this;
    }
    [[nodiscard]] std::vector<std::uint32_t> take() { return std::move(words_); }

private:
    std::vector<std::uint32_t> words_;
};

/// Reads what a WordWriter wrote. Reading past the end, or leaving words unread (finish), is a
/// bug in an algorithm (the engine delivers messages whole), reported as std::logic_error.
class WordReader {
public:
    explicit WordReader(std::span<const std::uint32_t> words) : words_(words) {}
    std::uint32_t get() {
        if (at_ >= words_.size()) throw std::logic_error("engine message: read past its end");
        return words_[at_++];
    }
    /// Reads a list's length, then calls `get_item(reader)` that many times.
    template <class GetItem>
    void get_list(GetItem get_item) {
        const std::uint32_t n = list_length();
        for (std::uint32_t i = 0; i < n; ++i) get_item(*this);
    }
    /// A list put_words wrote, as a view into the message (valid while the message is).
    std::span<const std::uint32_t> get_words() {
        const std::uint32_t n = list_length();
        const auto list = words_.subspan(at_, n);
        at_ += n;
        return list;
    }
    /// The words not read yet.
    [[nodiscard]] std::size_t left() const { return words_.size() - at_; }
    /// Checks that every word was read.
    void finish() const {
        if (at_ != words_.size()) throw std::logic_error("engine message: words left unread");
    }

private:
    /// A list's length, which no list may have beyond the words left (at least one each).
    std::uint32_t list_length() {
        const std::uint32_t n = get();
        if (n > words_.size() - at_) throw std::logic_error("engine message: a list longer than the message");
        return n;
    }

    std::span<const std::uint32_t> words_;
    std::size_t at_ = 0;
};

}  // namespace nbr::compiler::internal
