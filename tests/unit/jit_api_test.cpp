// The C++ JIT API (include/scangen/scangen.h): compile, look up, call with views, errors, the
// in-process memo and use from several threads, on every backend that runs without a GPU.
#define BOOST_TEST_MODULE jit_api
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "scangen/scangen.h"
#include "temp_dir.h"

using namespace scangen;
namespace fs = std::filesystem;

namespace {

const char* const kProgram = R"(// two functions
fn pick(x: f32[n], k: i32) -> f32 {
    return x[k]
}
fn scale_add(a: f32[n], b: f32[n], s: f32) -> (y: f32[n], total: f32) {
    let y = a * s + b
    return (y, sum(y))
}
)";

const Backend kCpuBackends[] = {Backend::Interpreter, Backend::Cpu, Backend::CudaEmulation};

JitOptions on(Backend backend) {
  JitOptions options;
  options.backend = backend;
  return options;
}

template <class E, class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(backend_names_round_trip) {
  for (Backend b : kAllBackends) BOOST_TEST((backend_from_name(backend_name(b)) == b));
  BOOST_TEST(backend_name(Backend::CudaEmulation) == "cuda-emulation");
  BOOST_TEST(!backend_from_name("gpu").has_value());
}

BOOST_AUTO_TEST_CASE(functions_describe_the_signatures) {
  Module m = compile_source("two.scan", kProgram, on(Backend::Interpreter));
  BOOST_TEST_REQUIRE(m.functions().size() == 2u);
  const FunctionInfo& f = m.function("scale_add");
  BOOST_TEST(f.signature == "(a: f32[n], b: f32[n], s: f32) -> (y: f32[n], total: f32)");
  BOOST_TEST_REQUIRE(f.params.size() == 3u);
  BOOST_TEST(f.params[1].name == "b");
  BOOST_TEST(f.params[1].rank == 1);
  BOOST_TEST(f.params[2].rank == 0);
  BOOST_TEST_REQUIRE(f.results.size() == 2u);
  BOOST_TEST(f.results[1].name == "total");
  BOOST_TEST((f.results[1].dtype == DType::F32));
  // One sentence, as every RuntimeError that is not about a place in the program.
  BOOST_TEST(error_of<RuntimeError>([&] { m.function("nope"); }) ==
             "the file has no function 'nope' (functions in the file: pick, scale_add)");
}

BOOST_AUTO_TEST_CASE(calls_agree_on_every_backend_and_read_the_callers_memory) {
  std::vector<float> a = {1, 2, 3, 4}, b = {0.5f, 0.25f, 0, -1};
  for (Backend backend : kCpuBackends) {
    BOOST_TEST_CONTEXT(backend_name(backend)) {
      Module m = compile_source("two.scan", kProgram, on(backend));
      BOOST_TEST((m.backend() == backend));
      std::vector<HostTensor> out =
          m.call("scale_add", {view(a.data(), {4}), view(b.data(), {4}), HostTensor::scalar(2.0f)});
      BOOST_TEST_REQUIRE(out.size() == 2u);
      std::vector<float> y(out[0].data<float>(), out[0].data<float>() + 4);
      BOOST_TEST(y == (std::vector<float>{2.5f, 4.25f, 6, 7}), boost::test_tools::per_element());
      BOOST_TEST(*out[1].data<float>() == 19.75f);
      BOOST_TEST(a[0] == 1.0f);  // arguments are not written
    }
  }
}

BOOST_AUTO_TEST_CASE(results_outlive_the_module) {
  std::vector<float> x = {7, 8, 9};
  HostTensor result;
  {
    Module m = compile_source("owned.scan", "fn twice(x: f32[n]) -> f32[n] {\n    return x * 2\n}\n", on(Backend::Cpu));
    result = m.call("twice", {view(x.data(), {3})}).at(0);
  }
  BOOST_TEST(result.data<float>()[2] == 18.0f);
}

BOOST_AUTO_TEST_CASE(views_are_checked) {
  std::vector<float> x(4);
  BOOST_TEST(error_of<RuntimeError>([&] { view<float>(nullptr, {2}); }) == "a view of f32[2] over a null pointer");
  const char* bytes = reinterpret_cast<const char*>(x.data()) + 1;
  BOOST_TEST(error_of<RuntimeError>([&] { HostTensor::view(DType::F32, {1}, bytes); }) ==
             "a view of f32[1] over memory not aligned for f32");
  BOOST_TEST(error_of<RuntimeError>([&] { view(x.data(), {-1}); }) == "a view of shape [-1]: a dimension is negative");
  BOOST_TEST(view<float>(nullptr, {0}).numel() == 0);
}

BOOST_AUTO_TEST_CASE(compile_errors_carry_rendered_diagnostics) {
  std::string message = error_of<CompileError>(
      [] { compile_source("bad.scan", "fn f(x: f32[n]) -> f32[n] {\n    return x + y\n}\n"); });
  BOOST_TEST(message.find("bad.scan:2:16: error: ") == 0u, message);
  BOOST_TEST(message.find("    return x + y\n               ^\n") != std::string::npos, message);
  BOOST_TEST(error_of<RuntimeError>([] { compile_file("/nonexistent/x.scan"); }) ==
             "cannot read '/nonexistent/x.scan': no such file or not readable");
  JitOptions bad_level;
  bad_level.opt_level = 1;
  BOOST_TEST(error_of<RuntimeError>([&] { compile_source("a.scan", kProgram, bad_level); }) ==
             "JitOptions::opt_level must be 0 or 2, got 1");
  JitOptions bad_pass;
  bad_pass.disabled_passes = {"no-such-pass"};
  BOOST_TEST(error_of<RuntimeError>([&] { compile_source("a.scan", kProgram, bad_pass); }).find(
                 "unknown pass 'no-such-pass' (the passes: ") == 0u);
}

BOOST_AUTO_TEST_CASE(run_time_errors_point_into_the_program) {
  std::vector<float> x = {1, 2, 3};
  for (Backend backend : kCpuBackends) {
    BOOST_TEST_CONTEXT(backend_name(backend)) {
      Module m = compile_source("two.scan", kProgram, on(backend));
      try {
        m.call("pick", {view(x.data(), {3}), HostTensor::scalar<int32_t>(5)});
        BOOST_FAIL("no error");
      } catch (const ProgramError& e) {
        BOOST_TEST(e.message() == "index 5 is out of range for dimension 0 of size 3");
        BOOST_TEST(e.line() == 3);
        BOOST_TEST(e.column() == 12);
        BOOST_TEST(std::string(e.what()) ==
                   "two.scan:3:12: error: index 5 is out of range for dimension 0 of size 3\n"
                   "    return x[k]\n"
                   "           ^\n");
      }
      // A dtype or a rank that does not fit the signature names the parameter, on every backend.
      try {
        m.call("pick", {view(x.data(), {3}), HostTensor::scalar<int64_t>(1)});
        BOOST_FAIL("no error");
      } catch (const ProgramError& e) {
        BOOST_TEST(e.message() == "argument 'k' of 'pick' must be i32, got i64");
        BOOST_TEST(e.line() == 2);
      }
      try {
        m.call("pick", {HostTensor::scalar<float>(1), HostTensor::scalar<int32_t>(0)});
        BOOST_FAIL("no error");
      } catch (const ProgramError& e) {
        BOOST_TEST(e.message() == "argument 'x' of 'pick' must have rank 1 (f32[n]), got rank 0");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_second_compile_reuses_the_program) {
  const std::string text = "fn bump(x: i64) -> i64 {\n    return x + 1\n}\n";
  Module first = compile_source("memo.scan", text, on(Backend::Cpu));
  Module second = compile_source("memo.scan", text, on(Backend::Cpu));
  BOOST_TEST(second.reused());
  BOOST_TEST(second.call("bump", {HostTensor::scalar<int64_t>(41)}).at(0).data<int64_t>()[0] == 42);
  JitOptions o0 = on(Backend::Cpu);
  o0.opt_level = 0;
  BOOST_TEST(!compile_source("memo.scan", text, o0).reused());
  BOOST_TEST(!compile_source("memo.scan", text + "\n", on(Backend::Cpu)).reused());
  BOOST_TEST(!compile_source("memo.scan", text, on(Backend::Interpreter)).reused());
}

// The fast floating-point mode: the CPU backend only, results near the strict ones (here exact:
// small integers in floats), and a cache entry of its own.
BOOST_AUTO_TEST_CASE(fast_mode_is_the_cpu_backends_and_has_its_own_cache_entry) {
  JitOptions fast = on(Backend::Cpu);
  fast.fp_mode = FpMode::Fast;
  std::vector<float> a = {1, 2, 3, 4}, b = {0.5f, 0.25f, 0, -1};
  Module m = compile_source("fast.scan", kProgram, fast);
  BOOST_TEST(!m.reused());
  std::vector<HostTensor> out = m.call("scale_add", {view(a.data(), {4}), view(b.data(), {4}), HostTensor::scalar(2.0f)});
  std::vector<float> y(out[0].data<float>(), out[0].data<float>() + 4);
  BOOST_TEST(y == (std::vector<float>{2.5f, 4.25f, 6, 7}), boost::test_tools::per_element());
  BOOST_TEST(*out[1].data<float>() == 19.75f);
  BOOST_TEST(compile_source("fast.scan", kProgram, fast).reused());
  BOOST_TEST(!compile_source("fast.scan", kProgram, on(Backend::Cpu)).reused());
  for (Backend backend : {Backend::Interpreter, Backend::CudaEmulation, Backend::Cuda}) {
    JitOptions other = on(backend);
    other.fp_mode = FpMode::Fast;
    BOOST_TEST(error_of<RuntimeError>([&] { compile_source("fast.scan", kProgram, other); }).find(
                   "fp_mode fast is for the cpu backend only") != std::string::npos);
  }
  BOOST_TEST((fp_mode_from_name("fast") == FpMode::Fast));
  BOOST_TEST(fp_mode_name(FpMode::Strict) == "strict");
  BOOST_TEST(!fp_mode_from_name("fastest").has_value());
}

// JitOptions::threads: the same bits as one thread (a product, a nest of rows, a failed check), in
// the strict and in the fast floating-point mode; part of the memo's key; bad values refused.
BOOST_AUTO_TEST_CASE(threads_give_the_same_results_and_errors) {
  const std::string text =
      "fn step(x: f32[b, n], w: f32[n, n], k: i32[b, n]) -> f32[b, n] {\n"
      "    return tanh(x @ w) * f32(pow(k, k))\n"
      "}\n";
  const int64_t rows = 300, n = 64;  // 300 * 64 * 64 multiply-adds: split over the threads
  std::vector<float> x(size_t(rows * n)), w(size_t(n * n));
  std::vector<int32_t> k(size_t(rows * n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int64_t(i * 7919 % 1000) - 500) / 250.0f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int64_t(i * 104729 % 1000) - 500) / 4000.0f;
  for (size_t i = 0; i < k.size(); ++i) k[i] = int32_t(i % 3);
  auto args = [&] { return std::vector<HostTensor>{view(x.data(), {rows, n}), view(w.data(), {n, n}), view(k.data(), {rows, n})}; };
  JitOptions one = on(Backend::Cpu);
  for (FpMode fp : {FpMode::Strict, FpMode::Fast}) {
    one.fp_mode = fp;
    HostTensor expected = compile_source("threads.scan", text, one).call("step", args()).at(0);
    for (int threads : {0, 2, 3}) {
      BOOST_TEST_CONTEXT("fp " << fp_mode_name(fp) << ", threads " << threads) {
        JitOptions options = one;
        options.threads = threads;
        Module m = compile_source("threads.scan", text, options);
        BOOST_TEST(!m.reused());  // another key than one thread's
        HostTensor got = m.call("step", args()).at(0);
        BOOST_TEST(std::memcmp(got.data<float>(), expected.data<float>(), x.size() * sizeof(float)) == 0);
        // Row 10 and the last row fail (in the first and the last chunk): row 10's error, as on one
        // thread.
        k[size_t(10 * n + 5)] = -3;
        k[size_t(rows * n - 1)] = -4;
        try {
          m.call("step", args());
          BOOST_FAIL("no error");
        } catch (const ProgramError& e) {
          BOOST_TEST(e.message() == "negative integer exponent -3");
          BOOST_TEST(e.line() == 2);
        }
        k[size_t(10 * n + 5)] = int32_t((10 * n + 5) % 3);
        k[size_t(rows * n - 1)] = int32_t((rows * n - 1) % 3);
      }
    }
  }
  one.fp_mode = FpMode::Strict;
  JitOptions bad = one;
  bad.threads = -1;
  BOOST_TEST(error_of<RuntimeError>([&] { compile_source("t.scan", text, bad); }) ==
             "JitOptions::threads must be from 0 (every hardware thread) to 256, got -1");
  bad.threads = kMaxThreads + 1;
  BOOST_TEST(error_of<RuntimeError>([&] { compile_source("t.scan", text, bad); }) ==
             "JitOptions::threads must be from 0 (every hardware thread) to 256, got 257");
  bad = on(Backend::Interpreter);
  bad.threads = 2;
  BOOST_TEST(error_of<RuntimeError>([&] { compile_source("t.scan", text, bad); }) ==
             "JitOptions::threads applies to the cpu backend, not to JitOptions::backend interp");
}

BOOST_AUTO_TEST_CASE(a_changed_file_is_compiled_again) {
  testing::TempDir dir("scangen-jit-api");
  fs::path file = dir / "f.scan";
  write(file, "fn f() -> i32 {\n    return 1\n}\n");
  BOOST_TEST(compile_file(file, on(Backend::Interpreter)).call("f", {}).at(0).data<int32_t>()[0] == 1);
  BOOST_TEST(compile_file(file, on(Backend::Interpreter)).reused());
  write(file, "fn f() -> i32 {\n    return 2\n}\n");
  Module changed = compile_file(file, on(Backend::Interpreter));
  BOOST_TEST(!changed.reused());
  BOOST_TEST(changed.call("f", {}).at(0).data<int32_t>()[0] == 2);
}

BOOST_AUTO_TEST_CASE(threads_compile_and_call_at_once) {
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([i, &failures] {
      try {
        // Half the threads share one program, half compile their own.
        std::string text = "fn g(x: f32[n]) -> f32[n] {\n    return x * " + std::to_string(i % 2 ? 3 : i + 10) + "\n}\n";
        Module m = compile_source("threads.scan", text, on(i % 3 == 0 ? Backend::CudaEmulation : Backend::Cpu));
        std::vector<float> x = {1, 2};
        for (int repeat = 0; repeat < 20; ++repeat) {
          float y = m.call("g", {view(x.data(), {2})}).at(0).data<float>()[1];
          if (y != 2.0f * float(i % 2 ? 3 : i + 10)) ++failures;
        }
      } catch (const std::exception&) {
        ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  BOOST_TEST(failures.load() == 0);
}

BOOST_AUTO_TEST_CASE(one_module_called_from_several_threads) {
  for (Backend backend : kCpuBackends) {
    BOOST_TEST_CONTEXT(backend_name(backend)) {
      Module m = compile_source("two.scan", kProgram, on(backend));
      std::atomic<int> failures{0};
      std::vector<std::thread> threads;
      for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
          std::vector<float> a(100, float(i)), b(100, 1.0f);
          for (int repeat = 0; repeat < 10; ++repeat) {
            auto out = m.call("scale_add", {view(a.data(), {100}), view(b.data(), {100}), HostTensor::scalar(2.0f)});
            if (out.at(1).data<float>()[0] != 100.0f * (2.0f * float(i) + 1.0f)) ++failures;
          }
        });
      for (std::thread& t : threads) t.join();
      BOOST_TEST(failures.load() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(cuda_without_a_device_says_so) {
  JitOptions cuda = on(Backend::Cuda);
  try {
    Module m = compile_source("two.scan", kProgram, cuda);
    BOOST_TEST_MESSAGE("a CUDA device is present; nothing to check here");
  } catch (const RuntimeError& e) {
    std::string message = e.what();
    BOOST_TEST((message.find("no CUDA device") == 0u || message.find("CUDA driver not found") == 0u), message);
  }
}

BOOST_AUTO_TEST_CASE(imports_are_found_in_include_dirs_and_a_changed_header_is_compiled_again) {
  testing::TempDir dir("scangen-jit-api-imports");
  fs::create_directories(dir / "include");
  auto write_header = [&](const std::string& body) {
    write(dir / "include" / "gain.h",
          "#pragma once\n#ifndef __CUDACC__\n#define __host__\n#define __device__\n#endif\n"
          "namespace scangen_export {\n" + body + "\n}\n");
  };
  write_header("__host__ __device__ inline float gain(float x) { return 2.0f * x; }\n"
               "inline float host_only(float x) { return x; }");
  const std::string text = "import \"gain.h\"\nfn g(x: f32[n]) -> f32[n] {\n    return gain(x) + 1\n}\n";
  const fs::path name = dir / "g.scan";
  std::vector<float> x = {1, 2, 3};
  for (Backend backend : kCpuBackends) {
    BOOST_TEST_CONTEXT(backend_name(backend)) {
      JitOptions options = on(backend);
      BOOST_TEST(error_of<CompileError>([&] { compile_source(name.string(), text, options); }).find(
                     name.string() + ":1:8: error: ") == 0u);  // not found without the include directory
      options.include_dirs = {dir / "include"};
      Module m = compile_source(name.string(), text, options);
      BOOST_TEST(m.call("g", {view(x.data(), {3})}).at(0).data<float>()[2] == 7.0f);
      BOOST_TEST(compile_source(name.string(), text, options).reused());
    }
  }
  write_header("__host__ __device__ inline float gain(float x) { return 3.0f * x; }\n"
               "inline float host_only(float x) { return x; }");
  JitOptions options = on(Backend::Cpu);
  options.include_dirs = {dir / "include"};
  Module changed = compile_source(name.string(), text, options);
  BOOST_TEST(!changed.reused());
  BOOST_TEST(changed.call("g", {view(x.data(), {3})}).at(0).data<float>()[2] == 10.0f);

  // CUDA code (and its emulation) calls only __host__ __device__ functions.
  const std::string host_only = "import \"gain.h\"\nfn h(x: f32) -> f32 {\n    return host_only(x)\n}\n";
  BOOST_TEST(compile_source(name.string(), host_only, options).call("h", {HostTensor::scalar(4.0f)}).at(0).data<float>()[0] == 4.0f);
  JitOptions emulation = options;
  emulation.backend = Backend::CudaEmulation;
  std::string message = error_of<CompileError>([&] { compile_source(name.string(), host_only, emulation); });
  BOOST_TEST(message.find(name.string() + ":3:12: error: 'host_only' is called from code compiled for CUDA") == 0u, message);
  BOOST_TEST(message.find("host_only") != std::string::npos, message);
}
