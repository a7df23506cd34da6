# cmake -DGO_MD2MAN=... -DIN=page.1.md -DOUT=page.1 -DVERSION=x.y.z [-DAS=name]
#       -P render-man.cmake
#
# AS=modsign-extract renders a page that documents several commands once more under the
# name of another one: the title becomes MODSIGN-EXTRACT(1) and that name moves to the front
# of the NAME line ("modsign-strip, modsign-extract - ..." becomes "modsign-extract,
# modsign-strip - ..."), so `man modsign-extract` needs no .so link.
#
# The pages start with the title line "% NAME(1) modsign VERSION | modsign manual", which
# go-md2man 2.0.3 and later turn into .TH NAME 1 "" "modsign VERSION" "modsign manual".
# Older go-md2man (2.0.2, Debian 12) copies the line into .TH as it is; for those the title
# line is rewritten into that .TH argument form first.  VERSION is the project's.
file(READ "${IN}" text)
if(AS)
  string(TOUPPER "${AS}" as_title)
  string(REGEX REPLACE "^% [A-Z0-9-]+\\(" "% ${as_title}(" text "${text}")
  string(REGEX MATCH "\n# NAME\n\n([^\n]*) - " name_line "${text}")
  if(NOT name_line)
    message(FATAL_ERROR "${IN}: no NAME line to render as ${AS}")
  endif()
  string(REPLACE ", " ";" names "${CMAKE_MATCH_1}")
  list(FIND names "${AS}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${IN}: NAME does not list ${AS}")
  endif()
  list(REMOVE_ITEM names "${AS}")
  list(PREPEND names "${AS}")
  list(JOIN names ", " names)
  string(REPLACE "${name_line}" "\n# NAME\n\n${names} - " text "${text}")
endif()
string(REGEX REPLACE "^% ([A-Z0-9-]+)\\(([0-9])\\) modsign [0-9.]+ \\| ([^\n]*)"
       "% \\1(\\2) modsign ${VERSION} | \\3" text "${text}")
get_filename_component(outdir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${outdir}")
set(tmp "${OUT}.md")
file(WRITE "${tmp}" "${text}")
execute_process(COMMAND "${GO_MD2MAN}" -in "${tmp}" -out "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "go-md2man failed on ${IN}")
endif()
file(STRINGS "${OUT}" th REGEX "^\\.TH " LIMIT_COUNT 1)
if(th MATCHES "^\\.TH [A-Z0-9-]+\\([0-9]\\)")
  string(REGEX REPLACE "^% ([A-Z0-9-]+)\\(([0-9])\\) ([^|\n]*[^ |\n]) \\| ([^\n]*)"
         "% \\1 \\2 \"\" \"\\3\" \"\\4\"" text "${text}")
  file(WRITE "${tmp}" "${text}")
  execute_process(COMMAND "${GO_MD2MAN}" -in "${tmp}" -out "${OUT}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "go-md2man failed on ${IN}")
  endif()
endif()
file(REMOVE "${tmp}")
