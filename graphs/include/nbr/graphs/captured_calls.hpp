#pragma once
// The neighborhood collectives an application called on a captured communicator: what
// libnbr-capture writes into the capture directory (calls.txt, docs/format.md) when the
// communicator is freed or MPI is finalized, and what `nbrc compile --algo auto` reads to
// judge the v-variants at the sizes the application used.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nbr {

/// @brief File name inside a capture directory.
inline constexpr const char* kCaptureCallsFile = "calls.txt";

/// @brief Newest calls.txt format this build reads and writes.
inline constexpr std::uint32_t kCapturedCallsFormat = 1;

/// @brief The four shapes of neighborhood collective (blocking, nonblocking and persistent
/// calls of one shape count together).
enum class CallKind : std::uint8_t { allgather, alltoall, allgatherv, alltoallv };
inline constexpr std::size_t kCallKinds = 4;

/// @brief The file's name of a kind ("allgatherv").
[[nodiscard]] std::string_view to_string(CallKind kind);

/// @brief What the ranks of one communicator called, over all its ranks. Block sizes are in
/// bytes (count × type size of the send side; for allgatherv a rank's one send block). The
/// mean of a call is a rank's bytes over its out-edges in that call (ranks without out-edges
/// have none); persistent requests count once, at init.
struct CallStats {
    std::uint64_t calls = 0;      ///< calls per rank (every rank makes each collective call)
    std::uint64_t block_min = 0;  ///< smallest block on any edge
    std::uint64_t block_max = 0;  ///< largest block on any edge
    std::uint64_t mean_min = 0;   ///< smallest mean bytes per edge of a call, rounded down
    std::uint64_t mean_max = 0;   ///< largest mean bytes per edge of a call, rounded up
    std::uint64_t edges = 0;      ///< blocks sent, all ranks and calls
    std::uint64_t bytes = 0;      ///< bytes sent, all ranks and calls
    friend bool operator==(const CallStats&, const CallStats&) = default;
};

/// @brief Per kind, indexed by CallKind.
struct CapturedCalls {
    std::array<CallStats, kCallKinds> kinds{};
    [[nodiscard]] const CallStats& operator[](CallKind k) const { return kinds[static_cast<std::size_t>(k)]; }
    [[nodiscard]] CallStats& operator[](CallKind k) { return kinds[static_cast<std::size_t>(k)]; }

    /// @brief The range of mean bytes per edge over the v-calls (allgatherv and alltoallv) that
    /// moved any bytes, or nothing if there were none: what `--v-bytes` states by hand.
    [[nodiscard]] std::optional<std::pair<std::uint64_t, std::uint64_t>> variable_bytes() const;
    friend bool operator==(const CapturedCalls&, const CapturedCalls&) = default;
};

/// @brief calls.txt's text: a format line, then one line per kind (docs/format.md).
[[nodiscard]] std::string format_captured_calls(const CapturedCalls& calls);

/// @brief Parses calls.txt. @throws InputError naming `source` and line: a missing or newer
/// format line, an unknown kind or field, a kind listed twice or not at all, a bad number,
/// minima above maxima.
[[nodiscard]] CapturedCalls parse_captured_calls(std::string_view text, const std::string& source);

/// @brief The calls.txt of a capture directory, if it has one (a capture whose communicator
/// was never freed before the application stopped has none). @throws InputError.
[[nodiscard]] std::optional<CapturedCalls> read_captured_calls(const std::filesystem::path& capture_dir);

/// @brief Writes calls.txt into a capture directory, complete or not at all (a temporary file
/// renamed into place). @throws FileError naming the file.
void write_captured_calls(const std::filesystem::path& capture_dir, const CapturedCalls& calls);

}  // namespace nbr
