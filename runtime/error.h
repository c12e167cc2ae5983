// kiln's exceptions. C++ code throws these; the Lua bindings turn every one into a Lua error.
#pragma once
#include <stdexcept>
#include <string>

namespace kiln {

// Any failure a user can cause or must be told about; what() is the whole message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel that did not compile: the message names kernel, file and options; log() is the whole
// compiler log, its line numbers already mapped to the user's source.
class CompileError : public Error {
 public:
  CompileError(const std::string& message, std::string log)
      : Error(message + (log.empty() ? "" : "\n" + log)), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

}  // namespace kiln
