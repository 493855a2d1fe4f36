// A library for `reloading`. Built with -DDEP=N (1 to 8) it is libdepN.so, with one function;
// built without, it is the plugin that needs all eight: each dlclose unloads nine libraries and
// frees their pieces while it holds the loader's lock.
#ifdef DEP
#define JOIN(a, b) a##b
#define NAME(n) JOIN(dep, n)
int NAME(DEP)(void) { return DEP; }
#else
int dep1(void), dep2(void), dep3(void), dep4(void), dep5(void), dep6(void), dep7(void),
    dep8(void);
int plugin_sum(void) { return dep1() + dep2() + dep3() + dep4() + dep5() + dep6() + dep7() + dep8(); }
#endif
