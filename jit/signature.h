// Kernel parameter types and argument marshalling. The exact parameter types come from the
// compiler (a demangled lowered name, or the declaration of an extern "C" kernel); each becomes
// a ParamType that says what Lua value it takes, and ArgPack lays the values out as
// cuLaunchKernel takes them (an array of pointers to each parameter's bytes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/host_array.h"

namespace kiln::jit {

enum class ParamKind {
  scalar,          // float, int, size_t, bool, float4, ...
  pointer,         // T* / const T* to a dtype
  array,           // kiln::Array<T, N>: pointer and shape
  structure,       // a struct declared in the kernel's source, by value, from a Lua table
  struct_pointer,  // T* / const T* to such a struct: an array of whole Ts, of any dtype
  unsupported      // anything else (references, pointers to pointers, ...)
};

// A struct's layout, as the compiler laid it out (jit.cpp asks the compiled module).
struct StructLayout {
  struct Field {
    std::string name;
    std::string type;     // as declared, for messages
    DType dtype = DType::float32;
    bool settable = false;  // a scalar or vector kiln knows
    bool pointer = false;   // a pointer to dtype, set from a device array or cuda.null
    bool untyped = false;   // a `void*` pointer: any device array's address
    std::size_t offset = 0;
    std::size_t count = 1;  // elements: 3 for `double w[3]`
  };
  std::string name;
  std::size_t size = 0, align = 1;
  std::vector<Field> fields;
};

struct ParamType {
  ParamKind kind = ParamKind::unsupported;
  DType dtype = DType::float32;  // the scalar type, or the pointee / element type
  bool is_const = false;         // pointee const-qualified
  bool untyped = false;          // a `void*`: any array's address
  int ndim = 0;                  // for kiln::Array
  std::string spelling;          // as given, for messages: "float const*"
  std::shared_ptr<const StructLayout> layout;  // for structure and struct_pointer
  std::string refusal;  // for unsupported: why, where kiln knows better than "cannot pass"
};

// Classifies one C++ parameter type, spelled as the demangler or as a user writes it.
ParamType classify_param(std::string_view cpp_type);

// The C++ ABI demangler (abi::__cxa_demangle): "_Z4blurIfEvPT_i" -> "void blur<float>(float*, int)".
// Returns the input unchanged when it is not a mangled name.
std::string demangle(std::string_view lowered_name);

// The parameter types of a demangled function or function type:
// "void blur<float>(float*, int)" or "void (*)(float*, int)" -> {"float*", "int"}; "(void)" -> {}.
std::vector<std::string> parameter_types(std::string_view demangled);

// What a Lua value passed to a kernel is, for deduction and marshalling.
struct ArgValue {
  enum class Kind {
    device_array,
    host_array,
    integer,
    number,
    boolean,
    table,
    null_pointer,  // cuda.null, or a pointer parameter's default argument `= NULL`
    other
  };
  Kind kind = Kind::other;
  DType dtype = DType::float64;  // arrays
  int ndim = 0;                  // arrays
  void* data = nullptr;          // arrays: device pointer (host arrays are staged by the caller)
  Shape shape;                   // arrays
  std::int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  const char* lua_type = "";     // "table", "string", ... for messages (a static string)
  std::vector<ArgValue> lanes;   // a table's x, y, z, w, else its [1]..[n]: vectors, arrays
  std::vector<std::pair<std::string, ArgValue>> fields;  // a table's string keys: structs
};

// Laid-out launch arguments. add() converts one value to its parameter's exact type, or throws
// kiln::Error naming the kernel, the parameter (position, name, C++ type) and what was given:
//   kernel 'scale': parameter 1 'x' (float*) expects a float32 array, got an int32 device array
// Pointers take an array (device, or host: its .data) of exactly the pointee's dtype, const or
// not; a pointer to a struct takes an array of any dtype whose bytes are whole structs, at the
// struct's alignment (as CuPy passes any array to any pointer, with the size checked);
// kiln::Array<T, N> takes one of dtype T and rank N, laid out as struct { T* data; long long
// shape[N]; } (8 + 8N bytes, 8-aligned). Integer parameters take a Lua integer, or an integral
// float, in the type's range; float parameters any number (rounded to float); bool parameters only
// true/false (not 0/1: the message says so). Each value sits at its type's alignment, as in a C
// struct.
class ArgPack {
 public:
  void add(const std::string& kernel, int position, const std::string& param_name,
           const ParamType& param, const ArgValue& value);
  void** pointers();  // one per add(), valid until the next add()
  // Empties the pack, keeping its memory, so a kernel can reuse one pack for every launch.
  void clear() {
    storage_.clear();
    offsets_.clear();
  }
  std::size_t count() const { return offsets_.size(); }

 private:
  std::vector<std::byte> storage_;
  std::vector<std::size_t> offsets_;
  std::vector<void*> pointers_;
};

// The name expression that instantiates a (possibly templated) kernel for these arguments:
// "vec_add" for a plain kernel ("(void(*)(int*))min" for one whose name the CUDA and C headers
// also declare, which the bare name would leave ambiguous), "scale<float>" with T deduced from a T* / const T* /
// kiln::Array<T, N> parameter (N too, when it is a template parameter), defaults used for the
// rest (trailing defaults are left out: "reduce<float>", "k<>" when all are defaults). Scalar
// arguments deduce nothing: C++ would make T int from a Lua 2, a surprise. nullopt, with why
// filled, when a template parameter cannot be deduced (the user must then give
// opts.name = "k<...>") or two arrays deduce different types for it.
std::optional<std::string> deduce_name_expression(const struct KernelDecl& decl,
                                                  const std::vector<ArgValue>& args,
                                                  std::string* why);

// Which of a kernel's overloads (decls: the declarations of one name) a call with args runs:
// of those that take that many arguments (defaults counted) and each argument's kind (an array
// for a pointer of its dtype, a number for a scalar), the one that takes every argument at
// least as well as each other does, one better (ranked as C++ ranks an int or a double literal:
// a Lua integer takes an int exactly, a float or a long by a conversion). Throws kiln::Error
// listing the overloads when none or several fit.
std::size_t choose_overload(const std::vector<struct KernelDecl>& decls,
                            const std::vector<ArgValue>& args);

}  // namespace kiln::jit
