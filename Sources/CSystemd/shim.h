#ifndef CORELOCATION_CSYSTEMD_SHIM_H
#define CORELOCATION_CSYSTEMD_SHIM_H
#include <stdint.h>
#include <systemd/sd-bus.h>

/* Typed wrappers over sd-bus's untyped entry points, so that Swift passes values of the right C
 * type (Swift cannot call the variadic sd_bus_message_append / sd_bus_message_read, and the
 * `const void *` / `void *` of the *_basic functions hide what they expect: a string is passed
 * by its `char *`, every other basic type by a pointer to it). */

/** Appends a string-like value (`s`, `o` or `g`). */
static inline int corelocation_sd_bus_message_append_string(sd_bus_message *m, char type, const char *value) {
  return sd_bus_message_append_basic(m, type, value);
}

/** Appends a `u` (uint32). */
static inline int corelocation_sd_bus_message_append_uint32(sd_bus_message *m, uint32_t value) {
  return sd_bus_message_append_basic(m, 'u', &value);
}

/** Appends a `b` (boolean, 0 or 1 on the wire). */
static inline int corelocation_sd_bus_message_append_bool(sd_bus_message *m, int value) {
  int normalised = value ? 1 : 0;
  return sd_bus_message_append_basic(m, 'b', &normalised);
}

/** Reads a string-like value (`s`, `o` or `g`); the pointer lives as long as the message. */
static inline int corelocation_sd_bus_message_read_string(sd_bus_message *m, char type, const char **value) {
  return sd_bus_message_read_basic(m, type, value);
}

/** Reads a `d` (double). */
static inline int corelocation_sd_bus_message_read_double(sd_bus_message *m, double *value) {
  return sd_bus_message_read_basic(m, 'd', value);
}

/** Reads a `u` (uint32). */
static inline int corelocation_sd_bus_message_read_uint32(sd_bus_message *m, uint32_t *value) {
  return sd_bus_message_read_basic(m, 'u', value);
}

/** Reads a `t` (uint64). */
static inline int corelocation_sd_bus_message_read_uint64(sd_bus_message *m, uint64_t *value) {
  return sd_bus_message_read_basic(m, 't', value);
}

/** Reads an `i` (int32). */
static inline int corelocation_sd_bus_message_read_int32(sd_bus_message *m, int32_t *value) {
  return sd_bus_message_read_basic(m, 'i', value);
}

/** Reads an `x` (int64). */
static inline int corelocation_sd_bus_message_read_int64(sd_bus_message *m, int64_t *value) {
  return sd_bus_message_read_basic(m, 'x', value);
}

/** Reads an `n` (int16). */
static inline int corelocation_sd_bus_message_read_int16(sd_bus_message *m, int16_t *value) {
  return sd_bus_message_read_basic(m, 'n', value);
}

/** Reads a `q` (uint16). */
static inline int corelocation_sd_bus_message_read_uint16(sd_bus_message *m, uint16_t *value) {
  return sd_bus_message_read_basic(m, 'q', value);
}

/** Reads a `y` (byte). */
static inline int corelocation_sd_bus_message_read_byte(sd_bus_message *m, uint8_t *value) {
  return sd_bus_message_read_basic(m, 'y', value);
}

/** Reads a `b` (boolean) as 0 or 1. */
static inline int corelocation_sd_bus_message_read_bool(sd_bus_message *m, int *value) {
  return sd_bus_message_read_basic(m, 'b', value);
}

/** An empty error, as SD_BUS_ERROR_NULL initialises one. */
static inline sd_bus_error corelocation_sd_bus_error_null(void) {
  sd_bus_error e = SD_BUS_ERROR_NULL;
  return e;
}

#endif
