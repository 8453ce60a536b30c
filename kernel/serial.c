/* serial.c - 16550 UART: probe via the scratch register, 8N1, polled transmit with a bounded wait. */
#include "kernel/serial.h"
#include "kernel/io.h"

/* 16550 register offsets (in units of stride) and bits. */
#define UART_THR 0
#define UART_DLL 0
#define UART_IER 1
#define UART_DLM 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_SCR 7
#define LCR_8N1 0x03
#define LCR_DLAB 0x80
#define LSR_THRE 0x20
#define FCR_ENABLE_CLEAR 0x07
#define MCR_DTR_RTS_OUT2 0x0B

/* A character at 50 baud takes 200 ms; at 115200 ~87 us. One inb costs ~1 us on real hardware (less
 * under emulation), so this bounds a wait to well under a second without needing a calibrated clock. */
#define TX_SPIN_LIMIT 200000u
#define DEAD_AFTER_TIMEOUTS 16u

static uint8_t reg_read(struct serial_port *s, unsigned r)
{
    if (s->mmio)
        return s->stride == 4 ? (uint8_t)mmio_read32(s->base + r * 4) : *(volatile uint8_t *)(uintptr_t)(s->base + r);
    return inb((uint16_t)(s->base + r));
}

static void reg_write(struct serial_port *s, unsigned r, uint8_t v)
{
    if (s->mmio) {
        if (s->stride == 4)
            mmio_write32(s->base + r * 4, v);
        else
            *(volatile uint8_t *)(uintptr_t)(s->base + r) = v;
        return;
    }
    outb((uint16_t)(s->base + r), v);
}

bool serial_init(struct serial_port *s, bool mmio, uint64_t base, uint32_t stride, uint32_t baud)
{
    memset(s, 0, sizeof(*s));
    s->mmio = mmio;
    s->base = base;
    s->stride = stride ? stride : 1;
    s->baud = baud ? baud : 115200;
    if (base == 0)
        return false;
    /* Scratch register round trip: absent ports float to 0xFF on ISA. */
    reg_write(s, UART_SCR, 0x5A);
    if (reg_read(s, UART_SCR) != 0x5A)
        return false;
    reg_write(s, UART_SCR, 0xA5);
    if (reg_read(s, UART_SCR) != 0xA5)
        return false;
    uint32_t div = 115200 / s->baud;
    if (div == 0)
        div = 1;
    reg_write(s, UART_IER, 0x00); /* polled: no UART interrupts */
    reg_write(s, UART_LCR, LCR_DLAB);
    reg_write(s, UART_DLL, div & 0xFF);
    reg_write(s, UART_DLM, (div >> 8) & 0xFF);
    reg_write(s, UART_LCR, LCR_8N1);
    reg_write(s, UART_FCR, FCR_ENABLE_CLEAR);
    reg_write(s, UART_MCR, MCR_DTR_RTS_OUT2);
    s->present = true;
    return true;
}

void serial_putc(struct serial_port *s, char c)
{
    if (!s->present || s->dead)
        return;
    uint32_t spins = 0;
    while (!(reg_read(s, UART_LSR) & LSR_THRE)) {
        if (++spins >= TX_SPIN_LIMIT) {
            if (++s->timeouts >= DEAD_AFTER_TIMEOUTS)
                s->dead = true;
            return;
        }
        cpu_pause();
    }
    reg_write(s, UART_THR, (uint8_t)c);
}

void serial_write(struct serial_port *s, const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        serial_putc(s, buf[i]);
}

void serial_puts(struct serial_port *s, const char *str)
{
    for (; *str; str++) {
        if (*str == '\n')
            serial_putc(s, '\r');
        serial_putc(s, *str);
    }
}
