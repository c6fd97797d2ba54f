#include "nbr/schema/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace nbr {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
    throw FileError(path.string() + ": " + what);
}

[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what) {
    fail(path, what + ": " + std::strerror(errno));
}

/// Closes a file descriptor on scope exit unless released.
class Descriptor {
public:
    explicit Descriptor(int fd) : fd_(fd) {}
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    Descriptor(Descriptor&& other) noexcept : fd_(other.release()) {}
    Descriptor& operator=(Descriptor&&) = delete;
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

/// Opens a regular file for reading: O_NONBLOCK so that a FIFO cannot wait for a writer; the
/// type check refuses it (and directories and devices) before a byte is read.
Descriptor open_regular(const std::filesystem::path& path, std::uint64_t& size) {
    Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) fail_errno(path, "cannot open file");
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) fail_errno(path, "cannot stat file");
    if (!S_ISREG(info.st_mode)) fail(path, S_ISDIR(info.st_mode) ? "is a directory" : "is not a regular file");
    size = static_cast<std::uint64_t>(info.st_size);
    return fd;
}

/// Reads up to `length` bytes at `offset` (the current position if offset < 0).
std::size_t read_some(const std::filesystem::path& path, int fd, char* out, std::size_t length, off_t offset) {
    std::size_t done = 0;
    while (done < length) {
        const ssize_t got = offset < 0 ? ::read(fd, out + done, length - done)
                                       : ::pread(fd, out + done, length - done, offset + static_cast<off_t>(done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail_errno(path, "read error");
        if (got == 0) break;  // the file ends (or shrank while being read): keep what is there
        done += static_cast<std::size_t>(got);
    }
    return done;
}

}  // namespace

std::string read_regular_file(const std::filesystem::path& path) {
    std::uint64_t size = 0;
    const Descriptor fd = open_regular(path, size);
    std::string bytes;
    bytes.resize(static_cast<std::size_t>(size));
    bytes.resize(read_some(path, fd.get(), bytes.data(), bytes.size(), -1));
    return bytes;
}

RegularFile::RegularFile(const std::filesystem::path& path) : path_(path) {
    fd_ = open_regular(path, size_).release();
}

RegularFile::~RegularFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::read_at(std::uint64_t offset, std::uint64_t length) const {
    if (offset >= size_) return {};
    length = std::min(length, size_ - offset);  // never allocates more than the file holds
    std::string bytes(static_cast<std::size_t>(length), '\0');
    bytes.resize(read_some(path_, fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset)));
    bytes_read_ += bytes.size();
    return bytes;
}

void create_sized_file(const std::filesystem::path& path, std::uint64_t size) {
    Descriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0) fail_errno(path, "cannot create file");
    if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) fail_errno(path, "cannot set the file's size");
    if (::close(fd.release()) != 0) fail_errno(path, "write failed");
}

void write_file_at(const std::filesystem::path& path, std::uint64_t offset, std::string_view bytes) {
    Descriptor fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) fail_errno(path, "cannot open file for writing");
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t put =
            ::pwrite(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) fail_errno(path, "write failed");
        done += static_cast<std::size_t>(put);
    }
    if (::close(fd.release()) != 0) fail_errno(path, "write failed");
}

void write_whole_file(const std::filesystem::path& path, const std::string& bytes) {
    Descriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0) fail_errno(path, "cannot create file");
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t put = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) fail_errno(path, "write failed");
        done += static_cast<std::size_t>(put);
    }
    if (::close(fd.release()) != 0) fail_errno(path, "write failed");
}

void replace_whole_file(const std::filesystem::path& path, const std::string& bytes) {
    const auto temporary = path.parent_path() /
                           ("." + path.filename().string() + ".tmp-" + host_name() + "-" + std::to_string(::getpid()));
    std::error_code ec;
    try {
        write_whole_file(temporary, bytes);
    } catch (const FileError&) {
        std::filesystem::remove(temporary, ec);
        throw;
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::filesystem::remove(temporary, ec);
        throw FileError(path.string() + ": cannot replace the file: " + why);
    }
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

std::filesystem::path make_owned_temp_dir(const std::filesystem::path& parent, const std::string& prefix) {
    static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static constexpr std::uint64_t kCount = sizeof kLetters - 1;
    static std::atomic<std::uint64_t> made{0};
    const std::string base =
        (parent / prefix).string().append(host_name()).append("-").append(std::to_string(getpid())).append("-");
    for (int attempt = 0; attempt < 100; ++attempt) {
        // Six letters from the clock and a per-process count (splitmix64): names differ between
        // the threads and the attempts of one process; a name taken anyway is tried again.
        std::uint64_t bits = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                             (made.fetch_add(1) * 0x9e3779b97f4a7c15ULL);
        bits = (bits ^ (bits >> 30)) * 0xbf58476d1ce4e5b9ULL;
        bits = (bits ^ (bits >> 27)) * 0x94d049bb133111ebULL;
        std::string name = base;
        for (int i = 0; i < 6; ++i, bits /= kCount) name += kLetters[bits % kCount];
        // mkdir, not mkdtemp: the directory becomes the pattern (or capture) directory, which must
        // get the permissions the user's umask gives, as one made by hand would; mkdtemp's 0700
        // would hide a directory shared with a group from the group.
        if (::mkdir(name.c_str(), 0777) == 0) return name;
        if (errno != EEXIST) fail_errno(parent, "cannot create a temporary directory");
    }
    fail(parent, "cannot create a temporary directory: 100 names taken");
}

namespace internal {

std::string excerpt(std::string_view text, std::size_t max) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    if (text.size() > max) out += "...";
    return out;
}

}  // namespace internal

}  // namespace nbr
