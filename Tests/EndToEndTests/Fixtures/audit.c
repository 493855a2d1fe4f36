// The smallest LD_AUDIT library: it asks for the audit interface's version and watches no
// object. Built as a shared library by the test that runs a program under it.
#define _GNU_SOURCE
#include <link.h>

unsigned int la_version(unsigned int version) { return version; }
