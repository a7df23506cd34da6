// modsign — result and error types shared by every layer: the public ones
// (include/modsign/result.hpp).
#pragma once

#include "modsign/result.hpp"
