// modsign — the whole public API: #include <modsign/modsign.hpp>, link modsign::modsign
// (CMake: find_package(modsign 0.2 CONFIG)) or `pkg-config --cflags --libs modsign`.
#pragma once

#include "modsign/authenticode.hpp"
#include "modsign/blacklist.hpp"
#include "modsign/dbx.hpp"
#include "modsign/digest.hpp"
#include "modsign/export.hpp"
#include "modsign/ima.hpp"
#include "modsign/kernel_config.hpp"
#include "modsign/kexec.hpp"
#include "modsign/keygen.hpp"
#include "modsign/load_verdict.hpp"
#include "modsign/module.hpp"
#include "modsign/module_image.hpp"
#include "modsign/output.hpp"
#include "modsign/profile.hpp"
#include "modsign/remote_sign.hpp"
#include "modsign/result.hpp"
#include "modsign/sign.hpp"
#include "modsign/trust.hpp"
#include "modsign/verdict.hpp"
#include "modsign/version.hpp"
