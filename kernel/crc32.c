/* crc32.c - table-driven reflected CRC-32 (polynomial 0xEDB88320, init and final xor ~0). */
#include "kernel/crc32.h"

/* 0xEDB88320 is the bit-reversed IEEE 802.3 polynomial 0x04C11DB7. */
#define CRC32_POLY_REFLECTED 0xEDB88320u

/* One entry per byte value; built at compile time so there is nothing to initialise. */
#define CRC_B(c) (((c) >> 1) ^ (CRC32_POLY_REFLECTED & (0u - ((c) & 1u))))
#define CRC_E(n) CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(CRC_B((uint32_t)(n)))))))))
#define CRC_4(n) CRC_E(n), CRC_E((n) + 1), CRC_E((n) + 2), CRC_E((n) + 3)
#define CRC_16(n) CRC_4(n), CRC_4((n) + 4), CRC_4((n) + 8), CRC_4((n) + 12)
#define CRC_64(n) CRC_16(n), CRC_16((n) + 16), CRC_16((n) + 32), CRC_16((n) + 48)

static const uint32_t crc_table[256] = {CRC_64(0), CRC_64(64), CRC_64(128), CRC_64(192)};

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    crc = ~crc; /* zlib keeps the running value un-inverted between calls */
    while (len--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}
