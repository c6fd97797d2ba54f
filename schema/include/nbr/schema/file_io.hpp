#pragma once
// Whole-file reads and writes with errors that name the file and the system's reason.

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nbr {

/// @brief A file could not be read or written; what() is "PATH: reason" (the system's words,
/// e.g. "Permission denied" or "No space left on device").
class FileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// @brief Reads a whole regular file. Anything else (a directory, a FIFO, a device such as
/// /dev/zero) is refused before a byte is read, so a wrong path cannot block or exhaust memory.
/// @throws FileError naming the file.
[[nodiscard]] std::string read_regular_file(const std::filesystem::path& path);

/// @brief A regular file open for reading at offsets (pread), for readers that take a few
/// pieces of a large file. Opening refuses what read_regular_file refuses.
class RegularFile {
public:
    /// @throws FileError naming the file.
    explicit RegularFile(const std::filesystem::path& path);
    RegularFile(const RegularFile&) = delete;
    RegularFile& operator=(const RegularFile&) = delete;
    ~RegularFile();
    /// @brief The file's size when it was opened.
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    /// @brief Up to `length` bytes from `offset`: fewer only where the file ends.
    /// @throws FileError naming the file.
    [[nodiscard]] std::string read_at(std::uint64_t offset, std::uint64_t length) const;
    /// @brief Bytes returned by read_at so far.
    [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }

private:
    std::filesystem::path path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    mutable std::uint64_t bytes_read_ = 0;
};

/// @brief Creates or truncates a file and sets its size to `size` bytes (zeros), for writers
/// that fill it piecewise with write_file_at. @throws FileError naming the file.
void create_sized_file(const std::filesystem::path& path, std::uint64_t size);

/// @brief Writes `bytes` at `offset` of an existing file (pwrite), checking every write and the
/// close. Processes that write disjoint ranges may do so concurrently. @throws FileError.
void write_file_at(const std::filesystem::path& path, std::uint64_t offset, std::string_view bytes);

/// @brief Creates or truncates a file and writes `bytes` to it, checking every write and the
/// close (a full disk shows at either). @throws FileError naming the file.
void write_whole_file(const std::filesystem::path& path, const std::string& bytes);

/// @brief Replaces (or creates) a file with `bytes` as a whole: written to a hidden temporary
/// file beside it, `.NAME.tmp-HOST-PID`, which is renamed over it when complete, so a reader
/// sees the old file or the new one, never a part, and a killed writer leaves only the
/// temporary file. @throws FileError naming the file (the temporary file removed).
void replace_whole_file(const std::filesystem::path& path, const std::string& bytes);

/// @brief This host's name ("unknown" if the system does not say).
[[nodiscard]] std::string host_name();

/// @brief Creates a new directory `parent`/`prefix`HOST-PID-XXXXXX (six random letters or
/// digits) for files that are renamed into place when complete, with the permissions the umask
/// gives (as `mkdir`; not mkdtemp's 0700); the name tells which process of which host owns it,
/// so a leftover of a killed process can be recognized. @throws FileError naming `parent`.
[[nodiscard]] std::filesystem::path make_owned_temp_dir(const std::filesystem::path& parent, const std::string& prefix);

namespace internal {

/// @brief File content quoted in an error message: bytes that are not printable ASCII become
/// \xNN, and the quote stops after `max` bytes of input ("..." marks the cut), so a binary or
/// huge line cannot flood a terminal or a log.
[[nodiscard]] std::string excerpt(std::string_view text, std::size_t max = 40);

}  // namespace internal

}  // namespace nbr
