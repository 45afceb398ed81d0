# zlbench: the two commands README.md promises, wrapped around CMake.
#   make run    build (Release) and run the main job: zlbench batch on the default corpus
#   make test   build with ASan/UBSan and run every test (GPU tests skip without a GPU)
# Other targets: build, bench-gpu (on a CUDA machine), clean.

BUILD      ?= build
TEST_BUILD ?= build-test
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
# The test build compiles the CUDA corpus for one architecture (sm_90) when
# nvcc is present: it still fails on a broken kernel, at half the time.
TEST_CUDA_ARCHS ?= 90

.PHONY: all build run test bench-gpu clean deps deps-test

all: build

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DZLB_TESTS=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/zlbench batch $(ARGS)

test: deps-test
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DZLB_TESTS=ON -DZLB_REQUIRE_CMOCKA=ON \
	  -DZLB_WERROR=ON -DZLB_ASAN=ON -DZLB_UBSAN=ON \
	  -DCMAKE_CUDA_ARCHITECTURES=$(TEST_CUDA_ARCHS) $(CMAKE_ARGS)
	cmake --build $(TEST_BUILD) -j $(JOBS)
	cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS)
	@# Say why the GPU tests were skipped (no device, no CUDA build).
	@grep -h '^SKIP' $(TEST_BUILD)/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c || true

bench-gpu:
	bash bench/gpu_all.sh

clean:
	rm -rf $(BUILD) $(TEST_BUILD)
