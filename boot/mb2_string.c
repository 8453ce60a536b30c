/* mb2_string.c - memcpy and memset for the Multiboot2 ELF. The UEFI image takes them from gnu-efi's libefi
 * (kernel/klib.c says so); this image links no gnu-efi library, so it carries the same plain loops. gcc may emit
 * calls to both itself, hence -fno-builtin -fno-tree-loop-distribute-patterns for this file (Makefile). */
#include "kernel/klib.h"

void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}
