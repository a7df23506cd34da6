// modsign's own: umbrella for IMA template data and measurement lists
// (security/integrity/ima, Linux 7.2.13; docs/kernel-semantics.md):
//   digest/ima_template_lib  ima_template_lib.c, ima_template.c (template fields, ima_template)
//   digest/ima_fs            ima_fs.c (binary measurement lists)
//   digest/ima_queue         ima_queue.c (PCR replay)
//   digest/ima_modsig        ima_modsig.c (ima_modsig_verify)
#pragma once

#include "cms/kernel.hpp"
#include "digest/ima_fs.hpp"
#include "digest/ima_modsig.hpp"
#include "digest/ima_queue.hpp"
#include "digest/ima_template_lib.hpp"
