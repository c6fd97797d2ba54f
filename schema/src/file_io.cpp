#include "nbr/schema/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

}  // namespace

std::string read_regular_file(const std::filesystem::path& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below refuses it.
    const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) fail_errno(path, "cannot open file");
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) fail_errno(path, "cannot stat file");
    if (!S_ISREG(info.st_mode)) fail(path, S_ISDIR(info.st_mode) ? "is a directory" : "is not a regular file");
    std::string bytes;
    bytes.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t got = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail_errno(path, "read error");
        if (got == 0) break;  // the file shrank while being read: keep what is there
        done += static_cast<std::size_t>(got);
    }
    bytes.resize(done);
    return bytes;
}

void write_whole_file(const std::filesystem::path& path, const std::string& bytes) {
    Descriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
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

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

std::filesystem::path make_owned_temp_dir(const std::filesystem::path& parent, const std::string& prefix) {
    std::string pattern = (parent / prefix).string();
    pattern.append(host_name()).append("-").append(std::to_string(getpid())).append("-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) fail_errno(parent, "cannot create a temporary directory");
    return pattern;
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
