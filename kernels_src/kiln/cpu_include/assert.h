// cpu backend shim: assert() in a kernel stops the launch with a kiln error (as a GPU reports a
// failed device assertion) instead of aborting the whole process. Re-includable, like the C one.
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
namespace kiln_cpu {
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line, const char* func);
}
#define assert(e) \
  ((e) ? (void)0 : ::kiln_cpu::assert_fail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif
