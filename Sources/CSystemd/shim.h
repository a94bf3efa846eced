#ifndef CORELOCATION_CSYSTEMD_SHIM_H
#define CORELOCATION_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#endif
