// Fuzz target: wisdom files, and `nbrc inspect --wisdom`'s view of one beside a directory.
//
// Input: a 2-byte little-endian manifest length, the manifest bytes, then the wisdom file's
// bytes. The wisdom either parses or throws PatternError; what parses is written out and read
// back unchanged, and is shown beside the manifest (when that parses) as `nbrc inspect` shows
// it, once as given and once with every entry made to match the manifest's compile id, so that
// the shapes meet the manifest's candidates and predictions.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "nbr/compiler/inspect.hpp"
#include "nbr/schema/pattern_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::size_t length = std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8), size - 2);
    const std::string manifest_bytes(reinterpret_cast<const char*>(data + 2), length);
    const std::string wisdom_bytes(reinterpret_cast<const char*>(data + 2 + length), size - 2 - length);
    nbr::schema::Wisdom wisdom;
    try {
        wisdom = nbr::parse_wisdom(wisdom_bytes, "fuzz/wisdom.pb");
    } catch (const nbr::PatternError&) {
        return 0;
    }
    const std::string written = wisdom.SerializeAsString();
    if (nbr::parse_wisdom(written, "fuzz/written.pb").SerializeAsString() != written) std::abort();
    nbr::schema::Manifest manifest;
    try {
        manifest = nbr::parse_manifest(manifest_bytes, "fuzz/manifest.pb");
    } catch (const nbr::PatternError&) {
        return 0;
    }
    (void)nbr::compiler::format_wisdom(manifest, wisdom);
    for (auto& entry : *wisdom.mutable_entries()) entry.set_compile_id(manifest.compile_id());
    (void)nbr::compiler::format_wisdom(manifest, wisdom);
    return 0;
}
