// Loads each library named on the command line in turn, calls its plugin_make, and closes it
// before the next is loaded, so the next may be given the same addresses.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    void *library = dlopen(argv[i], RTLD_NOW);
    if (!library) return 2;
    void (*make)(void) = (void (*)(void))dlsym(library, "plugin_make");
    if (!make) return 3;
    Dl_info info;
    if (dladdr((void *)make, &info)) printf("%p\n", info.dli_fbase);
    make();
    if (dlclose(library) != 0) return 4;
  }
  return 0;
}
