/* run_desc.c - the `run` record's machine description, written the same way by the UEFI image and the hosted runner. */
#include "kernel/run_desc.h"

void run_desc_cpu_json(struct json *j, const struct cpu_info *c)
{
    json_obj_begin(j);
    json_kv_str(j, "vendor", c->vendor_str);
    json_kv_uint(j, "family", c->family);
    json_kv_uint(j, "model", c->model);
    json_kv_uint(j, "stepping", c->stepping);
    json_kv_hex(j, "signature", c->signature);
    json_kv_str(j, "brand", c->brand);
    json_kv_str(j, "uarch", c->uarch);
    json_kv_str(j, "hypervisor", c->hv_vendor);
    json_obj_end(j);
}

void run_desc_caches_json(struct json *j, const struct cpu_info *c)
{
    json_arr_begin(j);
    for (uint32_t i = 0; i < c->n_caches && i < CPU_MAX_CACHES; i++) {
        const struct cpu_cache *k = &c->caches[i];
        json_obj_begin(j);
        json_kv_uint(j, "level", k->level);
        json_kv_str(j, "type", cpu_cache_type_name(k->type));
        json_kv_uint(j, "bytes", k->bytes);
        json_kv_uint(j, "ways", k->ways);
        json_kv_uint(j, "line", k->line);
        json_kv_uint(j, "sets", k->sets);
        json_kv_uint(j, "shared_by", k->shared_by);
        json_obj_end(j);
    }
    json_arr_end(j);
}

void run_desc_json_head(struct json *j, const struct run_desc *d)
{
    json_kv_str(j, "version", d->version);
    json_kv_str(j, "git", d->git);
    if (d->platform) {
        json_kv_str(j, "platform", d->platform);
        json_kv_bool(j, "hosted", true);
        json_kv_str(j, "os", d->os);
    }
    json_key(j, "cpu");
    run_desc_cpu_json(j, d->cpu);
    json_kv_uint(j, "tsc_hz", d->tsc_hz);
    json_kv_str(j, "tsc_method", d->tsc_method);
    if (d->tsc_measured_ref) {
        json_kv_uint(j, "tsc_measured_hz", d->tsc_measured_hz);
        json_kv_str(j, "tsc_measured_ref", d->tsc_measured_ref);
    }
    json_kv_double(j, "tsc_spread", d->tsc_spread);
    json_kv_bool(j, "invariant_tsc", d->invariant_tsc);
    json_kv_double(j, "core_tsc_ratio", d->core_tsc_ratio);
    json_kv_str(j, "core_tsc_method", d->core_tsc_method);
    json_kv_uint(j, "memory_bytes", d->memory_bytes);
    json_kv_uint(j, "cpus", d->cpus);
    if (d->cpus_allowed)
        json_kv_uint(j, "cpus_allowed", d->cpus_allowed);
    if (d->cpus_note) {
        json_kv_uint(j, "cpus_madt", d->cpus_madt);
        json_kv_str(j, "cpus_note", d->cpus_note);
    }
    if (d->max_cpus_note)
        json_kv_str(j, "max_cpus_note", d->max_cpus_note);
    json_kv_uint(j, "numa_nodes", d->numa_nodes);
    json_key(j, "caches");
    run_desc_caches_json(j, d->cpu);
}

void run_desc_json_tail(struct json *j, const struct run_desc *d)
{
    json_kv_str(j, "profile", d->quick ? "quick" : "full");
    json_kv_str(j, "profile_why", d->profile_why);
    json_kv_bool(j, "minimal_samples", d->minimal_samples);
    if (d->minimal_samples || (d->minimal_samples_why && d->minimal_samples_why[0]))
        json_kv_str(j, "minimal_samples_why", d->minimal_samples_why ? d->minimal_samples_why : "");
    json_key(j, "config");
    if (d->cfg_error || !d->cfg) {
        json_obj_begin(j);
        json_kv_str(j, "error", d->cfg_error ? d->cfg_error : "no configuration");
        json_obj_end(j);
    } else {
        config_to_json(d->cfg, j);
    }
}
