// modsign's own: umbrella for compressed modules: module/decompress.hpp (kernel/module/decompress.c) and
// module/compress.hpp (recompression)
#pragma once

#include "module/compress.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"
