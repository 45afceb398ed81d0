# Turn a binary file into a C header with one byte array:
#   cmake -DIN=file -DOUT=header.h -DNAME=symbol -P bin2h.cmake
# Used for the CUDA backend's device-check kernels (a fatbin built by nvcc).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" len)
math(EXPR bytes "${len} / 2")
# 32 bytes a line, then each byte as 0xNN,
string(REGEX REPLACE "([0-9a-f]{64})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by cmake/bin2h.cmake: do not edit. */\n"
  "static const unsigned char ${NAME}[${bytes}] __attribute__((aligned(8))) = {\n"
  "${hex}\n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
