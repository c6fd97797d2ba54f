#pragma once

// Where tests put scratch files (no other dependency, for every test target).
#include <cstdlib>
#include <filesystem>

namespace nbr::test {

/// @brief $NBR_TEST_TMPDIR (the build tree's test-tmp, set by CTest) if set, else the system's
/// temporary directory: what a test that aborts leaves behind stays in the build tree.
inline std::filesystem::path temp_root() {
    if (const char* dir = std::getenv("NBR_TEST_TMPDIR"); dir != nullptr && *dir != '\0') return dir;
    return std::filesystem::temp_directory_path();
}

}  // namespace nbr::test
