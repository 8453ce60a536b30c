/* config.h - run configuration from pmubench.cfg and UEFI load options (key=value; options win). */
#ifndef PMB_CONFIG_H
#define PMB_CONFIG_H

#include "kernel/klib.h"
#include "kernel/json.h"

enum cfg_profile { PROFILE_AUTO, PROFILE_QUICK, PROFILE_FULL };
enum cfg_finish { FINISH_SHUTDOWN, FINISH_REBOOT, FINISH_HALT };
enum cfg_turbo { CFG_TURBO_LEAVE, CFG_TURBO_OFF }; /* turbo=: leave it as the firmware set it, or switch it off */
/* samples=: auto (minimal under QEMU TCG, else normal), minimal (the minimum everywhere), normal (as on hardware) */
enum cfg_samples { CFG_SAMPLES_AUTO, CFG_SAMPLES_MINIMAL, CFG_SAMPLES_NORMAL };

#define CFG_SERIAL_AUTO (-1) /* SPCR if the firmware has one, else COM1 (0x3F8) */
#define CFG_SERIAL_NONE 0

#define CFG_LINE_MAX 255 /* longest pmubench.cfg line, excluding the line end */
/* Largest pmubench.cfg, in bytes: the one limit of the image (boot/ reads at most this much, kernel/boot_info.h),
 * the hosted runner's --cfg and the snippet writer (scripts/pmb/snippet.py CFG_FILE_MAX). It holds the largest
 * file `pmubench snippet --print-config` writes: 16 snippets of 2048 code and 2048 init bytes, 64 bytes per hex line,
 * with their comments and keys (about 220 KiB). docs/config.md, "pmubench.cfg syntax". */
#define CFG_FILE_MAX (256u * 1024u)
#define CFG_KEY_COUNT_ 18 /* = CFG_KEY_COUNT below (struct config needs it first) */

struct config {
    enum cfg_profile profile;
    int serial_port; /* CFG_SERIAL_AUTO, CFG_SERIAL_NONE, else an I/O port */
    uint32_t baud;
    enum cfg_finish on_finish;
    char bench[256];      /* comma list of [a-z0-9_]+, default "all" */
    uint64_t max_bytes;   /* 0 = no cap */
    bool trace_msr;
    char pmu_assume[16];  /* "" or nhm|wsm|amd_fam10h|amd_fam15h|netburst */
    char events[512];     /* free text, validated by the PMU code */
    bool acpi_dump;
    uint32_t max_cpus;    /* 0 = all */
    uint64_t seed;
    char serialize[8];    /* lfence|cpuid */
    uint32_t time_budget_ms; /* per point, 0 = profile default */
    char crash_test[8];   /* none|ud|gp|pf|nested|ap_ud|ap_hang: fault on purpose (tests) */
    enum cfg_turbo turbo; /* leave|off, applied on every CPU (kernel/turbo.c) */
    uint64_t sweep_top;   /* the latency sweep's largest working set; 0 = the rule from the LLC */
    enum cfg_samples samples; /* auto|minimal|normal: minimal samples (docs/measurement.md "Minimal mode") */
    uint32_t set_mask;    /* bit CFG_SET(key) per key given explicitly */
    /* Where each key given explicitly was last set, for errors found after parsing (config_blame): the origin
     * the parser was given (it must outlive the config: a literal, argv) and the line (0: load options). */
    const char *key_origin[CFG_KEY_COUNT_];
    unsigned key_line[CFG_KEY_COUNT_];
    /* The config file's sections ("[snippet NAME]" ...: docs/config.md, "Sections"): the text from the first
     * line starting with '[' to the end of the file, parsed by their owners (bench/snippet_cfg.h), not here.
     * It points into the text config_parse_file was given, which must outlive the run; NULL when none. */
    const char *sections;
    size_t sections_len;
    unsigned sections_line; /* line number of the first section line, for error messages */
};

/* Key indices, in table order (also the set_mask bits). */
enum cfg_key_id {
    CFG_KEY_PROFILE,
    CFG_KEY_SERIAL,
    CFG_KEY_BAUD,
    CFG_KEY_ON_FINISH,
    CFG_KEY_BENCH,
    CFG_KEY_MAX_BYTES,
    CFG_KEY_TRACE_MSR,
    CFG_KEY_PMU_ASSUME,
    CFG_KEY_EVENTS,
    CFG_KEY_ACPI_DUMP,
    CFG_KEY_MAX_CPUS,
    CFG_KEY_SEED,
    CFG_KEY_SERIALIZE,
    CFG_KEY_TIME_BUDGET_MS,
    CFG_KEY_CRASH_TEST,
    CFG_KEY_TURBO,
    CFG_KEY_SWEEP_TOP,
    CFG_KEY_SAMPLES,
    CFG_KEY_COUNT
};
#define CFG_SET(id) (1u << (id))
_Static_assert(CFG_KEY_COUNT == CFG_KEY_COUNT_, "CFG_KEY_COUNT_ follows the key list");

void config_defaults(struct config *c);

/*
 * Parses pmubench.cfg text: `key = value` lines, '#' comments (a whole line, or after whitespace),
 * LF/CRLF/CR line ends, an optional UTF-8 BOM, optional "double quotes" around a value; a repeated
 * key: the last one wins. A line whose first non-blank character is '[' starts the sections: parsing stops
 * there and c->sections keeps the rest of the text (unparsed). On error returns -1, leaves *c untouched and writes one line
 * "<origin>:<line>: <what>" to err; on success returns 0.
 */
int config_parse_file(struct config *c, const char *text, size_t len, const char *origin, char *err,
                      size_t errlen);

/*
 * Parses load options: whitespace-separated key=value tokens, "double quotes" anywhere in a token
 * to keep spaces. A first token without '=' is the image path and is skipped. Same error
 * convention ("<origin>: <what>").
 */
int config_parse_args(struct config *c, const char *args, const char *origin, char *err,
                      size_t errlen);

/* The message conventions, for the parsers of the file's sections too (bench/snippet_cfg.c):
 * user text quoted into a message: at most 40 characters, non-printables as '?', so it stays one line; */
struct cfg_quoted {
    char s[48];
};
struct cfg_quoted config_quote(const char *s, size_t n);
/* and one error line "<origin>:<line>: <what>" ("<origin>: <what>" when line is 0) in err. Returns -1. */
int config_verror(const char *origin, unsigned line, char *err, size_t errlen, const char *fmt, va_list ap);

/* For a value that parsed but is refused later (bench= naming an unknown benchmark, a crash_test the program
 * cannot raise): puts "<origin>:<line>: " (or "<origin>: ") of where key id was set in front of the message in
 * err, so every config error names its origin and line. Returns -1. */
int config_blame(const struct config *c, enum cfg_key_id id, char *err, size_t errlen);

/* The samples rule (docs/measurement.md "Minimal mode"): whether the run takes minimal samples, given samples= and
 * whether it runs under an emulator whose timing means nothing (QEMU TCG; the hosted runner passes false), and
 * why in *why: "auto: ..." or "config: samples=...". *why is "" where there is nothing to say (auto, not emulated). */
bool config_minimal_samples(enum cfg_samples samples, bool emulated, const char **why);

/* Writes an object with every key's effective value, in the syntax the parser accepts. */
void config_to_json(const struct config *c, struct json *j);

/* Key i's one-line help, with its name and accepted values; NULL once i >= CFG_KEY_COUNT. */
const char *config_key_help(size_t i, const char **name, const char **values);
/* Key i's default, as the text config_defaults parses; NULL once i >= CFG_KEY_COUNT. */
const char *config_key_default(size_t i);

#endif
