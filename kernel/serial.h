/* serial.h - 16550 UART driver (I/O port or MMIO) with bounded waits: never hangs without a UART. */
#ifndef PMB_SERIAL_H
#define PMB_SERIAL_H

#include "kernel/klib.h"

struct serial_port {
    bool mmio;
    uint64_t base;      /* I/O port or MMIO address */
    uint32_t stride;    /* bytes between registers (MMIO: 1 or 4) */
    uint32_t baud;
    bool present;       /* a UART answered the scratch-register probe */
    uint32_t timeouts;  /* transmit waits that gave up */
    bool dead;          /* too many timeouts: stop waiting at all */
};

/* Probe and program 8N1 at `baud`. Returns true when a UART answered. */
bool serial_init(struct serial_port *s, bool mmio, uint64_t base, uint32_t stride, uint32_t baud);
void serial_putc(struct serial_port *s, char c);
void serial_write(struct serial_port *s, const char *buf, size_t len);
/* A NUL-terminated string, each "\n" sent as "\r\n" (the boot stages' lines before the kernel's output). */
void serial_puts(struct serial_port *s, const char *str);

#endif
