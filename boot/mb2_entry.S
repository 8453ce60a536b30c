/* mb2_entry.S - the BIOS stage's first instructions: the Multiboot2 header, and the 32-bit entry a Multiboot2
 * loader (GRUB) jumps to, which switches to long mode and calls mb2_main (boot/mb2_main.c).
 *
 * Machine state on entry (Multiboot2 specification 2.0, 3.3): 32-bit protected mode, flat 4 GiB CS/DS/ES/SS,
 * paging off, A20 on, interrupts off, EAX = 0x36D76289, EBX = physical address of the boot information.
 * ESP, GDTR and IDTR are undefined, so nothing is pushed before our own stack is set.
 *
 * Long mode (SDM Vol. 3A 10.8.5): CR4.PAE, CR3 = a PML4 identity-mapping the first 4 GiB with 2 MiB pages,
 * EFER.LME, then CR0.PG; a far jump through a GDT with a 64-bit code descriptor completes the switch. SSE is
 * enabled here (CR0.MP, CR4.OSFXSR/OSXMMEXCPT) because the C code is compiled without -mno-sse and UEFI, the
 * other way in, leaves it on; kernel_main's fpu_enable sets the rest. Only this image links this file. */

#define MB2_HEADER_MAGIC 0xE85250D6
#define MB2_ARCH_I386 0 /* 32-bit protected mode i386 */
#define MB2_LOADER_MAGIC 0x36D76289

#define CR0_MP (1 << 1)
#define CR0_EM (1 << 2)
#define CR0_TS (1 << 3)
#define CR0_PG (1 << 31)
#define CR4_PAE (1 << 5)
#define CR4_OSFXSR (1 << 9)
#define CR4_OSXMMEXCPT (1 << 10)
#define MSR_IA32_EFER 0xC0000080
#define IA32_EFER_LME (1 << 8)
#define PTE_P_RW 0x3
#define PDE_PS 0x80 /* 2 MiB page */

#define BOOT_STACK_BYTES 16384

/* ---- the header (3.1): within the image's first 32 KiB, 8-byte aligned; mb2.ld puts it first ---------------- */
    .section .mb2_header, "a"
    .balign 8
mb2_header:
    .long MB2_HEADER_MAGIC
    .long MB2_ARCH_I386
    .long mb2_header_end - mb2_header
    .long 0x100000000 - (MB2_HEADER_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    /* end tag: type 0, flags 0, size 8. No address tag: GRUB loads the ELF by its program headers. */
    .short 0
    .short 0
    .long 8
mb2_header_end:

/* ---- 32-bit entry -------------------------------------------------------------------------------------------- */
    .section .text.mb2_entry, "ax"
    .code32
    .globl mb2_entry
mb2_entry:
    cli
    cld
    movl %eax, %ebp                 /* loader magic: checked in C, where it can be reported */
    /* EBX = boot information: kept in EBX throughout */
    movl $mb2_boot_stack_top, %esp
    rdtsc
    movl %eax, mb2_entry_tsc
    movl %edx, mb2_entry_tsc + 4

    /* Zero .bss (page tables, stack, boot_info): GRUB zeroes it for an ELF, another loader may not. */
    movl $__mb2_bss_start, %edi
    movl $__mb2_bss_end, %ecx
    subl %edi, %ecx
    xorl %eax, %eax
    rep stosb

    /* PML4[0] -> PDPT; PDPT[0..3] -> four page directories; PD[j] = j * 2 MiB. */
    movl $(mb2_pdpt + PTE_P_RW), mb2_pml4
    movl $mb2_pdpt, %edi
    movl $(mb2_pd + PTE_P_RW), %eax
    movl $4, %ecx
1:  movl %eax, (%edi)
    addl $4096, %eax
    addl $8, %edi
    loop 1b
    movl $mb2_pd, %edi
    xorl %ecx, %ecx
2:  movl %ecx, %eax
    shll $21, %eax
    orl $(PDE_PS + PTE_P_RW), %eax
    movl %eax, (%edi)
    movl %ecx, %edx
    shrl $11, %edx
    movl %edx, 4(%edi)
    addl $8, %edi
    incl %ecx
    cmpl $2048, %ecx
    jb 2b

    movl %cr4, %eax
    orl $(CR4_PAE + CR4_OSFXSR + CR4_OSXMMEXCPT), %eax
    movl %eax, %cr4
    movl $mb2_pml4, %eax
    movl %eax, %cr3
    movl $MSR_IA32_EFER, %ecx
    rdmsr
    orl $IA32_EFER_LME, %eax
    wrmsr
    movl %cr0, %eax
    andl $~(CR0_EM + CR0_TS), %eax
    orl $(CR0_PG + CR0_MP), %eax
    movl %eax, %cr0
    lgdt mb2_gdt_desc
    ljmp $0x08, $mb2_entry64

    .code64
mb2_entry64:
    movl $0x10, %eax
    movl %eax, %ds
    movl %eax, %es
    movl %eax, %ss
    movl %eax, %fs
    movl %eax, %gs
    movl $mb2_boot_stack_top, %esp  /* zero-extends into RSP */
    movl %ebp, %edi                 /* mb2_main(magic, mbi, tsc) */
    movl %ebx, %esi
    movq mb2_entry_tsc(%rip), %rdx
    call mb2_main
3:  cli
    hlt
    jmp 3b

/* ---- data ---------------------------------------------------------------------------------------------------- */
    .section .rodata
    .balign 8
mb2_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF        /* 0x08: 64-bit code, DPL 0 */
    .quad 0x00CF92000000FFFF        /* 0x10: data, 4 GiB flat */
mb2_gdt_end:
mb2_gdt_desc:
    .short mb2_gdt_end - mb2_gdt - 1
    .long mb2_gdt

    .data
    .balign 8
mb2_entry_tsc:
    .quad 0

    .bss
    .balign 4096
mb2_pml4:   .skip 4096
mb2_pdpt:   .skip 4096
mb2_pd:     .skip 4 * 4096
mb2_boot_stack:
    .skip BOOT_STACK_BYTES
mb2_boot_stack_top:

    .section .note.GNU-stack, "", @progbits
