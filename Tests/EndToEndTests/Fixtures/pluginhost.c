// Loads the library named by argv[1], calls its plugin_make, and closes it straight away, long
// before the shim's periodic look at the module map.
#include <dlfcn.h>

int main(int argc, char **argv) {
  void *library = argc > 1 ? dlopen(argv[1], RTLD_NOW) : 0;
  if (!library) return 2;
  void (*make)(void) = (void (*)(void))dlsym(library, "plugin_make");
  if (!make) return 3;
  make();
  return dlclose(library) == 0 ? 0 : 4;
}
