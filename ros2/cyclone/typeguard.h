#ifndef SAINT_TYPEGUARD_H
#define SAINT_TYPEGUARD_H

#include <stdbool.h>
#include <stdint.h>
#include "dds/ddsi/ddsi_xt_typeinfo.h"

bool saint_typeobj_known(const struct DDS_XTypes_TypeObject *to, uint8_t *kind);
bool saint_typeguard_installed(void);

#endif
