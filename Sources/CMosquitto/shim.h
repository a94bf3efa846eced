#ifndef CORELOCATION_CMOSQUITTO_SHIM_H
#define CORELOCATION_CMOSQUITTO_SHIM_H
/* libmosquitto, the Eclipse Mosquitto project's MQTT client library (EPL-2.0 / EDL-1.0, Debian's
 * libmosquitto-dev): locationd's publisher and the owntracks+mqtt:// source speak MQTT through it
 * rather than through a hand-written protocol. */
#include <mosquitto.h>
#endif
