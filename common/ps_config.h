/*
 * ps_config.h: tunables declared in tables.
 *
 * Each component (client, server) declares one table of ps_config_field_t.
 * The same table feeds defaults, a config file (INI, parsed by inih, one
 * [section] per component), the environment (PSTRIPE_<NAME> upper-cased),
 * explicit "name=value" settings (command line, MPI hints) and a
 * --print-config dump. Later sources override earlier ones in that order.
 *
 * Value syntax: INT "16"; SIZE "4m", "512k", "1g", "4096" (binary units);
 * TIME "30s", "500ms", "2m", "100us" (stored as double seconds); BOOL
 * "yes/no/true/false/on/off/1/0"; STRING as is; LOGLEVEL "warn" etc.
 */
#ifndef PS_CONFIG_H
#define PS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "ps_status.h"
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ps_config_type {
    PS_CFG_INT,     /* int64_t */
    PS_CFG_SIZE,    /* uint64_t, bytes */
    PS_CFG_TIME,    /* double, seconds */
    PS_CFG_BOOL,    /* int, 0 or 1 */
    PS_CFG_STRING,  /* char *, malloc'd, freed by ps_config_release() */
    PS_CFG_LOGLEVEL /* int, ps_log_level_t */
} ps_config_type_t;

typedef struct ps_config_field {
    const char *name; /* key in the file; env PSTRIPE_<NAME>; NULL ends a table */
    const char *dfl;  /* default, as a string with units ("4m") */
    const char *doc;  /* one line of documentation */
    ps_config_type_t type;
    size_t offset;   /* offsetof() of the value in the component's struct */
    double min, max; /* accepted range for INT/SIZE/TIME (ignored if min > max,
                        or if both are 0, as when the initializer omits them) */
} ps_config_field_t;

/* Fill every field of obj with its default. Returns PS_OK or an error. */
ps_status_t ps_config_set_defaults(const ps_config_field_t *table, void *obj);

/*
 * Set one field from a string. On error returns PS_ERR_INVALID and writes a
 * message such as "buffer_size: '4x' is not a size (e.g. 4m)" into err.
 * An unknown name also gives PS_ERR_INVALID ("unknown key 'foo'").
 */
ps_status_t ps_config_set(const ps_config_field_t *table, void *obj, const char *name,
                          const char *value, char *err, size_t errlen);

/* Load [section] of an INI file. Missing file: PS_ERR_NO_ENTRY. */
ps_status_t ps_config_load_file(const ps_config_field_t *table, void *obj, const char *path,
                                const char *section, char *err, size_t errlen);

/* Apply PSTRIPE_<NAME> environment variables present. */
ps_status_t ps_config_load_env(const ps_config_field_t *table, void *obj, char *err, size_t errlen);

/* Format one field's current value ("4m", "30s") into buf. */
ps_status_t ps_config_format(const ps_config_field_t *field, const void *obj, char *buf,
                             size_t len);

/* Find a field by name (NULL if unknown). */
const ps_config_field_t *ps_config_find(const ps_config_field_t *table, const char *name);

/* Dump "# doc (default: dfl)" then "name = value" for every field, as a valid
 * config file section (the doc is on its own line: inih's inline comments
 * start with ';' only, so a trailing "# doc" would become part of the value). */
void ps_config_print(const ps_config_field_t *table, const void *obj, const char *section,
                     FILE *out);

/* Free STRING fields. */
void ps_config_release(const ps_config_field_t *table, void *obj);

/* Parsers shared with MPI hints and tools. Return PS_OK or PS_ERR_INVALID. */
ps_status_t ps_parse_size(const char *str, uint64_t *value);
ps_status_t ps_parse_time(const char *str, double *seconds);
ps_status_t ps_parse_bool(const char *str, int *value);
/* Format bytes with the largest exact binary unit ("4m", "1536k", "100"). */
void ps_format_size(uint64_t value, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
