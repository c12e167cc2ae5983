// <assert.h> for NVRTC: assert as NVRTC defines it, decided anew at each inclusion by NDEBUG
// (as the C standard has it; no include guard on purpose).
#undef assert
#ifdef NDEBUG
#define assert(e) (static_cast<void>(0))
#else
#define assert(e) \
  ((e) ? static_cast<void>(0) : __assertfail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))
#endif
