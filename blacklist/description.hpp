// modsign's own: umbrella for blacklist/blacklist.hpp (certs/blacklist.c)
#pragma once

#include "blacklist/blacklist.hpp"
#include "cms/kernel.hpp"
