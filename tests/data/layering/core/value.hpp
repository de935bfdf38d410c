#pragma once
// A core header that reaches up into the engine twice: by its root path and by a relative path.
#include <string>

#include "../engine/linter.hpp"
#include "engine/linter.hpp"
