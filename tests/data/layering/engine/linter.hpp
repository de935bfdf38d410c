#pragma once
// An engine header including core: allowed, the engine is above core.
#include "core/value.hpp"
