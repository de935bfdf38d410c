#pragma once
// The files under schemas/, compiled into the binary (see cmake/EmbedFiles.cmake) so the linter needs
// nothing beside itself at run time.
#include <string_view>
#include <utility>
#include <vector>

namespace mbl {

// (path relative to schemas/, contents), sorted by path.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_schema_files();

}  // namespace mbl
