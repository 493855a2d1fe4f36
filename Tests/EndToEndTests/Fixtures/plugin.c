// A library that a host dlopens, calls and dlcloses at once: 100 blocks of 4,000 bytes, kept.
#include <stdlib.h>
void *kept[100];
void plugin_make(void) { for (int i = 0; i < 100; i++) kept[i] = malloc(4000); }
