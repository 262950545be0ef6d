/* SPDX-License-Identifier: MIT */
/* Status names and the library's version. */
#include "decodenum/common.h"

unsigned dn_version(void) { return DN_VERSION_NUMBER; }

const char *dn_version_string(void) { return DN_VERSION_STRING; }

const char *dn_status_str(dn_status status)
{
    switch (status) {
    case DN_OK: return "ok";
    case DN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case DN_ERR_UNREADABLE_BLOCK: return "unreadable block (infinite or NaN scale)";
    case DN_ERR_UNSUPPORTED_TYPE: return "unsupported block type";
    case DN_ERR_NON_FINITE: return "non-finite input";
    case DN_ERR_OUT_OF_MEMORY: return "out of memory";
    case DN_ERR_OUT_OF_RANGE: return "result out of range";
    }
    return "unknown status";
}
