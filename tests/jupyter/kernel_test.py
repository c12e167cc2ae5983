"""kiln's Jupyter kernel against jupyter_kernel_test (Debian's python3-jupyter-kernel-test): the
protocol's execute, streams, completion, is_complete, errors, display and inspection, plus what
kiln adds (arrays as HTML, kernel printf on the stream, method completion, interrupt).
Run by tests/cli/jupyter_kernel.sh with the kernelspec installed in a private JUPYTER_PATH."""
import os
import threading
import time
import unittest

import jupyter_kernel_test

# The kernel inherits this: a compile over 1 ms says so on stderr (the suite's 0 turns it off).
os.environ["KILN_COMPILE_NOTICE"] = "1"


class KilnKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "kiln"
    language_name = "lua"
    file_extension = ".lua"

    code_hello_world = 'print("hello, world")'
    code_stderr = 'io.stderr:write("oops\\n")'
    completion_samples = [
        {"text": "cuda.to_dev", "matches": {"cuda.to_device"}},
        {"text": "array.zer", "matches": {"array.zeros"}},
        {"text": "x = array.ran", "matches": {"array.random"}},
    ]
    complete_code_samples = ["1 + 1", "x = 1", "for i = 1, 2 do print(i) end", "a = 1\na"]
    incomplete_code_samples = ["for i = 1, 2 do", "function f(x)", "t = {", "s = [[open"]
    invalid_code_samples = ["x = )", "end"]
    code_generate_error = 'error("boom")'
    code_execute_result = [
        {"code": "1 + 2", "result": "3"},
        {"code": "'a' .. 'b'", "result": '"ab"'},
        {"code": "local x = 6\nx * 7", "result": "42"},
    ]
    code_display_data = [
        {"code": "display(array.zeros({4, 4, 3}, 'uint8'))", "mime": "image/png"},
        {"code": "display(array.arange(3))", "mime": "text/html"},
        {"code": "array.show(array.full({2, 2}, 255, 'uint8'))", "mime": "image/png"},
    ]
    code_inspect_sample = "cuda.to_device"

    def setUp(self):
        # Replies and status messages another test left (kernel_info's busy/idle) would be
        # taken for this test's.
        self.flush_channels()

    def outputs(self, code, timeout=120):
        """The reply and the output messages of running code."""
        return self.execute_helper(code=code, timeout=timeout)

    def test_kiln_array_html(self):
        reply, msgs = self.outputs("array.arange(2000):reshape({40, 50})")
        self.assertEqual(reply["content"]["status"], "ok")
        result = [m for m in msgs if m["msg_type"] == "execute_result"]
        self.assertEqual(len(result), 1)
        html = result[0]["content"]["data"]["text/html"]
        self.assertIn("<table", html)
        self.assertIn("&hellip;", html)  # elided as the text form is
        self.assertIn("array([[", result[0]["content"]["data"]["text/plain"])

    def test_kiln_error_traceback(self):
        reply, msgs = self.outputs("local function f() error('deep') end\nf()")
        self.assertEqual(reply["content"]["status"], "error")
        error = [m for m in msgs if m["msg_type"] == "error"][0]["content"]
        self.assertIn("deep", error["evalue"])
        self.assertIn("stack traceback:", error["traceback"])

    def test_kiln_kernel_printf(self):
        code = ('local k = cuda.jit([[__global__ void hello(int n) {'
                ' printf("kernel says %d\\n", n); }]])\nk[{1, 1}](7)')
        reply, msgs = self.outputs(code)
        self.assertEqual(reply["content"]["status"], "ok")
        text = "".join(m["content"]["text"] for m in msgs
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")
        self.assertIn("kernel says 7", text)

    def test_kiln_compile_notice(self):
        name = "fresh%d" % time.monotonic_ns()  # a kernel no cache holds
        code = f"local k = cuda.jit([[__global__ void {name}(int* p) {{ p[0] = 1; }}]])\n" \
               "k[{1, 1}](array.zeros(1, 'int32'))"
        reply, msgs = self.outputs(code)
        self.assertEqual(reply["content"]["status"], "ok")
        text = "".join(m["content"]["text"] for m in msgs
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stderr")
        self.assertIn(f"kiln: compiling {name}", text)

    def test_kiln_method_completion(self):
        self.outputs("a = array.arange(3)")
        self.kc.complete("a:su")
        reply = self.get_non_kernel_info_reply(timeout=10)
        self.assertEqual(set(reply["content"]["matches"]), {"a:sub", "a:sum"})

    def test_kiln_time_cell(self):
        reply, msgs = self.outputs(":time math.sqrt(2)")
        self.assertEqual(reply["content"]["status"], "ok")
        text = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream")
        self.assertIn("per loop", text)

    def test_kiln_interrupt(self):
        for code in ["while true do end",
                     "local k = cuda.jit([[__global__ void spin(long n) { volatile long s = 0;"
                     " for (long i = 0; i < n; ++i) s += i; }]])\nk[{1000, 256}](80000)"]:
            # The cpu backend polls the flag between chunks of blocks (a 32nd of this grid, well
            # under a second), so the launch must stop soon after the interrupt.
            timer = threading.Timer(1.5, self.km.interrupt_kernel)
            timer.start()
            started = time.monotonic()
            reply, msgs = self.outputs(code)
            timer.join()
            self.assertEqual(reply["content"]["status"], "error", code)
            error = [m for m in msgs if m["msg_type"] == "error"][0]["content"]
            self.assertIn("interrupted", error["evalue"], code)
            self.assertLess(time.monotonic() - started, 100, code)
        # The stop button on an idle kernel changes nothing.
        self.km.interrupt_kernel()
        time.sleep(0.5)
        reply, msgs = self.outputs("'alive'")
        self.assertEqual(reply["content"]["status"], "ok")


if __name__ == "__main__":
    unittest.main(verbosity=2)
