// modsign's own: umbrella for module/signing.hpp (kernel/module/signing.c module_sig_check)
#pragma once

#include "module/signing.hpp"
