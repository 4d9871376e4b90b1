// The device memory cache of the generated CUDA API (templates/cuda/scangen_cuda_api.h), over the
// fake CUDA runtime of data/fake_cuda_runtime: blocks come back to the next calls without
// cudaMalloc, only after the device finished its work, on their own device, never far too large;
// running out of memory frees what is kept, and release_cached_memory() frees everything kept.
#define BOOST_TEST_MODULE cuda_memory_cache
#include <boost/test/unit_test.hpp>

#include <string>

#include "scangen_cuda_api.h"

namespace f = fake_cuda_runtime;
using Cache = scangen::cuda::detail::DeviceMemoryCacheV1;

namespace {

// A cache of the test's own (instance() is the process's).
struct Fresh {
  Fresh() { f::reset(); }
  ~Fresh() { cache.release(); }
  Cache cache;
  void* take(std::size_t bytes) {
    void* p = nullptr;
    BOOST_REQUIRE(cache.take(&p, bytes) == cudaSuccess);
    return p;
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_block_given_back_serves_the_next_call_after_a_synchronization, Fresh) {
  void* a = take(1 << 20);
  BOOST_TEST(f::mallocs == 1);
  BOOST_TEST(f::synchronizations == 0);  // a new block has no earlier user
  cache.give_back(a);
  BOOST_TEST(f::frees == 0);
  BOOST_TEST(cache.kept_blocks() == 1u);
  void* b = take(1 << 20);
  BOOST_TEST(b == a);
  BOOST_TEST(f::mallocs == 1);
  BOOST_TEST(f::synchronizations == 1);  // what may still read the old results is done
  BOOST_TEST(cache.kept_blocks() == 0u);
  cache.give_back(b);
}

BOOST_FIXTURE_TEST_CASE(a_block_whose_giver_finished_with_it_is_reused_without_waiting, Fresh) {
  void* record = take(4096);
  cache.give_back(record, /*device_may_read=*/false);
  BOOST_TEST(take(4096) == record);
  BOOST_TEST(f::synchronizations == 0);
  cache.give_back(record);
}

BOOST_FIXTURE_TEST_CASE(the_smallest_block_that_fits_and_never_one_twice_too_large, Fresh) {
  void* record = take(4096);
  void* arena = take(1 << 20);
  cache.give_back(record);
  cache.give_back(arena);
  BOOST_TEST(take(3000) == record);
  BOOST_TEST(take(600000) == arena);
  cache.give_back(record);
  cache.give_back(arena);
  void* small = take(1000);  // the 4096 block is more than twice as large
  BOOST_TEST(small != record);
  BOOST_TEST(small != arena);
  BOOST_TEST(f::mallocs == 3);
  void* large = take(2 << 20);  // nothing kept is large enough
  BOOST_TEST(f::mallocs == 4);
  cache.give_back(small);
  cache.give_back(large);
}

BOOST_FIXTURE_TEST_CASE(blocks_serve_their_own_device_only, Fresh) {
  void* on_0 = take(4096);
  cache.give_back(on_0);
  f::current_device = 1;
  void* on_1 = take(4096);
  BOOST_TEST(on_1 != on_0);
  BOOST_TEST(f::mallocs == 2);
  cache.give_back(on_1);
  f::current_device = 0;
  BOOST_TEST(take(4096) == on_0);
  cache.give_back(on_0);
}

BOOST_FIXTURE_TEST_CASE(running_out_of_memory_frees_the_kept_blocks_and_tries_again, Fresh) {
  f::capacity = 3 << 20;
  void* a = take(2 << 20);
  cache.give_back(a);
  void* b = take(3 << 20);  // a is kept but too small: freed to make room
  BOOST_TEST(f::frees == 1);
  BOOST_TEST(f::mallocs == 2);
  BOOST_TEST(cache.kept_blocks() == 0u);
  void* c = nullptr;
  BOOST_TEST(cache.take(&c, 1 << 20) == cudaErrorMemoryAllocation);  // nothing kept to free
  cache.give_back(b);
}

BOOST_FIXTURE_TEST_CASE(a_failed_synchronization_is_reported_and_the_block_kept, Fresh) {
  void* a = take(4096);
  cache.give_back(a);
  f::synchronize_status = cudaErrorIllegalAddress;  // an earlier kernel faulted
  void* b = nullptr;
  const char* call = nullptr;
  BOOST_TEST(cache.take(&b, 4096, &call) == cudaErrorIllegalAddress);
  BOOST_TEST(std::string(call).rfind("cudaDeviceSynchronize", 0) == 0u);
  BOOST_TEST(cache.kept_blocks() == 1u);
}

BOOST_FIXTURE_TEST_CASE(at_most_kMaxKept_blocks_are_kept_the_oldest_freed_first, Fresh) {
  std::vector<void*> blocks;
  for (std::size_t i = 0; i <= Cache::kMaxKept; ++i) blocks.push_back(take(4096));
  for (void* p : blocks) cache.give_back(p);
  BOOST_TEST(cache.kept_blocks() == Cache::kMaxKept);
  BOOST_TEST(f::frees == 1);
  BOOST_TEST(f::live.count(blocks.front()) == 0u);
  BOOST_TEST(f::live.count(blocks.back()) == 1u);
}

BOOST_FIXTURE_TEST_CASE(release_frees_what_is_kept_and_not_what_is_in_use, Fresh) {
  void* kept = take(4096);
  void* in_use = take(8192);
  cache.give_back(kept);
  cache.give_back(reinterpret_cast<void*>(0x1234));  // not the cache's: ignored
  cache.release();
  BOOST_TEST(f::live.count(kept) == 0u);
  BOOST_TEST(f::live.count(in_use) == 1u);
  cache.give_back(in_use);
  BOOST_TEST(cache.kept_blocks() == 1u);
}

BOOST_AUTO_TEST_CASE(release_cached_memory_empties_the_process_cache) {
  f::reset();
  Cache& cache = Cache::instance();
  void* p = nullptr;
  BOOST_REQUIRE(cache.take(&p, 4096) == cudaSuccess);
  cache.give_back(p);
  BOOST_TEST(cache.kept_blocks() == 1u);
  scangen::cuda::release_cached_memory();
  BOOST_TEST(cache.kept_blocks() == 0u);
  BOOST_TEST(f::live.empty());
}
