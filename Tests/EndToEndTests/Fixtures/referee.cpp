// The C++ program that memcheck and heaptrack referee (RefereeTests):
//   objects   6 Widgets of 48 bytes, nothing points to them           definitely lost
//   vector    a std::vector<int> of 20 made with new, its pointer      24 B definitely lost,
//             lost                                                     its 80 B indirectly
//   mapped    4 Widgets, pointed to only from an anonymous mapping     still reachable
//   derived   an object of two polymorphic bases, held in a global     still reachable (memcheck's
//             through its second base: a pointer into its middle       multipleinheritance
//                                                                      heuristic)
// It also loads a library with dlopen, whose loader keeps blocks of its own (not leaks).
#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Widget {
  double values[6];
};

__attribute__((noinline)) static void leak_objects() {
  for (int i = 0; i < 6; i++) new Widget();
}

__attribute__((noinline)) static void leak_vector() { new std::vector<int>(20, 7); }

// The region's address is forgotten too: only the mapping holds the widgets.
__attribute__((noinline)) static void keep_in_mapping() {
  void *mapped = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) std::exit(3);
  Widget **region = static_cast<Widget **>(mapped);
  for (int i = 0; i < 4; i++) region[i * 5] = new Widget();
}

struct First {
  virtual ~First() {}
  long first[4];
};
struct Second {
  virtual ~Second() {}
  long second[4];
};
struct Derived : First, Second {
  long own[2];
};
Second *held_through_second_base;

__attribute__((noinline)) static void keep_derived() { held_through_second_base = new Derived(); }

__attribute__((noinline)) static void clobber() {
  volatile char area[16384];
  std::memset(const_cast<char *>(area), 0, sizeof area);
}

int main() {
  leak_objects();
  leak_vector();
  keep_in_mapping();
  if (!dlopen("libresolv.so.2", RTLD_NOW)) return 4;
  keep_derived();  // after: the loader's blocks keep the places the test expects of them
  clobber();
  std::puts("done");
  return 0;
}
