/* crc32.h - IEEE 802.3 CRC-32 as zlib's crc32(): checksums the JSON record stream. */
#ifndef PMB_CRC32_H
#define PMB_CRC32_H

#include "kernel/klib.h"

/*
 * Start with crc = 0 and feed the bytes in any number of pieces:
 * crc32_update(crc32_update(0, a, n), b, m) == crc32_update(0, a || b, n + m).
 * crc32_update(0, "123456789", 9) == 0xCBF43926 (the standard check value).
 */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);

#endif
